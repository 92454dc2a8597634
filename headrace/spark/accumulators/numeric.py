"""Numeric accumulators: ``$sum`` and ``$avg`` (exact integer and decimal totals, double-double
sums), ``$stdDevPop`` / ``$stdDevSamp``, ``$percentile`` / ``$median`` (numbers as doubles in
arrival order) and ``$count``; each with its incremental :class:`~.base.Partial` form.
"""
from __future__ import annotations

from typing import Any, Callable

from pyspark.sql import Column
from pyspark.sql import functions as F

from ...mql import accumulators as mqlacc
from .. import values as V
from ..registry import Ctx, accumulator
from .base import (Accumulator, KeyCtx, Partial, Ref, Step, _collect_seq, _compile, _emptied, _m_first, _m_flat,
                   _m_max, _m_sum, _null_or, _sub, _value, by_seq)
from ..expr import decimal128 as D
from ..expr import decimal_variant as DV
from .summation import int_result, dd_decimals, dd_finish, dd_fold, dd_init, dec_fold, dec_zero, welford, welford_init


_NUMERIC = ("int", "long", "double", "decimal")


def _tvg(v: Column, type_: str) -> Column:
    return V._tvg(v, type_)      # an input of known type (values.facts) is read without a per-value Cast


def _numeric_inputs(arg: Any, ctx: Ctx) -> tuple[dict[str, Any], bool]:
    """Input ``v`` (the value) and derived ``t`` (its MQL type name); typed reads use ``t``. And
    whether ``v`` may be a decimal (not when its type is known: :func:`decimal128.possible`)."""
    c = _compile(arg, ctx)
    return ({"inputs": {"v": c.value}, "derived": {"t": lambda r: V.type_name(r("v"))}, "error": c.error},
            D.possible([c.value]))


def _numeric_aggs(decimals: bool) -> dict[str, Callable[[Ref], Column]]:
    """Aggregates shared by ``$sum`` and ``$avg`` over inputs ``v`` (value) and ``t`` (type):
    the non-decimals for the double-double sum (``dd_items``) and, where the input may be a
    decimal, the decimals (``dec_items``), each with its arrival ``s``."""

    def dd_items(r: Ref) -> Column:
        t, v = r("t"), r("v")
        item = F.struct(F.col("_seq").alias("s"), F.when(t == "long", _tvg(v, "bigint")).alias("l"),
                        F.when(t.isin("int", "double"), _tvg(v, "double")).alias("d"))
        return F.collect_list(F.when(t.isin("int", "long", "double"), item))

    aggs = {
        "n": lambda r: F.count(F.when(r("t").isin(*_NUMERIC), F.lit(1))),
        "has_double": lambda r: F.max(r("t") == "double"),
        "has_decimal": lambda r: F.max(r("t") == "decimal"),
        "int_total": lambda r: F.try_sum(F.when(r("t").isin("int", "long"),
                                                _tvg(r("v"), "bigint").cast("decimal(38,0)"))),
        "dd_items": dd_items,
    }
    if decimals:
        aggs["dec_items"] = lambda r: _collect_seq(D.read_decimal(r("v")), r("t") == "decimal")
    else:       # the same column, empty (a partial's columns do not depend on the batch's facts)
        aggs["dec_items"] = lambda r: _collect_seq(_no_dec(r, None), F.lit(False))
    return aggs


def _guarded_sum(name: str, flag: str) -> Callable[[Ref], Column]:
    """Merge of a ``try_sum`` partial: NULL (overflow) when a row that had inputs (``flag``) is NULL."""
    return lambda r: F.when(F.max(F.coalesce(r(flag), F.lit(False)) & r(name).isNull()), F.lit(None)) \
        .otherwise(F.try_sum(r(name)))


def _numeric_partial(steps: tuple[Step, ...], plain: tuple[Step, ...], decimals: bool) -> Partial:
    """``$sum``/``$avg`` kept incrementally: counts and exact totals merge by addition; the
    double-double sum and the decimal total are running states (``dd_st``, ``dec_st``) onto
    which each batch's numbers (``dd_items``, ``dec_items``) are folded in arrival order, exactly
    as one pass over all the numbers would. ``decimals`` (the batch's facts) decides only what a
    batch collects; the merge and ``steps`` (built for decimals) serve state of any batch, and
    ``plain`` (without the decimal total) state where no row has ``has_decimal``."""
    aggs = {**_numeric_aggs(decimals),
            "has_int": lambda r: F.max(r("t").isin("int", "long")),
            "dd_st": lambda r: dd_init(), "dec_st": lambda r: dec_zero()}
    merge = {"n": _m_sum("n"), "has_double": _m_max("has_double"), "has_decimal": _m_max("has_decimal"),
             "has_int": _m_max("has_int"), "int_total": _guarded_sum("int_total", "has_int"),
             "dd_items": _m_flat("dd_items"), "dd_st": _m_first("dd_st"),
             "dec_items": _m_flat("dec_items"), "dec_st": _m_first("dec_st")}
    post = {"dd_st": lambda r: dd_fold(r("dd_st"), by_seq(r("dd_items"))), "dd_items": _emptied("dd_items"),
            "dec_st": lambda r: dec_fold(r("dec_st"), by_seq(r("dec_items"))), "dec_items": _emptied("dec_items")}
    first = {"ddst": lambda r, k: r("dd_st"), "dsum": lambda r, k: r("dec_st")}
    return Partial(merge, aggs, (post,), (first, *steps[1:]), flag="has_decimal",
                   plain_steps=({"ddst": lambda r, k: r("dd_st"), "dsum": _no_dec}, *plain[1:]))


def _no_dec(r: Ref | None, k: KeyCtx | None) -> Column:
    return F.lit(None).cast("struct<n:boolean,d:string,e:int>")


def _total_steps(decimals: bool) -> tuple[Step, Step]:
    """The states from the batch's items (``ddst``, ``dsum``), then the double sum ``dd`` and
    the decimal total ``dec`` (the decimals' plus the others' ``getDecimal()``, where there is
    a decimal)."""
    first = {"ddst": lambda r, k: dd_fold(dd_init(), by_seq(r("dd_items"))),
             "dsum": (lambda r, k: dec_fold(dec_zero(), by_seq(r("dec_items")))) if decimals else _no_dec}
    second = {"dd": lambda r, k: dd_finish(r("ddst")),
              "dec": (lambda r, k: F.when(r("has_decimal"), dec_fold(r("dsum"), dd_decimals(r("ddst")))))
              if decimals else _no_dec}
    return first, second


@accumulator("$sum")
def acc_sum(arg: Any, ctx: Ctx) -> Accumulator:
    """``$sum`` (see the package docstring)."""
    if type(arg) is int:  # a constant integer: count * arg, exactly
        return Accumulator({}, {"n": lambda r: F.count(F.lit(1))}, (
            {"total": lambda r, k: r("n").cast("decimal(38,0)") * F.lit(arg).cast("decimal(38,0)")},
            {"value": lambda r, k: int_result(r("total"))}), partial=Partial({"n": _m_sum("n")}))

    num, decimals = _numeric_inputs(arg, ctx)

    def steps(dec: bool) -> tuple[Step, ...]:
        def value(r: Ref, k: KeyCtx) -> Column:
            return (
                F.when(r("has_decimal"), DV.to_variant_or_nan(r("dec")) if dec else V.NULL)
                .when(r("has_double"), V.from_double(r("dd")))
                .when(r("n") == 0, V.from_long(F.lit(0)))
                .when(r("int_total").isNull(), V.from_double(r("dd")))
                .otherwise(int_result(r("int_total")))
            )
        return (*_total_steps(dec), {"value": value})

    return Accumulator(aggs=_numeric_aggs(decimals), steps=steps(decimals),
                       partial=_numeric_partial(steps(True), steps(False), decimals), **num)


@accumulator("$avg")
def acc_avg(arg: Any, ctx: Ctx) -> Accumulator:
    """``$avg`` (see the package docstring)."""
    num, decimals = _numeric_inputs(arg, ctx)

    def steps(dec: bool) -> tuple[Step, ...]:
        def avg(r: Ref, k: KeyCtx) -> Column:
            if not dec:
                return _no_dec(r, k)
            count = D.make(F.lit(False), r("n").cast("string"), F.lit(0))
            return F.when(r("has_decimal") & (r("n") > 0), D.div(r("dec"), count))

        def value(r: Ref, k: KeyCtx) -> Column:
            return (
                F.when(r("n") == 0, V.NULL)
                .when(r("has_decimal"), DV.to_variant_or_nan(r("avg")) if dec else V.NULL)
                .otherwise(V.from_double(r("dd") / r("n").cast("double")))
            )
        return (*_total_steps(dec), {"avg": avg}, {"value": value})

    return Accumulator(aggs=_numeric_aggs(decimals), steps=steps(decimals),
                       partial=_numeric_partial(steps(True), steps(False), decimals), **num)


def _doubles_acc(arg: Any, ctx: Ctx, steps: tuple[Step, ...], partial: Partial | None = None) -> Accumulator:
    """Numbers as doubles in arrival order: a first step makes ``xs`` (ARRAY<DOUBLE>)."""
    num, _ = _numeric_inputs(arg, ctx)

    def items(r: Ref) -> Column:
        return _collect_seq(_tvg(r("v"), "double"), r("t").isin(*_NUMERIC) & _tvg(r("v"), "double").isNotNull())

    first = {"xs": lambda r, k: F.transform(by_seq(r("items")), lambda e: e["v"])}
    if partial is not None:
        partial = Partial(partial.merge, {"items": items, **(partial.aggs or {})}, partial.post, partial.steps)
    return Accumulator(aggs={"items": items}, steps=(first, *steps), partial=partial, **num)


def _std_dev(arg: Any, ctx: Ctx, least: int) -> Accumulator:
    """``$stdDevPop`` (``least`` 1) / ``$stdDevSamp`` (2). Incrementally: a running Welford state
    ``wf`` onto which each batch's numbers are folded in arrival order."""
    def value(r: Ref, k: KeyCtx) -> Column:
        st = r("st")
        return F.when(st["n"] >= least, V.from_double(
            F.sqrt(st["m2"] / (st["n"] - (least - 1)).cast("double")))).otherwise(V.NULL)

    partial = Partial(
        {"items": _m_flat("items"), "wf": _m_first("wf")}, {"wf": lambda r: welford_init()},
        ({"wf": lambda r: welford(F.transform(by_seq(r("items")), lambda e: e["v"]), r("wf")),
          "items": _emptied("items")},),
        ({"st": lambda r, k: r("wf")}, {"value": value}))
    return _doubles_acc(arg, ctx, ({"st": lambda r, k: welford(r("xs"))}, {"value": value}), partial)


@accumulator("$stdDevPop")
def acc_std_dev_pop(arg: Any, ctx: Ctx) -> Accumulator:
    return _std_dev(arg, ctx, 1)


@accumulator("$stdDevSamp")
def acc_std_dev_samp(arg: Any, ctx: Ctx) -> Accumulator:
    return _std_dev(arg, ctx, 2)


def _discrete_percentile(sorted_xs: Column, p: float) -> Column:
    """MongoDB's discrete percentile of an ascending ARRAY<DOUBLE> (NULL when empty)."""
    n = F.size(sorted_xs)
    if p >= 1.0:
        idx = n
    else:
        idx = F.greatest(F.lit(1), F.ceil(F.lit(float(p)) * n.cast("double")).cast("int"))
    return F.when(n > 0, F.try_element_at(sorted_xs, idx.cast("int")))


@accumulator("$percentile")
def acc_percentile(arg: Any, ctx: Ctx) -> Accumulator:
    ps = mqlacc.percentiles(arg)
    return _doubles_acc(arg["input"], _sub(ctx, "input"), (
        {"sorted": lambda r, k: F.array_sort(r("xs"))},
        {"value": lambda r, k: V.make_array([V.from_double(_discrete_percentile(r("sorted"), p)) for p in ps])}))


@accumulator("$median")
def acc_median(arg: Any, ctx: Ctx) -> Accumulator:
    return _doubles_acc(arg["input"], _sub(ctx, "input"), (
        {"sorted": lambda r, k: F.array_sort(r("xs"))},
        {"value": lambda r, k: _null_or(V.from_double(_discrete_percentile(r("sorted"), 0.5)))}))


@accumulator("$count")
def acc_count(arg: Any, ctx: Ctx) -> Accumulator:
    return Accumulator({}, {"n": lambda r: F.count(F.lit(1))}, _value(lambda r: V.from_long(r("n"))),
                       partial=Partial({"n": _m_sum("n")}))
