"""A double as MongoDB writes it in a string: C's ``printf("%g")``, which its ``str::stream``
uses for ``$toString``/``$convert`` to string (``performFormatDouble``) and for the string
coercion of ``$substr*``, ``$toLower``, ``$toUpper`` and ``$strcasecmp`` (``coerceToString``).

Six significant digits, trailing zeros dropped, scientific notation when the exponent is below
-4 or at least 6 (``1.23457e+17``, ``2.5e-07``, ``0.0001``, ``123457``, ``-0``). NaN and the
infinities are ``nan``, ``inf`` and ``-inf`` (C's), or ``NaN``, ``Infinity`` and ``-Infinity`` in
a conversion (``performFormatDouble``'s spelling).
The rounding to six digits is Java's ``%e`` (half up on the shortest decimal form), which differs
from C's only for a double whose seventh digit is a 5 that its binary value rounds the other way.
"""
from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F


def g_text(d: Column, converting: bool = False) -> Column:
    """``d`` (a DOUBLE column) as C's ``%g`` writes it (see the module); ``converting``: NaN and
    the infinities as ``$convert`` spells them."""
    sci = F.format_string("%.5e", F.abs(d))                       # d.ddddde[+-]XX
    mant = F.substring_index(sci, "e", 1)
    x = F.substring_index(sci, "e", -1).cast("int")
    digits = F.replace(mant, F.lit("."), F.lit(""))              # six digits
    sign = F.when(d < 0, F.lit("-")).otherwise(F.lit(""))
    exp_form = F.concat(F.regexp_replace(mant, r"\.?0+$", ""), F.lit("e"),
                        F.when(x < 0, F.lit("-")).otherwise(F.lit("+")),
                        F.when(F.abs(x) < 10, F.lit("0")).otherwise(F.lit("")), F.abs(x).cast("string"))
    whole = F.when(x >= 0, F.substring(digits, 1, x + 1)).otherwise(F.lit("0"))
    frac = F.regexp_replace(
        F.when(x >= 0, F.substring(digits, x + 2, 6))
        .otherwise(F.concat(F.repeat(F.lit("0"), -x - 1), digits)), "0+$", "")
    fixed = F.concat(whole, F.when(frac != "", F.concat(F.lit("."), frac)).otherwise(F.lit("")))
    finite = F.concat(sign, F.when((x < -4) | (x >= 6), exp_form).otherwise(fixed))
    nan, inf = ("NaN", "Infinity") if converting else ("nan", "inf")
    return (F.when(F.isnan(d), F.lit(nan))
            .when(d == float("inf"), F.lit(inf))
            .when(d == float("-inf"), F.lit("-" + inf))
            .when(d == 0, F.when(d.cast("string").startswith("-"), F.lit("-0")).otherwise(F.lit("0")))
            .otherwise(finite))
