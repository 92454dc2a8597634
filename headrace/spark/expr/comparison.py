"""Comparison: ``$eq $ne $gt $gte $lt $lte $cmp`` over BSON's order of values across types.

Values of different types compare by type (MinKey < missing < null < numbers < strings <
objects < arrays < binData < ObjectId < bool < date < timestamp < MaxKey); numbers by value across int,
long, double and decimal (NaN equals NaN and is below every other number); strings by binary
(simple collation) order. In expressions a missing value is below null, so
``{$eq: ["$nofield", null]}`` is false. ``$cmp`` gives -1, 0 or 1 (int); the others a bool.
These operators never fail.

Golden cases (``tests/golden/cases/<name>.json``): ``$cmp`` project_cmp; ``$eq`` project_eq;
``$gt`` match_not; ``$gte`` project_cond; ``$lt`` match_nor; ``$lte`` match_lte; ``$ne`` match_ne.
"""
from __future__ import annotations

from typing import Any

from pyspark.sql import Column
from pyspark.sql import functions as F

from .. import values as V
from ..registry import Compiled, Ctx, expression
from . import decimal128 as D
from ._common import CODE, INT_CODES, compile_args, dbl, dec, errors_of, lng, v_long, with_codes

def compare3(a: Column, b: Column, ca: Column, cb: Column, containers: bool = True) -> Column:
    """-1/0/1 of two bound values with bound type codes (missing below null).

    ``containers=False`` when at most one side can be an array or document (then they differ
    in type and the element-wise comparison is not needed)."""
    def sign(x: Column, y: Column) -> Column:
        return F.when(x < y, F.lit(-1)).when(x > y, F.lit(1)).otherwise(F.lit(0))

    ra, rb = V.rank_of_code(ca), V.rank_of_code(cb)
    da, db_ = dbl(a), dbl(b)
    nan_a, nan_b = F.isnan(da), F.isnan(db_)
    # doubles first; exact decimals / longs break ties of large or decimal values
    num_cmp = (F.when(nan_a & nan_b, F.lit(0)).when(nan_a, F.lit(-1)).when(nan_b, F.lit(1))
               .when(ca.isin(*INT_CODES) & cb.isin(*INT_CODES), sign(lng(a), lng(b)))
               .when(da != db_, sign(da, db_)))
    if D.possible([a, b]):      # a decimal against a number: exactly (a double by its shortest text)
        exact = (ca == CODE["decimal"]) | (cb == CODE["decimal"])
        num_cmp = num_cmp.when(exact, F.coalesce(D.compare(D.read_exact(a, ca), D.read_exact(b, cb)), F.lit(0)))
    num_cmp = num_cmp.otherwise(F.coalesce(sign(dec(a), dec(b)), F.lit(0)))

    def typed(t: str) -> Column:
        return sign(F.try_variant_get(a, "$", t), F.try_variant_get(b, "$", t))

    missing = CODE["missing"]
    return (
        F.when((ca == missing) & (cb == missing), F.lit(0))
        .when(ca == missing, F.when(cb == CODE["minKey"], F.lit(1)).otherwise(F.lit(-1)))
        .when(cb == missing, F.when(ca == CODE["minKey"], F.lit(-1)).otherwise(F.lit(1)))
        .when(ra != rb, sign(ra, rb))
        .when(ra == 3, num_cmp)
        .when(ca == CODE["string"], typed("string"))
        .when(ca == CODE["date"], typed("timestamp"))
        .when(ca == CODE["bool"], typed("boolean"))
        .when(ca == CODE["objectId"], sign(V.oid_hex(a), V.oid_hex(b)))
        .when(ca == CODE["binData"], sign(V.bin_key(a), V.bin_key(b)))
        .when(ca == CODE["timestamp"], sign(F.struct(*V.ts_parts(a)), F.struct(*V.ts_parts(b))))
        .when(F.lit(containers) & ca.isin(CODE["object"], CODE["array"]),
              V.compare_coded(a, b, ca, cb) if containers else F.lit(0))
        .otherwise(F.lit(0))
    )


def _may_be_container(expr: Any) -> bool:
    """False for constants that are not arrays or documents."""
    if isinstance(expr, dict) and len(expr) == 1 and "$literal" in expr:
        expr = expr["$literal"]
        return isinstance(expr, (list, dict))
    if isinstance(expr, str):
        return expr.startswith("$")
    return isinstance(expr, (list, dict))


_TESTS = {
    "$eq": lambda c: c == 0, "$ne": lambda c: c != 0, "$gt": lambda c: c > 0,
    "$gte": lambda c: c >= 0, "$lt": lambda c: c < 0, "$lte": lambda c: c <= 0,
}


def _make(op: str):
    def impl(arg: Any, ctx: Ctx) -> Compiled:
        args = compile_args(arg, ctx, op)
        vals = [a.value for a in args]
        both = _may_be_container(arg[0]) and _may_be_container(arg[1])
        if op == "$cmp":
            value = with_codes(vals, lambda xs, cs: v_long(compare3(xs[0], xs[1], cs[0], cs[1], both)))
        else:
            test = _TESTS[op]
            value = with_codes(vals, lambda xs, cs: test(compare3(xs[0], xs[1], cs[0], cs[1], both)).cast("variant"))
        return Compiled(value, errors_of(args))
    return impl


for _op in ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$cmp"):
    expression(_op)(_make(_op))
