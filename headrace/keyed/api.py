"""The keyed-computation API (after MillWheel): records, timers, state declarations, computations.

A record is ``(key, value, timestamp)``: ``key`` a string, ``value`` any JSON value, ``timestamp``
integer milliseconds since the epoch (UTC, event time). A computation is a class:

    class Counter(Computation):
        state = {"n": ValueState(), "seen": MapState(ttl_ms=60_000)}

        def process_record(self, ctx, record):
            ctx.value("n").set((ctx.value("n").get() or 0) + 1)
            ctx.set_timer(record.timestamp // 1000 * 1000 + 1000)   # event time

        def process_timer(self, ctx, timer):
            ctx.produce("counts", ctx.key, ctx.value("n").get(), timer.timestamp)

It is instantiated once per worker (``cls(**params)``) and must keep no per-key data in ``self``:
everything per key lives in ``ctx`` state, which the runner persists and checkpoints. All calls
for one key go through ``ctx`` (see :class:`headrace.keyed.context.Context`). Per batch, each key
with records gets one ``process_batch(ctx, records)`` call (default: ``process_record`` for each,
in stream order); override it to handle the key's records at once.

Timers: a computation's timers are all of one domain, ``timer_domain``: ``"event"`` (fire when
the computation's input low watermark passes them) or ``"processing"`` (fire when the processing
clock passes them; on Spark the wall clock, in replay the virtual clock). One timer per key and
timestamp; setting it again is a no-op.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Iterable, Mapping

from . import defaults


@dataclass(frozen=True)
class Record:
    key: str
    value: Any
    timestamp: int
    stream: str = ""


@dataclass(frozen=True)
class Timer:
    key: str
    timestamp: int
    domain: str = defaults.TIMER_DOMAIN


@dataclass(frozen=True)
class StateSpec:
    """A declared per-key state variable. ``ttl_ms``: entries expire that long (processing time)
    after their last write, as in Spark's state TTL; ``None``: never."""

    kind: str
    ttl_ms: int | None = None


def ValueState(ttl_ms: int | None = None) -> StateSpec:
    """One JSON value per key."""
    return StateSpec("value", ttl_ms)


def ListState(ttl_ms: int | None = None) -> StateSpec:
    """A list of JSON values per key (TTL per element)."""
    return StateSpec("list", ttl_ms)


def MapState(ttl_ms: int | None = None) -> StateSpec:
    """A map from string to JSON value per key (TTL per entry)."""
    return StateSpec("map", ttl_ms)


class Computation:
    """Base class of keyed computations (see the module docstring)."""

    #: declared state variables: name -> ValueState() / ListState() / MapState()
    state: ClassVar[Mapping[str, StateSpec]] = {}
    #: "event" or "processing"
    timer_domain: ClassVar[str] = defaults.TIMER_DOMAIN

    def process_batch(self, ctx: Any, records: Iterable[Record]) -> None:
        for r in records:
            self.process_record(ctx, r)

    def process_record(self, ctx: Any, record: Record) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def process_timer(self, ctx: Any, timer: Timer) -> None:
        pass
