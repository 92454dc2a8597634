"""The window-only stages ``$group``, ``$sort``, ``$limit`` and ``$count`` over closed windows.

Input and output frames have the columns ``_w`` (STRUCT<start, end, key>: the window), ``_seq``
(BIGINT: document order within the window, unique per window), ``doc`` (VARIANT) and ``_err``
(STRING: why the row failed, NULL when it did not); any other column (e.g. ``_op``, the failing
operator) is carried along. Every function works on each ``_w`` independently. Rows that have
already failed (``_err`` not NULL) pass through untouched and take no part in the stage.

- :func:`apply_group`: one row per (window, group); ``doc`` = ``{_id, <field>: <accumulated>}``;
  ``_seq`` = the smallest ``_seq`` of the group (so groups come out in order of first arrival);
  ``_err`` = a per-group error (``n`` not a positive integer, decimal overflow), prefixed with
  ``$group.<field>: ``. A document whose ``_id`` expression or accumulator input fails (an
  expression error, ``$mergeObjects`` of a non-document) joins no group: it is passed on as a
  failed row (its own ``doc`` and ``_seq``, ``_err`` prefixed ``$group._id: `` or
  ``$group.<field>: ``) and the groups are computed from the other documents. On group rows, ``_op`` is ``"$group"`` when
  ``_err`` is set, other extra columns take the value of the group's first document.
  Groups are formed by MQL equality of ``_id`` (``1``, ``1.0`` and ``NumberLong(1)`` are one
  group; missing is null); the output ``_id`` is the first arrival's value.
- :func:`apply_sort`: MongoDB ``$sort`` keys (``accumulators.sort_field_key``), stable: ties keep
  ``_seq`` order. Sorted documents get new ``_seq`` values so later stages see the new order:
  the k-th in sort order gets ``m + k`` where ``m`` is the window's largest ``_seq`` (failed
  rows included), so they stay unique within the window.
- :func:`apply_limit`: the first ``n`` documents of each window by ``_seq``.
- :func:`apply_count`: one row per window holding ``{<field>: <number of documents>}``,
  ``_seq`` = the window's smallest ``_seq``; a window without documents emits nothing.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from ..mql.expressions import is_constant
from ..spec.stages import CountSpec, GroupSpec, LimitSpec, SortSpec
from . import values as V
from .ordering import flat, hash_hint, window_parts
from .registry import ACCUMULATORS, Ctx, first_error, window_stage
from .runtime.params import once
from .stages.base import Env, current_env

BASE = ("_w", "_seq", "doc", "_err")


def window_env() -> Env:
    """The expression environment of an inner pipeline: ``$meta`` window bounds from ``_w``;
    one per processor (kept in the running processor's :class:`Env`), so that the inner
    stages build their trees once."""
    outer = current_env()
    return _new_window_env() if outer is None else outer.once(window_env, _new_window_env)


def _new_window_env() -> Env:
    return Env(meta={"stream.window.start": V.to_variant(F.col("_w.start")),
                     "stream.window.end": V.to_variant(F.col("_w.end"))})


def _split(df: DataFrame) -> tuple[DataFrame, DataFrame]:
    return df.filter(F.col("_err").isNull()), df.filter(F.col("_err").isNotNull())


def _extras(df: DataFrame) -> list[str]:
    return [c for c in df.columns if c not in BASE]


# ---------------------------------------------------------------------------------------------
# $group


@dataclass
class GroupInputs:
    """A ``$group`` compiled over a frame of documents (see :func:`group_inputs`)."""

    rows: DataFrame                      # documents that join a group: _gid, _gk and accumulator inputs
    failed: DataFrame | None             # documents whose _id or accumulator input failed
    accs: list[tuple[str, str, Any]]     # (field, column prefix, Accumulator)
    extras: list[str]
    typed: dict                          # input column -> the column of its typed read (values.facts)
    # the group's _id over a grouped row (from _gk, or the constant), when the key holds it whole:
    # no min_by of a VARIANT, whose buffer keeps Spark from hash-aggregating
    id_of_key: Column | None = None


def group_inputs(df: DataFrame, spec: GroupSpec, ctx_factory: Callable[[Column], Ctx],
                 root: Column | None = None) -> GroupInputs:
    """Evaluate ``_id`` and the accumulators' inputs per document (rows that failed before are
    left out: the caller passes them on). ``root``: the ``doc`` column to compile over when it is
    not the plain one (:func:`..values.facts.source_doc`, for one micro-batch's documents)."""
    extras = _extras(df)
    tag = "group:" + ",".join(extras) + (":source" if root is not None else "")
    c = window_env().once(spec, lambda: _group_columns(spec, ctx_factory, extras, root), tag)
    rows = df.filter(F.col("_err").isNull()).select(*c.cols)
    if c.derived:
        rows = rows.withColumns(c.derived)
    rows = rows.withColumn("_rerr", c.rerr)

    # a document whose _id or accumulator input fails joins no group: it fails alone
    id_failed = None
    if c.doc_err is not None:
        id_failed = rows.filter(c.doc_err.isNotNull()).select(
            "_w", "_seq", "doc", c.doc_err.alias("_err"), *extras)
        if "_op" in extras:
            id_failed = id_failed.withColumn("_op", F.lit("$group"))
        rows = rows.filter(c.doc_err.isNull())
    if c.gc is not None:
        rows = rows.withColumn("_gc", c.gc)
    return GroupInputs(rows.withColumn("_gk", c.gk).drop("_gc"), id_failed, c.accs, extras, c.typed, c.id_of_key)


@dataclass
class _GroupColumns:
    """The Column trees of a ``$group``'s inputs (built once per processor)."""

    cols: list
    derived: dict
    rerr: Column
    doc_err: Column | None
    gk: Column
    gc: Column | None        # the type code of _gid (column _gc), which gk reads
    accs: list
    typed: dict              # input column -> the column of its typed read
    id_of_key: Column | None = None   # _id from the group's _gk alone, when it holds the whole value


def _group_columns(spec: GroupSpec, ctx_factory: Callable[[Column], Ctx], extras: list[str],
                   root: Column | None) -> _GroupColumns:
    from . import accumulators as _acc  # noqa: F401  (registers the accumulators)
    from .expr import compile_expression

    ctx = ctx_factory(F.col("doc") if root is None else root)
    gid = compile_expression(spec.id, ctx.at("$group._id"))

    accs = []
    for i, (name, op, arg) in enumerate(spec.fields):
        accs.append((name, f"_a{i}_", ACCUMULATORS[op](arg, ctx.at(f"$group.{name}.{op}"))))

    cols = [F.col(c) for c in ("_w", "_seq", "doc", *extras)]
    cols += [F.coalesce(gid.value, V.NULL).alias("_gid"),
             (_named(gid.error, "_id") if gid.error is not None else F.lit(None).cast("string")).alias("_gerr")]
    typed: dict[str, str] = {}      # input column -> the column of its typed read (values.facts)
    for name, pre, a in accs:
        cols += [c.alias(pre + n) for n, c in a.inputs.items()]
        for n, c in a.inputs.items():
            tr = V.typed_read(c)
            if tr is not None:
                typed[pre + n] = pre + n + "_x"
                cols.append(tr[1].alias(typed[pre + n]))
        if a.error is not None:
            cols.append(_named(a.error, name).alias(pre + "_error"))
    derived, checks = {}, []
    for name, pre, a in accs:
        ref = _typed_ref(pre, a.inputs, typed)
        derived.update({pre + n: fn(ref) for n, fn in a.derived.items()})
        if a.error is not None:
            checks.append(F.col(pre + "_error"))
        if a.check is not None:
            checks.append(_named(a.check(ref), name))
    doc_err = (F.coalesce(F.col("_gerr"), F.col("_rerr"))
               if gid.error is not None or checks else None)
    # groups by MQL equality of _id (values.group_key_coded); a constant _id makes one group per window
    const = is_constant(spec.id)
    gid_col = V.same_type(F.col("_gid"), gid.value)
    gk = F.lit(0) if const else V.group_key_coded(gid_col, F.col("_gc"))
    return _GroupColumns(cols, derived, first_error(*checks) if checks else F.lit(None).cast("string"),
                         doc_err, gk, None if const else V.type_code(gid_col), accs, typed,
                         F.coalesce(gid.value, V.NULL) if const else V.id_of_group_key(gid_col, F.col("_gk")))


def _named(err: Column | None, where: str) -> Column | None:
    return None if err is None else F.when(err.isNotNull(), F.concat(F.lit(f"$group.{where}: "), err))


def _ref(pre: str) -> Callable[[str], Column]:
    return lambda n: F.col(pre + n)


def _typed_ref(pre: str, inputs: dict[str, Column], typed: dict[str, str] | None = None) -> Callable[[str], Column]:
    """:func:`_ref`, with an input of known type (:mod:`.values.facts`) marked so; ``typed``:
    the columns holding inputs' typed reads (by input column)."""
    typed = typed or {}

    def ref(n: str) -> Column:
        if n not in inputs:
            return F.col(pre + n)
        t = typed.get(pre + n)
        return V.same_type(F.col(pre + n), inputs[n], None if t is None else F.col(t))
    return ref


def group_finish(grouped: DataFrame, accs: list, extras: list[str], ctx_factory: Callable[[Column], Ctx],
                 op_type: Any, steps_of: Callable[[Any], tuple] = lambda a: a.steps) -> DataFrame:
    """The groups' documents from aggregated rows (``_w``, ``_seq``, ``_id``, ``_rerr``, the
    accumulators' aggregates and the extra columns), through each accumulator's ``steps_of``.
    ``accs`` is built once per processor (:func:`group_inputs`, :meth:`..windows.partial.
    PartialPlan.accumulators`), and so are these Columns (:func:`.runtime.params.once`: the same
    generated code every batch)."""
    steps, used_key, ferr, out_cols = once(
        accs, "group_finish:" + ",".join(extras),
        lambda: _finish_columns(accs, extras, ctx_factory, op_type, steps_of))
    if used_key:
        grouped = grouped.withColumn("_kroot", F.when(V.is_object(F.col("_id")), F.col("_id"))
                                     .otherwise(F.parse_json(F.lit("{}"))))
    for cols in steps:
        grouped = grouped.withColumns(cols)
    return grouped.withColumn("_ferr", ferr).select(*out_cols)


def _finish_columns(accs: list, extras: list[str], ctx_factory: Callable[[Column], Ctx], op_type: Any,
                    steps_of: Callable[[Any], tuple]) -> tuple:
    """:func:`group_finish`'s Columns: (steps, whether they read the group key, ``_ferr``, output)."""
    # n of $topN & co. is evaluated against the group key: _id when it is a document, else {}
    used_key = []

    def key_ctx() -> Ctx:
        used_key.append(True)
        return ctx_factory(F.col("_kroot")).at("$group")

    steps = []
    for i in range(max((len(steps_of(a)) for _, _, a in accs), default=0)):
        cols = {}
        for _, pre, a in accs:
            if i < len(steps_of(a)):
                ref = _ref(pre)
                cols.update({pre + n: fn(ref, key_ctx) for n, fn in steps_of(a)[i].items()})
        steps.append(cols)
    values, errors = [("_id", F.col("_id"))], [F.col("_rerr")]
    for name, pre, a in accs:
        values.append((name, F.col(pre + "value")))
        if "error" in steps_of(a)[-1]:
            errors.append(_named(F.col(pre + "error"), name))
    ferr = F.coalesce(*errors) if len(errors) > 1 else errors[0]
    out_cols = [F.col("_w"), F.col("_seq"), V.make_object(values).alias("doc"), F.col("_ferr").alias("_err")]
    for c in extras:
        if c == "_op":
            out_cols.append(F.when(F.col("_ferr").isNotNull(), F.lit("$group")).cast(op_type).alias("_op"))
        else:
            out_cols.append(F.col(c))
    return steps, bool(used_key), ferr, out_cols


def apply_group(df: DataFrame, spec: GroupSpec, ctx_factory: Callable[[Column], Ctx]) -> DataFrame:
    """``$group`` per window (see the module docstring)."""
    g = group_inputs(df, spec, ctx_factory)
    aggs = [hash_hint(F.min("_seq")).alias("_seq"), F.min_by("_gid", "_seq").alias("_id"),
            F.lit(None).cast("string").alias("_rerr")]
    aggs += [F.min_by(c, "_seq").alias(c) for c in g.extras if c != "_op"]
    for _, pre, a in g.accs:
        aggs += [fn(_typed_ref(pre, a.inputs, g.typed)).alias(pre + n) for n, fn in a.aggs.items()]
    grouped = g.rows.groupBy("_w", "_gk").agg(*aggs)
    op_type = df.schema["_op"].dataType if "_op" in g.extras else None
    out = group_finish(grouped, g.accs, g.extras, ctx_factory, op_type)
    if g.failed is not None:
        out = out.unionByName(g.failed)
    return out.unionByName(df.filter(F.col("_err").isNotNull()))


# ---------------------------------------------------------------------------------------------
# $sort, $limit, $count


def apply_sort(df: DataFrame, spec: SortSpec, limit: int | None = None, known: dict | None = None) -> DataFrame:
    """``$sort`` per window (see the module docstring); with ``limit``, also the ``$limit`` that
    follows it: only the first ``limit`` sorted documents of each window (failed rows pass).
    ``known``: top-level fields whose MQL type code is the same on every document that did not
    fail (:func:`known_after`)."""
    sort = spec.keys
    w = Window.partitionBy(*window_parts())
    ok = F.col("_err").isNull()
    keyed = df.withColumn("_top", F.max("_seq").over(w))
    known = known or {}
    # the keys' trees built once per processor: the same generated code every batch
    layers, keys = once(spec, f"sort_keys:{sorted(known.items())}", lambda: _sort_keys(sort, ok, known))
    for layer in layers:
        keyed = keyed.withColumns(layer)
    keyed = keyed.withColumns({f"_k{i}": key for i, key in enumerate(keys)})
    types = keyed.schema      # the keys as their leaves: no struct comparisons (headrace.spark.ordering)
    order = [o for i, (_, d) in enumerate(sort) for o in flat(F.col(f"_k{i}"), types[f"_k{i}"].dataType, d > 0)]
    # failed rows sort apart (their _seq is kept); the others get _top + their sort position
    pos = F.row_number().over(w.orderBy(ok.asc(), *order, F.col("_seq")))
    failed = F.sum(F.when(ok, 0).otherwise(1)).over(w)
    keyed = keyed.withColumn("_rank", F.when(ok, pos - failed))
    if limit is not None:
        keyed = keyed.filter(F.col("_rank").isNull() | (F.col("_rank") <= F.lit(limit)))
    new_seq = F.when(ok, F.col("_top") + F.col("_rank")).otherwise(F.col("_seq"))
    return keyed.select(*[new_seq.alias("_seq") if c == "_seq" else F.col(c) for c in df.columns])


def known_after(stage) -> dict[str, int]:
    """The fields of ``stage``'s output documents whose MQL type is fixed: a ``$group``'s
    ``$count`` fields are integers (int or long) on every group."""
    if stage is None or stage.name != "$group":
        return {}
    return {name: V.CODE["int"] for name, op, _ in stage.spec.fields if op == "$count"}


def _sort_keys(sort: tuple, ok: Column, known: dict) -> tuple:
    """The columns each sort field needs once per row (its value, type code and DOUBLE, in
    layers) and the keys over them: a key is then a struct of column reads and reads under
    its type's branch (a lambda only for arrays and documents), not every row's key built under
    a lambda."""
    from .accumulators import sort_field_key
    from .values.base import known_at
    from .values.types import _num_double

    layers: list[dict[str, Column]] = [{}, {}, {}]
    keys = []
    for i, (path, d) in enumerate(sort):
        if path in known:
            value = known_at(F.col("doc"), path, known[path])
            keys.append(F.when(ok, sort_field_key(F.col("doc"), path, d, value)))
            continue
        v, c, n = f"_sv{i}", f"_sc{i}", f"_sd{i}"
        layers[0][v] = V.get_path(F.col("doc"), path)
        layers[1][c] = V.type_code(F.col(v))
        layers[2][n] = F.when(F.col(c).isin(*V.NUMBER_CODES), _num_double(F.col(v)))

        def derive(key: str, build: Callable[[Column], Column], v=v, n=n) -> Column:
            return F.col(n) if key == "number double" else build(F.col(v))
        value = V.hoisted_ref(F.col(v), lambda c=c: F.col(c), derive)
        keys.append(F.when(ok, sort_field_key(F.col("doc"), path, d, value)))
    return layers, keys


def apply_limit(df: DataFrame, spec: LimitSpec) -> DataFrame:
    """``$limit`` per window: the first ``spec.n`` documents by ``_seq``."""
    ok, failed = _split(df)
    limit = spec.n
    rn = F.row_number().over(Window.partitionBy(*window_parts()).orderBy("_seq"))
    out = ok.withColumn("_rn", rn).filter(F.col("_rn") <= F.lit(limit)).drop("_rn")
    return out.unionByName(failed)


def apply_count(df: DataFrame, spec: CountSpec) -> DataFrame:
    """``$count`` per window: ``{spec.field: <count>}`` (int, long when it does not fit 32 bits)."""
    field = spec.field
    ok, failed = _split(df)
    extras = _extras(df)
    aggs = [hash_hint(F.min("_seq")).alias("_seq"), F.count(F.lit(1)).alias("_n")]
    aggs += [F.min_by(c, "_seq").alias(c) for c in extras]
    counted = ok.groupBy("_w").agg(*aggs)
    out = counted.select("_w", "_seq", V.make_object([(field, V.from_long(F.col("_n")))]).alias("doc"),
                         F.lit(None).cast("string").alias("_err"), *extras)
    return out.unionByName(failed)


# ---------------------------------------------------------------------------------------------
# the compilers by stage name (:data:`headrace.spark.registry.WINDOW_STAGES`)


@window_stage("$group", spec=GroupSpec)
def _group(df: DataFrame, spec: GroupSpec, env: Env) -> DataFrame:
    return apply_group(df, spec, lambda root: env.ctx(root))


@window_stage("$sort", spec=SortSpec)
def _sort(df: DataFrame, spec: SortSpec, env: Env) -> DataFrame:
    return apply_sort(df, spec)


@window_stage("$limit", spec=LimitSpec)
def _limit(df: DataFrame, spec: LimitSpec, env: Env) -> DataFrame:
    return apply_limit(df, spec)


@window_stage("$count", spec=CountSpec)
def _count(df: DataFrame, spec: CountSpec, env: Env) -> DataFrame:
    return apply_count(df, spec)
