"""Trigonometry: ``$sin $cos $tan $asin $acos $atan $atan2 $sinh $cosh $tanh $asinh $acosh
$atanh $degreesToRadians $radiansToDegrees``.

MongoDB semantics: null or missing gives null; a non-number is an error; the result is a double,
and a decimal for a decimal input, computed in Decimal128 to 34 digits: ``$degreesToRadians`` and
``$radiansToDegrees`` with MongoDB's constant in Catalyst; the others in Python
(:mod:`.decimal_exact`, where a stage's hoister runs; elsewhere the double result given as a
decimal of 15 significant digits, as MongoDB converts a double); ``$asin``/``$acos`` outside
[-1, 1], ``$acosh`` below 1 and ``$atanh`` outside [-1, 1] are errors (the row goes to the DLQ);
NaN stays NaN.

Golden cases (``tests/golden/cases/<name>.json``): ``$sin`` addfields_sin; ``$cos`` addfields_cos;
``$tan`` addfields_tan; ``$degreesToRadians`` addfields_degreestoradians; ``$atan2`` addfields_atan2;
``$acos`` addfields_acos; ``$acosh`` addfields_acosh; ``$asin`` addfields_asin; ``$asinh``
addfields_asinh; ``$atan`` addfields_atan; ``$atanh`` addfields_atanh; ``$cosh`` addfields_cosh;
``$sinh`` addfields_sinh; ``$tanh`` addfields_tanh (each also in degrees: ``*_degrees``);
``$radiansToDegrees`` addfields_radianstodegrees (the manual prints
``90.00000000000000000000000000000000`` where Decimal128 arithmetic with MongoDB's constant gives
``90.00000000000000000000000000000003``).
"""
from __future__ import annotations

import decimal
import math
from typing import Any

from pyspark.sql import functions as F

from ..registry import Compiled, Ctx, expression
from ._common import (
    compile_args, dbl, found, is_num, nullish, operands, v_double, with_codes, errors_of,
)
from .. import values as V
from . import decimal128 as D
from . import decimal_variant as DV
from . import decimal_exact
from .arithmetic import _double_fn, _unary

DECIMAL = V.CODE["decimal"]


def _between(lo: float, hi: float):
    return lambda d: (d >= lo) & (d <= hi)


_FNS = {
    "$sin": (F.sin, None), "$cos": (F.cos, None), "$tan": (F.tan, None),
    "$asin": (F.asin, _between(-1, 1)), "$acos": (F.acos, _between(-1, 1)), "$atan": (F.atan, None),
    "$sinh": (F.sinh, None), "$cosh": (F.cosh, None), "$tanh": (F.tanh, None),
    "$asinh": (F.asinh, None), "$acosh": (F.acosh, lambda d: d >= 1), "$atanh": (F.atanh, _between(-1, 1)),
    "$degreesToRadians": (lambda d: d * F.lit(math.pi / 180), None),
    "$radiansToDegrees": (lambda d: d * F.lit(180 / math.pi), None),
}
_PI = decimal.Context(prec=34).plus(decimal.Decimal("3.14159265358979323846264338327950288419716939937510"))
_DEC_FACTORS = {"$degreesToRadians": str(decimal.Context(prec=34).divide(_PI, 180)),
                "$radiansToDegrees": str(decimal.Context(prec=34).divide(decimal.Decimal(180), _PI))}
for _op, (_fn, _dom) in _FNS.items():
    _msg = f"cannot apply {_op} to value out of its domain, found "
    if _op not in _DEC_FACTORS:
        expression(_op)(_double_fn(_op, _fn, _dom, _msg))


def _angle(op: str, fn):
    """A decimal angle times MongoDB's Decimal128 constant (``kPi`` rounded to 34 digits, divided
    by 180 or 180 divided by it), rounded to 34 digits; other numbers as doubles."""
    factor_text = _DEC_FACTORS[op]

    def value(x, c):
        if not D.possible([x]):
            return v_double(fn(dbl(x)))
        return F.when(c == DECIMAL, DV.to_variant(D.mul(D.read(x, c), D.constant(factor_text)))).otherwise(
            v_double(fn(dbl(x))))
    return lambda arg, ctx: _unary(op, arg, ctx, value)


for _op in _DEC_FACTORS:
    expression(_op)(_angle(_op, _FNS[_op][0]))


@expression("$atan2")
def atan2(arg: Any, ctx: Ctx) -> Compiled:
    args = compile_args(operands(arg), ctx, "$atan2")
    args, exact = decimal_exact.exact("$atan2", args, ctx)

    def value(xs, cs):
        r = F.atan2(dbl(xs[0]), dbl(xs[1]))
        num = v_double(r)
        if D.possible(xs):
            dec = decimal_exact.decimal_result(r, exact)
            num = F.when((cs[0] == DECIMAL) | (cs[1] == DECIMAL), dec).otherwise(num)
        return F.when(nullish(cs[0]) | nullish(cs[1]), V.NULL).when(is_num(cs[0]) & is_num(cs[1]), num)

    def error(xs, cs):
        bad = [F.when(~nullish(c) & ~is_num(c), F.concat(F.lit("$atan2 only supports numeric types, not "), found(x, c)))
               for x, c in zip(xs, cs)]
        return F.when(~nullish(cs[0]) & ~nullish(cs[1]), F.coalesce(*bad))

    vals = [a.value for a in args]
    return Compiled(with_codes(vals, value), errors_of(args, with_codes(vals, error)))
