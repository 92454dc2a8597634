"""Session windows: per ``partitionBy`` value, a session grows while consecutive event times are
less than ``gap`` apart; an event within ``gap`` of two sessions merges them. A session
``[first, last]`` is the window ``[first, last + gap)``.

Open sessions are kept per key in the engine state (``key -> [[first, last], ...]``).
"""
from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from ...timing import TimeState
from ..runtime.params import at_most, contains, long_param
from .kind import Window3, WindowKind


class SessionWindows(WindowKind):
    @property
    def gap(self) -> int:
        return self.w.gap.ms

    def key(self, env) -> Column:
        from ..expr import compile_expression

        c = compile_expression(self.w.partition_by, env.ctx(where=f"{self.w.name}.partitionBy"))
        return F.coalesce(F.to_json(c.value), F.lit("null"))

    def late(self, good: DataFrame, frontier: int, st) -> tuple[DataFrame | None, DataFrame]:
        # only documents whose own session would already be closed can be late: few, checked here
        cand = good.filter(at_most(F.col("_t") + F.lit(self.gap), long_param(frontier))).select("_seq", "_key", "_t").collect()
        late = [r["_seq"] for r in cand
                if not any(first - self.gap < r["_t"] < last + self.gap for first, last in st.sessions.get(r["_key"], []))]
        if not late:
            return None, good
        is_late = contains(late, F.col("_seq"))
        return good.filter(is_late), good.filter(~is_late)

    def none_late(self, min_t: int, frontier: int) -> bool:
        # late() looks only at rows with _t + gap <= frontier
        return min_t + self.gap > frontier

    def missed(self) -> Column:
        return F.array(F.col("_t"))

    def observe(self, frontier: int | None) -> list[Column]:
        return [F.collect_set(F.struct("_key", "_t")).alias("times")]

    def register(self, observed: dict, st) -> None:
        times: dict[str, list[int]] = {}
        for key, t in observed["times"] or []:
            times.setdefault(key, []).append(t)
        for key in sorted(times):
            self._merge(st, key, sorted(times[key]))

    def _merge(self, st, key: str, times: list[int]) -> None:
        ss = [list(x) for x in st.sessions.get(key, [])] + [[t, t] for t in times]
        ss.sort()
        merged: list[list[int]] = []
        for first, last in ss:
            if merged and first - merged[-1][1] < self.gap:
                merged[-1][1] = max(merged[-1][1], last)
            else:
                merged.append([first, last])
        st.sessions[key] = merged

    def open(self, st) -> list[Window3]:
        return [(f, l + self.gap, k) for k, ss in st.sessions.items() for f, l in ss]

    def forget(self, st, window: Window3) -> None:
        s, e, k = window
        st.sessions[k] = [x for x in st.sessions.get(k, []) if not (x[0] == s and x[1] + self.gap == e)]
        if not st.sessions[k]:
            del st.sessions[k]

    def frame(self, spark, docs: DataFrame, closing: list[Window3]) -> DataFrame:
        sess = spark.createDataFrame([(k, s, e - self.gap, e) for s, e, k in closing],
                                     "k string, s bigint, l bigint, e bigint")
        j = docs.join(F.broadcast(sess), (docs["_key"] == sess["k"]) & (docs["_t"] >= sess["s"]) &
                      (docs["_t"] <= sess["l"]))
        return j.withColumn("_ws", F.col("s")).withColumn("_we", F.col("e"))

    def dead(self, max_t: int, ts: TimeState, st) -> bool:
        firsts = [x[0] for ss in st.sessions.values() for x in ss]
        return not firsts or min(firsts) > max_t
