"""Spark source for Kafka topics: ``spark.readStream.format("headrace_kafka")``.

Options: ``connection`` (name, for messages), ``connectionSecret`` (the connection's options as
JSON; the key makes Spark redact it wherever it prints options), ``topics`` (JSON array),
``startingPosition`` (``earliest``, the default, or ``latest``: where a new query starts),
``maxRecordsPerBatch`` (default 10,000: reads are bounded per micro-batch), ``groupId`` (the
consumer group positions are committed to after each batch: informational only), ``tickMs``
(as for ``headrace_stream``: clock-tick batches while idle).

- Offsets are ``{"topic:partition": next offset}``, keys sorted (the checkpoint holds them;
  the consumer group does not decide anything). A partition missing from an offset starts at its
  low watermark: partitions (and topics) that appear later are picked up at the next batch.
- Planning lists the topics' partitions and their ends on the driver (see
  :mod:`headrace.connectors.kafka` on Tansu's ends); one input partition per topic partition
  with records in the batch; the records are fetched on the executors.
- Row schema: that of :data:`headrace.spark.sources.SOURCE_SCHEMA`; ``partition`` is
  ``topic:partition``, ``offset`` the record offset, ``arrival`` and ``source_ts`` the record's
  timestamp, ``raw`` its value as text, ``key`` its key as text.
- ``messageFields`` (JSON: ``keyField``, ``keyFormat``, ``keyFormatError``, ``headersField``):
  the key and headers are written into the document, which the reader then builds in Python
  (:func:`headrace.connectors.kafka_message.message_fields`) instead of leaving the text to the JVM.
"""
from __future__ import annotations

import datetime as _dt
import itertools
import json
from typing import Any, Iterator, Sequence

from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import (ReadAllAvailable, ReadLimit, ReadMaxRows, ReadMinRows,
                                              SupportsTriggerAvailableNow)

from . import SOURCE_SCHEMA
from .stream import TICK_KEY, TickRange, _offset, _share

DEFAULT_MAX_RECORDS = 10_000
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)


class KafkaRange(InputPartition):
    def __init__(self, topic: str, partition: int, start: int, end: int):
        super().__init__((topic, partition, start, end))
        self.topic, self.partition, self.start, self.end = topic, partition, start, end


class KafkaDataSource(DataSource):
    @classmethod
    def name(cls) -> str:
        return "headrace_kafka"

    def schema(self) -> str:
        return SOURCE_SCHEMA

    def streamReader(self, schema: object) -> "KafkaReader":
        return KafkaReader(dict(self.options))


class KafkaReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    def __init__(self, options: dict):
        opts = {k.lower(): v for k, v in options.items()}
        self.conn_name = opts.get("connection", "kafka")
        self.conn_options = json.loads(opts["connectionsecret"])
        self.topics = list(json.loads(opts["topics"]))
        self.starting = opts.get("startingposition", "earliest")
        self.max_records = int(opts.get("maxrecordsperbatch", DEFAULT_MAX_RECORDS))
        self.tick_ms = int(opts.get("tickms", 0))
        self.group_id = opts.get("groupid") or None
        self.fields = json.loads(opts["messagefields"]) if opts.get("messagefields") else None
        self._client = None
        self._target: dict[str, int] | None = None

    def _kc(self):
        from ...connectors.kafka import KafkaClient

        if self._client is None:
            self._client = KafkaClient(self.conn_name, self.conn_options, self.group_id)
        return self._client

    def _ends(self) -> dict[str, int]:
        from ...connectors.kafka import pkey

        kc = self._kc()
        tps = kc.partitions(self.topics)
        return {pkey(*tp): e for tp, e in kc.ends(tps).items()}

    def _lows(self, keys) -> dict[str, int]:
        from ...connectors.kafka import split_pkey

        return {k: lo for k, lo in zip(keys, self._kc().lows([split_pkey(k) for k in keys]).values())}

    def initialOffset(self) -> dict:
        ends = self._ends()
        if self.starting == "latest":
            return dict(sorted(ends.items()))
        return dict(sorted(self._lows(list(ends)).items()))

    def prepareForTriggerAvailableNow(self) -> None:
        self._target = self._ends()

    def getDefaultReadLimit(self) -> ReadLimit:
        return ReadMaxRows(self.max_records) if self.max_records else ReadAllAvailable()

    def latestOffset(self, start: dict, limit: ReadLimit) -> dict:
        pos = {k: int(v) for k, v in start.items()}
        tick = pos.pop(TICK_KEY, None)
        ends = self._ends()
        if self._target is not None:
            ends = {k: min(v, self._target.get(k, 0)) for k, v in ends.items()}
        new = [k for k in ends if k not in pos]
        if new:            # partitions that appeared since: from their beginning
            pos.update(self._lows(new))
        avail = {k: ends[k] - pos[k] for k in ends if ends[k] > pos[k]}
        total = sum(avail.values())
        if isinstance(limit, ReadMinRows) and total < limit.min_rows:
            return _offset({k: int(v) for k, v in start.items() if k != TICK_KEY}, tick)
        take = _share(avail, limit.max_rows) if isinstance(limit, ReadMaxRows) and total > limit.max_rows else avail
        end = dict(pos)
        for k, n in take.items():
            end[k] = pos[k] + n
        if self.tick_ms and self._target is None and not take:
            import time

            tick = max(tick or 0, int(time.time() * 1000) // self.tick_ms)
        return _offset(end, tick)

    def reportLatestOffset(self) -> dict:
        return dict(sorted(self._ends().items()))

    def partitions(self, start: dict, end: dict) -> Sequence[InputPartition]:
        from ...connectors.kafka import split_pkey

        out: list[InputPartition] = []
        for k in sorted(end):
            if k == TICK_KEY:
                continue
            b = int(end[k])
            a = int(start[k]) if k in start else None
            if a is None:
                a = self._lows([k])[k]
            if b > a:
                t, p = split_pkey(k)
                out.append(KafkaRange(t, p, a, b))
        if not out and end.get(TICK_KEY) is not None and end.get(TICK_KEY) != start.get(TICK_KEY):
            out.append(TickRange(min((k for k in end if k != TICK_KEY), default="")))
        return out

    def read(self, partition) -> Iterator[Any]:
        """The range's records as RecordBatches (:mod:`.arrow_rows`)."""
        from ...connectors.kafka import pkey
        from .arrow_rows import BATCH_ROWS, data_batch, tick_batch

        if isinstance(partition, TickRange):
            yield tick_batch(partition.partition)
            return
        name = pkey(partition.topic, partition.partition)
        records = self._records(partition)
        while chunk := list(itertools.islice(records, BATCH_ROWS)):
            offsets, arrivals, raws, keys, docs, errors = zip(*chunk)
            yield data_batch(name, offsets, arrivals, raws, keys, (docs, errors) if self.fields else None)

    def _records(self, partition: "KafkaRange") -> Iterator[tuple]:
        """``(offset, arrival in epoch µs, text, key, document, error)`` of each record; the
        document and error only where the reader builds the document (key and headers fields)."""
        from ...connectors.kafka import read_range
        from ...connectors.kafka_message import message_fields
        from ..docs import to_variant

        now_us = None
        for m in read_range(self.conn_name, self.conn_options, partition.topic, partition.partition,
                            partition.start, partition.end, self.group_id or "headrace"):
            kind, ms = m.timestamp()
            if kind == 0 or ms is None or ms < 0:   # TIMESTAMP_NOT_AVAILABLE
                if now_us is None:
                    now_us = (_dt.datetime.now(_dt.timezone.utc) - _EPOCH) // _dt.timedelta(microseconds=1)
                arrival = now_us
            else:
                arrival = ms * 1000
            v = m.value()
            raw = None if v is None else v.decode("utf-8", "replace")
            k = m.key()
            doc = error = None
            if self.fields:        # key and headers into fields: the document is built here
                value, error = message_fields(raw, k, m.headers(), self.fields)
                doc = None if value is None else to_variant(value)
            yield m.offset(), arrival, raw, None if k is None else k.decode("utf-8", "replace"), doc, error

    def commit(self, end: dict) -> None:
        from ...connectors.kafka import split_pkey

        self._kc().commit({split_pkey(k): int(v) for k, v in end.items() if k != TICK_KEY})

    def stop(self) -> None:
        if self._client is not None:
            self._client.close()
