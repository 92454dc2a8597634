"""Windows as partial aggregates: one row per (window, group) instead of the documents.

When a tumbling or hopping window's inner pipeline starts with a ``$group`` whose accumulators
are all decomposable (:attr:`headrace.spark.accumulators.Accumulator.partial`), the window state
holds, per micro-batch that added documents, one *partial row* per (window, group key) instead
of the documents (:func:`pre_aggregate`). When a window closes, its partial rows are merged
(:func:`merge`) and finalised into the ``$group``'s output (:func:`finish`); the rest of the inner
pipeline (``$sort``, ``$limit``, ``$project``...) runs on that, as it would on the documents.
Once a window's state spans more than :data:`COMPACT_AFTER` files, the live files are merged
into one (a compaction), so the state is one row per (window, group) plus the partial rows of
the last few batches: its size grows with windows x keys, not with documents.

Exactness: the partial row's ``_seq`` is its first document's arrival sequence and ``_smax``
its last; documents of a later micro-batch always arrive after those of an earlier one, so
the rows of one (window, group) never interleave and each accumulator's merge takes them in
arrival order (``$first``/``$last``, the double-double ``$sum``, Welford's ``$stdDev*``,
``$mergeObjects``, the ties of ``$top``/``$bottom``...). The result is the same as the
document path's (:func:`headrace.spark.window_stages.apply_group` over all the documents):
the tests run the same pipelines both ways.

A document whose ``_id`` or accumulator input fails joins no group; it is kept in the state as
a document (a *failed row*: ``doc`` and ``_err`` set) and passed on when its window closes, as
the document path does.

Session windows, and inner pipelines that do not start with such a ``$group`` (``$median``,
``$percentile``, a ``$sort`` first...), keep the documents (:mod:`headrace.spark.runtime.batch`).
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from ...spec.model import WindowSpec
from ...spec.stages import GroupSpec
from ..ordering import hash_hint
from ..runtime.params import contains, once
from ..window_stages import window_env

#: Merge the live state files into one when there are more than this many.
COMPACT_AFTER = 4

#: Accumulators with a partial form (see :class:`headrace.spark.accumulators.Partial`).
DECOMPOSABLE = frozenset({
    "$count", "$sum", "$avg", "$min", "$max", "$first", "$last", "$top", "$bottom", "$topN", "$bottomN",
    "$firstN", "$lastN", "$maxN", "$minN", "$stdDevPop", "$stdDevSamp", "$mergeObjects", "$addToSet", "$push"})

#: Columns of every partial row besides the accumulators' (``_a<i>_<name>``).
ROW = ("_w", "_ws", "_gk", "_seq", "_smax", "_n", "_tmax", "_amax", "_id")


@dataclass(frozen=True)
class PartialPlan:
    """A window kept as partial aggregates: its ``$group`` and the inner stages after it."""

    group: GroupSpec
    rest: tuple

    def accumulators(self) -> list[tuple[str, str, Any]]:
        """``(field, column prefix, Accumulator)`` as :func:`headrace.spark.window_stages.group_inputs`."""
        from .. import accumulators as _acc  # noqa: F401  (registers the accumulators)
        from ..registry import ACCUMULATORS

        env = window_env()

        def build() -> list[tuple[str, str, Any]]:
            ctx = env.ctx()
            out = []
            for i, (name, op, arg) in enumerate(self.group.fields):
                out.append((name, f"_a{i}_", ACCUMULATORS[op](arg, ctx.at(f"$group.{name}.{op}"))))
            return out
        return env.once(self.group, build, "accumulators")

    def flags(self) -> list[str]:
        """The partial columns that mark rows needing the full finalisation (:attr:`Partial.flag`)."""
        return [pre + a.partial.flag for _, pre, a in self.accumulators() if a.partial.flag]


def partial_plan(w: WindowSpec) -> PartialPlan | None:
    """The window's partial plan, or None when it keeps documents (always None when the
    environment variable ``HEADRACE_WINDOW_STATE`` is ``documents``: for comparisons)."""
    if os.environ.get("HEADRACE_WINDOW_STATE") == "documents":
        return None
    if w.kind == "session" or not w.pipeline or w.pipeline[0].name != "$group":
        return None
    spec = w.pipeline[0].spec
    if any(op not in DECOMPOSABLE for _, op, _ in spec.fields):
        return None
    return PartialPlan(spec, tuple(w.pipeline[1:]))


def _ctx_factory():
    env = window_env()
    return lambda root: env.ctx(root)


def _ref(pre: str):
    return lambda n: F.col(pre + n)


def pre_aggregate(framed: DataFrame, plan: PartialPlan, fields: Any = None) -> DataFrame:
    """One micro-batch's partial rows, plus its failed rows.

    ``framed``: the batch's on-time documents, one row per window they join, with ``_w``
    (start, end, key), ``_seq``, ``doc``, ``_t`` and ``_arr``. Partial rows have :data:`ROW` and
    the accumulators' partial columns; a failed row has ``_w``, ``_ws``, ``_seq``, ``doc``, ``_err``.
    ``fields``: which top-level fields of ``doc`` are still the source's
    (:class:`~headrace.mql.source_fields.SourceFields`): their paths read with the batch's
    facts (:mod:`..values.facts`); the partial rows' columns and types are the same either way.
    """
    from ..values.facts import source_doc
    from ..window_stages import _typed_ref, group_inputs

    framed = framed.withColumns({"_err": F.lit(None).cast("string"), "_op": F.lit(None).cast("string")})
    g = group_inputs(framed, plan.group, _ctx_factory(), None if fields is None else source_doc(fields))
    aggs = [hash_hint(F.min("_seq")).alias("_seq"), F.max("_seq").alias("_smax"), F.count(F.lit(1)).alias("_n"),
            F.max("_t").alias("_tmax"), F.max("_arr").alias("_amax")]
    if g.id_of_key is None:
        aggs.append(F.min_by("_gid", "_seq").alias("_id"))
    for _, pre, a in g.accs:
        p = a.partial
        aggs += [fn(_typed_ref(pre, a.inputs, g.typed)).alias(pre + n) for n, fn in (p.aggs or a.aggs).items()]
    rows = g.rows.groupBy("_w", "_gk").agg(*aggs)
    if g.id_of_key is not None:     # read back from the key: no VARIANT in the buffers (a hash aggregate)
        rows = rows.withColumn("_id", g.id_of_key)
    rows = _trimmed(rows, g.accs)
    rows = rows.withColumns({"doc": F.lit(None).cast("variant"), "_err": F.lit(None).cast("string")})
    if g.failed is not None:
        failed = g.failed.select("_w", "_seq", F.col("_seq").alias("_smax"), F.lit(1).cast("bigint").alias("_n"),
                                 F.col("_t").alias("_tmax"), F.col("_arr").alias("_amax"), "doc", "_err")
        rows = rows.unionByName(failed, allowMissingColumns=True)
    return rows.withColumn("_ws", F.unix_millis(F.col("_w.start")))


def _trimmed(rows: DataFrame, accs: list) -> DataFrame:
    """A batch's partial rows with the ``post`` of each accumulator whose :attr:`Partial.trim`
    allows it (a ``$top`` keeps its best, not every candidate: the state and the merge stay
    small), without the columns those steps add. The projections are built once per processor,
    as :func:`merge`'s are."""
    posts, extra = once(accs, "trim", lambda: _trim_columns(accs))
    for cols in posts:
        rows = rows.withColumns(cols)
    return rows.drop(*extra) if extra else rows


def _trim_columns(accs: list) -> tuple[list[dict[str, Column]], list[str]]:
    """:func:`_trimmed`'s projections and the columns they add."""
    trimmed = [x for x in accs if x[2].partial.trim]
    extra = sorted({pre + n for _, pre, a in trimmed for step in a.partial.post for n in step
                    if n not in (a.partial.aggs or a.aggs)})
    return _post_columns(trimmed), extra


def merge(rows: DataFrame, plan: PartialPlan) -> DataFrame:
    """Partial rows merged to one per (window, group), compact again; failed rows pass through.
    The result has ``rows``' columns and types, so it can be stored and merged again."""
    accs = plan.accumulators()
    aggs, posts, names = once(accs, "merge", lambda: _merge_columns(accs))
    part, failed = rows.filter(F.col("_err").isNull()), rows.filter(F.col("_err").isNotNull())
    # _seq's aggregate is built per batch: it carries the batch's ordering mode (..ordering)
    merged = part.groupBy("_w", "_ws", "_gk").agg(hash_hint(F.min("_seq")).alias("_seq"), *aggs)
    for cols in posts:
        merged = merged.withColumns(cols)
    types = rows.schema
    merged = merged.select(*[F.col(c).cast(nullable(types[c].dataType)).alias(c) for c in (*ROW, *names)])
    return merged.unionByName(failed, allowMissingColumns=True).select(*rows.columns)


def _merge_columns(accs: list) -> tuple[list[Column], list[dict[str, Column]], list[str]]:
    """:func:`merge`'s aggregates but ``_seq``'s, its steps after them and the accumulators'
    column names."""
    aggs = [F.max("_smax").alias("_smax"), F.sum("_n").alias("_n"),
            F.max("_tmax").alias("_tmax"), F.max("_amax").alias("_amax"), F.min_by("_id", "_seq").alias("_id")]
    names = []
    for _, pre, a in accs:
        p = a.partial
        aggs += [fn(_ref(pre)).alias(pre + n) for n, fn in p.merge.items()]
        names += [pre + n for n in p.merge]
    return aggs, _post_columns(accs), names


def _post_columns(accs: list) -> list[dict[str, Column]]:
    """The accumulators' ``post`` steps as projections: the i-th steps of all of them together."""
    posts = []
    for i in range(max((len(a.partial.post) for _, _, a in accs), default=0)):
        cols = {}
        for _, pre, a in accs:
            if i < len(a.partial.post):
                cols.update({pre + n: fn(_ref(pre)) for n, fn in a.partial.post[i].items()})
        posts.append(cols)
    return posts


def nullable(t):
    """``t`` with every nested field, element and value nullable (how Parquet files read back)."""
    from pyspark.sql import types as T

    if isinstance(t, T.StructType):
        return T.StructType([T.StructField(f.name, nullable(f.dataType), True) for f in t.fields])
    if isinstance(t, T.ArrayType):
        return T.ArrayType(nullable(t.elementType), True)
    if isinstance(t, T.MapType):
        return T.MapType(nullable(t.keyType), nullable(t.valueType), True)
    return t


def finish(rows: DataFrame, plan: PartialPlan, plain: bool = False) -> DataFrame:
    """The ``$group``'s output over stored rows of closing windows: ``_w``, ``_seq``, ``doc``,
    ``_err`` and ``_op`` (``"$group"`` on a failed row or a group that failed). ``plain``: no
    row has a :meth:`PartialPlan.flags` column set, so the accumulators' ``plain_steps`` do."""
    from ..window_stages import group_finish

    merged = merge(rows, plan)
    accs = plan.accumulators()
    part, failed = merged.filter(F.col("_err").isNull()), merged.filter(F.col("_err").isNotNull())
    part = part.withColumn("_rerr", F.lit(None).cast("string"))
    out = group_finish(part, accs, ["_op"], _ctx_factory(), "string",
                       steps_of=lambda a: (plain and a.partial.plain_steps) or a.partial.steps or a.steps)
    return out.unionByName(failed.select("_w", "_seq", "doc", "_err", F.lit("$group").alias("_op")))


def in_windows(rows: DataFrame, starts: list[int]) -> DataFrame:
    return rows.filter(contains(starts, F.col("_ws"))) if starts else rows.limit(0)
