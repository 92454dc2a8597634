"""Decimal128 rounding to a place and remainders, on :mod:`.decimal128`'s ``{n, d, e}`` structs.

MongoDB rounds a decimal with ``Decimal128::quantize`` (``$round``: ties to even, ``$trunc``:
toward zero; ``$ceil``/``$floor``: toward +/- infinity at place 0) and takes ``$mod`` of decimals
with ``Decimal128::modulo`` (the exact remainder, with the dividend's sign). Both are exact
whatever the operands' magnitudes, where ``DECIMAL(38,18)`` lost digits past the 18th fractional
place and gave nothing beyond 20 integer digits (``$round`` of ``1.5E+30`` was missing).

Golden case: ``project_decimal_rounding``.
"""
from __future__ import annotations

import decimal

from pyspark.sql import Column
from pyspark.sql import functions as F

from .. import values as V
from .decimal128 import DIGITS, _strip, make

#: rounding modes of :func:`quantize`
MODES = ("even", "down", "floor", "ceiling")


def quantize(s: Column, exp: int | Column, mode: str) -> Column:
    """``s`` rounded to a multiple of ``10**exp`` at exponent ``exp`` (IEEE 754's quantize, as
    MongoDB's ``Decimal128::quantize``; ``mode``: ties to ``even``, ``down`` toward zero,
    ``floor``, ``ceiling``): ``2E+1`` at place -1, ``-2.000`` at place 3, ``1.5E+30`` at place 0 is
    ``1500000000000000000000000000000``. NULL when the result would need more than 34 digits
    (MongoDB's NaN: ``1E+40`` at place 0)."""
    assert mode in MODES
    x = exp if isinstance(exp, Column) else F.lit(exp)

    def body(s: Column, x: Column) -> Column:
        d = s["d"]
        keep = F.length(d) + s["e"] - x                      # digits at 10**exp and above
        pad = F.greatest(F.lit(0), F.lit(1) - keep)           # at least one kept digit: "0"
        dd = F.concat(F.repeat(F.lit("0"), pad), d)
        n = keep + pad
        q, r = F.substr(dd, F.lit(1), n), F.substr(dd, n + 1, F.length(dd) - n)
        nonzero = r.rlike("[1-9]")
        if mode == "even":
            half = F.rpad(F.lit("5"), F.length(r), "0")
            odd = F.substr(q, n, F.lit(1)).isin("1", "3", "5", "7", "9")
            up = (r > half) | ((r == half) & odd)
        elif mode == "down":
            up = F.lit(False)
        elif mode == "floor":
            up = s["n"] & nonzero
        else:
            up = ~s["n"] & nonzero
        q1 = F.when(up, (q.cast(f"decimal({DIGITS + 1},0)") + F.lit(1)).cast("string")).otherwise(q)
        out = V.let(_strip(q1), lambda digits: make(s["n"], digits, x))      # -0.4 at place 0: -0
        return (F.when(d == "0", make(s["n"], d, x))
                .when(s["e"] >= x, F.when(F.length(d) + s["e"] - x <= DIGITS,
                                          make(s["n"], F.concat(d, F.repeat(F.lit("0"), s["e"] - x)), x)))
                .when(n > DIGITS, F.lit(None))
                .otherwise(out))
    return V.let_many([s, x], body)


def _remainder(num: Column, divisor: Column) -> Column:
    """The remainder of the integer of digit text ``num`` by the integer of digit text
    ``divisor`` (at most 34 digits), four digits at a time."""
    def body(num: Column) -> Column:
        div = divisor.cast(f"decimal({DIGITS},0)")
        steps = F.ceil(F.length(num) / 4).cast("int")

        def step(r: Column, i: Column) -> Column:
            x = (r * F.lit(decimal.Decimal(10000)) + F.substr(num, i * 4 + 1, F.lit(4)).cast("decimal(4,0)"))
            x = x.cast("decimal(38,0)")
            r = x - F.floor(x / div) * div       # the quotient is rounded, so maybe one too many
            return F.when(r < 0, r + div).otherwise(r).cast(f"decimal({DIGITS},0)")
        return F.aggregate(F.sequence(F.lit(0), steps - 1), F.lit(0).cast(f"decimal({DIGITS},0)"), step)
    return V.let(F.lpad(num, F.ceil(F.length(num) / 4).cast("int") * 4, "0"), body)


def fmod(a: Column, b: Column) -> Column:
    """The exact remainder of ``a / b`` truncated (``b`` not zero), with ``a``'s sign: ``a``
    itself when ``|a| < |b|``, else the two aligned to their smaller exponent and the integer
    remainder taken by long division (the divisor then has at most 34 digits)."""
    def body(a: Column, b: Column) -> Column:
        ta, tb = F.length(a["d"]) + a["e"], F.length(b["d"]) + b["e"]
        e = F.least(a["e"], b["e"])
        num = F.concat(a["d"], F.repeat(F.lit("0"), a["e"] - e))
        den = F.concat(b["d"], F.repeat(F.lit("0"), b["e"] - e))
        smaller = (ta < tb) | ((ta == tb) & (F.rpad(a["d"], 40, "0") < F.rpad(b["d"], 40, "0")))
        rem = V.let(_strip(_remainder(num, den).cast("string")),
                    lambda digits: make(a["n"], digits, e))        # a zero too: -0 for -4 mod 2
        return F.when(a["d"] == "0", a).when(smaller, a).otherwise(rem)
    return V.let_many([a, b], body)
