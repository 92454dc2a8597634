"""Event time, watermarks and window arithmetic of time-semantics.md, in pure Python.

All instants are integer milliseconds since the epoch (UTC); ``None`` stands for minus
infinity (before anything), :data:`PLUS_INF` for the end of a finite input.
The Spark engine keeps one :class:`TimeState` per processor, versioned per micro-batch.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Iterable

PLUS_INF = 2**62


def window_starts(t: int, interval: int, hop: int, offset: int) -> list[int]:
    """Starts of every window ``[s, s+interval)`` with ``s = k*hop + offset`` that holds ``t``."""
    last = math.floor((t - offset) / hop) * hop + offset
    out = []
    s = last
    while s > t - interval:
        out.append(s)
        s -= hop
    return sorted(out)


def last_window_end(t: int, interval: int, hop: int, offset: int) -> int:
    """The latest end among the windows holding ``t`` (a document is late once it has passed)."""
    return math.floor((t - offset) / hop) * hop + offset + interval


@dataclass
class PartitionState:
    max_event: int | None = None       # M_p
    last_arrival: int | None = None    # latest arrival instant of a document of p


@dataclass
class TimeState:
    """The watermark ``W`` and what it is computed from (time-semantics.md, "Watermark")."""

    watermark: int | None = None                      # W (None = minus infinity)
    partitions: dict[str, PartitionState] = field(default_factory=dict)
    last: int | None = None                           # latest arrival of any document
    clock: int | None = None                          # processing clock after the last batch
    ended: bool = False

    def to_json(self) -> dict:
        return {"W": self.watermark, "last": self.last, "clock": self.clock, "ended": self.ended,
                "parts": {p: [s.max_event, s.last_arrival] for p, s in self.partitions.items()}}

    @classmethod
    def from_json(cls, d: dict) -> "TimeState":
        return cls(d["W"], {p: PartitionState(*v) for p, v in d["parts"].items()}, d["last"], d["clock"],
                   d.get("ended", False))

    def ensure(self, partitions: Iterable[str]) -> None:
        for p in partitions:
            self.partitions.setdefault(p, PartitionState())

    def idle(self, p: str, now: int, idle_timeout: int | None) -> bool:
        """Idle at ``now``: a timeout is set and no document of p arrived in (now - timeout, now]."""
        if idle_timeout is None:
            return False
        la = self.partitions[p].last_arrival
        return la is None or la <= now - idle_timeout

    def observe(self, p: str, max_event: int | None, max_arrival: int) -> None:
        """A completed batch held documents of ``p`` (late ones included)."""
        s = self.partitions.setdefault(p, PartitionState())
        if max_event is not None:
            s.max_event = max_event if s.max_event is None else max(s.max_event, max_event)
        s.last_arrival = max_arrival if s.last_arrival is None else max(s.last_arrival, max_arrival)
        self.last = max_arrival if self.last is None else max(self.last, max_arrival)

    def advance(self, now: int, idle_timeout: int | None) -> None:
        """``W := max(W, min over non-idle partitions of M_p)``; unchanged when all are idle."""
        self.clock = now if self.clock is None else max(self.clock, now)
        active = [s.max_event for p, s in self.partitions.items() if not self.idle(p, now, idle_timeout)]
        if not active:
            return
        if any(m is None for m in active):
            return  # a non-idle partition with no data yet holds W at minus infinity
        cand = min(active)  # type: ignore[type-var]
        self.watermark = cand if self.watermark is None else max(self.watermark, cand)

    def raise_to(self, w: int) -> None:
        self.watermark = w if self.watermark is None else max(self.watermark, w)

    def holding_back(self, now: int | None, idle_timeout: int | None) -> list[str]:
        """The non-idle partitions whose ``M_p`` is the minimum (what holds W back)."""
        if now is None:
            return sorted(self.partitions)
        active = {p: s.max_event for p, s in self.partitions.items() if not self.idle(p, now, idle_timeout)}
        if not active:
            return []
        never = sorted(p for p, m in active.items() if m is None)
        if never:
            return never
        low = min(active.values())  # type: ignore[type-var]
        return sorted(p for p, m in active.items() if m == low)


def idle_timer_due(earliest_open_end: int | None, last: int | None, idle_timeout: int | None) -> int | None:
    """When the idle timeout fires: ``max(e, last) + idleTimeout`` (None when it cannot)."""
    if idle_timeout is None or earliest_open_end is None or last is None:
        return None
    return max(earliest_open_end, last) + idle_timeout
