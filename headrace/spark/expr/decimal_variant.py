"""Decimals as VARIANT values and text: :mod:`.decimal128`'s ``{n, d, e}`` struct back to a VARIANT
with its exponent kept (:func:`to_variant`), MongoDB's text of a decimal (:func:`text`,
:func:`to_string`).

Spark reads a VARIANT decimal with its trailing zeros dropped (``2.50`` as ``2.5``), so a VARIANT
decimal holds only what that reading keeps, and any other decimal is a ``{"$numberDecimal":
text}`` wrapper, which every decimal reader takes as a decimal (``values.num_decimal``,
``decimal128._decimal_text``) and the sinks write as the same Extended JSON. The source builds
its decimals by the same rule (:func:`headrace.spark.docs.variant_holds`).

Golden case: ``project_multiply_after_toint`` (``NumberDecimal("200.0")``).
"""
from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F

from .. import values as V
from .decimal128 import _decimal_text, parse


def _plain(d: Column, k: Column) -> Column:
    """Digits ``d`` with ``k`` > 0 of them after the point (``0.`` and zeros before when fewer)."""
    n = F.length(d)
    return (F.when(n > k, F.concat(F.substr(d, F.lit(1), n - k), F.lit("."), F.substr(d, n - k + 1, k)))
            .otherwise(F.concat(F.lit("0."), F.repeat(F.lit("0"), k - n), d)))


def text(s: Column) -> Column:
    """MongoDB's text of decimal ``s`` (``Decimal128::toString``, IEEE 754's to-scientific-string):
    its digits at its own exponent (``1.50``, ``0.00``, ``-0``), in scientific notation when the
    exponent is above 0 or the leading digit's below -6 (``5E+2``, ``1.5E-7``)."""
    def body(d: Column, e: Column, neg: Column) -> Column:
        n, k = F.length(d), -e
        adj = e + n - 1
        sign = F.when(neg, F.lit("-")).otherwise(F.lit(""))
        plain = F.when(e == 0, d).otherwise(_plain(d, k))
        sci = F.concat(F.substr(d, F.lit(1), F.lit(1)),
                       F.when(n > 1, F.concat(F.lit("."), F.substr(d, F.lit(2), n))).otherwise(F.lit("")),
                       F.lit("E"), F.when(adj >= 0, F.lit("+")).otherwise(F.lit("")), adj.cast("string"))
        return F.concat(sign, F.when((e <= 0) & (adj >= -6), plain).otherwise(sci))
    return V.let(s, lambda s: V.let_many([s["d"], s["e"], s["n"]], body))


def to_variant(s: Column) -> Column:
    """The VARIANT of decimal ``s``, its exponent kept (``Decimal128``'s: ``200.0`` and ``2E+2``
    are not ``200``). Spark reads a VARIANT decimal with its trailing zeros dropped (``2.50`` as
    ``2.5``, and ``schema_of_variant`` says ``DECIMAL(2,1)``), so a VARIANT decimal holds only a
    value that reading would not change: an integer at exponent 0 (scale 0), or a fraction whose
    last digit is not 0 (at most 38 digits at a scale up to 38). Any other decimal (``200.0``,
    ``0.00``, ``2E+2``, ``-0``, ``1E-40``) is a ``{"$numberDecimal": text}`` wrapper with MongoDB's
    text (:func:`text`), which every decimal reader takes as a decimal and the sinks write as
    the same Extended JSON."""
    def body(s: Column) -> Column:
        d, e, neg = s["d"], s["e"], s["n"]
        n, k = F.length(d), -e
        zero = d == "0"
        integer = (e == 0) & (n <= 38) & ~(zero & neg)
        fraction = (e < 0) & ~d.endswith("0") & (F.greatest(n, k) <= 38)
        sign = F.when(neg, F.lit("-")).otherwise(F.lit(""))
        as_int = F.concat(sign, d).try_cast("decimal(38,0)").cast("variant")
        # a fraction's text parses as a VARIANT decimal (the source's normalisation is not applied here)
        as_fraction = F.try_parse_json(F.concat(sign, _plain(d, k)))
        return (F.when(integer, as_int).when(fraction, as_fraction)
                .otherwise(F.parse_json(F.concat(F.lit('{"$numberDecimal":"'), text(s), F.lit('"}')))))
    return V.let(s, lambda s: F.when(s.isNotNull(), body(s)))


def to_variant_or_nan(s: Column) -> Column:
    """:func:`to_variant` of decimal ``s``; MongoDB's NaN where ``s`` is NULL (a NaN or infinite
    operand, or a rounding that needs more than 34 digits: not represented here)."""
    return V.let(s, lambda s: F.when(s.isNull(), F.parse_json(F.lit('{"$numberDecimal":"NaN"}')))
                 .otherwise(to_variant(s)))


def to_string(x: Column) -> Column:
    """MongoDB's text of a bound decimal value (``Decimal128::toString``): :func:`text` of its
    digits and exponent (``1.50``, ``-0.00012``, ``1E-25``); a ``{$numberDecimal}`` wrapper's text
    that is not a number (``NaN``, ``Infinity``) as it is."""
    return V.let(_decimal_text(x), lambda t: F.coalesce(text(parse(t)), t))
