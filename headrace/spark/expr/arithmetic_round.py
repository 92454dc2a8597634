"""Rounding: ``$ceil $floor $round $trunc`` (``$round`` rounds half to even; ``$round`` and
``$trunc`` take an optional place in (-20, 100)). Integers stay integers, decimals decimals;
a null or missing operand gives null, a non-number an error. Decimals round exactly at any
magnitude, as MongoDB's ``Decimal128::quantize`` (:mod:`.decimal_quantize`); a result that would
need more than 34 digits is NaN, as there.

Golden cases (``tests/golden/cases/<name>.json``): ``$ceil`` project_ceil; ``$floor``
project_floor; ``$round`` project_round_place; ``$trunc`` project_trunc_place; decimals
project_decimal_rounding.
"""
from __future__ import annotations

from typing import Any, Callable

from pyspark.sql import Column
from pyspark.sql import functions as F

from .. import values as V
from ..registry import Compiled, Ctx, expression
from ._common import INT_CODES, compile_args, dbl, errors_of, found, is_num, lng, nullish, operands, v_double, \
    v_long, with_codes
from . import decimal128 as D
from . import decimal_variant as DV
from .arithmetic import DECIMAL, DOUBLE, _dbl_special, _unary
from .decimal_quantize import quantize

def decimal_rounded(x: Column, exp: int | Column, mode: str) -> Column:
    """The VARIANT of bound decimal ``x`` rounded to a multiple of ``10**exp``
    (:func:`.decimal_quantize.quantize`); MongoDB's NaN when that needs more than 34 digits."""
    return DV.to_variant_or_nan(quantize(D.read_decimal(x), exp, mode))


def _ceil_floor(op: str, fn, mode: str) -> Callable:
    def impl(arg: Any, ctx: Ctx) -> Compiled:
        def value(x, c):
            d = dbl(x)
            out = F.when(c.isin(*INT_CODES), x)
            if D.possible([x]):
                out = out.when(c == DECIMAL, decimal_rounded(x, 0, mode))
            return out.otherwise(F.when(_dbl_special(d), v_double(d)).otherwise(v_double(fn(d).cast("double"))))
        return _unary(op, arg, ctx, value)
    return impl


expression("$ceil")(_ceil_floor("$ceil", F.ceil, "ceiling"))
expression("$floor")(_ceil_floor("$floor", F.floor, "floor"))


def _round_like(op: str, arg: Any, ctx: Ctx, truncate: bool) -> Compiled:
    ops = operands(arg)
    place = ops[1] if len(ops) > 1 else 0
    args = compile_args(ops, ctx, op)
    const_place = isinstance(place, int) and not isinstance(place, bool)
    vals = [a.value for a in args]
    mode = "down" if truncate else "even"

    def rnd_dec(d: Column, p: int) -> Column:
        if truncate:
            return F.when(d >= 0, F.floor(d, p)).otherwise(F.ceil(d, p)).cast("decimal(38,18)")
        return F.bround(d, p).cast("decimal(38,18)")

    def rnd_long(l: Column, p: int) -> Column:
        if p >= 0:
            return l
        if truncate:
            if -p > 18:         # beyond any long's digits
                return F.lit(0).cast("bigint")
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
        out = F.when(c.isin(*INT_CODES), v_long(rnd_long(lng(x), p)))
        if D.possible([x]):
            out = out.when(c == DECIMAL, decimal_rounded(x, -p, mode))
        return out.when(c == DOUBLE, as_double)

    def value_dyn(xs, cs):
        x, c, pv, pc = xs[0], cs[0], xs[1], cs[1]
        p = lng(pv)
        scale = F.pow(F.lit(10.0), p.cast("double"))
        d = dbl(x)
        r = (F.when(d >= 0, F.floor(d * scale)).otherwise(F.ceil(d * scale)) if truncate
             else F.rint(d * scale)) / scale
        return (F.when(nullish(pc), V.NULL)
                .when(c.isin(*INT_CODES), F.when(p >= 0, x).otherwise(v_long(r.cast("bigint"))))
                .when(c == DECIMAL, decimal_rounded(x, -p, mode))
                .when(is_num(c), v_double(r)))

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
