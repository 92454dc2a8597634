"""Tumbling and hopping windows: ``[k*H + O, k*H + O + I)`` (a tumbling window has ``H = I``).

Open windows are counted per start in the engine state (``"start|end|"`` -> documents); a
document joins every window that holds its time and is still open.
"""
from __future__ import annotations

import math

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from ...timing import TimeState, last_window_end
from ..runtime.params import FRONTIER, above, at_most, contains, long_param, once
from .kind import Window3, WindowKind


def wkey(start: int, end: int, key: str) -> str:
    return f"{start}|{end}|{key}"


class FixedWindows(WindowKind):
    @property
    def iv(self) -> int:
        return self.w.interval.ms

    @property
    def hop(self) -> int:
        return (self.w.hop or self.w.interval).ms

    def starts(self) -> Column:
        """The starts of every window holding ``_t`` (as :func:`headrace.timing.window_starts`),
        one Column per processor (:func:`..runtime.params.once`)."""
        return once(self.w, "starts", self._starts)

    def joins(self, frontier: int | None) -> Column:
        """The starts of the windows a document at ``_t`` joins: :meth:`starts`, and with a
        ``frontier`` only those still open, ``start + interval`` past it (the rows carry it in
        :data:`..runtime.params.FRONTIER`; a hopping document may miss some windows)."""
        if frontier is None:
            return self.starts()
        iv = F.lit(self.iv)
        return once(self.w, "open_starts",
                    lambda: F.filter(self.starts(), lambda x: above(x + iv, F.col(FRONTIER))))

    def _starts(self) -> Column:
        t, off = F.col("_t"), self.w.offset_ms
        last = F.floor((t - F.lit(off)) / F.lit(self.hop)) * F.lit(self.hop) + F.lit(off)
        n = math.ceil(self.iv / self.hop)
        seq = F.sequence(last - F.lit((n - 1) * self.hop), last, F.lit(self.hop))
        return F.filter(seq, lambda s: s > t - F.lit(self.iv))

    def is_late(self, frontier: int) -> Column:
        """Whether the document at ``_t`` is late: the last window holding it ends at or before
        ``frontier``."""
        last_end = F.floor((F.col("_t") - F.lit(self.w.offset_ms)) / F.lit(self.hop)) * F.lit(self.hop) + \
            F.lit(self.w.offset_ms + self.iv)
        return at_most(last_end, long_param(frontier))

    def late(self, good: DataFrame, frontier: int, st) -> tuple[DataFrame | None, DataFrame]:
        good = good.withColumn("_late", self.is_late(frontier))
        return good.filter("_late"), good.filter(~F.col("_late"))

    def none_late(self, min_t: int, frontier: int) -> bool:
        # every window holding t ends after t: at t >= frontier one is still open
        return min_t >= frontier

    def missed(self) -> Column:
        return self.starts()

    def observe(self, frontier: int | None) -> list[Column]:
        return [F.array_distinct(F.flatten(F.collect_set(self.joins(frontier)))).alias("starts")]

    def register(self, observed: dict, st) -> None:
        for s in sorted(observed["starts"] or []):
            k = wkey(s, s + self.iv, "")
            st.windows[k] = st.windows.get(k, 0) + 1

    def open(self, st) -> list[Window3]:
        out = []
        for k in st.windows:
            s, e, key = k.split("|", 2)
            out.append((int(s), int(e), key))
        return out

    def forget(self, st, window: Window3) -> None:
        st.windows.pop(wkey(*window), None)

    def frame(self, spark, docs: DataFrame, closing: list[Window3]) -> DataFrame:
        starts = sorted({s for s, _, _ in closing})
        return docs.withColumn("_ws", F.explode(self.starts())) \
            .filter(contains(starts, F.col("_ws"))).withColumn("_we", F.col("_ws") + F.lit(self.iv))

    def dead(self, max_t: int, ts: TimeState, st) -> bool:
        return ts.watermark is not None and \
            last_window_end(max_t, self.iv, self.hop, self.w.offset_ms) <= ts.watermark - self.w.allowed_lateness_ms
