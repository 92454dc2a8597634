"""The first step of a micro-batch: source rows to documents with event times.

Parses what the reader left to the JVM (:mod:`.parse`), evaluates ``$source.timeField`` (with
the fast path of :mod:`.timefield` where it applies), else takes the source's own timestamp,
into ``_et`` (epoch ms) and writes it to ``tsFieldName``, and
marks unparseable input and ``timeField`` errors (``_err``, ``_op = "$source"``) for the DLQ.
``_arr`` is the arrival instant (epoch ms).

With a fast path, the streaming query holds only it: rows it does not apply to are marked
``_slow`` (``_et`` NULL, ``doc`` as parsed, no error yet), and a micro-batch with some applies
:func:`slow_steps` (the generic expression, for those rows only): the engine's
``Processor._batch`` does so from the start when the previous batch had some (dates, numbers or
other forms in the field), else after its statistics find some, counting again. The generic
expression's tree (hundreds of KB for ``$dateFromString``) is then never optimised, planned or
generated as code for batches that do not need it (PROFILE.md).
"""
from __future__ import annotations

from typing import Any

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from ...spec.model import SourceSpec
from .. import values as V
from ..sources import DATA
from .parse import NOT_JSON, parse_columns
from .timefield import fast_event_time, field_of


Step = tuple[str, Any]     # ("withColumns", {name: Column}) or ("drop", [names])

SLOW = "_slow"             # rows whose timeField the fast path did not read (prepare_steps)


def prepare(bdf: DataFrame, steps: list[Step]) -> DataFrame:
    """The batch's source rows ``bdf`` through ``steps`` (:func:`prepare_steps`)."""
    for op, arg in steps:
        bdf = bdf.withColumns(arg) if op == "withColumns" else bdf.drop(*arg)
    return bdf


def has_slow_rows(s: SourceSpec) -> bool:
    """Whether :func:`prepare_steps` leaves rows marked ``_slow`` for :func:`slow_steps`."""
    return s.time_field is not None and field_of(s.time_field) is not None


def _generic(time_field, when: Column) -> list[Step]:
    """``_et`` (TIMESTAMP), ``_err`` and ``_op`` from the compiled ``timeField`` on rows where
    ``when`` holds (the others keep theirs)."""
    c = time_field
    error = c.error if c.error is not None else F.lit(None).cast("string")
    # the value (and error) once per row, as columns the checks below read
    steps: list[Step] = [("withColumns", {"_tv": F.when(when, c.value), "_tve": F.when(when, error)})]
    tv = F.col("_tv")
    et = V.as_timestamp(tv)
    not_date = F.when(et.isNull(), F.concat(
        F.lit("$source.timeField did not evaluate to a date; found "), V.type_name(tv)))
    terr = F.coalesce(F.concat(F.lit("timeField: "), F.col("_tve")), not_date)
    steps.append(("withColumns", {"_et": F.when(when, et).otherwise(F.col("_et")),
                                  "_op": F.when(when & terr.isNotNull(), F.lit("$source")).otherwise(F.col("_op")),
                                  "_err": F.when(when, terr).otherwise(F.col("_err"))}))
    steps.append(("drop", ["_tv", "_tve"]))
    return steps


def _with_ts(s: SourceSpec, good: Column) -> Column:
    """``doc`` with ``tsFieldName`` set to ``_et`` (TIMESTAMP) on rows where ``good`` holds."""
    ts = V.set_fields(F.col("doc"), {s.ts_field_name: V.to_variant(F.col("_et"))})
    return F.when(good, ts).otherwise(F.col("doc"))


def prepare_steps(s: SourceSpec, time_field) -> list[Step]:
    """The column steps of :func:`prepare`; ``time_field``: the compiled ``$source.timeField`` (None
    without one). Column trees over the reader's columns only, applied once to the processor's
    streaming DataFrame (the engine's ``Processor._prepared``)."""
    is_data = F.col("kind") == DATA
    steps: list[Step] = [("withColumns", c) for c in parse_columns(is_data)] + [("drop", ["_pj"])]
    steps.append(("withColumns", {"_err": F.when(is_data & F.col("doc").isNull(),
                                                 F.coalesce(F.col("error"), F.lit(NOT_JSON)))}))
    steps.append(("withColumns", {"_op": F.when(F.col("_err").isNotNull(), F.lit("$source")).cast("string")}))
    ok = F.col("_err").isNull() & is_data
    slow = has_slow_rows(s)
    if slow:
        steps.append(("withColumns", {"_et": F.when(ok, fast_event_time(s.time_field))}))
        steps.append(("withColumns", {SLOW: ok & F.col("_et").isNull()}))
    elif time_field is not None:
        steps.append(("withColumns", {"_et": F.lit(None).cast("timestamp")}))
        steps += _generic(time_field, ok)
    else:
        steps.append(("withColumns", {"_et": F.col("source_ts")}))
    good = F.col("_err").isNull() & is_data
    steps.append(("withColumns", {
        "_et": F.when(good, F.unix_millis(F.col("_et"))),
        "_arr": F.unix_millis(F.col("arrival")),
        "doc": _with_ts(s, good & ~F.col(SLOW) if slow else good),
    }))
    return steps


def slow_steps(s: SourceSpec, time_field) -> list[Step]:
    """The steps that finish the rows :func:`prepare_steps` marked ``_slow`` (marked still, after):
    the generic ``timeField`` expression's event time (epoch ms), or its error, and
    ``tsFieldName``, as :func:`prepare_steps` gives them without a fast path; other rows as they
    are."""
    slow = F.col(SLOW)
    steps = [("withColumns", {"_et": F.timestamp_millis(F.col("_et"))})] + _generic(time_field, slow)
    good = slow & F.col("_err").isNull()
    steps.append(("withColumns", {"doc": _with_ts(s, good), "_et": F.unix_millis(F.col("_et"))}))
    return steps
