"""Small computations used by the docs and tests (importable by Spark's Python workers).

- :class:`WindowCount`: counts records per key per ``window_ms`` event-time window; when the low
  watermark passes a window's end, produces ``(key, {"start", "count"}, start)`` into ``out``.
- :class:`Tee`: forwards every record to each of its outputs (fan-out), keyed by ``key_field`` of
  the value when given.
- :class:`Total`: a running total per key of the ``count`` field (fan-in of several streams),
  produced on each change.
- :class:`LastSeen`: keeps the last value per key with a TTL (processing time), produces
  ``{"value", "had"}`` where ``had`` tells whether a still-alive previous value existed.
"""
from __future__ import annotations

from collections import Counter

from .api import Computation, MapState, ValueState


class WindowCount(Computation):
    state = {"counts": MapState()}

    def __init__(self, window_ms: int = 1000, out: str = "counts"):
        self.window_ms, self.out = window_ms, out

    def process_batch(self, ctx, records):
        by_window = Counter(r.timestamp - r.timestamp % self.window_ms for r in records)
        m = ctx.map("counts")
        for start, n in sorted(by_window.items()):
            m.put(str(start), m.get(str(start), 0) + n)
            ctx.set_timer(start + self.window_ms)

    def process_timer(self, ctx, timer):
        start = timer.timestamp - self.window_ms
        m = ctx.map("counts")
        n = m.get(str(start), 0)
        m.remove(str(start))
        ctx.produce(self.out, ctx.key, {"start": start, "count": n}, start)


class Tee(Computation):
    def __init__(self, outputs: tuple = (), key_field: str | None = None):
        self.outputs, self.key_field = tuple(outputs), key_field

    def process_record(self, ctx, record):
        key = str(record.value.get(self.key_field)) if self.key_field else record.key
        for s in self.outputs:
            ctx.produce(s, key, record.value, record.timestamp)


class Total(Computation):
    state = {"total": ValueState()}

    def __init__(self, out: str = "totals"):
        self.out = out

    def process_batch(self, ctx, records):
        v = ctx.value("total")
        total = v.get(0)
        for r in records:
            total += int(r.value.get("count", 1)) if isinstance(r.value, dict) else 1
        v.set(total)
        ctx.produce(self.out, ctx.key, total, max(r.timestamp for r in records))


class LastSeen(Computation):
    state = {"last": ValueState(ttl_ms=10_000)}

    def __init__(self, out: str = "seen"):
        self.out = out

    def process_record(self, ctx, record):
        v = ctx.value("last")
        had = v.get() is not None
        v.set(record.value)
        ctx.produce(self.out, ctx.key, {"value": record.value, "had": had}, record.timestamp)
