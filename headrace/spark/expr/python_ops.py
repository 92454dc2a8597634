"""Operators computed in Python: ``$bsonSize``, and the ``xxh64`` digest of ``$hash``/``$hexHash``.

Catalyst has no BSON encoder, and its ``xxhash64`` has a fixed seed of 42 where MongoDB's is 0.
These run as pandas UDFs, over each Arrow batch, in a column of their own that the stage's
hoister computes before its projection (:func:`headrace.spark.hoist.hoisted_python`): Spark
refuses Python UDFs inside the lambdas expressions are built with. So they work in ``$project``,
``$addFields``/``$set``, ``$replaceRoot``/``$replaceWith`` and ``$match``, and are refused before
anything runs inside ``$map``/``$filter``/``$reduce``/``$let``, in windows and in other stages.

- ``$bsonSize``: the size in bytes of a document encoded as BSON (:func:`headrace.mql.bson.bson_size`);
  null for null or missing; an error for anything else. A small NumberLong counts 4 bytes, not 8
  (VARIANT keeps no int/long distinction for small values).
- ``xxh64``: seed 0, the 8 digest bytes big-endian, as MongoDB gives them (the ``xxhash`` library).

Golden cases (``tests/golden/cases/<name>.json``): ``$bsonSize`` project_bsonsize.
"""
from __future__ import annotations

from typing import Any

import pandas as pd
from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql.functions import pandas_udf

from .. import values as V
from ..hoist import hoisted_python
from ..registry import Compiled, Ctx, expression, first_error
from ._common import CODE, bytes_of, compile_args, found, nullish, with_codes
from ...mql.expressions import operands


def _xxh64_digests(b: pd.Series) -> pd.Series:
    """One Arrow batch of byte strings (None for SQL NULL) to their xxh64 digests."""
    import xxhash

    return b.map(lambda v: None if v is None else xxhash.xxh64(bytes(v), seed=0).digest())


def xxh64_digest(value: Column, op: str, ctx: Ctx) -> Column:
    """The xxh64 digest (BINARY) of ``value``'s bytes (a string's UTF-8 or binData's), hoisted."""
    udf = pandas_udf(_xxh64_digests, "binary")
    return hoisted_python(udf(bytes_of(value, V.type_code(value))), op, f"{ctx.where}.{op}" if ctx.where else op)


def _bson_sizes(docs: pd.Series) -> pd.Series:
    """One Arrow batch of VARIANT values (None for SQL NULL) to the BSON size of the documents."""
    from ...mql.bson import bson_size
    from ..docs import from_variant

    def size(v: Any) -> Any:
        d = None if v is None else from_variant(v)
        return bson_size(d) if isinstance(d, dict) else None
    return docs.map(size).astype("Int64")


@expression("$bsonSize")
def bson_size(arg: Any, ctx: Ctx) -> Compiled:
    """The BSON size of a document; null for null or missing; an error for anything else."""
    a = compile_args(operands(arg), ctx, "$bsonSize")[0]
    size = hoisted_python(pandas_udf(_bson_sizes, "long")(a.value), "$bsonSize",
                          f"{ctx.where}.$bsonSize" if ctx.where else "$bsonSize")

    def value(xs, cs):
        c = cs[0]
        return F.when(nullish(c), V.NULL).when(c == CODE["object"], V.from_long(size))

    def error(xs, cs):
        x, c = xs[0], cs[0]
        return F.when(~nullish(c) & (c != CODE["object"]),
                      F.concat(F.lit("$bsonSize requires a document input, found: "), found(x, c)))
    return Compiled(with_codes([a.value], value), first_error(a.error, with_codes([a.value], error)))
