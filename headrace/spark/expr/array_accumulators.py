"""The expression forms of ``$sum $avg $min $max``: with one argument that is an array they
work on its elements, with several on the arguments. ``$sum``/``$avg`` ignore non-numbers
(``$sum`` of none is 0, ``$avg`` null), ``$min``/``$max`` ignore null and missing. ``$sum`` and
``$avg`` add as MongoDB's accumulators do: doubles in double-double precision, decimals as
Decimal128 in order (:mod:`..accumulators.summation`); ``$sum: [0.1, 0.2, 0.3]`` is ``0.6``.

Golden cases (``tests/golden/cases/<name>.json``): ``$avg`` project_switch_avg; ``$max``
tumbling_group; ``$min`` session_group; ``$sum`` set_scores.
"""
from __future__ import annotations

from typing import Any

from pyspark.sql import Column
from pyspark.sql import functions as F

from .. import values as V
from ..registry import Compiled, Ctx, expression
from ..accumulators import summation as S
from ._common import CODE, INT_CODES, code, compile_args, dbl, errors_of, is_num, lng, nullish, operands, v_double
from . import decimal128 as D
from . import decimal_variant as DV
from .arrays import _elems
from .comparison import compare3


def _values_array(arg: Any, ctx: Ctx, op: str) -> tuple[Column, list[Compiled]]:
    """The ARRAY<VARIANT> the accumulator-style operator works on, and the compiled args."""
    ops = operands(arg)
    args = compile_args(ops, ctx, op)
    if len(ops) == 1 and not isinstance(arg, list) or len(args) == 1:
        v = args[0].value
        return V.let(v, lambda x: F.when(V.is_array(x), _elems(x)).otherwise(F.array(x))), args
    return F.array(*[a.value for a in args]), args


def _sum_parts(arr: Column) -> Column:
    """The parts of MongoDB's sum of the numbers of ``arr`` (AccumulatorSum, in array order):
    ``n`` numbers, ``hd``/``hm`` whether a double/decimal is among them, ``itot`` the exact total
    of the ints and longs (NULL beyond 38 digits), ``dd`` the double-double state of the
    non-decimals and ``decs`` the decimals (:mod:`..accumulators.summation`)."""
    typed = F.transform(arr, lambda e: F.struct(code(e).alias("c"), e.alias("v")))

    def body(t: Column) -> Column:
        nums = F.filter(t, lambda x: x["c"].isin(*INT_CODES, CODE["double"]))
        ints = F.filter(t, lambda x: x["c"].isin(*INT_CODES))
        itot = F.aggregate(ints, F.lit(0).cast("decimal(38,0)"),
                           lambda acc, x: F.try_add(acc, lng(x["v"]).cast("decimal(38,0)")).cast("decimal(38,0)"))
        items = F.transform(nums, lambda x: F.struct(F.when(x["c"] == CODE["long"], lng(x["v"])).alias("l"),
                                                     F.when(x["c"] != CODE["long"], dbl(x["v"])).alias("d")))
        decs = F.transform(F.filter(t, lambda x: x["c"] == CODE["decimal"]),
                           lambda x: F.struct(D.read_decimal(x["v"]).alias("v")))
        return F.struct(F.size(F.filter(t, lambda x: is_num(x["c"]))).alias("n"),
                        F.exists(t, lambda x: x["c"] == CODE["double"]).alias("hd"),
                        F.exists(t, lambda x: x["c"] == CODE["decimal"]).alias("hm"),
                        itot.alias("itot"), S.dd_fold(S.dd_init(), items).alias("dd"), decs.alias("decs"))
    return V.let(typed, body)


def _dec_total(s: Column) -> Column:
    """The decimal total: the decimals added in order, then the other numbers' sum (MongoDB's
    ``getDecimal()``), in one fold."""
    return S.dec_fold(S.dec_zero(), F.concat(s["decs"], S.dd_decimals(s["dd"])))


def _sum_value(s: Column) -> Column:
    return (F.when(s["hm"], DV.to_variant_or_nan(_dec_total(s)))
            .when(s["hd"] | s["itot"].isNull(), v_double(S.dd_finish(s["dd"])))
            .otherwise(S.int_result(s["itot"])))


@expression("$sum")
def sum_(arg: Any, ctx: Ctx) -> Compiled:
    arr, args = _values_array(arg, ctx, "$sum")
    return Compiled(V.let(_sum_parts(arr), _sum_value), errors_of(args))


@expression("$avg")
def avg(arg: Any, ctx: Ctx) -> Compiled:
    arr, args = _values_array(arg, ctx, "$avg")

    def value(s: Column) -> Column:
        count = D.make(F.lit(False), s["n"].cast("string"), F.lit(0))
        return (F.when(s["n"] == 0, V.NULL)
                .when(s["hm"], DV.to_variant_or_nan(D.div(_dec_total(s), count)))
                .otherwise(v_double(S.dd_finish(s["dd"]) / s["n"].cast("double"))))
    return Compiled(V.let(_sum_parts(arr), value), errors_of(args))


def _min_max(op: str, sign: int):
    def impl(arg: Any, ctx: Ctx) -> Compiled:
        arr, args = _values_array(arg, ctx, op)

        def step(acc: Column, e: Column) -> Column:
            def with_codes_(ce: Column, ca: Column) -> Column:
                better = compare3(e, acc, ce, ca) == sign
                return F.when(nullish(ce), acc).when(acc.isNull() | V.is_null_or_missing(acc), e) \
                    .when(better, e).otherwise(acc)
            return V.let_many([code(e), code(acc)], with_codes_)

        out = F.aggregate(arr, F.lit(None).cast("variant"), step)
        return Compiled(F.coalesce(out, V.NULL), errors_of(args))
    return impl


expression("$min")(_min_max("$min", -1))
expression("$max")(_min_max("$max", 1))
