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
from .summation import _DEC, _int_result, decimal_value, dd_finish, dd_fold, dd_init, dd_sum, welford, welford_init


_NUMERIC = ("int", "long", "double", "decimal")


def _tvg(v: Column, type_: str) -> Column:
    return V._tvg(v, type_)      # an input of known type (values.facts) is read without a per-value Cast


def _numeric_inputs(arg: Any, ctx: Ctx) -> dict[str, Any]:
    """Input ``v`` (the value) and derived ``t`` (its MQL type name); typed reads use ``t``."""
    c = _compile(arg, ctx)
    return {"inputs": {"v": c.value}, "derived": {"t": lambda r: V.type_name(r("v"))}, "error": c.error}


def _numeric_aggs() -> dict[str, Callable[[Ref], Column]]:
    """Aggregates shared by ``$sum`` and ``$avg`` over inputs ``v`` (value) and ``t`` (type)."""

    def dd_items(r: Ref) -> Column:
        t, v = r("t"), r("v")
        item = F.struct(F.col("_seq").alias("s"), F.when(t == "long", _tvg(v, "bigint")).alias("l"),
                        F.when(t.isin("int", "double"), _tvg(v, "double")).alias("d"))
        return F.collect_list(F.when(t.isin("int", "long", "double"), item))

    def dec(r: Ref) -> Column:
        return F.when(r("t") == "decimal", _tvg(r("v"), _DEC))

    return {
        "n": lambda r: F.count(F.when(r("t").isin(*_NUMERIC), F.lit(1))),
        "has_double": lambda r: F.max(r("t") == "double"),
        "has_decimal": lambda r: F.max(r("t") == "decimal"),
        "int_total": lambda r: F.try_sum(F.when(r("t").isin("int", "long"),
                                                _tvg(r("v"), "bigint").cast("decimal(38,0)"))),
        "dec_total": lambda r: F.try_sum(dec(r)),
        "dec_bad": lambda r: F.max((r("t") == "decimal") & dec(r).isNull()),
        "dd_items": dd_items,
    }


_DEC_ERR = "decimal result out of range (DECIMAL(38,18))"


def _guarded_sum(name: str, flag: str) -> Callable[[Ref], Column]:
    """Merge of a ``try_sum`` partial: NULL (overflow) when a row that had inputs (``flag``) is NULL."""
    return lambda r: F.when(F.max(F.coalesce(r(flag), F.lit(False)) & r(name).isNull()), F.lit(None)) \
        .otherwise(F.try_sum(r(name)))


def _numeric_partial(steps: tuple[Step, ...]) -> Partial:
    """``$sum``/``$avg`` kept incrementally: counts and exact totals merge by addition; the
    double-double sum is a running state ``dd_st`` onto which each batch's numbers (``dd_items``)
    are folded in arrival order, exactly as one pass over all the numbers would."""
    aggs = {**_numeric_aggs(),
            "has_int": lambda r: F.max(r("t").isin("int", "long")),
            "dd_st": lambda r: dd_init()}
    merge = {"n": _m_sum("n"), "has_double": _m_max("has_double"), "has_decimal": _m_max("has_decimal"),
             "has_int": _m_max("has_int"), "dec_bad": _m_max("dec_bad"),
             "int_total": _guarded_sum("int_total", "has_int"), "dec_total": _guarded_sum("dec_total", "has_decimal"),
             "dd_items": _m_flat("dd_items"), "dd_st": _m_first("dd_st")}
    post = ({"dd_st": lambda r: dd_fold(r("dd_st"), by_seq(r("dd_items"))), "dd_items": _emptied("dd_items")},)
    final = ({"dd": lambda r, k: dd_finish(r("dd_st"))}, *steps[1:])
    return Partial(merge, aggs, post, final)


def _dd_step(r: Ref, k: KeyCtx) -> Column:
    return F.when(F.size(r("dd_items")) > 0, dd_sum(by_seq(r("dd_items")))).otherwise(F.lit(0.0))


def _dec_total_step(r: Ref, k: KeyCtx) -> Column:
    """The decimal total including the non-decimal numbers (NULL on overflow)."""
    return F.when(r("has_decimal"), (r("dec_total") + r("dd").try_cast(_DEC)).try_cast(_DEC))


@accumulator("$sum")
def acc_sum(arg: Any, ctx: Ctx) -> Accumulator:
    """``$sum`` (see the package docstring)."""
    if type(arg) is int:  # a constant integer: count * arg, exactly
        return Accumulator({}, {"n": lambda r: F.count(F.lit(1))}, (
            {"total": lambda r, k: r("n").cast("decimal(38,0)") * F.lit(arg).cast("decimal(38,0)")},
            {"value": lambda r, k: _int_result(r("total"))}), partial=Partial({"n": _m_sum("n")}))

    num = _numeric_inputs(arg, ctx)

    def value(r: Ref, k: KeyCtx) -> Column:
        return (
            F.when(r("has_decimal"), decimal_value(r("dec")))
            .when(r("has_double"), V.from_double(r("dd")))
            .when(r("n") == 0, V.from_long(F.lit(0)))
            .when(r("int_total").isNull(), V.from_double(r("dd")))
            .otherwise(_int_result(r("int_total")))
        )

    def err(r: Ref, k: KeyCtx) -> Column:
        return F.when(r("has_decimal") & (r("dec_bad") | r("dec").isNull()), F.lit(_DEC_ERR))

    steps = ({"dd": _dd_step}, {"dec": _dec_total_step}, {"value": value, "error": err})
    return Accumulator(aggs=_numeric_aggs(), steps=steps, partial=_numeric_partial(steps), **num)


@accumulator("$avg")
def acc_avg(arg: Any, ctx: Ctx) -> Accumulator:
    """``$avg`` (see the package docstring)."""
    num = _numeric_inputs(arg, ctx)

    def avg(r: Ref, k: KeyCtx) -> Column:
        return F.when(r("n") > 0, (r("dec") / r("n").cast("decimal(20,0)")).try_cast(_DEC))

    def value(r: Ref, k: KeyCtx) -> Column:
        return (
            F.when(r("n") == 0, V.NULL)
            .when(r("has_decimal"), decimal_value(r("avg")))
            .otherwise(V.from_double(r("dd") / r("n").cast("double")))
        )

    def err(r: Ref, k: KeyCtx) -> Column:
        return F.when(r("has_decimal") & (r("n") > 0) & (r("dec_bad") | r("avg").isNull()), F.lit(_DEC_ERR))

    steps = ({"dd": _dd_step}, {"dec": _dec_total_step}, {"avg": avg}, {"value": value, "error": err})
    return Accumulator(aggs=_numeric_aggs(), steps=steps, partial=_numeric_partial(steps), **num)


def _doubles_acc(arg: Any, ctx: Ctx, steps: tuple[Step, ...], partial: Partial | None = None) -> Accumulator:
    """Numbers as doubles in arrival order: a first step makes ``xs`` (ARRAY<DOUBLE>)."""
    num = _numeric_inputs(arg, ctx)

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
