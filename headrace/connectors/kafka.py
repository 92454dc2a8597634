"""Kafka: client configuration, offsets, reading a partition range, and topics as sinks.

A connection ``{type: kafka, bootstrapServers, security: {protocol}, authentication:
{mechanism, username, password}, retry: {...}}`` (:mod:`headrace.connections`) becomes a
librdkafka configuration (``confluent-kafka``); the password never appears in a message.

**Ends of partitions.** A partition's end is the offset after its last record. Apache Kafka
reports it as the high watermark. Tansu 0.6 (the broker the tests run) reports the *base offset
of the last record batch plus one* instead, which is short of the end whenever the last batch
holds more than one record (a partition of 1,000 records written in one batch reports 1). So
:meth:`KafkaClient.ends` treats the reported value as a lower bound: it fetches from the
reported value minus one and takes the end after the last record that fetch returns (on Apache
Kafka the same probe returns the reported end). A probe is made only when the reported value
changed since the last one.

**Sink.** :class:`KafkaTopic` is a :class:`headrace.store.base.Collection` written by ``$emit``
and the DLQ: each document becomes one message (relaxed Extended JSON, or canonical with
``config.outputFormat``; header ``hr-id`` the canonical Extended JSON of its ``_id``, which is
also the key unless ``config.key`` gives one, :mod:`.kafka_message`; ``config.headers`` come
first), in the topic partition ``crc32(key) mod partitions``, through the idempotent producer (no duplicates from producer retries, order kept
per partition). A replayed micro-batch writes the same documents to the same partitions; before
writing, the sink reads back as many of each partition's last records as it is about to write
there and skips documents whose ``hr-id`` it finds, so a batch that was written (wholly or in
part) before a crash is not written twice. That holds while the processor is the only writer of
the topic; with other writers appending in between it degrades to at-least-once.
"""
from __future__ import annotations

import threading
import time
import zlib
from typing import Any, Iterator, Mapping, Sequence

from .. import ejson
from ..connections import Connection
from ..store.base import Collection, MergeSpec, WriteResult, id_key
from .kafka_message import message_of
from .retry import ConnectorUnavailable, RetryPolicy, call

ID_HEADER = "hr-id"


def client_config(options: Mapping[str, Any]) -> dict:
    """The librdkafka settings of a kafka connection's options."""
    policy = RetryPolicy.of(options)
    cfg = {"bootstrap.servers": options["bootstrapServers"],
           "socket.connection.setup.timeout.ms": max(1000, policy.timeout_ms),
           "log.connection.close": False}
    sec = (options.get("security") or {}).get("protocol")
    if sec:
        cfg["security.protocol"] = sec
    auth = options.get("authentication")
    if auth:
        cfg["sasl.mechanism"] = auth.get("mechanism", "PLAIN")
        cfg["sasl.username"] = auth["username"]
        cfg["sasl.password"] = auth.get("password", "")
        cfg.setdefault("security.protocol", "SASL_PLAINTEXT")
    return cfg


def secrets(options: Mapping[str, Any]) -> tuple[str, ...]:
    auth = options.get("authentication") or {}
    return (str(auth["password"]),) if auth.get("password") else ()


def _retryable(exc: BaseException) -> bool:
    from confluent_kafka import KafkaException

    if isinstance(exc, KafkaException) and exc.args:
        err = exc.args[0]
        return bool(getattr(err, "retriable", lambda: True)()) or err.code() in _TRANSIENT
    return not isinstance(exc, (ValueError, TypeError))


def _transient() -> set:
    try:
        from confluent_kafka import KafkaError

        return {KafkaError._TRANSPORT, KafkaError._TIMED_OUT, KafkaError._ALL_BROKERS_DOWN,
                KafkaError.LEADER_NOT_AVAILABLE, KafkaError.NOT_LEADER_FOR_PARTITION}
    except ImportError:
        return set()


_TRANSIENT = _transient()


def pkey(topic: str, partition: int) -> str:
    """The watermark partition (and offset key) of a topic partition: ``topic:partition``."""
    return f"{topic}:{partition}"


def split_pkey(key: str) -> tuple[str, int]:
    topic, _, p = key.rpartition(":")
    return topic, int(p)


class KafkaClient:
    """Driver-side metadata and offsets of one connection (a consumer that never subscribes)."""

    def __init__(self, conn_name: str, options: Mapping[str, Any], group_id: str | None = None):
        self.name, self.options = conn_name, dict(options)
        self.policy = RetryPolicy.of(options)
        self.secrets = secrets(options)
        self.group_id = group_id
        self._consumer = None
        self._ends: dict[tuple[str, int], tuple[int, int]] = {}   # (topic, p) -> (reported, true end)

    def _c(self):
        if self._consumer is None:
            from confluent_kafka import Consumer

            self._consumer = Consumer({**client_config(self.options), "group.id": self.group_id or "headrace",
                                       "enable.auto.commit": False, "enable.partition.eof": False,
                                       "allow.auto.create.topics": False, "fetch.wait.max.ms": 50})
        return self._consumer

    def _call(self, what: str, fn):
        return call(self.name, what, fn, self.policy, retryable=_retryable, secrets=self.secrets)

    def partitions(self, topics: Sequence[str]) -> list[tuple[str, int]]:
        """The partitions of ``topics`` that exist now (a missing topic has none yet)."""
        t = self.policy.timeout_ms / 1000

        def meta():
            md = self._c().list_topics(timeout=t)
            if not md.brokers:
                from confluent_kafka import KafkaError, KafkaException

                raise KafkaException(KafkaError(KafkaError._TRANSPORT, "no broker answered"))
            return md

        md = self._call(f"listing topics {list(topics)}", meta)
        out = []
        for name in topics:
            tm = md.topics.get(name)
            if tm is not None and tm.error is None:
                out.extend((name, p) for p in sorted(tm.partitions))
        return out

    def ends(self, tps: Sequence[tuple[str, int]]) -> dict[tuple[str, int], int]:
        """The end offset of each partition (see the module docstring on Tansu)."""
        return {tp: self._end(tp) for tp in tps}

    def lows(self, tps: Sequence[tuple[str, int]]) -> dict[tuple[str, int], int]:
        return {tp: self._watermarks(tp)[0] for tp in tps}

    def _watermarks(self, tp: tuple[str, int]) -> tuple[int, int]:
        from confluent_kafka import TopicPartition

        t = self.policy.timeout_ms / 1000
        lo, hi = self._call(f"reading offsets of {tp[0]}[{tp[1]}]",
                            lambda: self._c().get_watermark_offsets(TopicPartition(*tp), timeout=t, cached=False))
        return lo, hi

    def _end(self, tp: tuple[str, int]) -> int:
        lo, hi = self._watermarks(tp)
        known = self._ends.get(tp)
        if known and known[0] == hi:
            return known[1]
        end = hi
        if hi > lo:
            for m in self._call(f"reading {tp[0]}[{tp[1]}]", lambda: _fetch_from(self._c(), tp, hi - 1, 1.0)):
                end = max(end, m + 1)
        self._ends[tp] = (hi, end)
        return end

    def commit(self, offsets: Mapping[tuple[str, int], int]) -> None:
        """Record ``offsets`` as the consumer group's position (informational; best effort)."""
        if not self.group_id or not offsets:
            return
        from confluent_kafka import TopicPartition

        try:
            self._c().commit(offsets=[TopicPartition(t, p, o) for (t, p), o in offsets.items()], asynchronous=True)
        except Exception:  # noqa: BLE001 - the checkpoint holds the real positions
            pass

    def close(self) -> None:
        if self._consumer is not None:
            self._consumer.close()
            self._consumer = None


def _fetch_from(consumer, tp: tuple[str, int], offset: int, timeout: float) -> list[int]:
    """Offsets of the records one fetch from ``offset`` returns (what is buffered after the first)."""
    from confluent_kafka import TopicPartition

    consumer.assign([TopicPartition(tp[0], tp[1], offset)])
    try:
        first = consumer.consume(1, timeout)
        out = [m.offset() for m in first if m.error() is None]
        if out:
            while True:
                more = consumer.consume(10_000, 0)
                if not more:
                    break
                out.extend(m.offset() for m in more if m.error() is None)
        return out
    finally:
        consumer.unassign()


def read_range(conn_name: str, options: Mapping[str, Any], topic: str, partition: int, start: int, end: int,
               group_id: str = "headrace") -> Iterator[Any]:
    """The messages ``start <= offset < end`` of one partition, in order (retried as a whole from
    the first offset not yet returned; :class:`ConnectorUnavailable` when retries run out)."""
    from confluent_kafka import Consumer, TopicPartition

    policy = RetryPolicy.of(options)
    nxt, attempt, wait = start, 0, policy.backoff_ms / 1000
    cfg = {**client_config(options), "group.id": group_id, "enable.auto.commit": False,
           "enable.partition.eof": True, "allow.auto.create.topics": False, "fetch.wait.max.ms": 50}
    while nxt < end:
        c = Consumer(cfg)
        try:
            c.assign([TopicPartition(topic, partition, nxt)])
            deadline = time.monotonic() + policy.timeout_ms / 1000
            while nxt < end:
                msgs = c.consume(min(1000, end - nxt), 0.2)
                progressed = False
                for m in msgs:
                    if m.error() is not None:
                        continue   # partition EOF and other events: the deadline decides
                    if m.offset() >= end:
                        nxt = end
                        break
                    if m.offset() >= nxt:
                        nxt = m.offset() + 1
                        progressed = True
                        yield m
                if progressed:
                    deadline = time.monotonic() + policy.timeout_ms / 1000
                elif nxt < end and time.monotonic() > deadline:
                    pos = c.position([TopicPartition(topic, partition)])[0].offset
                    if pos >= end:      # gaps (transaction markers, compaction) up to the end
                        nxt = end
                        break
                    raise TimeoutError(f"no records from offset {nxt} (expected up to {end})")
        except Exception as exc:  # noqa: BLE001 - retried below, then reported
            attempt += 1
            if attempt >= policy.attempts:
                from .retry import mask

                raise ConnectorUnavailable(mask(f"connection {conn_name!r}: reading {topic}[{partition}] offsets "
                                                f"{nxt}..{end} failed after {attempt} attempt(s): "
                                                f"{type(exc).__name__}: {exc}", secrets(options))) from None
            time.sleep(wait)
            wait = min(wait * 2, 5.0)
        finally:
            c.close()


# ------------------------------------------------------------------------------------------ sink

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
