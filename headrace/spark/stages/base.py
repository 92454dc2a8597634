"""What every stateless stage module uses: the engine's :class:`Env`, :func:`guard` (replace the
document on rows that have not failed) and :func:`apply_stages`."""
from __future__ import annotations

import contextvars
from contextlib import AbstractContextManager as ContextManager
from dataclasses import dataclass, field
from typing import Any, Callable

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from ...mql.source_fields import SourceFields
from ...spec.stages import spec_of
from ..hoist import Hoister
from ..values import facts
from ..ctxvar import bound
from ..registry import STAGE_SPEC_TYPES, STAGES, Ctx, compiling_stage


_TREES_PER_KEY = 4


@dataclass
class Env:
    """What stage compilers need from the engine: expression contexts, ``$meta`` columns, and
    the stages' compiled Column trees (:meth:`once`). A processor keeps one ``Env``."""

    meta: dict[str, Column] = field(default_factory=dict)
    _memo: dict[tuple[int, str], tuple[Any, Any]] = field(default_factory=dict, repr=False, compare=False)

    def once(self, key: Any, build: Callable[[], Any], tag: str = "") -> Any:
        """``build()`` the first time ``key`` (a stage, by identity) is seen with ``tag``, then
        the same.

        A Column tree is an unresolved plan that does not depend on the micro-batch's
        DataFrame, and building one costs a py4j round trip per node (a ``$project`` of three
        computed fields: about 12,000 round trips, 1.8 s), so each stage builds its trees once
        per processor, not once per micro-batch. A tree that read field paths of known type
        (:mod:`..values.facts`) is kept for the batches whose facts agree; up to
        ``_TREES_PER_KEY`` such variants are kept."""
        hit = self._memo.get((id(key), tag))
        if hit is None or hit[0] is not key:
            hit = self._memo[(id(key), tag)] = (key, [])
        # one tree per distinct answer of the batch's facts to the paths it read (values.facts)
        for log, value in hit[1]:
            if facts.holds(log):
                facts.replay(log)
                return value
        with facts.recording() as log:
            value = build()
        hit[1].insert(0, (log, value))
        del hit[1][_TREES_PER_KEY:]
        return value

    def ctx(self, root: Column | None = None, where: str = "", hoist: Hoister | None = None) -> Ctx:
        """A context over ``root`` (the ``doc`` column by default); ``hoist`` only with the
        default root, for a stage that evaluates through :func:`guard` or :func:`hoisted`. Over
        the ``doc`` column of a stage :func:`apply_stages` runs on source records, the context
        also has the records' raw text where a path's value is still the source's (``Ctx.text``)."""
        if root is not None and hoist is not None:
            raise ValueError("a hoister reads the doc column; it cannot serve another root")
        src = _SOURCE.get() if root is None else None
        text = None
        if src is not None:
            fields, column = src
            text = lambda path: F.col(column) if fields.intact(path) else None  # noqa: E731
            root = facts.source_doc(fields)
        elif root is None:
            root = F.col("doc")
        if hoist is not None:
            hoist.root = root
        return Ctx(root=root, meta=self.meta, where=where, hoist=hoist, text=text)

    def active(self) -> ContextManager["Env"]:
        """The processor's environment while its micro-batch runs (:func:`current_env`)."""
        return bound(_CURRENT, self)


_CURRENT: contextvars.ContextVar = contextvars.ContextVar("headrace_env", default=None)
_SOURCE: contextvars.ContextVar = contextvars.ContextVar("headrace_source_fields", default=None)


def current_env() -> Env | None:
    """The running processor's :class:`Env` (None outside a micro-batch): for compilers that
    are called without one, such as the windows', to build their trees once per processor."""
    return _CURRENT.get()


def hoisted(df: DataFrame, hoist: Hoister | None, fn: Callable[[DataFrame], DataFrame]) -> DataFrame:
    """``fn(df)`` with ``hoist``'s columns present in ``df`` during it and dropped after."""
    if hoist is None or not hoist.names:
        return fn(df)
    return fn(hoist.apply(df)).drop(*hoist.names)


def guard(df: DataFrame, doc: Column, err: Column | None, op: str,
          hoist: Hoister | None = None) -> DataFrame:
    """Replace ``doc`` on rows that have not failed; record ``err`` (if any) with operator ``op``.

    ``doc`` and ``err`` are both expressions over the stage's *input* ``doc``. They are
    evaluated in one projection under fresh names first, and only then renamed: a projection
    that defines ``doc`` while another of its expressions reads ``doc`` inside a lambda
    (``transform`` etc., which Spark resolves late) would have that read captured by Spark's
    implicit lateral column alias resolution, i.e. ``err`` would see the *new* document (so a
    ``$project`` dropping the field an expression reads made every row fail).

    ``hoist``: the :class:`~headrace.spark.hoist.Hoister` the expressions were compiled with.
    """
    return hoisted(df, hoist, lambda d: _guard(d, doc, err, op))


def _guard(df: DataFrame, doc: Column, err: Column | None, op: str) -> DataFrame:
    ok = F.col("_err").isNull()
    staged = {"_g_doc": doc}
    if err is not None:
        staged["_g_err"] = err
    df = df.withColumns(staged)
    cols = {"doc": F.when(ok, F.col("_g_doc")).otherwise(F.col("doc"))}
    if err is not None:
        cols["_op"] = F.when(ok & F.col("_g_err").isNotNull(), F.lit(op)).otherwise(F.col("_op"))
        cols["_err"] = F.when(ok, F.col("_g_err")).otherwise(F.col("_err"))
    return df.withColumns(cols).drop(*staged)


def _spec(st: Any) -> Any:
    spec = st.spec if st.spec is not None else spec_of(st.name, st.arg)
    if not isinstance(spec, STAGE_SPEC_TYPES[st.name]):
        raise TypeError(f"{st.name}: spec {type(spec).__name__}, expected {STAGE_SPEC_TYPES[st.name].__name__}")
    return spec


def source_fields_after(stages: Any, ts_field: str) -> SourceFields:
    """Which top-level fields are still the source record's after ``stages``."""
    fields = SourceFields.at_source(ts_field)
    for st in stages:
        fields = fields.after(st.name, _spec(st))
    return fields


def apply_stages(df: DataFrame, stages: Any, env: Env, raw: tuple[str, str] | None = None) -> DataFrame:
    """Each stage's compiler applied to its typed spec (built from the raw argument when a
    :class:`~headrace.spec.model.Stage` was made by hand without one).

    ``raw``: ``(column, tsFieldName)`` when ``df``'s rows are source records whose raw JSON text
    is in ``column``: each stage's :meth:`Env.ctx` then offers that text for the paths whose
    value is still the source's (:class:`~headrace.mql.source_fields.SourceFields`)."""
    fields = SourceFields.at_source(raw[1]) if raw is not None else None
    for st in stages:
        spec = _spec(st)
        with bound(_SOURCE, (fields, raw[0]) if fields is not None else None), compiling_stage(st.position):
            df = STAGES[st.name](df, st, spec, env)
        if fields is not None:
            fields = fields.after(st.name, spec)
    return df
