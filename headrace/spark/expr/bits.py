"""Bitwise: ``$bitAnd $bitOr $bitXor`` (any number of int / long operands) and ``$bitNot``.

MongoDB semantics: a null or missing operand gives null; an operand that is not an int or long
is an error (the row goes to the DLQ); the result is an int when every operand is an int, else
a long. No operands give the identity (``-1`` for ``$bitAnd``, ``0`` otherwise).

Golden cases (``tests/golden/cases/<name>.json``): ``$bitAnd`` project_bitwise; ``$bitNot``
project_bitwise; ``$bitOr`` project_bitwise; ``$bitXor`` project_bitwise.
"""
from __future__ import annotations

from typing import Any

from pyspark.sql import Column
from pyspark.sql import functions as F

from .. import values as V
from ..registry import Compiled, Ctx, expression
from ._common import CODE, INT_CODES, any_, compile_args, errors_of, found, lng, nullish, operands, with_codes

INT = CODE["int"]
_INT_MIN, _INT_MAX = -(2**31), 2**31 - 1


def _as_int_or_long(r: Column, all_int: Column) -> Column:
    # an all-int result is a 32-bit value: keep its two's complement sign
    r32 = F.when(r > _INT_MAX, r - F.lit(2**32)).otherwise(r)
    return F.when(all_int, r32).otherwise(r).cast("bigint").cast("variant")


def _bit_op(op: str, fn, identity: int):
    def impl(arg: Any, ctx: Ctx) -> Compiled:
        args = compile_args(operands(arg), ctx, op)
        vals = [a.value for a in args]
        if not vals:
            return Compiled(V.lit_value(identity))

        def value(xs, cs):
            out = lng(xs[0])
            for x in xs[1:]:
                out = fn(out, lng(x))
            all_int = F.lit(True)
            for c in cs:
                all_int = all_int & (c == INT)
            ok = F.lit(True)
            for c in cs:
                ok = ok & c.isin(*INT_CODES)
            return F.when(any_([nullish(c) for c in cs]), V.NULL).when(ok, _as_int_or_long(out, all_int))

        def error(xs, cs):
            bad = [F.when(~nullish(c) & ~c.isin(*INT_CODES),
                          F.concat(F.lit(f"{op} only supports int and long operands, not "), found(x, c)))
                   for x, c in zip(xs, cs)]
            return F.coalesce(*bad) if len(bad) > 1 else bad[0]

        return Compiled(with_codes(vals, value), errors_of(args, with_codes(vals, error)))
    return impl


expression("$bitAnd")(_bit_op("$bitAnd", lambda a, b: a.bitwiseAND(b), -1))
expression("$bitOr")(_bit_op("$bitOr", lambda a, b: a.bitwiseOR(b), 0))
expression("$bitXor")(_bit_op("$bitXor", lambda a, b: a.bitwiseXOR(b), 0))


@expression("$bitNot")
def bit_not(arg: Any, ctx: Ctx) -> Compiled:
    args = compile_args(operands(arg), ctx, "$bitNot")

    def value(xs, cs):
        x, c = xs[0], cs[0]
        return F.when(nullish(c), V.NULL).when(c.isin(*INT_CODES), F.bitwise_not(lng(x)).cast("variant"))

    def error(xs, cs):
        x, c = xs[0], cs[0]
        return F.when(~nullish(c) & ~c.isin(*INT_CODES),
                      F.concat(F.lit("$bitNot only supports int and long, not "), found(x, c)))

    return Compiled(with_codes([args[0].value], value), errors_of(args, with_codes([args[0].value], error)))
