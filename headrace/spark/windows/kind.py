"""The interface of a window kind (:class:`WindowKind`) and an open window (:data:`Window3`);
see :mod:`headrace.spark.windows`."""
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

    def none_late(self, min_t: int, frontier: int) -> bool:
        """Whether no row of a batch whose smallest ``_t`` is ``min_t`` can be late against
        ``frontier`` (then :meth:`late` need not run)."""
        return False

    @abstractmethod
    def missed(self) -> Column:
        """The starts of the windows a late document at ``_t`` missed (``missedWindowStartTimes``)."""

    @abstractmethod
    def observe(self, frontier: int | None) -> list[Column]:
        """Named aggregates over a batch's kept documents (``_t``, ``_arr``, ``_key``), observed
        while they are written to the state: what :meth:`register` needs."""

    @abstractmethod
    def register(self, observed: dict, st) -> None:
        """Add a batch's kept documents to the open windows, from :meth:`observe`'s values."""

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
