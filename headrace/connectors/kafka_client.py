"""Reading Kafka (:mod:`headrace.connectors.kafka`): a connection's librdkafka settings and
secrets, which errors are worth a retry, offset keys (``topic:partition``), :class:`KafkaClient`
(driver-side partitions, ends and lows of partitions, group commits; how ends are found on Tansu
is in the docstring of :mod:`headrace.connectors.kafka`) and :func:`read_range` (one
partition's records between two offsets).
"""
from __future__ import annotations

import time
from typing import Any, Iterator, Mapping, Sequence

from .retry import ConnectorUnavailable, RetryPolicy, call


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
