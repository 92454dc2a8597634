"""The typed fast path: field paths of a micro-batch's source documents read with a known type.

The engine computes the batch's :class:`~headrace.mql.doc_facts.DocFacts` in its statistics job
and sets them around the batch (:func:`batch_facts`). A stage that runs on the source documents
compiles over :func:`source_doc` (the ``doc`` column, marked with which top-level fields are still
the source's: :class:`~headrace.mql.source_fields.SourceFields`). Where the facts know a path's
type, :func:`read_path` gives ``variant_get(doc, path)`` marked :func:`~.base.known`: its type code
is a cheap ``CASE`` (missing / null / that type) instead of the generic dispatch (struct reads
for the BSON wrappers, ``schema_of_variant``), typed reads go straight to the document, and
:func:`headrace.spark.predicates.path_test` tests the value without MongoDB's array iteration
(the facts say there is no array on the way). Results are the generic path's on every row.

Compiled Column trees are kept per processor (:meth:`headrace.spark.stages.Env.once`); a tree
built with facts holds only for batches whose facts say the same of the paths it read, so
:func:`recording` lists the ``(path, kind)`` answers a build used, and ``once`` keeps one tree
per distinct list.
"""
from __future__ import annotations

import contextvars
from contextlib import AbstractContextManager as ContextManager, contextmanager
from typing import Any, Iterator

from pyspark.sql import Column
from pyspark.sql import functions as F

from ..ctxvar import bound
from .base import CODE, _mark, known, known_at

__all__ = ["batch_facts", "source_doc", "read_path", "recording", "replay", "holds"]

_BATCH: contextvars.ContextVar = contextvars.ContextVar("headrace_doc_facts", default=None)
_RECORD: contextvars.ContextVar = contextvars.ContextVar("headrace_facts_record", default=None)


def batch_facts(facts: Any) -> ContextManager[Any]:
    """``facts`` (a :class:`~headrace.mql.doc_facts.DocFacts`, or None) for what is compiled inside."""
    return bound(_BATCH, facts)


@contextmanager
def recording() -> Iterator[list]:
    """The ``(path, kind)`` answers given while inside (also passed on to an enclosing recording)."""
    log: list = []
    try:
        with bound(_RECORD, log):
            yield log
    finally:
        replay(log)


def replay(log: list) -> None:
    """Tell an enclosing :func:`recording` the answers a reused tree was built with."""
    outer = _RECORD.get()
    if outer is not None:
        outer.extend(log)


def holds(log: list) -> bool:
    """Whether the current batch's facts give the answers ``log`` recorded."""
    facts = _BATCH.get()
    return all((facts.kind(p) if facts is not None else None) == k for p, k in log)


class _View:
    """The facts as seen by a stage: only paths whose top-level field is still the source's."""

    __slots__ = ("fields",)

    def __init__(self, fields: Any):
        self.fields = fields

    def kind(self, path: str) -> str | None:
        if not self.fields.intact(path):
            return None
        facts = _BATCH.get()
        kind = facts.kind(path) if facts is not None else None
        log = _RECORD.get()
        if log is not None:
            log.append((path, kind))
        return kind


def source_doc(fields: Any) -> Column:
    """The ``doc`` column of the batch's source documents, where the fields ``fields``
    (:class:`~headrace.mql.source_fields.SourceFields`) holds intact are the source's."""
    col = F.col("doc")
    col._mql_facts = _View(fields)
    return col


def read_path(v: Column, path: str) -> Column | None:
    """``path`` of document ``v`` as a :func:`~.base.known` value when ``v`` is a
    :func:`source_doc` and the batch's facts know the path's type; else None."""
    view = _mark(v, "_mql_facts")
    if view is None or not path:
        return None
    kind = view.kind(path)
    if kind is None:
        return None
    code = CODE[kind]
    if kind == "missing":
        return known(F.lit(None).cast("variant"), code, lambda t: F.lit(None).cast(t))
    return known_at(v, path, code)
