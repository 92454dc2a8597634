"""Decimal128 results of MongoDB's transcendental operators, for decimal inputs.

MongoDB computes ``$sin $cos $tan $asin $acos $atan $atan2 $sinh $cosh $tanh $asinh $acosh
$atanh $sqrt $exp $ln $log10 $log $pow`` of a Decimal128 in Decimal128 (Intel's decimal
library): 34 significant digits, where a double input gives a double. Here each is computed with
Python's :mod:`decimal` at :data:`GUARD` digits beyond 34 and rounded once to 34 digits, ties to
even, in Decimal128's exponent range (an overflow gives an infinity). ``$sqrt $exp $ln $log10``
are correctly rounded (the :mod:`decimal` module's own; ``$pow`` almost always, and ``$log``
divides the two rounded natural logarithms, as MongoDB); the others are within a unit in the
34th digit of the exact value, and so may differ there from MongoDB's, which is not always
correctly rounded either (``atan2(4, 3)`` is ``0.9272952180016122324285124629224288`` to 34
digits, the manual's ``...287`` is ``atan`` of ``4 / 3`` rounded to 34 digits: so ``$atan2``
divides first, as MongoDB does).

:func:`compute` takes the operands' decimal texts and gives the result's text
(``"0.8000000000000000000000000000000000"``, ``"1.2E+20"``, ``"Infinity"``, ``"NaN"``), or
``None`` outside the operator's domain (``$acos`` of 1.5, ``$ln`` of 0: an error in MongoDB).
Only finite operands are given to it; NaN and the infinities keep the double path.
"""
from __future__ import annotations

import decimal
import functools
from decimal import Decimal
from typing import Callable

DIGITS = 34
GUARD = 50            # working digits beyond the result's 34
_TINY = -20           # below 10**-20, f(x) = x + c x**3 exactly enough (the next term is 10**-80 of x)
_OUT = decimal.Context(prec=DIGITS, rounding=decimal.ROUND_HALF_EVEN, Emax=6144, Emin=-6143, traps=[])


def _work(extra: int = 0) -> decimal.Context:
    return decimal.Context(prec=DIGITS + GUARD + extra, rounding=decimal.ROUND_HALF_EVEN,
                           Emax=decimal.MAX_EMAX, Emin=decimal.MIN_EMIN, traps=[])


@functools.lru_cache(maxsize=16)
def _pi(prec: int) -> Decimal:
    """pi to ``prec`` digits (Machin's formula in integers)."""
    scale = 10 ** (prec + 10)

    def arctan_inv(x: int) -> int:
        term = total = scale // x
        x2, n, sign = x * x, 1, 1
        while term:
            term //= x2
            n += 2
            sign = -sign
            total += sign * (term // n)
        return total
    c = decimal.Context(prec=prec, Emax=decimal.MAX_EMAX, Emin=decimal.MIN_EMIN)
    return c.scaleb(c.create_decimal(16 * arctan_inv(5) - 4 * arctan_inv(239)), -(prec + 10))


def _series(first: Decimal, ratio: Callable[[int], Decimal], c: decimal.Context) -> Decimal:
    """``first + t1 + t2 ...`` with ``t(k) = t(k-1) * ratio(k)``, until terms no longer count."""
    total, term, k = first, first, 0
    while True:
        k += 1
        term = c.multiply(term, ratio(k))
        if term.is_zero() or (not total.is_zero() and term.adjusted() < total.adjusted() - c.prec - 2):
            return c.add(total, term)
        total = c.add(total, term)


def _sin_cos(x: Decimal) -> tuple[Decimal, Decimal]:
    extra = max(0, x.adjusted()) + 5
    c = _work(extra)
    half = c.divide(_pi(c.prec + 5), 2)
    k = c.divide(x, half).to_integral_value(decimal.ROUND_HALF_EVEN)
    c, r = _work(5), c.subtract(x, c.multiply(k, half))     # |r| <= pi/4, to the digits it has
    r = c.plus(r)
    r2 = c.multiply(r, r)
    s = _series(r, lambda i: c.divide(c.minus(r2), (2 * i) * (2 * i + 1)), c) if not r.is_zero() else r
    co = _series(Decimal(1), lambda i: c.divide(c.minus(r2), (2 * i - 1) * (2 * i)), c)
    q = int(k) % 4
    return ((s, co), (co, -s), (-s, -co), (-co, s))[q]


def _atan(x: Decimal, c: decimal.Context) -> Decimal:
    if x.is_zero():
        return x
    if abs(x) > 1:
        half = c.divide(_pi(c.prec + 5), 2)
        return c.subtract(half.copy_sign(x), _atan(c.divide(1, x), c))
    k = 0
    while abs(x) > Decimal("0.01"):          # atan(x) = 2 atan(x / (1 + sqrt(1 + x^2)))
        x = c.divide(x, c.add(1, c.sqrt(c.add(1, c.multiply(x, x)))))
        k += 1
    x2 = c.multiply(x, x)
    return c.multiply(_series(x, lambda i: c.divide(c.multiply(c.minus(x2), 2 * i - 1), 2 * i + 1), c), 2 ** k)


def _odd(num: int, den: int, body: Callable[[Decimal], Decimal | None]) -> Callable[[Decimal], Decimal | None]:
    """An odd function: ``x + (num / den) x**3`` for ``|x|`` below 10**-20 (the next term is
    10**-80 of ``x``, where ``body`` would lose digits), else ``body(x)``."""
    def f(x: Decimal) -> Decimal | None:
        if x.is_zero() or x.adjusted() >= _TINY:
            return body(x)
        c = _work()
        return c.add(x, c.multiply(c.divide(num, den), c.power(x, 3)))
    return f


def _sinh_cosh(x: Decimal) -> tuple[Decimal, Decimal]:
    c = _work(max(0, -x.adjusted()))
    e = c.exp(x)
    inv = c.divide(1, e) if not e.is_infinite() else Decimal(0)
    return c.divide(c.subtract(e, inv), 2), c.divide(c.add(e, inv), 2)


def _ratio(pair: tuple[Decimal, Decimal]) -> Decimal:
    return _work().divide(*pair)


def _cos(x):
    return _sin_cos(x)[1]


def _asin(x):
    if abs(x) > 1:
        return None
    c = _work()
    if abs(x) == 1:
        return c.divide(_pi(c.prec + 5), 2).copy_sign(x)
    return _atan(c.divide(x, c.sqrt(c.subtract(1, c.multiply(x, x)))), c)


def _acos(x):
    if abs(x) > 1:
        return None
    c = _work()
    if x == -1:
        return _pi(c.prec)
    return c.multiply(2, _atan(c.sqrt(c.divide(c.subtract(1, x), c.add(1, x))), c))


def _cosh(x):
    return _sinh_cosh(x)[1]


def _tanh(x):
    if abs(x) > 100:                           # 1 - tanh(100) is below 10**-86
        return Decimal(1).copy_sign(x)
    return _ratio(_sinh_cosh(x))


def _asinh(x):
    c = _work(max(0, -x.adjusted()))
    a = abs(x)
    return c.ln(c.add(a, c.sqrt(c.add(c.multiply(a, a), 1)))).copy_sign(x)


def _acosh(x):
    if x < 1:
        return None
    c = _work()
    return c.ln(c.add(x, c.sqrt(c.subtract(c.multiply(x, x), 1))))


def _atanh(x):
    if abs(x) > 1:
        return None
    if abs(x) == 1:
        return Decimal("Infinity").copy_sign(x)
    c = _work(max(0, -x.adjusted()))
    return c.divide(c.ln(c.divide(c.add(1, x), c.subtract(1, x))), 2)


def _atan2(y: Decimal, x: Decimal) -> Decimal:
    c = _work()
    pi = _pi(c.prec + 5)
    if x.is_zero():
        if y.is_zero():
            return pi.copy_sign(y) if x.is_signed() else y
        return c.divide(pi, 2).copy_sign(y)
    a = _atan(_OUT.divide(y, x), c)          # MongoDB divides in Decimal128 first
    if x > 0:
        return a
    return c.add(a, pi) if not y.is_signed() else c.subtract(a, pi)


def _domain(pred: Callable[[Decimal], bool], fn: Callable[[Decimal], Decimal]) -> Callable[[Decimal], Decimal | None]:
    return lambda x: fn(x) if pred(x) else None


#: operator -> function of the operands (finite Decimals) to the exact-enough result, or None
#: outside the domain
FUNCTIONS: dict[str, Callable[..., Decimal | None]] = {
    "$sin": _odd(-1, 6, lambda x: _sin_cos(x)[0]), "$cos": _cos, "$tan": _odd(1, 3, lambda x: _ratio(_sin_cos(x))),
    "$asin": _odd(1, 6, _asin), "$acos": _acos, "$atan": _odd(-1, 3, lambda x: _atan(x, _work())),
    "$sinh": _odd(1, 6, lambda x: _sinh_cosh(x)[0]), "$cosh": _cosh, "$tanh": _odd(-1, 3, _tanh),
    "$asinh": _odd(-1, 6, _asinh), "$acosh": _acosh, "$atanh": _odd(1, 3, _atanh),
    "$atan2": _atan2,
    "$sqrt": _domain(lambda x: not x.is_signed() or x.is_zero(), lambda x: _OUT.sqrt(x)),
    "$exp": lambda x: _OUT.exp(x),
    "$ln": _domain(lambda x: x > 0, lambda x: _OUT.ln(x)),
    "$log10": _domain(lambda x: x > 0, lambda x: _OUT.log10(x)),
    # MongoDB: Decimal128::logarithm(base) divides the two natural logarithms, each rounded
    "$log": lambda x, b: (_OUT.divide(_OUT.ln(x), _OUT.ln(b)) if x > 0 and b > 0 and b != 1 else None),
    "$pow": lambda b, e: _OUT.power(b, e),
}


def compute(op: str, *texts: str) -> str | None:
    """The text of ``op`` of the decimals ``texts`` (finite), rounded to 34 digits as Decimal128;
    None outside the operator's domain."""
    args = [Decimal(t) for t in texts]
    with decimal.localcontext(_work()):      # no step falls back to the thread's 28 digits
        out = FUNCTIONS[op](*args)
    if out is None:
        return None
    return str(_OUT.plus(out))
