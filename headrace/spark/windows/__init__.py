"""Window operators: one interface, one module per window kind.

A window stage keeps the documents of open windows (in the checkpoint's state files, see
:mod:`headrace.spark.runtime.state`) and a registry of open windows in the engine state. What
differs between kinds is behind :class:`WindowKind`:

- which documents are late against the watermark of the previous batch, and which windows they
  missed;
- how a batch's documents open or grow windows (:meth:`WindowKind.register`);
- which windows are open, and how a closing window finds its documents (:meth:`WindowKind.frame`);
- when a state file holds no document of an open window any more (:meth:`WindowKind.dead`).

:mod:`.fixed` is tumbling and hopping windows, :mod:`.session` session windows. A tumbling or
hopping window whose inner pipeline starts with a decomposable ``$group`` keeps partial
aggregates per (window, group) instead of documents (:mod:`.partial`). The closing
rules themselves (time-semantics.md) are in :mod:`headrace.spark.runtime.batch`.
"""
from __future__ import annotations

from abc import ABC, abstractmethod

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from ...spec.model import WindowSpec
from ...timing import TimeState

Window3 = tuple[int, int, str]      # (start, end, key) of an open window


class WindowKind(ABC):
    def __init__(self, spec: WindowSpec):
        self.w = spec

    def key(self, env) -> Column:
        """The per-row key that separates windows (session windows' ``partitionBy``)."""
        return F.lit("")

    @abstractmethod
    def late(self, good: DataFrame, frontier: int, st) -> tuple[DataFrame | None, DataFrame]:
        """``(late rows or None, on-time rows)`` of a batch, judged against ``frontier`` (``W -
        allowedLateness`` after the previous batch)."""

    @abstractmethod
    def missed(self, t: Column) -> Column:
        """The starts of the windows a late document at ``t`` missed (``missedWindowStartTimes``)."""

    @abstractmethod
    def register(self, summary: DataFrame, frontier: int | None, st) -> tuple[int, int] | None:
        """Add a batch's kept documents (``summary``: ``_t``, ``_arr``, ``_key``) to the open windows;
        returns the largest ``_t`` and arrival among them, None when there were none."""

    @abstractmethod
    def open(self, st) -> list[Window3]:
        """Open windows holding documents."""

    @abstractmethod
    def forget(self, st, window: Window3) -> None:
        """Remove a window that closed."""

    @abstractmethod
    def frame(self, spark, docs: DataFrame, closing: list[Window3]) -> DataFrame:
        """The closing windows' documents, each row with its window's ``_ws`` and ``_we``."""

    @abstractmethod
    def dead(self, max_t: int, ts: TimeState, st) -> bool:
        """No open window can hold a document at ``max_t`` or before (event time)."""


def window_kind(spec: WindowSpec) -> WindowKind:
    if spec.kind == "session":
        from .session import SessionWindows

        return SessionWindows(spec)
    from .fixed import FixedWindows

    return FixedWindows(spec)
