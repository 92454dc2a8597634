"""Spark source for Redis Streams: ``spark.readStream.format("headrace_redis")``.

Options: ``connection`` (name, for messages), ``connectionSecret`` (the connection's options as
JSON; Spark redacts the key when it prints options), ``streams`` (JSON array), ``startAt``
(``earliest``, the default, ``latest`` or an entry id: where a new query starts), ``field``
(default ``doc``: the entry field holding the document), ``maxRecordsPerBatch`` (default
10,000, shared evenly among the streams), ``tickMs`` (clock-tick batches while idle).

- Offsets are ``{stream: id of the last entry read}`` (``"0-0"``: none yet), keys sorted; a
  replayed batch reads exactly the same entries. Each stream is a watermark partition.
- Planning finds each stream's batch end on the server (:meth:`RedisClient.advance`); one input
  partition per stream with entries in the batch; entries are read on the executors.
- Rows: :data:`headrace.spark.sources.SOURCE_SCHEMA`; ``partition`` the stream name, ``offset``
  from the entry id (:func:`headrace.connectors.redis_stream.offset_of`), ``arrival`` and
  ``source_ts`` the id's milliseconds, ``raw`` the document text, ``key`` the entry id.
"""
from __future__ import annotations

import itertools
import json
from typing import Any, Iterator, Sequence

from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadLimit, ReadMaxRows, SupportsTriggerAvailableNow

from . import SOURCE_SCHEMA
from .stream import TICK_KEY, TickRange

DEFAULT_MAX_RECORDS = 10_000


class EntryRange(InputPartition):
    """Entries ``after < id <= upto`` of one stream."""

    def __init__(self, stream: str, after: str, upto: str):
        super().__init__((stream, after, upto))
        self.stream, self.after, self.upto = stream, after, upto


class RedisDataSource(DataSource):
    @classmethod
    def name(cls) -> str:
        return "headrace_redis"

    def schema(self) -> str:
        return SOURCE_SCHEMA

    def streamReader(self, schema: object) -> "RedisReader":
        return RedisReader(dict(self.options))


class RedisReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    def __init__(self, options: dict):
        opts = {k.lower(): v for k, v in options.items()}
        self.conn_name = opts.get("connection", "redis")
        self.conn_options = json.loads(opts["connectionsecret"])
        self.streams = list(json.loads(opts["streams"]))
        self.start_at = opts.get("startat", "earliest")
        self.field = opts.get("field", "doc")
        self.max_records = int(opts.get("maxrecordsperbatch", DEFAULT_MAX_RECORDS))
        self.tick_ms = int(opts.get("tickms", 0))
        self._client = None
        self._target: dict[str, str] | None = None

    def _c(self):
        from ...connectors.redis_stream import RedisClient

        if self._client is None:
            self._client = RedisClient(self.conn_name, self.conn_options)
        return self._client

    def initialOffset(self) -> dict:
        from ...connectors.redis_stream import before

        if self.start_at == "earliest":
            return {s: "0-0" for s in sorted(self.streams)}
        if self.start_at == "latest":
            return {s: self._c().last_id(s) for s in sorted(self.streams)}
        return {s: before(self.start_at) for s in sorted(self.streams)}

    def prepareForTriggerAvailableNow(self) -> None:
        self._target = {s: self._c().last_id(s) for s in self.streams}

    def getDefaultReadLimit(self) -> ReadLimit:
        return ReadMaxRows(self.max_records) if self.max_records else ReadAllAvailable()

    def latestOffset(self, start: dict, limit: ReadLimit) -> dict:
        from ...connectors.redis_stream import offset_of

        pos = {s: str(start.get(s, "0-0")) for s in self.streams}
        budget = max(1, limit.max_rows // len(self.streams)) if isinstance(limit, ReadMaxRows) else 1 << 40
        end, moved = dict(pos), False
        for s in sorted(self.streams):
            upto, n = self._c().advance(s, pos[s], budget)
            if self._target is not None and offset_of(upto) > offset_of(self._target.get(s, "0-0")):
                upto = max(self._target.get(s, "0-0"), pos[s], key=offset_of)
            if n and upto != pos[s]:
                end[s], moved = upto, True
        out: dict = dict(sorted(end.items()))
        tick = start.get(TICK_KEY)
        if self.tick_ms and self._target is None and not moved:
            import time

            tick = max(int(tick or 0), int(time.time() * 1000) // self.tick_ms)
        if tick is not None:
            out[TICK_KEY] = tick
        return out

    def partitions(self, start: dict, end: dict) -> Sequence[InputPartition]:
        out: list[InputPartition] = []
        for s in sorted(k for k in end if k != TICK_KEY):
            a = str(start.get(s, "0-0"))
            if str(end[s]) != a:
                out.append(EntryRange(s, a, str(end[s])))
        if not out and end.get(TICK_KEY) is not None and end.get(TICK_KEY) != start.get(TICK_KEY):
            out.append(TickRange(min((k for k in end if k != TICK_KEY), default="")))
        return out

    def read(self, partition) -> Iterator[Any]:
        """The range's entries as RecordBatches (:mod:`.arrow_rows`)."""
        from ...connectors.redis_stream import RedisClient, entry_text, offset_of, parse_id
        from .arrow_rows import BATCH_ROWS, data_batch, tick_batch

        if isinstance(partition, TickRange):
            yield tick_batch(partition.partition)
            return
        c = RedisClient(self.conn_name, self.conn_options)
        try:
            entries = iter(c.read(partition.stream, partition.after, partition.upto))
            while chunk := list(itertools.islice(entries, BATCH_ROWS)):
                ids = [eid for eid, _ in chunk]
                yield data_batch(partition.stream, [offset_of(e) for e in ids],
                                 [parse_id(e)[0] * 1000 for e in ids],
                                 [entry_text(fields, self.field) for _, fields in chunk], ids)
        finally:
            c.close()

    def commit(self, end: dict) -> None:
        pass

    def stop(self) -> None:
        if self._client is not None:
            self._client.close()
