"""Tumbling and hopping windows: ``[k*H + O, k*H + O + I)`` (a tumbling window has ``H = I``).

Open windows are counted per start in the engine state (``"start|end|"`` -> documents); a
document joins every window that holds its time and is still open.
"""
from __future__ import annotations

import math

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from ...timing import TimeState, last_window_end
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

    def starts(self, t: Column) -> Column:
        """The starts of every window holding ``t`` (as :func:`headrace.timing.window_starts`)."""
        off = self.w.offset_ms
        last = F.floor((t - F.lit(off)) / F.lit(self.hop)) * F.lit(self.hop) + F.lit(off)
        n = math.ceil(self.iv / self.hop)
        seq = F.sequence(last - F.lit((n - 1) * self.hop), last, F.lit(self.hop))
        return F.filter(seq, lambda s: s > t - F.lit(self.iv))

    def late(self, good: DataFrame, frontier: int, st) -> tuple[DataFrame | None, DataFrame]:
        last_end = F.floor((F.col("_t") - F.lit(self.w.offset_ms)) / F.lit(self.hop)) * F.lit(self.hop) + \
            F.lit(self.w.offset_ms + self.iv)
        good = good.withColumn("_late", last_end <= F.lit(frontier))
        return good.filter("_late"), good.filter(~F.col("_late"))

    def missed(self, t: Column) -> Column:
        return self.starts(t)

    def observe(self, frontier: int | None) -> list[Column]:
        starts = self.starts(F.col("_t"))
        if frontier is not None:
            # a document joins only the windows still open (a hopping document may miss some)
            starts = F.filter(starts, lambda x: x + F.lit(self.iv) > F.lit(frontier))
        return [F.array_distinct(F.flatten(F.collect_set(starts))).alias("starts")]

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
        return docs.withColumn("_ws", F.explode(self.starts(F.col("_t")))) \
            .filter(F.col("_ws").isin(starts)).withColumn("_we", F.col("_ws") + F.lit(self.iv))

    def dead(self, max_t: int, ts: TimeState, st) -> bool:
        return ts.watermark is not None and \
            last_window_end(max_t, self.iv, self.hop, self.w.offset_ms) <= ts.watermark - self.w.allowed_lateness_ms
