"""``$hash`` and ``$hexHash`` (MongoDB 8.3): a digest of a UTF-8 string or binData.

MongoDB semantics: ``{$hash: {input, algorithm}}`` is the digest as binData (subtype 0),
``{$hexHash: {input, algorithm}}`` the same digest as an uppercase hexadecimal string (32 or 64
characters); ``algorithm`` is a constant, ``"md5"`` or ``"sha256"`` (Spark's own functions). A
null or missing input gives null; any other type is an error (the row goes to the DLQ).

``"xxh64"`` (seed 0, the 8 bytes big-endian, as MongoDB gives them) runs in Python (the
``xxhash`` library) over each Arrow batch: Catalyst's ``xxhash64`` has a fixed seed of 42, and a
Python UDF cannot run inside the lambdas expressions are built with, so the digest is a column
of its own, computed before the stage's projection (:mod:`headrace.spark.hoist`). That needs the
stage's hoister and an input that reads no lambda variable: ``xxh64`` works in ``$project``,
``$addFields``/``$set``, ``$replaceRoot``/``$replaceWith`` and ``$match``'s ``$expr``, and is
refused (``EXPR_NOT_SUPPORTED_YET``) inside ``$map``/``$filter``/``$reduce``/``$let`` and inside
windows.

Golden cases (``tests/golden/cases/<name>.json``): ``$hash`` project_hash, ``$hexHash``
project_hexhash (both with ``xxh64``: project_hexhash_xxh64).
"""
from __future__ import annotations

from typing import Any

import pandas as pd
from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql.functions import pandas_udf

from ...errors import NotSupportedYet
from .. import values as V
from ..hoist import SHARE, _in_lambda_body
from ..registry import Compiled, Ctx, expression, first_error
from ._common import CODE, bytes_of, compile_child, found, nullish, v_string, with_codes


def _digest(b: Column, algorithm: str) -> Column:
    if algorithm == "md5":
        return F.unhex(F.md5(b))
    return F.unhex(F.sha2(b, 256))


def _xxh64_digests(b: pd.Series) -> pd.Series:
    """One Arrow batch of byte strings (None for SQL NULL) to their xxh64 digests."""
    import xxhash

    return b.map(lambda v: None if v is None else xxhash.xxh64(bytes(v), seed=0).digest())


def _xxh64_udf():
    return pandas_udf(_xxh64_digests, "binary")


def _xxh64(value: Column, op: str, ctx: Ctx) -> Column:
    """The xxh64 digest of ``value``'s bytes, as a hoisted column (see the module docstring)."""
    share = SHARE.get()
    if share is None or _in_lambda_body():
        raise NotSupportedYet("EXPR_NOT_SUPPORTED_YET",
                              f"{op} with 'xxh64' is supported in $project, $addFields/$set, $replaceRoot/"
                              "$replaceWith and $match, not inside $map/$filter/$reduce/$let or a window yet",
                              path=f"{ctx.where}.{op}.algorithm" if ctx.where else None)
    return share(_xxh64_udf()(bytes_of(value, V.type_code(value))))


def _hashing(op: str, hex_: bool):
    def compile_(arg: Any, ctx: Ctx) -> Compiled:
        a = compile_child(arg["input"], ctx, op, "input")
        algorithm = arg["algorithm"]
        xxh = _xxh64(a.value, op, ctx) if algorithm == "xxh64" else None

        def value(xs, cs):
            x, c = xs[0], cs[0]
            digest = xxh if xxh is not None else _digest(bytes_of(x, c), algorithm)
            out = v_string(F.hex(digest)) if hex_ else digest.cast("variant")
            return F.when(nullish(c), V.NULL).when(c.isin(CODE["string"], CODE["binData"]), out)

        def error(xs, cs):
            x, c = xs[0], cs[0]
            return F.when(~nullish(c) & ~c.isin(CODE["string"], CODE["binData"]),
                          F.concat(F.lit(f"{op} requires a string or BinData input, found: "), found(x, c)))
        return Compiled(with_codes([a.value], value), first_error(a.error, with_codes([a.value], error)))
    return compile_


expression("$hash")(_hashing("$hash", hex_=False))
expression("$hexHash")(_hashing("$hexHash", hex_=True))
