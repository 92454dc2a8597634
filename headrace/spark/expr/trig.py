"""Trigonometry: ``$sin $cos $tan $asin $acos $atan $atan2 $sinh $cosh $tanh $asinh $acosh
$atanh $degreesToRadians $radiansToDegrees``.

MongoDB semantics: null or missing gives null; a non-number is an error; the result is a double
(a decimal for decimal input); ``$asin``/``$acos`` outside [-1, 1], ``$acosh`` below 1 and
``$atanh`` outside [-1, 1] are errors (the row goes to the DLQ); NaN stays NaN.

Golden cases (``tests/golden/cases/<name>.json``): ``$sin`` addfields_sin; ``$cos`` addfields_cos;
``$tan`` addfields_tan; ``$atan2`` addfields_atan2, ``$degreesToRadians`` addfields_degreestoradians
and ``$radiansToDegrees`` addfields_radianstodegrees (known differences: the manual's Decimal128
results have 34 digits, headrace's 16). No golden case yet: ``$acos`` ``$acosh`` ``$asin``
``$asinh`` ``$atan`` ``$atanh`` ``$cosh`` ``$sinh`` ``$tanh``.
"""
from __future__ import annotations

import math
from typing import Any

from pyspark.sql import functions as F

from ..registry import Compiled, Ctx, expression
from ._common import compile_args, dbl, found, is_num, nullish, operands, v_decimal, v_double, with_codes, errors_of
from .. import values as V
from .arithmetic import _double_fn

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
for _op, (_fn, _dom) in _FNS.items():
    _msg = f"cannot apply {_op} to value out of its domain, found "
    expression(_op)(_double_fn(_op, _fn, _dom, _msg))


@expression("$atan2")
def atan2(arg: Any, ctx: Ctx) -> Compiled:
    args = compile_args(operands(arg), ctx, "$atan2")

    def value(xs, cs):
        r = F.atan2(dbl(xs[0]), dbl(xs[1]))
        return (F.when(nullish(cs[0]) | nullish(cs[1]), V.NULL)
                .when(is_num(cs[0]) & is_num(cs[1]),
                      F.when((cs[0] == DECIMAL) | (cs[1] == DECIMAL), v_decimal(r.try_cast("decimal(38,18)")))
                      .otherwise(v_double(r))))

    def error(xs, cs):
        bad = [F.when(~nullish(c) & ~is_num(c), F.concat(F.lit("$atan2 only supports numeric types, not "), found(x, c)))
               for x, c in zip(xs, cs)]
        return F.when(~nullish(cs[0]) & ~nullish(cs[1]), F.coalesce(*bad))

    vals = [a.value for a in args]
    return Compiled(with_codes(vals, value), errors_of(args, with_codes(vals, error)))
