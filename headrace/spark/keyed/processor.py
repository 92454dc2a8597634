"""The transformWithStateInPandas processor that runs one keyed computation (Spark workers).

Per micro-batch and key: ``handleInputRows`` gets the key's rows of the batch at once, orders them
(stream, producer, batch, position) and calls the computation's ``process_batch`` with a
:class:`headrace.keyed.context.Context` over :class:`SparkBackend` (the key's state variables in
the RocksDB state store); ``handleExpiredTimer`` calls ``process_timer``. Both return the produced
records (``kind`` 0) and the changes of the key's timers (``kind`` 1 added, 2 removed): the driver
keeps the multiset of pending timers from them, for the low watermark. The heartbeat key
``__hb`` is skipped. State values are JSON text (``v STRING``), map keys strings.
"""
from __future__ import annotations

import json
import os
from typing import Any, Iterator

import pandas as pd
from pyspark.sql.streaming import StatefulProcessor, StatefulProcessorHandle

from ...keyed.api import Record, Timer
from ...keyed.context import Context
from .source import HB_KEY

OUTPUT_SCHEMA = "kind INT, stream STRING, key STRING, value STRING, ts BIGINT"
_COLS = ["kind", "stream", "key", "value", "ts"]


def read_offset(checkpoint: str, batch_id: int) -> tuple[dict, dict] | None:
    """``(metadata, source offset)`` of a batch from the query's offset log (format v1: a
    version line, a metadata JSON line, one line per source)."""
    try:
        with open(os.path.join(checkpoint, "offsets", str(batch_id))) as f:
            lines = f.read().splitlines()
    except FileNotFoundError:
        return None
    meta = json.loads(lines[1])
    src = json.loads(lines[2])
    if isinstance(src, str):
        src = json.loads(src)
    return meta, src


def clock_of_batch(checkpoint: str, batch_ts_ms: int) -> int | None:
    """The virtual clock the heartbeat carried in the batch started at ``batch_ts_ms``."""
    d = os.path.join(checkpoint, "offsets")
    try:
        ids = sorted((int(x) for x in os.listdir(d) if x.isdigit()), reverse=True)
    except FileNotFoundError:
        return None
    for i in ids[:5]:
        got = read_offset(checkpoint, i)
        if got and int(got[0].get("batchTimestampMs", -1)) == batch_ts_ms:
            return int(got[1].get("clock", 0))
    return None


class SparkBackend:
    """The state-backend protocol of :class:`headrace.keyed.context.MemoryBackend` over one key's
    Spark state variables; timers read once per call and kept locally."""

    def __init__(self, proc: "KeyedProcessor", fired: int | None = None):
        self.p = proc
        self._timers: set[int] | None = None
        self._fired = fired

    def get_value(self, name):
        v = self.p.vars[name].get()
        return (False, None) if v is None else (True, v[0])

    def set_value(self, name, v):
        self.p.vars[name].update((v,))

    def clear_value(self, name):
        self.p.vars[name].clear()

    def get_list(self, name):
        return [r[0] for r in self.p.vars[name].get()]

    def set_list(self, name, vals):
        self.p.vars[name].put([(v,) for v in vals])

    def append_list(self, name, vals):
        self.p.vars[name].appendList([(v,) for v in vals])

    clear_list = clear_value

    def map_get(self, name, k):
        v = self.p.vars[name].getValue((k,))
        return (False, None) if v is None else (True, v[0])

    def map_put(self, name, k, v):
        self.p.vars[name].updateValue((k,), (v,))

    def map_remove(self, name, k):
        self.p.vars[name].removeKey((k,))

    def map_items(self, name):
        return [(k[0], v[0]) for k, v in self.p.vars[name].iterator()]

    map_clear = clear_value

    def timers(self):
        if self._timers is None:
            self._timers = set(int(t) for t in self.p.handle.listTimers())
            if self._fired is not None:
                self._timers.discard(self._fired)
        return list(self._timers)

    def add_timer(self, ts):
        self.timers()
        if ts in self._timers:
            return False
        self.p.handle.registerTimer(ts)
        self._timers.add(ts)
        return True

    def del_timer(self, ts):
        self.timers()
        if ts not in self._timers:
            return False
        self.p.handle.deleteTimer(ts)
        self._timers.discard(ts)
        return True


class KeyedProcessor(StatefulProcessor):
    def __init__(self, spec: Any, checkpoint: str):
        self.spec = spec
        self.checkpoint = checkpoint

    def init(self, handle: StatefulProcessorHandle) -> None:
        self.handle = handle
        self.vars: dict[str, Any] = {}
        for name, s in self.spec.states.items():
            if s.kind == "value":
                self.vars[name] = handle.getValueState(name, "v STRING", s.ttl_ms)
            elif s.kind == "list":
                self.vars[name] = handle.getListState(name, "v STRING", s.ttl_ms)
            else:
                self.vars[name] = handle.getMapState(name, "k STRING", "v STRING", s.ttl_ms)
        self.impl = self.spec.make()
        self.outputs = frozenset(self.spec.outputs)
        self._clock: dict[int, int] = {}

    def _ctx(self, key: str, w: int, clock: int, fired: int | None = None) -> Context:
        return Context(SparkBackend(self, fired), self.spec.states, self.outputs, self.spec.domain, key, w, clock,
                       self.spec.name)

    @staticmethod
    def _out(ctx: Context, fired: int | None = None) -> Iterator[pd.DataFrame]:
        rows = [(0, s, k, v, ts) for s, k, v, ts in ctx.produced]
        rows += [(1 if d > 0 else 2, None, ctx.key, None, ts) for ts, d in ctx.timer_delta]
        if fired is not None:
            rows.append((2, None, ctx.key, None, fired))
        if rows:
            yield pd.DataFrame(rows, columns=_COLS)

    def handleInputRows(self, key, rows, timerValues) -> Iterator[pd.DataFrame]:
        k = key[0]
        frames = list(rows)
        if k == HB_KEY:
            return
        df = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
        df = df.sort_values(["stream", "producer", "n", "seq"], kind="stable")
        recs = [Record(k, json.loads(v), int(ts), s) for v, ts, s in zip(df["value"], df["ts"], df["stream"])]
        ctx = self._ctx(k, int(timerValues.getCurrentWatermarkInMs()), int(df["clock"].iloc[0]))
        self.impl.process_batch(ctx, recs)
        yield from self._out(ctx)

    def handleExpiredTimer(self, key, timerValues, expiredTimerInfo) -> Iterator[pd.DataFrame]:
        k = key[0]
        ts = int(expiredTimerInfo.getExpiryTimeInMs())
        bts = int(timerValues.getCurrentProcessingTimeInMs())
        if bts not in self._clock:
            self._clock[bts] = clock_of_batch(self.checkpoint, bts) or bts
        ctx = self._ctx(k, int(timerValues.getCurrentWatermarkInMs()), self._clock[bts], fired=ts)
        self.impl.process_timer(ctx, Timer(k, ts, self.spec.domain))
        yield from self._out(ctx, fired=ts)

    def close(self) -> None:
        pass
