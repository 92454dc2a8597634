"""The first step of a micro-batch: source rows to documents with event times.

Parses what the reader left to the JVM (:mod:`.parse`), evaluates ``$source.timeField`` (with
the fast path of :mod:`.timefield` where it applies), else takes the source's own timestamp,
into ``_et`` (epoch ms) and writes it to ``tsFieldName``, and
marks unparseable input and ``timeField`` errors (``_err``, ``_op = "$source"``) for the DLQ.
``_arr`` is the arrival instant (epoch ms).
"""
from __future__ import annotations

from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from ...spec.model import SourceSpec
from .. import values as V
from ..sources import DATA
from .parse import NOT_JSON, parse_columns
from .timefield import fast_event_time


Step = tuple[str, Any]     # ("withColumns", {name: Column}) or ("drop", [names])


def prepare(bdf: DataFrame, steps: list[Step]) -> DataFrame:
    """The batch's source rows ``bdf`` through ``steps`` (:func:`prepare_steps`)."""
    for op, arg in steps:
        bdf = bdf.withColumns(arg) if op == "withColumns" else bdf.drop(*arg)
    return bdf


def prepare_steps(s: SourceSpec, time_field) -> list[Step]:
    """The column steps of :func:`prepare`; ``time_field``: the compiled ``$source.timeField`` (None
    without one). Column trees over the reader's columns only, applied once to the processor's
    streaming DataFrame (the engine's ``Processor._prepared``)."""
    is_data = F.col("kind") == DATA
    steps: list[Step] = [("withColumns", c) for c in parse_columns(is_data)] + [("drop", ["_pj"])]
    steps.append(("withColumns", {"_err": F.when(is_data & F.col("doc").isNull(),
                                                 F.coalesce(F.col("error"), F.lit(NOT_JSON)))}))
    steps.append(("withColumns", {"_op": F.when(F.col("_err").isNotNull(), F.lit("$source")).cast("string")}))
    if time_field is not None:
        c = time_field
        fast = fast_event_time(s.time_field)
        value, error = c.value, c.error if c.error is not None else F.lit(None).cast("string")
        if fast is not None:      # the generic expression only where the fast path does not apply,
            # and without generated code (V.interpreted): megabytes of Java for a rare fallback
            steps.append(("withColumns", {"_tf": fast}))
            value, error = (F.when(F.col("_tf").isNull(), V.interpreted(value)),
                            F.when(F.col("_tf").isNull(), V.interpreted(error)))
        # the value (and error) once per row, as columns the checks below read
        steps.append(("withColumns", {"_tv": value, "_tve": error}))
        tv = F.col("_tv")
        et = V.as_timestamp(tv) if fast is None else F.coalesce(F.col("_tf"), V.as_timestamp(tv))
        not_date = F.when(et.isNull(), F.concat(
            F.lit("$source.timeField did not evaluate to a date; found "), V.type_name(tv)))
        terr = F.coalesce(F.concat(F.lit("timeField: "), F.col("_tve")), not_date)
        ok = F.col("_err").isNull() & is_data
        steps.append(("withColumns", {"_et": F.when(ok, et),
                                      "_op": F.when(ok & terr.isNotNull(), F.lit("$source")).otherwise(F.col("_op")),
                                      "_err": F.when(ok, terr).otherwise(F.col("_err"))}))
        steps.append(("drop", ["_tv", "_tve"] + (["_tf"] if fast is not None else [])))
    else:
        steps.append(("withColumns", {"_et": F.col("source_ts")}))
    good = F.col("_err").isNull() & is_data
    steps.append(("withColumns", {
        "_et": F.when(good, F.unix_millis(F.col("_et"))),
        "_arr": F.unix_millis(F.col("arrival")),
        "doc": F.when(good, V.set_fields(F.col("doc"), {s.ts_field_name: V.to_variant(F.col("_et"))}))
                .otherwise(F.col("doc")),
    }))
    return steps
