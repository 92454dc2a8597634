"""Optional auto-resharding: split hot shards, merge cold neighbours.

A shard's write rate is the number of its records that arrived in the last ``window``
seconds, divided by ``window`` (arrival stamps are in the log, so the rate is measured, not
estimated, and every process sees the same figure). Only open shards at least ``window``
old are measured. At each :meth:`AutoScaler.tick`:

- a shard whose rate was above ``split_rate`` at ``sustain`` consecutive ticks is split in the
  middle of its range (while there are fewer than ``max_shards`` open shards);
- two adjacent open shards, each below ``merge_rate`` at ``sustain`` consecutive ticks and
  together below ``merge_rate``, are merged (while there are more than ``min_shards``).

``merge_rate`` must be below ``split_rate / 2`` so that a merge never makes a hot shard
(no flapping). The scaler is deterministic given the records' arrival stamps and its
``clock``; tests inject both.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

from .errors import InvalidArgument, StreamError
from .stream import Stream


@dataclass(frozen=True)
class Policy:
    split_rate: float
    merge_rate: float
    window: float = 60.0
    sustain: int = 3
    min_shards: int = 1
    max_shards: int = 64

    def __post_init__(self) -> None:
        if not (self.split_rate > 0 and 0 <= self.merge_rate < self.split_rate / 2):
            raise InvalidArgument(
                f"need split_rate > 0 and 0 <= merge_rate < split_rate / 2, found split_rate={self.split_rate},"
                f" merge_rate={self.merge_rate}", code="AUTOSCALE_POLICY")
        if self.window <= 0 or self.sustain < 1 or not 1 <= self.min_shards <= self.max_shards:
            raise InvalidArgument("need window > 0, sustain >= 1 and 1 <= min_shards <= max_shards",
                                  code="AUTOSCALE_POLICY")


@dataclass
class AutoScaler:
    stream: Stream
    policy: Policy
    clock: Callable[[], float] = time.time
    hot: dict[str, int] = field(default_factory=dict)
    cold: dict[str, int] = field(default_factory=dict)

    def rates(self) -> dict[str, float]:
        """Write rate (records/s) over the last window of each open shard old enough to judge."""
        now = self.clock()
        since_us = int((now - self.policy.window) * 1_000_000)
        out = {}
        for s in self.stream.meta().open_shards():
            if s.created_us > since_us:
                continue
            log = self.stream.log(s.id)
            out[s.id] = (log.count() - log.first_at_or_after(since_us)) / self.policy.window
        return out

    def tick(self) -> list[dict]:
        """Measure, update the streaks, and split/merge what qualifies; returns the actions taken."""
        p = self.policy
        rates = self.rates()
        for sid, r in rates.items():
            self.hot[sid] = self.hot.get(sid, 0) + 1 if r > p.split_rate else 0
            self.cold[sid] = self.cold.get(sid, 0) + 1 if r < p.merge_rate else 0
        for d in (self.hot, self.cold):
            for sid in [k for k in d if k not in rates]:
                del d[sid]
        actions: list[dict] = []
        shards = self.stream.meta().open_shards()
        n_open = len(shards)
        for s in shards:
            if n_open >= p.max_shards:
                break
            if self.hot.get(s.id, 0) >= p.sustain:
                try:
                    children = self.stream.split(s.id)
                except StreamError:  # resharded meanwhile by someone else
                    continue
                n_open += 1
                actions.append({"action": "split", "shard": s.id, "rate": rates[s.id], "children": children})
        shards = self.stream.meta().open_shards()
        i = 0
        while i + 1 < len(shards) and n_open > p.min_shards:
            a, b = shards[i], shards[i + 1]
            if (a.end + 1 == b.start and self.cold.get(a.id, 0) >= p.sustain and self.cold.get(b.id, 0) >= p.sustain
                    and rates[a.id] + rates[b.id] < p.merge_rate):
                try:
                    child = self.stream.merge(a.id, b.id)
                except StreamError:
                    i += 1
                    continue
                n_open -= 1
                actions.append({"action": "merge", "shards": [a.id, b.id], "rate": rates[a.id] + rates[b.id],
                                "child": child})
                i += 2
            else:
                i += 1
        for act in actions:
            for sid in [act.get("shard"), *act.get("shards", [])]:
                self.hot.pop(sid, None)
                self.cold.pop(sid, None)
        return actions
