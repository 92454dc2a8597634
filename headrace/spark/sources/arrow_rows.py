"""Data rows of :data:`~headrace.spark.sources.SOURCE_SCHEMA` as ``pyarrow.RecordBatch``es.

A reader that yields tuples has pyspark convert every value of every row in Python; a reader
that yields RecordBatches hands them to the JVM as they are. :func:`data_batch` builds one
from columns: the text that only Python can read as MQL would (Extended JSON wrappers, ``NaN``,
integers over 64 bits: :data:`headrace.spark.docs.NEEDS_PYTHON`) is found by one vectorised
regex over the batch, and only those rows are parsed here; the JVM parses the rest
(:mod:`headrace.spark.runtime.parse`). Two more find the texts with no fraction outside
their strings (:data:`WHOLE_STRINGS`, :data:`FRACTION_OUTSIDE_STRINGS`): their ``error`` is
:data:`headrace.spark.sources.PLAIN`, and the JVM parses them without its normalisation.
Runs in a Python worker; imports pyarrow lazily.
"""
from __future__ import annotations

import datetime as _dt
from functools import lru_cache
from typing import Any, Sequence

from . import DATA, PLAIN, SOURCE_SCHEMA

#: rows per RecordBatch a reader yields (pyspark's own batching of tuples uses 10,000)
BATCH_ROWS = 10_000
#: from the start, characters outside strings (never a backslash) and whole strings (RE2, as
#: pyarrow runs it)
_OUTSIDE = r'(?s)^(?:[^"\\]|"(?:[^"\\]|\\.)*")*'
#: text that is all of that. In such text the JVM's normalisation, which masks escaped quotes and
#: backslashes and judges a fraction outside strings by the quotes after it, sees the same strings.
WHOLE_STRINGS = _OUTSIDE + "$"
#: a fraction (``1.5``, ``-0.25e3``) outside the text's strings: digit, point, digit after them
FRACTION_OUTSIDE_STRINGS = _OUTSIDE + r"[0-9]\.[0-9]"


@lru_cache(maxsize=1)
def arrow_schema():
    """The Arrow schema pyspark expects for :data:`SOURCE_SCHEMA` (it checks batches against it)."""
    from pyspark.sql.pandas.types import to_arrow_schema
    from pyspark.sql.types import (ByteType, LongType, StringType, StructField, StructType, TimestampType,
                                   VariantType)

    types = {"string": StringType(), "bigint": LongType(), "timestamp": TimestampType(), "variant": VariantType(),
             "tinyint": ByteType()}
    fields = [StructField(name, types[t]) for name, t in (c.split(" ") for c in SOURCE_SCHEMA.split(", "))]
    return to_arrow_schema(StructType(fields), timezone="UTC")


def data_batch(partition: str, offsets: Sequence[int], arrival: "_dt.datetime | Sequence[int]",
               raws: Sequence[str | None], keys: Sequence[Any] | None = None,
               parsed: "tuple[Sequence[Any], Sequence[str | None]] | None" = None):
    """A RecordBatch of data rows (``kind`` 0) of one partition; ``arrival`` is one instant for
    every row or each row's in epoch microseconds; ``source_ts`` is the arrival.

    ``parsed``: the rows' documents (``VariantVal`` or ``None``) and errors, when the reader
    built them itself (e.g. Kafka's key and headers written into the document); else the text
    is read as the module docstring says."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from ..docs import NEEDS_PYTHON, parse_text

    schema = arrow_schema()
    n = len(raws)
    raw = pa.array(raws, pa.string())
    doc_type = schema.field("doc").type
    error_col = None
    if parsed is None:                      # the text: only Python's rows are parsed here
        python = pc.fill_null(pc.match_substring_regex(raw, NEEDS_PYTHON.pattern), True)
        python_rows = pc.indices_nonzero(python).to_pylist()
        # PLAIN: whole strings and no fraction outside them, so the normalisation changes nothing
        plain = pc.fill_null(pc.and_not(pc.and_not(pc.match_substring_regex(raw, WHOLE_STRINGS),
                                                   pc.match_substring_regex(raw, FRACTION_OUTSIDE_STRINGS)),
                                        python), False)
        error_col = pc.if_else(plain, pa.scalar(PLAIN, pa.string()), pa.scalar(None, pa.string()))
        if python_rows:
            parsed = ([None] * n, error_col.to_pylist())
            for i in python_rows:
                parsed[0][i], parsed[1][i] = parse_text(raws[i])
    if parsed is None:
        doc_col = pa.nulls(n, doc_type)
    else:
        doc_col = pa.array([None if d is None else {"value": d.value, "metadata": d.metadata} for d in parsed[0]],
                           doc_type)
        error_col = pa.array(parsed[1], pa.string())
    ts_type = schema.field("arrival").type
    arrivals = (pa.repeat(pa.scalar(arrival, ts_type), n) if isinstance(arrival, _dt.datetime)
                else pa.array(arrival, pa.int64()).cast(ts_type))
    columns = [
        pa.repeat(pa.scalar(partition, pa.string()), n),
        pa.array(offsets, pa.int64()),
        arrivals,
        raw,
        doc_col,
        error_col,
        pa.repeat(pa.scalar(DATA, pa.int8()), n),
        arrivals,
        pa.nulls(n, pa.string()) if keys is None else pa.array(keys, pa.string()),
    ]
    return pa.RecordBatch.from_arrays(columns, schema=schema)


def tick_batch(partition: str):
    """A clock-tick row (:func:`headrace.spark.sources.tick_row`) as a RecordBatch, for readers
    that yield RecordBatches (pyspark takes either tuples or batches from one reader, not both)."""
    import pyarrow as pa

    from . import tick_row

    row = tick_row(partition)
    schema = arrow_schema()
    return pa.RecordBatch.from_arrays([pa.array([v], f.type) for v, f in zip(row, schema)], schema=schema)


def as_tuples(items) -> list[tuple]:
    """What a reader yields (RecordBatches or tuples) as :data:`SOURCE_SCHEMA` tuples, ``doc`` a
    ``VariantVal`` (for tests and tools that look at rows one by one)."""
    from pyspark.sql.types import VariantVal

    out: list[tuple] = []
    for item in items:
        if isinstance(item, tuple):
            out.append(item)
            continue
        for r in item.to_pylist():
            d = r["doc"]
            r["doc"] = None if d is None else VariantVal(d["value"], d["metadata"])
            out.append(tuple(r.values()))
    return out
