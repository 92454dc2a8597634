"""Parsing input text on the JVM.

Source readers hand over each record's raw text; plain JSON is parsed here with Spark's
``try_parse_json`` (about 2 µs per document, against ~29 µs to build VARIANT in Python), and
only text the JVM cannot read as MQL would (Extended JSON wrappers, ``NaN``, integers over 64
bits: see :func:`headrace.spark.docs.parse_in_reader`) is parsed by the reader in Python.

One normalisation keeps MQL's types: ``parse_json`` stores a fraction such as ``1.5`` as a
decimal, where MongoDB reads a double; a number with an exponent it stores as a double. So every
fraction outside string literals gets ``e0`` appended first (escaped quotes and backslashes
masked while the regular expression runs). That regular expression costs about six times the
parse itself (``benchmarks/PROFILE.md``), so a reader that has found, per Arrow batch, that a
text has no fraction outside its strings marks it :data:`~headrace.spark.sources.PLAIN` in
``error`` (:func:`headrace.spark.sources.arrow_rows.data_batch`), and such text is parsed as it
is: the normalisation would not change it.

Input that is not JSON, or not a JSON object, gets an error; the DLQ entry's reason is refined
from the raw text where it is written (:func:`headrace.spark.docs.parse_error`).
"""
from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from .. import values as V
from ..sources import PLAIN
from .records import NOT_JSON

_BS, _QT = "\u0001", "\u0002"      # never raw in JSON text: masks for \\ and \" while matching
_FRACTION = r'([0-9]\.[0-9]+)(?![0-9eE])(?=(?:[^"]*+"[^"]*+")*+[^"]*+$)'


def normalized(raw: Column) -> Column:
    """``raw`` with ``e0`` after every fraction outside string literals: one regular expression,
    a fraction being outside strings when an even number of quotes follows it (escaped quotes and
    backslashes masked first, in text that has any)."""
    def fix(text: Column) -> Column:
        return F.regexp_replace(text, _FRACTION, "$1e0")

    masked = F.replace(F.replace(raw, F.lit("\\\\"), F.lit(_BS)), F.lit('\\"'), F.lit(_QT))
    unmasked = F.replace(F.replace(fix(masked), F.lit(_QT), F.lit('\\"')), F.lit(_BS), F.lit("\\\\"))
    # ``contains`` tests the first byte at each position; ``instr`` compares the needle at
    # every character (UTF8String.indexOf), a few % of a solar batch's executor time
    return F.when(raw.contains("\\"), unmasked).otherwise(fix(raw))


def parse_columns(is_data: Column) -> list[dict[str, Column]]:
    """The two column steps that fill ``doc`` and ``error`` of source rows the reader left to the
    JVM (``doc`` NULL, ``error`` NULL or :data:`~headrace.spark.sources.PLAIN`), through a
    temporary ``_pj`` (dropped by the caller). Text marked PLAIN is parsed without the
    normalisation; every such row's ``error`` becomes NULL or :data:`NOT_JSON`."""
    plain = F.col("error").eqNullSafe(F.lit(PLAIN))
    todo = is_data & F.col("doc").isNull() & (F.col("error").isNull() | plain)
    ok = V.is_object_raw(F.col("_pj"))
    text = F.when(plain, F.col("raw")).otherwise(normalized(F.col("raw")))
    return [{"_pj": F.when(todo, F.try_parse_json(text))},
            {"doc": F.when(todo, F.when(ok, F.col("_pj"))).otherwise(F.col("doc")),
             "error": F.when(todo, F.when(~F.coalesce(ok, F.lit(False)), F.lit(NOT_JSON)))
                       .otherwise(F.col("error"))}]


def parse(df: DataFrame, is_data: Column) -> DataFrame:
    """Fill ``doc`` and ``error`` of source rows the reader left to the JVM (both NULL)."""
    for cols in parse_columns(is_data):
        df = df.withColumns(cols)
    return df.drop("_pj")
