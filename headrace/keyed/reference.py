"""The reference runner: a topology in memory, in one Python process, with the semantics of the
Spark runner (``headrace.spark.keyed``), batch by batch. Unit tests and replay runs use it.

Batches. ``inject(name, records, clock)`` is one injector batch. ``run()`` then gives every
computation, in topological order, batches until it is quiescent. A batch of computation ``C``:

1. takes every batch its upstream producers published since its last batch (in producer-name
   order) and sets ``IW_C`` from the last one of each (see :mod:`headrace.keyed.watermark`); its
   processing instant is the largest instant among them (never decreasing);
2. calls ``process_batch(ctx, records)`` once per key with records, keys in sorted order, records
   in (stream, producer, batch, position) order; ``ctx.low_watermark`` is ``W``, the
   watermark of the previous batch;
3. fires, in (timestamp, key) order, the event-time timers at or before ``W`` that existed when
   step 2 began (processing-time timers: at or before the batch's instant), each after removing
   it, with ``process_timer``;
4. sets ``W := max(W, IW_C)`` and publishes its produced records with ``LW_C = min(IW_C, earliest
   pending event-time timer)``.

A computation runs another (possibly empty) batch while it has unconsumed input or a pending
event-time timer at or before ``W``.

Spark's micro-batches may take several upstream batches at once (``SparkRunner(max_batches=1)``
takes one), and Spark may fire a timer set in step 2 at or before ``W`` in the same batch rather
than the next: outputs that depend on where batches begin and end (a running total produced once
per batch, a count of a window that a late record re-opens) can differ between the runners in
that respect only; outputs that do not (per-window counts without late records, final totals)
are equal, and the tests compare those.
"""
from __future__ import annotations

import heapq
import json
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any, Iterable

from . import defaults
from .api import Record, Timer
from .context import Context, MemoryBackend
from .errors import KeyedError
from .topology import ComputationSpec, Topology
from .watermark import Batch, InjectorWatermark


@dataclass
class _Comp:
    spec: ComputationSpec
    impl: Any
    backend: MemoryBackend
    consumed: dict[str, int] = field(default_factory=dict)   # producer -> last batch index consumed
    iw: dict[str, int] = field(default_factory=dict)         # producer -> lw of that batch
    clock: int = 0
    w: int = defaults.NEG_INF_MS
    lw: int = defaults.NEG_INF_MS
    batches: int = 0
    records_in: int = 0
    records_out: int = 0
    timers_fired: int = 0
    heap: list = field(default_factory=list)                 # (ts, key), lazy deletion
    pending: Counter = field(default_factory=Counter)        # ts -> number of keys with a timer at ts


class ReferenceRunner:
    """See the module docstring. ``collect``: streams whose records are kept for ``output()``
    (default: streams that no computation reads)."""

    def __init__(self, topology: Topology, collect: Iterable[str] | None = None):
        self.topo = topology
        self.order = topology.validate()
        self.log: dict[str, list[Batch]] = defaultdict(list)
        self.inj = {n: InjectorWatermark(s) for n, s in topology.injectors.items()}
        self.comps: dict[str, _Comp] = {n: self._new(topology.computations[n]) for n in self.order}
        self.collect = set(collect) if collect is not None else {
            s for s in topology.streams() if not topology.consumers(s)}
        self.collected: dict[str, list[Record]] = defaultdict(list)

    @staticmethod
    def _new(spec: ComputationSpec) -> _Comp:
        return _Comp(spec, spec.make(), MemoryBackend(spec.states))

    # -- topology change
    def add_computation(self, name: str, cls: type, inputs: list[str], outputs: list[str] = (),
                        params: dict | None = None) -> None:
        """Add a computation while the others keep their state; it reads its input streams from
        their first retained batch (this runner retains everything)."""
        self.topo.computation(name, cls, inputs, outputs, params)
        self.order = self.topo.validate()
        self.comps[name] = self._new(self.topo.computations[name])
        self.collect |= {s for s in outputs if not self.topo.consumers(s)}

    def remove_computation(self, name: str) -> None:
        self.topo.remove(name)
        self.order = self.topo.validate()
        self.comps.pop(name, None)

    # -- injectors
    def inject(self, injector: str, records: Iterable[tuple], clock: int, end: bool = False) -> None:
        """One injector batch: ``records`` are ``(partition, stream, key, value, ts)`` (``stream``
        may be ``None``: the injector's first output), read at processing instant ``clock``."""
        spec = self.topo.injectors[injector]
        out, seen = [], []
        for p, stream, key, value, ts in records:
            stream = stream or spec.outputs[0]
            out.append((stream, str(key), json.dumps(value, separators=(",", ":"), sort_keys=True), int(ts)))
            seen.append((p, int(ts)))
        wm = self.inj[injector]
        lw = wm.advance(seen, clock)
        if end:
            lw = wm.finish()
        self._publish(injector, out, lw, clock)

    def _publish(self, producer: str, records: list, lw: int, clock: int) -> None:
        log = self.log[producer]
        log.append(Batch(producer, len(log), records, lw, clock))
        for stream, key, value, ts in records:
            if stream in self.collect:
                self.collected[stream].append(Record(key, json.loads(value), ts, stream))

    # -- computations
    def run(self, max_batches: int = 1_000_000) -> None:
        """Run computations until none has work."""
        for name in self.order:
            c = self.comps[name]
            for _ in range(max_batches):
                if not self._has_work(c):
                    break
                self.step(name)

    def _upstream(self, c: _Comp) -> list[str]:
        return self.topo.upstream(c.spec.name)

    def _has_work(self, c: _Comp) -> bool:
        if any(len(self.log[p]) - 1 > c.consumed.get(p, -1) for p in self._upstream(c)):
            return True
        return c.spec.domain == "event" and bool(c.pending) and min(c.pending) <= c.w

    def step(self, name: str) -> None:
        """One batch of computation ``name``."""
        c = self.comps[name]
        spec = c.spec
        inputs = set(spec.inputs)
        per_key: dict[str, list[Record]] = defaultdict(list)
        rows = []
        for p in self._upstream(c):
            log = self.log[p]
            start = c.consumed.get(p, -1) + 1
            for b in log[start:]:
                for i, (stream, key, value, ts) in enumerate(b.records):
                    if stream in inputs:
                        rows.append((stream, p, b.n, i, key, value, ts))
                c.clock = max(c.clock, b.clock)
            if len(log) > start:
                c.consumed[p] = len(log) - 1
                c.iw[p] = log[-1].lw
        rows.sort()
        for stream, p, n, i, key, value, ts in rows:
            per_key[key].append(Record(key, json.loads(value), ts, stream))
        iw = min((c.iw.get(p, defaults.NEG_INF_MS) for p in self._upstream(c)), default=defaults.NEG_INF_MS)
        w_prev = c.w
        produced: list = []
        outputs = frozenset(spec.outputs)
        be = c.backend

        def ctx_for(key: str) -> Context:
            be.bind(key, c.clock)
            return Context(be, spec.states, outputs, spec.domain, key, w_prev, c.clock, spec.name)

        def account(ctx: Context) -> None:
            produced.extend(ctx.produced)
            for ts, d in ctx.timer_delta:
                c.pending[ts] += d
                if c.pending[ts] <= 0:
                    del c.pending[ts]
                if d > 0:
                    heapq.heappush(c.heap, (ts, ctx.key))

        # timers due at the start of the batch (step 3 fires exactly these)
        limit = w_prev if spec.domain == "event" else c.clock
        due: list[tuple[int, str]] = []
        while c.heap and c.heap[0][0] <= limit:
            ts, key = heapq.heappop(c.heap)
            if ts in be.timer_sets.get(key, ()):
                due.append((ts, key))
        due = sorted(set(due))
        for key in sorted(per_key):
            ctx = ctx_for(key)
            c.impl.process_batch(ctx, per_key[key])
            account(ctx)
            c.records_in += len(per_key[key])
        for ts, key in due:
            be.bind(key, c.clock)
            if not be.del_timer(ts):
                continue   # deleted by step 2
            c.pending[ts] -= 1
            if c.pending[ts] <= 0:
                del c.pending[ts]
            ctx = ctx_for(key)
            c.impl.process_timer(ctx, Timer(key, ts, spec.domain))
            account(ctx)
            c.timers_fired += 1
        c.w = max(c.w, iw)
        lw = iw if spec.domain != "event" or not c.pending else min(iw, min(c.pending))
        c.lw = lw
        produced.sort()
        c.records_out += len(produced)
        c.batches += 1
        self._publish(spec.name, produced, lw, c.clock)

    # -- results
    def output(self, stream: str) -> list[Record]:
        if stream not in self.collect:
            raise KeyedError("KEYED_STREAM_UNKNOWN", f"stream {stream!r} is not collected; expected one of"
                                                     f" {sorted(self.collect)}")
        return list(self.collected[stream])

    def stats(self) -> dict:
        """Per injector and computation: low watermark; per computation also input watermark,
        pending work (unconsumed upstream records and pending timers), state size, counters."""
        out: dict[str, Any] = {"injectors": {}, "computations": {}}
        for n, wm in self.inj.items():
            out["injectors"][n] = {"lowWatermark": wm.lw, "partitions": dict(wm.m), "batches": len(self.log[n])}
        for n in self.order:
            c = self.comps[n]
            unconsumed = sum(len(b.records) for p in self._upstream(c)
                             for b in self.log[p][c.consumed.get(p, -1) + 1:])
            keys, size = c.backend.state_size()
            out["computations"][n] = {
                "lowWatermark": c.lw, "inputWatermark": min(
                    (c.iw.get(p, defaults.NEG_INF_MS) for p in self._upstream(c)), default=defaults.NEG_INF_MS),
                "pendingRecords": unconsumed, "pendingTimers": sum(c.pending.values()),
                "stateKeys": keys, "stateBytes": size, "batches": c.batches, "recordsIn": c.records_in,
                "recordsOut": c.records_out, "timersFired": c.timers_fired}
        return out
