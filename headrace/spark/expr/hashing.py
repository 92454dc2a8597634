"""``$hash`` and ``$hexHash`` (MongoDB 8.3): a digest of a UTF-8 string or binData.

MongoDB semantics: ``{$hash: {input, algorithm}}`` is the digest as binData (subtype 0),
``{$hexHash: {input, algorithm}}`` the same digest as an uppercase hexadecimal string (32 or 64
characters); ``algorithm`` is a constant, ``"md5"`` or ``"sha256"`` (Spark's own functions). A
null or missing input gives null; any other type is an error (the row goes to the DLQ).

``"xxh64"`` (seed 0, the 8 bytes big-endian, as MongoDB gives them) runs in Python, as a column
of its own (:mod:`.python_ops`): it works in ``$project``, ``$addFields``/``$set``,
``$replaceRoot``/``$replaceWith`` and ``$match``, and is refused elsewhere.

Golden cases (``tests/golden/cases/<name>.json``): ``$hash`` project_hash, ``$hexHash``
project_hexhash (both with ``xxh64``: project_hexhash_xxh64).
"""
from __future__ import annotations

from typing import Any

from pyspark.sql import Column
from pyspark.sql import functions as F

from .. import values as V
from ..registry import Compiled, Ctx, expression, first_error
from ._common import CODE, bytes_of, compile_child, found, nullish, v_string, with_codes
from .python_ops import xxh64_digest


def _digest(b: Column, algorithm: str) -> Column:
    if algorithm == "md5":
        return F.unhex(F.md5(b))
    return F.unhex(F.sha2(b, 256))


def _hashing(op: str, hex_: bool):
    def compile_(arg: Any, ctx: Ctx) -> Compiled:
        a = compile_child(arg["input"], ctx, op, "input")
        algorithm = arg["algorithm"]
        xxh = xxh64_digest(a.value, op, ctx) if algorithm == "xxh64" else None

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
