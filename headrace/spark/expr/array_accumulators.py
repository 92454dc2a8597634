"""The expression forms of ``$sum $avg $min $max``: with one argument that is an array they
work on its elements, with several on the arguments. ``$sum``/``$avg`` ignore non-numbers
(``$sum`` of none is 0, ``$avg`` null), ``$min``/``$max`` ignore null and missing.

Golden cases (``tests/golden/cases/<name>.json``): ``$avg`` project_switch_avg; ``$max``
tumbling_group; ``$min`` session_group; ``$sum`` set_scores.
"""
from __future__ import annotations

from typing import Any

from pyspark.sql import Column
from pyspark.sql import functions as F

from .. import values as V
from ..registry import Compiled, Ctx, expression
from ._common import (
    CODE, INT_CODES, code, compile_args, dbl, dec, errors_of, is_num, lng, nullish, operands, v_decimal,
    v_double, v_long,
)
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


_SUM_T = "struct<l:bigint,ovf:boolean,d:double,m:decimal(38,18),hd:boolean,hm:boolean,n:bigint>"


def _sum_struct(arr: Column) -> Column:
    """Fold numbers: long sum (with overflow flag), double sum, decimal sum, kinds, count."""
    zero = F.struct(F.lit(0).cast("bigint").alias("l"), F.lit(False).alias("ovf"), F.lit(0.0).alias("d"),
                    F.lit(0).cast("decimal(38,18)").alias("m"), F.lit(False).alias("hd"), F.lit(False).alias("hm"),
                    F.lit(0).cast("bigint").alias("n"))

    def step(acc: Column, e: Column) -> Column:
        def with_code(c: Column) -> Column:
            num = is_num(c)
            l_add = F.try_add(acc["l"], F.when(c.isin(*INT_CODES), lng(e)).otherwise(F.lit(0).cast("bigint")))
            return F.struct(
                F.when(num & c.isin(*INT_CODES), F.coalesce(l_add, acc["l"])).otherwise(acc["l"]).alias("l"),
                (acc["ovf"] | (num & c.isin(*INT_CODES) & l_add.isNull())).alias("ovf"),
                F.when(num, acc["d"] + dbl(e)).otherwise(acc["d"]).alias("d"),
                F.when(num, F.coalesce(F.try_add(acc["m"], F.coalesce(dec(e), F.lit(0).cast("decimal(38,18)")))
                                       .try_cast("decimal(38,18)"), acc["m"]))
                 .otherwise(acc["m"]).alias("m"),
                (acc["hd"] | (c == CODE["double"])).alias("hd"),
                (acc["hm"] | (c == CODE["decimal"])).alias("hm"),
                F.when(num, acc["n"] + 1).otherwise(acc["n"]).alias("n"))
        return V.let(code(e), with_code)

    return F.aggregate(arr, zero, step)


def _sum_value(s: Column) -> Column:
    return (F.when(s["hm"], v_decimal(s["m"]))
            .when(s["hd"] | s["ovf"], v_double(s["d"]))
            .otherwise(v_long(s["l"])))


@expression("$sum")
def sum_(arg: Any, ctx: Ctx) -> Compiled:
    arr, args = _values_array(arg, ctx, "$sum")
    return Compiled(V.let(_sum_struct(arr), _sum_value), errors_of(args))


@expression("$avg")
def avg(arg: Any, ctx: Ctx) -> Compiled:
    arr, args = _values_array(arg, ctx, "$avg")

    def value(s: Column) -> Column:
        return (F.when(s["n"] == 0, V.NULL)
                .when(s["hm"], v_decimal(F.try_divide(s["m"].try_cast("decimal(28,14)"), s["n"].cast("decimal(20,0)"))))
                .otherwise(v_double(s["d"] / s["n"])))
    return Compiled(V.let(_sum_struct(arr), value), errors_of(args))


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
