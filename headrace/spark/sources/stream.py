"""Spark source for headrace sharded streams: ``spark.readStream.format("headrace_stream")``.

Options: ``home`` (headrace home; default ``$HEADRACE_HOME`` or ``./.headrace`` of the driver),
``stream`` (required), ``maxRecordsPerBatch`` (default read limit: at most this many rows per
micro-batch), ``startingPosition`` (``earliest``, the default, or ``latest``; used for a new
query only), ``tickMs`` (0, the default: none; else when no shard has new rows, a batch every
``tickMs`` of wall-clock time holds one clock-tick row, so idle timeouts and processing-time
windows advance without data; the engine sets it when the pipeline needs the clock).

- Offsets are ``{shard id: next sequence number}`` with keys sorted. A shard missing from an
  offset is at 0. With ``tickMs``, the key ``"~tick"`` holds the last tick number (wall-clock
  milliseconds // ``tickMs``); it changes only in a batch without data.
- Planning (``latestOffset``) re-reads the shard table, so resharding is picked up at every
  batch. A shard is read in a batch only if it is readable *as of the batch's start offset*:
  each of its parents is closed and drained to its ``end_seq`` by that offset
  (:func:`headrace.streams.stream.readable`). So a child's rows always come in a later batch
  than all of its parents' rows, and per partition key rows come in put order: by batch, then
  by ``offset`` within the one shard that holds the key in that batch.
- One input partition per shard with rows in the batch; rows in sequence order.
- With a row limit, rows are shared among the readable shards round-robin (every shard with
  data gets at least one row while the limit allows).
- ``Trigger.AvailableNow``: the query reads what every shard holds when it starts (shards
  created later are not read), still parent-first, then stops.

Row schema (the engine depends on it): ``partition`` shard id, ``offset`` sequence number,
``arrival`` arrival time (UTC), ``raw`` the record's data text, ``doc``/``error`` from
:func:`headrace.spark.docs.parse_text`, ``kind`` 0 (data), ``source_ts`` = ``arrival``,
``key`` the partition key.
"""
from __future__ import annotations

import itertools
from typing import Any, Iterator, Sequence

from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import (ReadAllAvailable, ReadLimit, ReadMaxRows, ReadMinRows,
                                              SupportsTriggerAvailableNow)

from ...connections import headrace_home
from ...streams.errors import InvalidArgument
from ...streams.stream import Meta, Stream, readable

TICK_KEY = "~tick"
SCHEMA = ("partition STRING, offset BIGINT, arrival TIMESTAMP, raw STRING, doc VARIANT, error STRING, "
          "kind TINYINT, source_ts TIMESTAMP, key STRING")


class ShardRange(InputPartition):
    """Rows ``start <= offset < end`` of one shard."""

    def __init__(self, home: str, stream: str, shard: str, start: int, end: int):
        super().__init__((shard, start, end))
        self.home, self.stream, self.shard, self.start, self.end = home, stream, shard, start, end


class TickRange(InputPartition):
    """One clock-tick row (no data)."""

    def __init__(self, partition: str):
        super().__init__(("tick", partition))
        self.partition = partition


class StreamDataSource(DataSource):
    """The ``headrace_stream`` data source (streaming reads only)."""

    @classmethod
    def name(cls) -> str:
        return "headrace_stream"

    def schema(self) -> str:
        return SCHEMA

    def streamReader(self, schema: object) -> "StreamReader":
        return StreamReader(dict(self.options))


def _ends(stream: Stream, meta: Meta) -> dict[str, int]:
    """Each shard's end now: ``end_seq`` if closed, else its durable record count."""
    return {s.id: (s.end_seq if not s.open else stream.count(s.id)) for s in meta.shards.values()}


class StreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    def __init__(self, options: dict):
        opts = {k.lower(): v for k, v in options.items()}
        name = opts.get("stream")
        if not name:
            raise InvalidArgument("headrace_stream: option 'stream' is required", code="SOURCE_OPTION")
        self.home = str(headrace_home(opts.get("home")).resolve())
        self.stream_name = name
        raw_max = opts.get("maxrecordsperbatch")
        self.max_records: int | None = None
        if raw_max is not None:
            try:
                self.max_records = int(raw_max)
            except ValueError:
                self.max_records = 0
            if self.max_records < 1:
                raise InvalidArgument(f"headrace_stream: maxRecordsPerBatch must be a positive integer, found {raw_max!r}",
                                      code="SOURCE_OPTION")
        try:
            self.tick_ms = int(opts.get("tickms", 0))
        except ValueError:
            self.tick_ms = -1
        if self.tick_ms < 0:
            raise InvalidArgument(f"headrace_stream: tickMs must be a non-negative integer, found {opts.get('tickms')!r}",
                                  code="SOURCE_OPTION")
        self.starting = opts.get("startingposition", "earliest")
        if self.starting not in ("earliest", "latest"):
            raise InvalidArgument(f"headrace_stream: startingPosition must be 'earliest' or 'latest', found"
                                  f" {self.starting!r}", code="SOURCE_OPTION")
        self._stream = Stream(self.home, name)  # raises StreamUnknown early
        self._target: dict[str, int] | None = None  # Trigger.AvailableNow: read no further

    def initialOffset(self) -> dict:
        meta = self._stream.meta()
        if self.starting == "latest":
            return dict(sorted(_ends(self._stream, meta).items()))
        return {sid: 0 for sid in sorted(meta.shards)}

    def prepareForTriggerAvailableNow(self) -> None:
        self._target = _ends(self._stream, self._stream.meta())

    def getDefaultReadLimit(self) -> ReadLimit:
        return ReadMaxRows(self.max_records) if self.max_records else ReadAllAvailable()

    def latestOffset(self, start: dict, limit: ReadLimit) -> dict:
        meta = self._stream.meta()
        pos = {k: int(v) for k, v in start.items()}
        tick = pos.pop(TICK_KEY, None)
        ends = _ends(self._stream, meta)
        if self._target is not None:
            ends = {k: min(v, self._target.get(k, 0)) for k, v in ends.items()}
        avail = {s.id: ends[s.id] - pos.get(s.id, 0) for s in readable(meta, pos)}
        avail = {k: v for k, v in avail.items() if v > 0}
        total = sum(avail.values())
        if isinstance(limit, ReadMinRows) and total < limit.min_rows:
            return _offset(pos, tick)
        if isinstance(limit, ReadMaxRows) and total > limit.max_rows:
            take = _share(avail, limit.max_rows)
        else:
            take = avail
        end = dict(pos)
        for sid, n in take.items():
            if n > 0:
                end[sid] = pos.get(sid, 0) + n
        if self.tick_ms and self._target is None:
            if end == pos:  # idle: a tick batch once per tickMs
                import time

                tick = max(tick or 0, int(time.time() * 1000) // self.tick_ms)
        return _offset(end, tick)

    def reportLatestOffset(self) -> dict:
        return dict(sorted(_ends(self._stream, self._stream.meta()).items()))

    def partitions(self, start: dict, end: dict) -> Sequence[InputPartition]:
        out: list[InputPartition] = []
        for sid in sorted(end):
            if sid == TICK_KEY:
                continue
            a, b = int(start.get(sid, 0)), int(end[sid])
            if b > a:
                out.append(ShardRange(self.home, self.stream_name, sid, a, b))
        if not out and end.get(TICK_KEY) is not None and end.get(TICK_KEY) != start.get(TICK_KEY):
            out.append(TickRange(min((k for k in end if k != TICK_KEY), default="")))
        return out

    def read(self, partition: "ShardRange | TickRange") -> Iterator[Any]:
        """The shard's records as RecordBatches (:mod:`.arrow_rows`)."""
        from .arrow_rows import BATCH_ROWS, data_batch, tick_batch

        if isinstance(partition, TickRange):
            yield tick_batch(partition.partition)
            return

        stream = Stream(partition.home, partition.stream)
        try:
            recs = iter(stream.read(partition.shard, partition.start, partition.end))
            while chunk := list(itertools.islice(recs, BATCH_ROWS)):
                yield data_batch(partition.shard, [r.seq for r in chunk], [r.arrival_us for r in chunk],
                                 [r.data for r in chunk], [r.key for r in chunk])
        finally:
            stream.close()

    def commit(self, end: dict) -> None:
        pass

    def stop(self) -> None:
        self._stream.close()


def _offset(pos: dict[str, int], tick: int | None) -> dict:
    """An offset: shard positions, plus the last tick when there is one, keys sorted."""
    out = dict(pos) if tick is None else {**pos, TICK_KEY: tick}
    return dict(sorted(out.items()))


def _share(avail: dict[str, int], budget: int) -> dict[str, int]:
    """Split ``budget`` rows among shards round-robin (by shard id), capped by availability."""
    take = {k: 0 for k in avail}
    left = budget
    keys = sorted(avail)
    while left > 0:
        open_keys = [k for k in keys if take[k] < avail[k]]
        if not open_keys:
            break
        each = max(1, left // len(open_keys))
        for k in open_keys:
            n = min(each, avail[k] - take[k], left)
            take[k] += n
            left -= n
            if left == 0:
                break
    return take
