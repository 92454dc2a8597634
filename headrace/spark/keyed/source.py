"""Spark source ``headrace_keyed``: the input streams of one computation, read from the channel
(:mod:`headrace.keyed.channel`), one committed upstream batch file at a time.

Options: ``root`` (topology directory), ``computation`` (the reading computation), ``upstream``
(comma-separated producers), ``streams`` (comma-separated input streams), ``maxBatches``
(optional: at most this many upstream batches per producer per micro-batch).

Offsets: ``{"p:<producer>": last batch consumed, "tick": k}``. A micro-batch holds the records of
the new upstream batches (``lw`` null) and one heartbeat row (key ``__hb``) whose ``lw`` is the
computation's input watermark after the batch (:func:`headrace.keyed.channel.input_watermark`):
``withWatermark("lw")`` turns it into Spark's event-time watermark, so timers at or before it fire
in the next micro-batch. ``tick`` grows by one, with no new upstream batch, when the
computation's own last manifest says timers are due: that batch fires them.
"""
from __future__ import annotations

import datetime as _dt
from typing import Iterator, Sequence

from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadLimit, SupportsTriggerAvailableNow

from ...keyed import defaults
from ...keyed.channel import Channel, input_watermark

SCHEMA = ("key STRING, value STRING, ts BIGINT, stream STRING, producer STRING, n BIGINT, seq BIGINT,"
          " lw TIMESTAMP, clock BIGINT")
HB_KEY = "__hb"
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)


def _ts(ms: int) -> _dt.datetime:
    return _EPOCH + _dt.timedelta(milliseconds=ms)


class _Range(InputPartition):
    def __init__(self, root: str, producer: str, a: int, b: int, streams: tuple, clock: int):
        super().__init__((producer, a, b))
        self.root, self.producer, self.a, self.b, self.streams, self.clock = root, producer, a, b, streams, clock


class _Heartbeat(InputPartition):
    def __init__(self, iw: int, clock: int):
        super().__init__(("hb", iw, clock))
        self.iw, self.clock = iw, clock


class KeyedSource(DataSource):
    @classmethod
    def name(cls) -> str:
        return "headrace_keyed"

    def schema(self) -> str:
        return SCHEMA

    def streamReader(self, schema: object) -> "KeyedReader":
        return KeyedReader(dict(self.options))


def offset_state(end: dict) -> dict[str, int]:
    return {k[2:]: int(v) for k, v in end.items() if k.startswith("p:")}


class KeyedReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    def __init__(self, options: dict):
        o = {k.lower(): v for k, v in options.items()}
        self.root = o["root"]
        self.me = o["computation"]
        self.upstream = [p for p in o.get("upstream", "").split(",") if p]
        self.streams = tuple(s for s in o.get("streams", "").split(",") if s)
        self.max_batches = int(o["maxbatches"]) if o.get("maxbatches") else None
        self.ch = Channel(self.root)
        self._target: dict[str, int] | None = None

    def initialOffset(self) -> dict:
        return {**{f"p:{p}": -1 for p in self.upstream}, "tick": 0}

    def prepareForTriggerAvailableNow(self) -> None:
        self._target = {p: self.ch.committed(p) for p in self.upstream}

    def getDefaultReadLimit(self) -> ReadLimit:
        return ReadAllAvailable()

    def latestOffset(self, start: dict, limit: ReadLimit) -> dict:
        pos = offset_state(start)
        end = {}
        for p in self.upstream:
            a = pos.get(p, -1)
            b = self.ch.committed(p)
            if self._target is not None:
                b = min(b, self._target[p])
            if self.max_batches:
                b = min(b, a + self.max_batches)
            end[p] = max(a, b)
        tick = int(start.get("tick", 0))
        if end == {p: pos.get(p, -1) for p in self.upstream}:
            own = self.ch.manifest(self.me, self.ch.committed(self.me))
            if own is not None and own.get("due") and own.get("tick") == tick:
                tick += 1
        return {**{f"p:{p}": end[p] for p in self.upstream}, "tick": tick}

    def reportLatestOffset(self) -> dict:
        return {**{f"p:{p}": self.ch.committed(p) for p in self.upstream}, "tick": 0}

    def partitions(self, start: dict, end: dict) -> Sequence[InputPartition]:
        a, b = offset_state(start), offset_state(end)
        iw, clock = input_watermark(self.ch, self.upstream, b, defaults.NEG_INF_MS)
        out: list[InputPartition] = []
        for p in self.upstream:
            if b.get(p, -1) > a.get(p, -1):
                out.append(_Range(self.root, p, a.get(p, -1), b[p], self.streams, clock))
        out.append(_Heartbeat(iw, clock))
        return out

    def read(self, part: "_Range | _Heartbeat") -> Iterator:
        import pyarrow as pa

        if isinstance(part, _Heartbeat):
            yield (HB_KEY, None, None, None, None, None, None, _ts(part.iw), part.clock)
            return
        ch = Channel(part.root)
        for n in range(part.a + 1, part.b + 1):
            for s in part.streams:
                t = ch.read(part.producer, n, s)
                if t is None or t.num_rows == 0:
                    continue
                k = t.num_rows
                yield pa.RecordBatch.from_arrays(
                    [t.column("key").combine_chunks(), t.column("value").combine_chunks(),
                     t.column("ts").combine_chunks(), pa.array([s] * k, pa.string()),
                     pa.array([part.producer] * k, pa.string()), pa.array([n] * k, pa.int64()),
                     t.column("seq").combine_chunks(), pa.nulls(k, pa.timestamp("us", tz="UTC")),
                     pa.array([part.clock] * k, pa.int64())],
                    names=["key", "value", "ts", "stream", "producer", "n", "seq", "lw", "clock"])

    def commit(self, end: dict) -> None:
        pass
