"""Value accumulators: ``$min`` / ``$max`` (BSON order, first arrival wins ties), ``$first`` /
``$last``, ``$push``, ``$addToSet`` and ``$mergeObjects``, collected by arrival order; each with
its incremental :class:`~.base.Partial` form.
"""
from __future__ import annotations

from typing import Any

from pyspark.sql import Column
from pyspark.sql import functions as F

from .. import values as V
from ..registry import Ctx, accumulator
from .base import (Accumulator, KeyCtx, Partial, Ref, _cmp, _collect_seq, _compile, _m_first, _m_flat, _null_or,
                   _value, by_seq)


def _min_max(arg: Any, ctx: Ctx, sign: int) -> Accumulator:
    c = _compile(arg, ctx)
    derived = {"k": lambda r: F.when(~V.is_null_or_missing(r("v")), V.sort_key(r("v")))}
    seq = F.col("_seq") if sign < 0 else -F.col("_seq")  # ties: the first arrival wins

    def order(r: Ref) -> Column:
        return F.when(r("k").isNotNull(), F.struct(r("k").alias("k"), seq.alias("s")))

    def agg(r: Ref) -> Column:
        return F.min_by(r("v"), order(r)) if sign < 0 else F.max_by(r("v"), order(r))

    # incrementally: the winner and its order key ``mk`` per partial row
    pick, best = (F.min_by, F.min) if sign < 0 else (F.max_by, F.max)
    partial = Partial({"m": lambda r: pick(r("m"), r("mk")), "mk": lambda r: best(r("mk"))},
                      {"m": agg, "mk": lambda r: best(order(r))})
    return Accumulator({"v": c.value}, {"m": agg}, _value(lambda r: _null_or(r("m"))), c.error, derived,
                       partial=partial)


def _first_last(arg: Any, ctx: Ctx, last: bool) -> Accumulator:
    c = _compile(arg, ctx)

    def agg(r: Ref) -> Column:
        v = _null_or(r("v"))
        return F.max_by(v, F.col("_seq")) if last else F.min_by(v, F.col("_seq"))

    merge = (lambda r: F.max_by(r("x"), F.col("_smax"))) if last else _m_first("x")
    return Accumulator({"v": c.value}, {"x": agg}, _value(lambda r: _null_or(r("x"))), c.error,
                       partial=Partial({"x": merge}))


@accumulator("$push")
def acc_push(arg: Any, ctx: Ctx) -> Accumulator:
    c = _compile(arg, ctx)
    return Accumulator(
        {"v": c.value}, {"xs": lambda r: _collect_seq(r("v"), r("v").isNotNull())},
        _value(lambda r: V.make_array(F.transform(by_seq(r("xs")), lambda e: e["v"]))), c.error,
        partial=Partial({"xs": _m_flat("xs")}))


@accumulator("$addToSet")
def acc_add_to_set(arg: Any, ctx: Ctx) -> Accumulator:
    c = _compile(arg, ctx)

    def agg(r: Ref) -> Column:
        item = F.struct(F.col("_seq").alias("s"), r("k").alias("k"), r("v").alias("v"))
        return F.collect_list(F.when(r("v").isNotNull(), item))

    def by_key(r: Ref, k: KeyCtx) -> Column:
        return F.array_sort(r("xs"), lambda a, b: F.when(a["k"] < b["k"], -1).when(a["k"] > b["k"], 1)
                            .otherwise(_cmp(a["s"], b["s"])))

    def firsts(srt: Column) -> Column:
        return F.filter(srt, lambda e, i: (i == 0) | (srt[F.greatest(i - 1, F.lit(0))]["k"] != e["k"]))

    def value(r: Ref, k: KeyCtx) -> Column:
        return V.make_array(F.transform(by_seq(firsts(r("by_key"))), lambda e: e["v"]))

    # incrementally: the list, compacted to each value's first arrival
    partial = Partial({"xs": _m_flat("xs")},
                      post=({"by_key": lambda r: by_key(r, None)}, {"xs": lambda r: firsts(r("by_key"))}), trim=True)
    return Accumulator({"v": c.value}, {"xs": agg}, ({"by_key": by_key}, {"value": value}), c.error,
                       {"k": lambda r: V.sort_key(r("v"))}, partial=partial)


@accumulator("$mergeObjects")
def acc_merge_objects(arg: Any, ctx: Ctx) -> Accumulator:
    c = _compile(arg, ctx)

    def check(r: Ref) -> Column:
        v = r("v")
        bad = ~V.is_null_or_missing(v) & ~V.is_object(v)
        return F.when(bad, F.concat(F.lit("$mergeObjects requires object inputs, but input "), F.to_json(v),
                                    F.lit(" is of type "), V.type_name(v)))

    def merged(r: Ref) -> Column:
        maps = F.transform(by_seq(r("xs")), lambda e: e["v"])
        empty = F.create_map().cast("map<string,variant>")
        return F.aggregate(maps, empty, lambda acc, m: F.map_concat(
            F.map_filter(acc, lambda key, _x: ~F.array_contains(F.map_keys(m), key)), m))

    def value(r: Ref) -> Column:
        return V.make_object(merged(r))

    def compact(r: Ref) -> Column:
        # merging is associative (a later field moves to the end either way): one merged element
        one = F.struct(F.array_min(F.transform(r("xs"), lambda e: e["s"])).alias("s"), merged(r).alias("v"))
        return F.when(F.size(r("xs")) > 1, F.array(one)).otherwise(r("xs"))

    return Accumulator({"v": c.value},
                       {"xs": lambda r: _collect_seq(V.object_entries(r("v")), V.is_object(r("v")))},
                       _value(value), c.error, check=check,
                       partial=Partial({"xs": _m_flat("xs")}, post=({"xs": compact},), trim=True))


for _name, _fn in {
    "$min": lambda arg, ctx: _min_max(arg, ctx, -1),
    "$max": lambda arg, ctx: _min_max(arg, ctx, 1),
    "$first": lambda arg, ctx: _first_last(arg, ctx, False),
    "$last": lambda arg, ctx: _first_last(arg, ctx, True),
}.items():
    accumulator(_name)(_fn)
