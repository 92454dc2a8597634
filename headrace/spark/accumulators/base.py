"""The types of an accumulator (:class:`Accumulator`, :class:`Partial`, ``Ref``, ``Step``) and
the column helpers every accumulator family shares: arrival-order lists of ``(seq, value)``
pairs, partial-merge aggregates, and compiling an argument expression.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from pyspark.sql import Column
from pyspark.sql import functions as F

from .. import values as V
from ..registry import Compiled, Ctx

Ref = Callable[[str], Column]
KeyCtx = Callable[[], Ctx]
Step = Mapping[str, Callable[[Ref, KeyCtx], Column]]
PostStep = Mapping[str, Callable[[Ref], Column]]


@dataclass(frozen=True)
class Partial:
    """How an accumulator keeps one partial aggregate per (window, group) across micro-batches
    (:mod:`headrace.spark.windows.partial`), with the same result as :attr:`Accumulator.aggs` and
    :attr:`Accumulator.steps` over all the documents.

    ``aggs``: per micro-batch, over its documents of one (window, group), like
    :attr:`Accumulator.aggs` (None: those); their names are the partial's columns.
    ``merge``: local name -> ``fn(ref) -> aggregate column`` over partial rows of one (window,
    group), for every partial column. Each partial row has ``_seq`` (its first document's) and
    ``_smax`` (its last document's); rows of different micro-batches never interleave in
    arrival order, so an order-sensitive merge takes rows in ``_seq`` order.
    ``post``: projections (``fn(ref) -> column``) applied in turn after ``merge``, making the
    partial compact again (fold a batch's items into a running state, trim a top-n list); the
    columns they define that are not partial columns are dropped.
    ``steps``: the finalisation from a merged and posted partial (None: :attr:`Accumulator.steps`).
    ``flag``: a boolean partial column true where a rarer kind of input was aggregated (a
    decimal), and ``plain_steps`` the smaller finalisation for state where no row has it: the
    engine records per state file whether any row had it (:mod:`headrace.spark.runtime.batch`).
    ``trim``: ``post`` may also be applied to one micro-batch's own partial row before it is
    stored, because it only drops what cannot be in the result whatever rows it is merged with
    later (the best of a ``$top``, the first ``n`` of a ``$firstN``, each value's first arrival in
    ``$addToSet``); not so for a fold onto a running state (the double-double ``$sum``).
    """

    merge: Mapping[str, Callable[[Ref], Column]]
    aggs: Mapping[str, Callable[[Ref], Column]] | None = None
    post: tuple[PostStep, ...] = ()
    steps: tuple[Step, ...] | None = None
    flag: str | None = None
    plain_steps: tuple[Step, ...] | None = None
    trim: bool = False


@dataclass(frozen=True)
class Accumulator:
    """How one ``$group`` output field is computed.

    ``inputs``: per-document columns by local name (evaluated before grouping).
    ``derived``: more per-document columns, local name -> ``fn(ref)`` where ``ref(name)`` is an
    input column (so a compiled expression is evaluated once and then referenced).
    ``aggs``: local name -> ``fn(ref) -> aggregate column`` over inputs and derived columns.
    ``steps``: projections applied in turn to the grouped rows, each local name ->
    ``fn(ref, key_ctx) -> column``, where ``ref(name)`` is an aggregate or an earlier step's
    column and ``key_ctx()`` the expression context rooted at the group key (for ``n``). The
    last step defines ``value`` (the field's VARIANT value) and may define ``error`` (a
    per-group error). Steps keep every expression small: a value used several times is
    computed once in an earlier step and referenced by name.
    ``error``: per-document error column of the compiled expression, or None.
    ``check``: ``fn(ref) -> STRING`` (over inputs and derived columns), a per-document error
    of the accumulator itself (e.g. ``$mergeObjects`` of a non-document), or None.
    ``partial``: how the accumulator is kept incrementally in window state (:class:`Partial`),
    or None when it is not decomposable.
    """

    inputs: Mapping[str, Column]
    aggs: Mapping[str, Callable[[Ref], Column]]
    steps: tuple[Step, ...]
    error: Column | None = None
    derived: Mapping[str, Callable[[Ref], Column]] = field(default_factory=dict)
    check: Callable[[Ref], Column] | None = None
    partial: Partial | None = None     # None: not decomposable (the window keeps documents)


def _value(fn: Callable[[Ref], Column]) -> tuple[Step, ...]:
    """One step computing ``value`` from the aggregates."""
    return ({"value": lambda r, k: fn(r)},)


def _compile(expr: Any, ctx: Ctx) -> Compiled:
    from ..expr import compile_expression

    return compile_expression(expr, ctx)


# ---------------------------------------------------------------------------------------------
# shared column helpers


def by_seq(lst: Column) -> Column:
    """An array of structs with field ``s`` sorted by ``s``."""
    return F.array_sort(lst, lambda a, b: F.when(a["s"] < b["s"], -1).when(a["s"] > b["s"], 1).otherwise(0))


def _collect_seq(value: Column, when: Column | None = None) -> Column:
    """collect_list of ``{s: _seq, v: value}`` (rows where ``when`` is false are skipped)."""
    item = F.struct(F.col("_seq").alias("s"), value.alias("v"))
    return F.collect_list(item if when is None else F.when(when, item))


def _cmp(a: Column, b: Column) -> Column:
    return F.when(a < b, F.lit(-1)).when(a > b, F.lit(1)).otherwise(F.lit(0))


def _null_or(v: Column) -> Column:
    """Missing as BSON null."""
    return F.coalesce(v, V.NULL)


def _m_sum(name: str) -> Callable[[Ref], Column]:
    return lambda r: F.sum(r(name))


def _m_max(name: str) -> Callable[[Ref], Column]:
    return lambda r: F.max(r(name))


def _m_flat(name: str) -> Callable[[Ref], Column]:
    """Lists of the partial rows concatenated (their order is restored by ``s`` later)."""
    return lambda r: F.flatten(F.collect_list(r(name)))


def _m_first(name: str) -> Callable[[Ref], Column]:
    """The value of the earliest partial row."""
    return lambda r: F.min_by(r(name), F.col("_seq"))


def _emptied(name: str) -> Callable[[Ref], Column]:
    return lambda r: F.slice(r(name), 1, 0)


def _sub(ctx: Ctx, name: str) -> Ctx:
    return ctx.at(f"{ctx.where}.{name}" if ctx.where else name)
