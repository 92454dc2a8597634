"""Low watermarks: the injector rule and the batch record both runners publish.

Injector (time-semantics.md, per partition): after each batch, ``M_p`` = the largest event time
read from partition ``p`` so far (minus the partition's lateness, see ``InjectorSpec.adaptive``); a partition is idle at instant ``T`` when ``idle_timeout_ms`` is
set and nothing of it arrived in ``(T - idle_timeout_ms, T]`` (one that never produced is then
idle); ``LW := max(LW, min over non-idle p of M_p - lateness_ms)`` (unchanged when all are idle, or
while a non-idle partition has produced nothing); ``END_MS`` once a finite input is exhausted.

Computation ``C`` (MillWheel): its input watermark ``IW_C`` = min over the producers of its input
streams of the low watermark each published with the last batch ``C`` consumed from it (a
producer not heard from yet: minus infinity); ``LW_C = min(IW_C, earliest pending event-time
timer of C)`` (records not yet consumed are behind ``IW_C`` by construction: each producer's later
batches only hold records at or after the watermark it had published). Event-time timers at or
before ``IW_C`` fire in ``C``'s next batch.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

from . import defaults
from .topology import InjectorSpec


@dataclass
class Batch:
    """Batch ``n`` of a producer: its records ``(stream, key, value JSON, ts)`` in order, the low
    watermark it published and its processing instant."""

    producer: str
    n: int
    records: list[tuple[str, str, str, int]]
    lw: int
    clock: int
    meta: dict = field(default_factory=dict)


class InjectorWatermark:
    """The per-partition rule above, for one injector."""

    def __init__(self, spec: InjectorSpec):
        self.spec = spec
        self.m: dict[str, int | None] = {p: None for p in spec.partitions}
        self.last_arrival: dict[str, int | None] = {p: None for p in spec.partitions}
        self.late: dict[str, int] = {p: spec.lateness_ms for p in spec.partitions}
        self.lw = defaults.NEG_INF_MS

    def _idle(self, p: str, clock: int) -> bool:
        t = self.spec.idle_timeout_ms
        if t is None:
            return False
        last = self.last_arrival[p]
        return last is None or not (clock - t < last <= clock)

    def advance(self, seen: Iterable[tuple[str, int]], clock: int) -> int:
        """Account a batch's ``(partition, event time)`` pairs read at ``clock``; return LW."""
        seen = list(seen)
        if self.spec.adaptive:
            for p, ts in seen:
                m = self.m.get(p)
                if m is not None and m - ts > 0:
                    self.late[p] = max(self.late.get(p, self.spec.lateness_ms), (m - ts) * 5 // 4)
        for p, ts in seen:
            if p not in self.m:
                self.m[p] = None
                self.last_arrival[p] = None
                self.late[p] = self.spec.lateness_ms
            self.m[p] = ts if self.m[p] is None else max(self.m[p], ts)
            self.last_arrival[p] = clock
        active = [p for p in self.m if not self._idle(p, clock)]
        if active and all(self.m[p] is not None for p in active):
            self.lw = max(self.lw, min(self.m[p] - self.late[p] for p in active))
        return self.lw

    def finish(self) -> int:
        self.lw = defaults.END_MS
        return self.lw

    def to_json(self) -> dict:
        return {"m": self.m, "last": self.last_arrival, "lw": self.lw, "late": self.late}

    def load(self, d: dict) -> None:
        self.m = dict(d["m"])
        self.last_arrival = dict(d["last"])
        self.lw = int(d["lw"])
        self.late = dict(d.get("late") or self.late)
