"""Kafka topics as sinks (:mod:`headrace.connectors.kafka`): :class:`KafkaTopic`, the
:class:`~headrace.store.base.Collection` ``$emit`` and the DLQ write to (how it keeps a replayed
batch from being written twice is in the docstring of :mod:`headrace.connectors.kafka`), the
shared idempotent producers, and :func:`open_collection`, the backend's entry point.
"""
from __future__ import annotations

import threading
import zlib
from typing import Any, Mapping, Sequence

from .. import ejson
from ..connections import Connection
from ..store.base import Collection, MergeSpec, WriteResult, id_key
from .kafka_client import KafkaClient, client_config, read_range
from .kafka_message import message_of
from .retry import ConnectorUnavailable, RetryPolicy

ID_HEADER = "hr-id"

_PRODUCERS: dict[str, Any] = {}
_LOCK = threading.Lock()


def _producer(options: Mapping[str, Any]):
    from confluent_kafka import Producer

    key = ejson.dumps(dict(options), relaxed=False)
    with _LOCK:
        p = _PRODUCERS.get(key)
        if p is None:
            policy = RetryPolicy.of(options)
            p = Producer({**client_config(options), "enable.idempotence": True, "linger.ms": 5,
                          "message.timeout.ms": max(2000, policy.timeout_ms * policy.attempts)})
            _PRODUCERS[key] = p
        return key, p


def open_collection(registry, conn: Connection, db: str, coll: str) -> "KafkaTopic":
    """A topic as a collection (``db`` is ignored: a Kafka cluster has no databases)."""
    return KafkaTopic(conn, coll)


class KafkaTopic(Collection):
    """A topic written by ``$emit`` or the DLQ (see the module docstring). Only writing is
    supported: reading is the source's job."""

    def __init__(self, conn: Connection, topic: str):
        self.conn, self.topic = conn, topic
        self.policy = RetryPolicy.of(conn.options)

    def _client(self) -> KafkaClient:
        return KafkaClient(self.conn.name, self.conn.options)

    def _ensure_topic(self, client: KafkaClient) -> int:
        parts = client.partitions([self.topic])
        if parts:
            return len(parts)
        from confluent_kafka.admin import AdminClient, NewTopic

        admin = AdminClient(client_config(self.conn.options))
        fut = admin.create_topics([NewTopic(self.topic, 1, 1)])[self.topic]
        try:
            fut.result(self.policy.timeout_ms / 1000)
        except Exception as exc:  # noqa: BLE001 - created meanwhile is fine
            if "exist" not in str(exc).lower():
                raise ConnectorUnavailable(f"connection {self.conn.name!r}: cannot create topic {self.topic!r}: {exc}")
        return len(client.partitions([self.topic])) or 1

    def merge_many(self, docs: Sequence[dict], spec: MergeSpec) -> WriteResult:
        return self.emit(docs)

    def emit(self, docs: Sequence[dict], extras: Sequence[Mapping[str, Any]] | None = None,
             config: Any = None) -> WriteResult:
        """Write ``docs`` as messages; ``extras[i]`` holds document i's evaluated ``key`` and
        ``headers`` and ``config`` is the ``$emit.config`` (:class:`~headrace.spec.model.KafkaEmitConfig`)
        (see :func:`message_of`). A document whose key or headers cannot be encoded is refused."""
        res = WriteResult()
        if not docs:
            return res
        canonical = config is not None and config.output_format == "canonicalJson"
        msgs: list[tuple[int, dict, str, bytes | None, list]] = []
        refused: list[tuple[int, str]] = []
        for i, d in enumerate(docs):
            try:
                key, headers = message_of(extras[i] if extras else {}, config)
            except ValueError as exc:
                refused.append((i, str(exc)))
                continue
            msgs.append((i, d, id_key(d.get("_id")), key, headers))
        client = self._client()
        try:
            n = self._ensure_topic(client)
            parts = [zlib.crc32(key if key is not None else k.encode()) % n for _, _, k, key, _ in msgs]
            counts: dict[int, int] = {}
            for p in parts:
                counts[p] = counts.get(p, 0) + 1
            written = self._tail_ids(client, counts) if msgs else {}
        finally:
            client.close()
        pkey_, prod = _producer(self.conn.options)
        failed: dict[int, str] = {}

        def report(i):
            def cb(err, _msg):
                if err is not None:
                    failed[i] = err.str()
            return cb

        for (i, d, k, key, headers), p in zip(msgs, parts):
            if k in written.get(p, ()):
                continue
            value = ejson.dumps(d, relaxed=not canonical).encode()
            while True:
                try:
                    prod.produce(self.topic, value=value, key=k.encode() if config is None or config.key is None
                                 else key, partition=p, headers=headers + [(ID_HEADER, k.encode())],
                                 on_delivery=report(i))
                    break
                except BufferError:
                    prod.poll(0.1)
            prod.poll(0)
        left = prod.flush(self.policy.timeout_ms * self.policy.attempts / 1000)
        if left:
            prod.purge()
            prod.flush(0)
            with _LOCK:
                _PRODUCERS.pop(pkey_, None)
            raise ConnectorUnavailable(f"connection {self.conn.name!r}: {left} message(s) to topic {self.topic!r} "
                                       "not acknowledged in time")
        fatal = [r for r in failed.values() if not _per_message(r)]
        if fatal:
            with _LOCK:
                _PRODUCERS.pop(pkey_, None)
            raise ConnectorUnavailable(f"connection {self.conn.name!r}: writing to topic {self.topic!r} failed: "
                                       f"{fatal[0]}")
        res.errors = sorted(refused + [(i, f"Kafka refused the message: {r}") for i, r in failed.items()])
        res.inserted = len(docs) - len(res.errors)
        return res

    def _tail_ids(self, client: KafkaClient, counts: Mapping[int, int]) -> dict[int, set[str]]:
        """Per partition, the ``hr-id`` headers of its last ``counts[p]`` records."""
        tps = [(self.topic, p) for p in counts]
        ends, lows = client.ends(tps), client.lows(tps)
        out: dict[int, set[str]] = {}
        for (t, p) in tps:
            end = ends[(t, p)]
            start = max(lows[(t, p)], end - counts[p])
            ids: set[str] = set()
            if end > start:
                for m in read_range(self.conn.name, self.conn.options, t, p, start, end):
                    for hk, hv in (m.headers() or []):
                        if hk == ID_HEADER and hv is not None:
                            ids.add(hv.decode())
            out[p] = ids
        return out

    # reading and maintenance are not a sink's business
    def insert_many(self, docs):
        return self.merge_many(list(docs), MergeSpec(on=("_id",), when_matched="replace"))

    def find(self, predicate=None):
        raise NotImplementedError("read a Kafka topic with a $source")

    def count(self) -> int:
        raise NotImplementedError("read a Kafka topic with a $source")

    def delete_ids(self, ids) -> int:
        raise NotImplementedError("Kafka topics are append-only")

    def drop(self) -> None:
        raise NotImplementedError("drop Kafka topics with the cluster's tools")


def _per_message(reason: str) -> bool:
    """A delivery error that concerns one message only (it goes to the DLQ, the batch goes on)."""
    r = reason.lower()
    return "too large" in r or "invalid" in r and "record" in r
