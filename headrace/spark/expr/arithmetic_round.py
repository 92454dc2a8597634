"""Rounding: ``$ceil $floor $round $trunc`` (``$round`` rounds half to even; ``$round`` and
``$trunc`` take an optional place in (-20, 100)). Integers stay integers, decimals decimals;
a null or missing operand gives null, a non-number an error.

Golden cases (``tests/golden/cases/<name>.json``): ``$ceil`` project_ceil; ``$floor``
project_floor; ``$round`` project_round_place; ``$trunc`` project_trunc_place.
"""
from __future__ import annotations

from typing import Any, Callable

from pyspark.sql import Column
from pyspark.sql import functions as F

from .. import values as V
from ..registry import Compiled, Ctx, expression
from ._common import INT_CODES, compile_args, dbl, dec, errors_of, found, is_num, lng, nullish, operands, \
    v_decimal, v_double, v_long, with_codes
from .arithmetic import DECIMAL, DOUBLE, _dbl_special, _unary


def _ceil_floor(op: str, fn) -> Callable:
    def impl(arg: Any, ctx: Ctx) -> Compiled:
        def value(x, c):
            d = dbl(x)
            return (F.when(c.isin(*INT_CODES), x)
                    .when(c == DECIMAL, v_decimal(fn(dec(x)).cast("decimal(38,18)")))
                    .otherwise(F.when(_dbl_special(d), v_double(d)).otherwise(v_double(fn(d).cast("double")))))
        return _unary(op, arg, ctx, value)
    return impl


expression("$ceil")(_ceil_floor("$ceil", F.ceil))
expression("$floor")(_ceil_floor("$floor", F.floor))


def _round_like(op: str, arg: Any, ctx: Ctx, truncate: bool) -> Compiled:
    ops = operands(arg)
    place = ops[1] if len(ops) > 1 else 0
    args = compile_args(ops, ctx, op)
    const_place = isinstance(place, int) and not isinstance(place, bool)
    vals = [a.value for a in args]

    def rnd_dec(d: Column, p: int) -> Column:
        if truncate:
            return F.when(d >= 0, F.floor(d, p)).otherwise(F.ceil(d, p)).cast("decimal(38,18)")
        return F.bround(d, p).cast("decimal(38,18)")

    def rnd_long(l: Column, p: int) -> Column:
        if p >= 0:
            return l
        if truncate:
            m = F.lit(10 ** (-p)).cast("bigint")
            return l - (l % m)
        return F.bround(l, p).cast("bigint")

    def value_const(xs, cs):
        x, c = xs[0], cs[0]
        p = int(place)
        d = dbl(x)
        dd = d.try_cast("decimal(38,18)")
        # doubles are rounded through their decimal text (19.25 -> 19.2 at place 1)
        as_double = F.when(F.isnan(d) | F.abs(d).isin(float("inf")) | dd.isNull(),
                           v_double(d if truncate or p >= 0 else F.bround(d, p))).otherwise(
            v_double(rnd_dec(dd, p).cast("double")))
        return (F.when(c.isin(*INT_CODES), v_long(rnd_long(lng(x), p)))
                .when(c == DECIMAL, v_decimal(rnd_dec(dec(x), p)))
                .when(c == DOUBLE, as_double))

    def value_dyn(xs, cs):
        x, c, pv, pc = xs[0], cs[0], xs[1], cs[1]
        p = lng(pv)
        scale = F.pow(F.lit(10.0), p.cast("double"))
        d = dbl(x)
        r = (F.when(d >= 0, F.floor(d * scale)).otherwise(F.ceil(d * scale)) if truncate
             else F.rint(d * scale)) / scale
        return (F.when(nullish(pc), V.NULL)
                .when(c.isin(*INT_CODES), F.when(p >= 0, x).otherwise(v_long(r.cast("bigint"))))
                .when(is_num(c), F.when(c == DECIMAL, v_decimal(r.cast("decimal(38,18)"))).otherwise(v_double(r))))

    value_fn = value_const if const_place else value_dyn

    def value(xs, cs):
        null = nullish(cs[0]) if len(cs) == 1 else (nullish(cs[0]) | nullish(cs[1]))
        return F.when(null, V.NULL).when(is_num(cs[0]), value_fn(xs, cs))

    def error(xs, cs):
        x, c = xs[0], cs[0]
        e = F.when(~nullish(c) & ~is_num(c), F.concat(F.lit(f"{op} only supports numeric types, not "), found(x, c)))
        if len(xs) > 1 and not const_place:
            pv, pc = xs[1], cs[1]
            p = V_integral(pv)
            e = F.coalesce(e, F.when(~nullish(pc) & (p.isNull() | (p <= -20) | (p >= 100)),
                                     F.concat(F.lit(f"{op}: place must be an integer in (-20, 100), found "),
                                              found(pv, pc))))
        return e

    return Compiled(with_codes(vals, value), errors_of(args, with_codes(vals, error)))


def V_integral(x: Column) -> Column:
    return V.as_integral(x)


@expression("$round")
def round_(arg: Any, ctx: Ctx) -> Compiled:
    return _round_like("$round", arg, ctx, truncate=False)


@expression("$trunc")
def trunc(arg: Any, ctx: Ctx) -> Compiled:
    return _round_like("$trunc", arg, ctx, truncate=True)
