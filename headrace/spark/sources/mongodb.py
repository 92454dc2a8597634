"""Spark source for MongoDB change streams: ``spark.readStream.format("headrace_mongodb")``.

Options: ``connection`` (name), ``connectionSecret`` (the connection's options as JSON; Spark
redacts the key when printing options), ``db``/``coll`` (absent: the database's or the
deployment's change stream), ``pipeline`` (JSON array of change stream stages),
``fullDocument``, ``startAtOperationTime`` (``t.i``), ``maxRecordsPerBatch`` (default 10,000),
``tickMs``.

- Offsets are ``{"token": resume token}`` (``"<start>"``: from ``startAtOperationTime``);
  one watermark partition, ``db.coll``. Planning and reading: :mod:`headrace.connectors.mongodb`.
- Rows: :data:`headrace.spark.sources.SOURCE_SCHEMA`; ``raw`` the change event as relaxed
  Extended JSON, ``offset`` from ``clusterTime``, ``arrival`` and ``source_ts`` the
  ``clusterTime`` instant, ``key`` the resume token.
"""
from __future__ import annotations

import datetime as _dt
import json
from typing import Iterator, Sequence

from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadLimit, ReadMaxRows

from . import SOURCE_SCHEMA
from .stream import TICK_KEY, TickRange

DEFAULT_MAX_RECORDS = 10_000
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)


class EventRange(InputPartition):
    def __init__(self, after: str, upto: str):
        super().__init__((after, upto))
        self.after, self.upto = after, upto


class MongoDataSource(DataSource):
    @classmethod
    def name(cls) -> str:
        return "headrace_mongodb"

    def schema(self) -> str:
        return SOURCE_SCHEMA

    def streamReader(self, schema: object) -> "MongoReader":
        return MongoReader(dict(self.options))


class MongoReader(DataSourceStreamReader):
    def __init__(self, options: dict):
        opts = {k.lower(): v for k, v in options.items()}
        self.conn_name = opts.get("connection", "mongodb")
        self.conn_options = json.loads(opts["connectionsecret"])
        self.db, self.coll = opts.get("db") or None, opts.get("coll") or None
        self.pipeline = json.loads(opts.get("pipeline", "[]"))
        self.full_document = opts.get("fulldocument") or None
        self.start_at = opts.get("startatoperationtime") or None
        self.max_records = int(opts.get("maxrecordsperbatch", DEFAULT_MAX_RECORDS))
        self.tick_ms = int(opts.get("tickms", 0))
        self._cs = None

    def _streams(self):
        from ...connectors.mongodb import ChangeStreams

        start = None
        if self.start_at:
            from bson import Timestamp

            t, _, i = self.start_at.partition(".")
            start = Timestamp(int(t), int(i or 0))
        return ChangeStreams(self.conn_name, self.conn_options, self.db, self.coll, self.pipeline,
                             self.full_document, start)

    def _c(self):
        if self._cs is None:
            self._cs = self._streams()
        return self._cs

    def initialOffset(self) -> dict:
        return {"token": self._c().initial_token()}

    def getDefaultReadLimit(self) -> ReadLimit:
        return ReadMaxRows(self.max_records) if self.max_records else ReadAllAvailable()

    def latestOffset(self, start: dict, limit: ReadLimit) -> dict:
        n = limit.max_rows if isinstance(limit, ReadMaxRows) else 1 << 40
        token, k = self._c().advance(start["token"], n)
        out = {"token": token}
        tick = start.get(TICK_KEY)
        if self.tick_ms and not k:
            import time

            tick = max(int(tick or 0), int(time.time() * 1000) // self.tick_ms)
        if tick is not None:
            out[TICK_KEY] = tick
        return out

    def partitions(self, start: dict, end: dict) -> Sequence[InputPartition]:
        if end["token"] != start["token"]:
            return [EventRange(start["token"], end["token"])]
        if end.get(TICK_KEY) is not None and end.get(TICK_KEY) != start.get(TICK_KEY):
            return [TickRange(self._c().partition)]
        return []

    def read(self, partition) -> Iterator[tuple]:
        from ...connectors.mongodb import from_bson, ts_offset
        from ..docs import parse_in_reader
        from . import tick_row

        if isinstance(partition, TickRange):
            yield tick_row(partition.partition)
            return
        cs = self._streams()
        try:
            for ev in cs.read(partition.after, partition.upto):
                ct = ev.get("clusterTime")
                ts = _EPOCH + _dt.timedelta(seconds=int(ct.time)) if ct is not None else _dt.datetime.now(_dt.timezone.utc)
                raw = from_bson(ev)
                doc, error = parse_in_reader(raw)
                yield (cs.partition, ts_offset(ct) if ct is not None else -1, ts, raw, doc, error, 0, ts,
                       ev["_id"]["_data"])
        finally:
            cs.close()

    def commit(self, end: dict) -> None:
        pass

    def stop(self) -> None:
        if self._cs is not None:
            self._cs.close()
