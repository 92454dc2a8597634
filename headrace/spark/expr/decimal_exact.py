"""Decimal128 results of the transcendental operators, computed in Python.

MongoDB computes ``$sin $cos $tan $asin $acos $atan $atan2 $sinh $cosh $tanh $asinh $acosh
$atanh $sqrt $exp $ln $log10 $log $pow`` of a decimal in Decimal128, to 34 digits; Catalyst has
none of these for decimals. :func:`exact` gives, for an operator's compiled operands, the
result's text from :func:`headrace.mql.decimal_math.compute`, as a pandas UDF over each Arrow
batch in a column the stage's hoister computes before its projection
(:func:`headrace.spark.hoist.hoisted_python`). Rows whose operand is not a finite decimal (for
``$atan2 $log $pow``: neither operand) pass NULL, which the function passes over. Where no
hoister runs (inside ``$map``/``$filter``/``$reduce``/``$let`` bodies, a window's accumulators,
``$source.timeField``), or where the batch's facts type the operands as other numbers, there is
no UDF and the operators keep the double path: a decimal input's result is the double's decimal
of 15 digits (README, "Decimals").
"""
from __future__ import annotations

import decimal
from dataclasses import dataclass, replace

import pandas as pd
from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql.functions import pandas_udf

from .. import values as V
from ..hoist import hoistable, hoisted_python, shared
from ..registry import Compiled, Ctx
from . import decimal128 as D
from . import decimal_variant as DV
from ._common import code, found

DECIMAL = V.CODE["decimal"]
_DOUBLE15 = decimal.Context(prec=15, rounding=decimal.ROUND_HALF_EVEN)    # Decimal128(double)


def _apply(op: str, *cols: pd.Series) -> pd.Series:
    """One Arrow batch: the result text per row; None for a NULL operand, outside the domain,
    or where the computation failed (the row's error then says so)."""
    from ...mql.decimal_math import compute

    def one(*texts):
        if any(t is None for t in texts):
            return None
        try:
            return compute(op, *(str(_DOUBLE15.create_decimal(float(t[1:]))) if t[0] == "d" else t for t in texts))
        except Exception:  # noqa: BLE001 - never fails the batch: the row goes to the DLQ
            return None
    return pd.Series([one(*ts) for ts in zip(*cols)], index=cols[0].index, dtype=object)


def _udf(op: str, n: int):
    if n == 1:
        def one(a: pd.Series) -> pd.Series:
            return _apply(op, a)
        return pandas_udf(one, "string")

    def two(a: pd.Series, b: pd.Series) -> pd.Series:
        return _apply(op, a, b)
    return pandas_udf(two, "string")


@dataclass(frozen=True)
class Exact:
    """The text given to Python (``arg``: NULL where the row is not computed there) and the
    result's text (``out``)."""
    arg: Column
    out: Column

    @property
    def ok(self) -> Column:
        return self.out.isNotNull()

    @property
    def outside_domain(self) -> Column:
        return self.arg.isNotNull() & self.out.isNull()

    def value(self) -> Column:
        """The VARIANT of the result: a decimal, or a ``{"$numberDecimal"}`` wrapper for an
        infinity."""
        t = self.out
        return (F.when(t.rlike("^-?[0-9]"), DV.to_variant(D.parse(t)))
                .otherwise(F.parse_json(F.concat(F.lit('{"$numberDecimal":"'), t, F.lit('"}')))))


def _special(r: Column) -> Column:
    """A decimal NaN or infinity, as the double result ``r`` of a NaN or infinite decimal is."""
    name = F.when(F.isnan(r), F.lit("NaN")).when(r > 0, F.lit("Infinity")).otherwise(F.lit("-Infinity"))
    return F.parse_json(F.concat(F.lit('{"$numberDecimal":"'), name, F.lit('"}')))


def decimal_result(r: Column, exact: Exact | None) -> Column:
    """The result of an operator for a decimal operand, given its double result ``r``: the
    Python-computed Decimal128 one (a NaN or infinite operand: NaN or an infinity), or, where
    :func:`exact` did not run, ``r`` as a decimal of 15 digits (as MongoDB converts a double)."""
    if exact is None:
        return DV.to_variant(D.from_double(r))
    return F.when(exact.ok, exact.value()).otherwise(_special(r))


def failed(op: str, exact: Exact | None, x: Column, c: Column) -> Column | None:
    """The error of a row whose decimal result Python could not give (outside the domain)."""
    if exact is None:
        return None
    return F.when(exact.outside_domain, F.concat(F.lit(f"cannot apply {op} to value out of its domain, found "),
                                                 found(x, c)))


def _finite_decimal_text(x: Column, c: Column) -> Column:
    t = D._decimal_text(x)
    return F.when((c == DECIMAL) & t.rlike("[0-9]"), t)


def _as_decimal_text(x: Column, c: Column) -> Column:
    """A finite decimal's text, an integer's, or ``d`` and a finite double's shortest text (which
    :func:`_apply` turns into its decimal of 15 digits, as ``Decimal128(double)``); NULL for NaN,
    the infinities and non-numbers."""
    d = V._num_double(x)
    return (F.when(c == DECIMAL, _finite_decimal_text(x, c))
            .when((c == V.CODE["double"]) & ~F.isnan(d) & (F.abs(d) != F.lit(float("inf"))),
                  F.concat(F.lit("d"), d.cast("string")))
            .when(c.isin(V.CODE["int"], V.CODE["long"]), V._tvg(x, "bigint").cast("string")))


def _const_text(k) -> "str | None":
    """:func:`_as_decimal_text` of a constant."""
    if isinstance(k, bool) or not isinstance(k, (int, float, decimal.Decimal)):
        return None
    if isinstance(k, float):
        return f"d{k!r}" if k == k and abs(k) != float("inf") else None
    return str(k) if not isinstance(k, decimal.Decimal) or k.is_finite() else None


def exact(op: str, args: list[Compiled], ctx: Ctx) -> tuple[list[Compiled], Exact | None]:
    """The compiled operands ``args``, their values computed once per row (a hoisted column, read
    by the UDF and by the operator's own value), and the Python-computed decimal result of
    ``op`` over them; ``args`` as they are and None where it cannot run here (see the module
    docstring) or no operand may be a decimal."""
    if not D.possible([a.value for a in args]) or not hoistable():
        return args, None
    args = [replace(a, value=shared(a.value)) for a in args]
    values = [a.value for a in args]
    if len(values) == 1:
        texts = [_finite_decimal_text(values[0], code(values[0]))]
    else:
        # a constant operand's text and type are known now: no per-row reads of a literal
        consts = [V.const_of(v) for v in values]
        codes = [None if is_c else code(v) for v, (is_c, _) in zip(values, consts)]
        decs = [F.lit(isinstance(k, decimal.Decimal)) if is_c else c == DECIMAL
                for c, (is_c, k) in zip(codes, consts)]
        any_dec = decs[0]
        for d in decs[1:]:
            any_dec = any_dec | d
        texts = [F.when(any_dec, F.lit(_const_text(k)).cast("string") if is_c else _as_decimal_text(v, c))
                 for v, c, (is_c, k) in zip(values, codes, consts)]
    arg = texts[0]
    for t in texts[1:]:
        arg = F.when(t.isNotNull(), arg)
    where = f"{ctx.where}.{op}" if ctx.where else op
    return args, Exact(arg, hoisted_python(_udf(op, len(texts))(*texts), op, where))
