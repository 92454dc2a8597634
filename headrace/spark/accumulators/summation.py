"""Exact and running numeric states for ``$sum`` / ``$avg`` / ``$stdDev*``: integer and decimal
results as VARIANT values, MongoDB's double-double summation, its Decimal128 total and Welford's
online variance, all folded in arrival order.
"""
from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F

from .. import values as V
from ..expr import decimal128 as D


def int_result(total: Column) -> Column:
    """An exact integer total (DECIMAL(38,0)): int/long when it fits 64 bits, else a double."""
    fits = total.between(F.lit(-(2**63)), F.lit(2**63 - 1))
    return F.when(fits, V.from_long(total.cast("bigint"))).otherwise(V.from_double(total.cast("double")))


# ---------------------------------------------------------------------------------------------
# MongoDB's DoubleDoubleSummation (src/mongo/util/summation.h), in arrival order


def _dd_add(st: Column, x: Column) -> Column:
    """One ``addDouble(x)`` on a ``{sum, addend, special}`` state."""
    s1 = x + st["addend"]                       # Fast2Sum(x, addend)
    t1 = st["addend"] - (s1 - x)
    s2 = st["sum"] + s1                         # 2Sum(sum, s1)
    a_p = s2 - s1
    b_p = s2 - a_p
    t2 = (st["sum"] - a_p) + (s1 - b_p)
    return F.struct(s2.alias("sum"), (t1 + t2).alias("addend"), (st["special"] + x).alias("special"))


def _dd_zero():
    return F.lit(0.0).cast("double")


def dd_init() -> Column:
    """The double-double state before any number: ``{sum, addend, special}``."""
    return F.struct(_dd_zero().alias("sum"), _dd_zero().alias("addend"), _dd_zero().alias("special"))


def dd_finish(st: Column) -> Column:
    """MongoDB's ``getDouble()`` of a double-double state."""
    return F.when(F.isnan(st["sum"]), st["special"]).otherwise(st["sum"])


def dd_sum(items: Column) -> Column:
    """The double-double sum (DOUBLE, MongoDB's ``getDouble()``) of an array of structs
    ``{l: BIGINT (longs beyond 32 bits), d: DOUBLE (other numbers)}`` in array order."""
    return dd_finish(dd_fold(dd_init(), items))


def dd_fold(init: Column, items: Column) -> Column:
    """The double-double state after adding ``items`` (as :func:`dd_sum`) to state ``init``."""
    def halves(x: Column) -> Column:
        # addLong: high = x / 2**32 * 2**32 (C++ division truncates toward zero), low = x - high
        fq = F.shiftright(x, 32)
        q = F.when((x < 0) & (x != F.shiftleft(fq, 32)), fq + 1).otherwise(fq)
        high = F.shiftleft(q, 32)
        return F.array((x - high).cast("double"), high.cast("double"))

    parts = F.flatten(F.transform(items, lambda e: F.when(e["l"].isNotNull(), halves(e["l"]))
                                  .otherwise(F.array(e["d"]))))
    return F.aggregate(parts, init, _dd_add)


def welford_init() -> Column:
    return F.struct(F.lit(0).cast("bigint").alias("n"), F.lit(0.0).alias("mean"), F.lit(0.0).alias("m2"))


def welford(xs: Column, init: Column | None = None) -> Column:
    """``{n, mean, m2}`` after MongoDB's online variance updates over an array of doubles (from
    state ``init``, by default the empty one)."""
    init = welford_init() if init is None else init

    def step(st, x):
        n = st["n"] + 1
        delta = x - st["mean"]
        mean = F.when(delta != 0, st["mean"] + delta / n).otherwise(st["mean"])
        m2 = F.when(delta != 0, st["m2"] + delta * (x - mean)).otherwise(st["m2"])
        return F.struct(n.alias("n"), mean.alias("mean"), m2.alias("m2"))

    return F.aggregate(xs, init, step)


# ---------------------------------------------------------------------------------------------
# MongoDB's Decimal128 total (AccumulatorSum / AccumulatorAvg): decimals added one by one in
# arrival order, each sum rounded to 34 digits; then the other numbers' double-double sum added


def dec_zero() -> Column:
    return D.make(F.lit(False), F.lit("0"), F.lit(0))


def dec_fold(init: Column, items: Column) -> Column:
    """The decimal (:mod:`headrace.spark.expr.decimal128` struct) after adding the decimals
    ``v`` of ``items`` (an array of ``{s, v}`` in arrival order) to ``init`` one by one;
    NULL once one is NULL (a NaN or infinite decimal)."""
    null = F.lit(None).cast("struct<n:boolean,d:string,e:int>")
    return F.aggregate(items, init, lambda acc, e: F.when(acc.isNull() | e["v"].isNull(), null)
                       .otherwise(D.add(acc, e["v"])))


def _double_decimal(x: Column) -> Column:
    """A finite double as a decimal (:func:`decimal128.whole_or_shortest`: at most 19 digits, no
    rounding; MongoDB converts its exact binary value to 34 digits)."""
    return D.parse(D.whole_or_shortest(x))


def dd_decimals(st: Column) -> Column:
    """MongoDB's ``getDecimal()`` of a double-double state as the items to add to a decimal total
    (:func:`dec_fold`): its sum and its addend, each as a decimal (NULL when the sum is NaN or
    infinite). Added one after the other; MongoDB adds the two first, which differs only where
    their own sum needs more than 34 digits."""
    def items(st: Column) -> Column:
        ok = ~F.isnan(st["sum"]) & (F.abs(st["sum"]) != F.lit(float("inf")))
        return F.array(*[F.struct(F.when(ok, _double_decimal(st[f])).alias("v")) for f in ("sum", "addend")])
    return V.let(st, items)
