"""Comparison: ``$eq $ne $gt $gte $lt $lte $cmp`` over BSON's order of values across types.

Values of different types compare by type (MinKey < missing < null < numbers < strings <
objects < arrays < binData < ObjectId < bool < date < MaxKey); numbers by value across int,
long, double and decimal (NaN equals NaN and is below every other number); strings by binary
(simple collation) order. In expressions a missing value is below null, so
``{$eq: ["$nofield", null]}`` is false. ``$cmp`` gives -1, 0 or 1 (int); the others a bool.
These operators never fail.
"""
from __future__ import annotations

from typing import Any

from pyspark.sql import Column
from pyspark.sql import functions as F

from .. import values as V
from ..registry import Compiled, Ctx, expression
from ._common import CODE, INT_CODES, compile_args, dbl, errors_of, lng, v_long, with_codes

_TWO53 = float(2**53)


def compare3(a: Column, b: Column, ca: Column, cb: Column) -> Column:
    """-1/0/1 of two bound values with bound type codes (missing below null)."""
    da, db_ = dbl(a), dbl(b)
    num = ca.isin(CODE["int"], CODE["long"], CODE["double"]) & cb.isin(CODE["int"], CODE["long"], CODE["double"])
    ints = ca.isin(*INT_CODES) & cb.isin(*INT_CODES)
    sa, sb = F.try_variant_get(a, "$", "string"), F.try_variant_get(b, "$", "string")
    la, lb = lng(a), lng(b)

    def sign(x: Column, y: Column) -> Column:
        return F.when(x < y, F.lit(-1)).when(x > y, F.lit(1)).otherwise(F.lit(0))

    nan_a, nan_b = F.isnan(da), F.isnan(db_)
    dbl_cmp = (F.when(nan_a & nan_b, F.lit(0)).when(nan_a, F.lit(-1)).when(nan_b, F.lit(1))
               .otherwise(sign(da, db_)))
    missing = CODE["missing"]
    return (
        F.when((ca == missing) & (cb == missing), F.lit(0))
        .when(ca == missing, F.when(cb == CODE["minKey"], F.lit(1)).otherwise(F.lit(-1)))
        .when(cb == missing, F.when(ca == CODE["minKey"], F.lit(-1)).otherwise(F.lit(1)))
        .when(ints, sign(la, lb))
        .when(num & (F.abs(da) < _TWO53) & (F.abs(db_) < _TWO53), dbl_cmp)
        .when((ca == CODE["string"]) & (cb == CODE["string"]), sign(sa, sb))
        .when((ca == CODE["date"]) & (cb == CODE["date"]),
              sign(F.try_variant_get(a, "$", "timestamp"), F.try_variant_get(b, "$", "timestamp")))
        .otherwise(V.compare(a, b))
    )


_TESTS = {
    "$eq": lambda c: c == 0, "$ne": lambda c: c != 0, "$gt": lambda c: c > 0,
    "$gte": lambda c: c >= 0, "$lt": lambda c: c < 0, "$lte": lambda c: c <= 0,
}


def _make(op: str):
    def impl(arg: Any, ctx: Ctx) -> Compiled:
        args = compile_args(arg, ctx, op)
        vals = [a.value for a in args]
        if op == "$cmp":
            value = with_codes(vals, lambda xs, cs: v_long(compare3(xs[0], xs[1], cs[0], cs[1])))
        else:
            test = _TESTS[op]
            value = with_codes(vals, lambda xs, cs: test(compare3(xs[0], xs[1], cs[0], cs[1])).cast("variant"))
        return Compiled(value, errors_of(args))
    return impl


for _op in ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$cmp"):
    expression(_op)(_make(_op))
