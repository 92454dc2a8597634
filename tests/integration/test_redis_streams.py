"""Redis Streams connector against Debian's ``redis-server`` (started on a free loopback port in
a temp dir by the ``redis_server`` fixture, with a password): the reader on its own, the
idempotent stream sink, a windowed processor from 3 streams into the store and into a stream,
kill -9 of the CLI, bad entries to the DLQ, ``$merge`` refused, an unreachable server."""
from __future__ import annotations

import json
import socket
import uuid

import pytest
import yaml
from _connector_helpers import crash_or_kill, expected, pipeline, plain, records, run_across_outage

from headrace.connections import load_registry
from headrace.spark.sources.arrow_rows import as_tuples

pytestmark = pytest.mark.integration


def _name(prefix="s"):
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def _redis(srv):
    import redis

    return redis.Redis.from_url(srv.url, decode_responses=True)


def _put(srv, streams: list[str], parts: list[list[str]], extra: dict[int, list[dict]] | None = None) -> None:
    r = _redis(srv)
    for i, (s, texts) in enumerate(zip(streams, parts)):
        for x in texts:
            r.xadd(s, {"doc": x})
        for fields in (extra or {}).get(i, []):
            r.xadd(s, fields)
    r.close()


def _read_stream(srv, stream: str) -> list[dict]:
    from headrace import ejson

    r = _redis(srv)
    try:
        return [ejson.loads(f["doc"]) for _id, f in r.xrange(stream)]
    finally:
        r.close()


def _registry(tmp_path, url: str, **extra):
    f = tmp_path / "connections.yaml"
    f.write_text(yaml.safe_dump({"connections": {"redis": {"type": "redis", "url": url, **extra}}}))
    return f, load_registry(f, home=tmp_path / "home")


def _run(reg, pipe: dict, ckpt, max_input=None, name="r", fault=None):
    from headrace.spark.engine import Processor, RunOptions
    from headrace.spec import parse_pipeline
    from headrace.validate import check_connections

    parsed = parse_pipeline(pipe)
    check_connections(parsed, reg)
    return Processor(parsed, RunOptions(name=name, checkpoint=ckpt, registry=reg, trigger_ms=0, fault=fault)).run(
        max_input=max_input, duration_s=240)


def _store(tmp_path, coll):
    from headrace.store import open_store

    return list(open_store(tmp_path / "home" / "store").collection("r", coll).find())


# ------------------------------------------------------------------ no Spark


def test_reader_positions_are_entry_ids_and_batches_are_bounded(redis_server):
    from headrace.spark.sources.redis_stream import RedisReader

    a, b = _name("a"), _name("b")
    _put(redis_server, [a, b], [[json.dumps({"i": i}) for i in range(7)], [json.dumps({"j": 1})]],
         extra={1: [{"x": "1", "y": "two"}]})
    r = RedisReader({"connection": "redis", "connectionSecret": json.dumps({"url": redis_server.url}),
                     "streams": json.dumps([a, b]), "maxRecordsPerBatch": "6"})
    start = r.initialOffset()
    assert start == {a: "0-0", b: "0-0"}
    end = r.latestOffset(start, r.getDefaultReadLimit())
    rows = [row for p in r.partitions(start, end) for row in as_tuples(r.read(p))]
    assert [json.loads(x[3]) for x in rows if x[0] == a] == [{"i": i} for i in range(3)]   # 6 shared by 2 streams
    assert [json.loads(x[3]) for x in rows if x[0] == b] == [{"j": 1}, {"x": "1", "y": "two"}]  # fields as document
    assert all(x[1] > 0 and x[8] for x in rows)
    assert [row for p in r.partitions(start, end) for row in as_tuples(r.read(p))] == rows   # a replay reads the same
    end2 = r.latestOffset(end, r.getDefaultReadLimit())
    assert end2[b] == end[b] and end2[a] != end[a]
    assert len([row for p in r.partitions(end, end2) for row in as_tuples(r.read(p))]) == 3
    r.stop()


def test_server_restart_mid_run_loses_nothing(redis_server):
    """Redis stopped (even killed: append-only file, fsync always) and started again on its port:
    the reader goes on from its positions, nothing lost, nothing read twice."""
    from headrace.spark.sources.redis_stream import RedisReader

    s = _name("a")
    _put(redis_server, [s], [[json.dumps({"i": i}) for i in range(4)]])
    r = RedisReader({"connection": "redis", "connectionSecret": json.dumps({"url": redis_server.url}),
                     "streams": json.dumps([s]), "maxRecordsPerBatch": "3"})
    start = r.initialOffset()
    end = r.latestOffset(start, r.getDefaultReadLimit())
    seen = [json.loads(x[3])["i"] for p in r.partitions(start, end) for x in as_tuples(r.read(p))]
    redis_server.stop(kill=True)
    redis_server.start()
    _put(redis_server, [s], [[json.dumps({"i": 4})]])
    end2 = r.latestOffset(end, r.getDefaultReadLimit())
    seen += [json.loads(x[3])["i"] for p in r.partitions(end, end2) for x in as_tuples(r.read(p))]
    assert seen == [0, 1, 2, 3, 4]
    r.stop()


def test_stream_sink_is_idempotent_on_replay(redis_server, tmp_path):
    from headrace.collections import open_collection
    from headrace.store.base import MergeSpec

    s = _name("out")
    f, reg = _registry(tmp_path, redis_server.url)
    coll = open_collection(reg, "redis", "unused", s)
    docs = [{"_id": i, "v": i * 2} for i in range(5)]
    assert coll.merge_many(docs[:3], MergeSpec()).inserted == 3
    assert coll.merge_many(docs, MergeSpec()).inserted == 2            # a replay of a batch written in part
    assert _read_stream(redis_server, s) == docs


# ------------------------------------------------------------------ processors


def test_windowed_processor_from_three_streams_into_store_then_into_a_stream_across_a_kill_9(
        spark, redis_server, tmp_path):
    """One input (three streams, a bad entry), two processors: into the store with the DLQ into a
    stream, then into a stream, crashed after its third micro-batch wrote (in-process; with
    HEADRACE_LONG_TESTS=1 run by the CLI and killed with SIGKILL) and restarted from its
    checkpoint: both give the exact windows, nothing lost, nothing twice."""
    streams = [_name(f"in{i}") for i in range(3)]
    out = _name("out")
    parts = records(seed=21)
    _put(redis_server, streams, parts, extra={2: [{"doc": "{not json"}]})
    total = sum(len(x) for x in parts) + 1
    f, reg = _registry(tmp_path, redis_server.url)
    source = {"connectionName": "redis", "stream": streams, "config": {"maxRecordsPerBatch": 45}}
    want = expected(parts)
    _run(reg, pipeline(source, {"$merge": {"into": {"connectionName": "store", "db": "r", "coll": "w"}}},
                       {"connectionName": "redis", "db": "unused", "coll": out + "-dlq"}), tmp_path / "c1",
         max_input=total)
    assert plain(_store(tmp_path, "w")) == want
    bad = _read_stream(redis_server, out + "-dlq")
    assert [d["doc"] for d in bad] == ["{not json"]
    assert bad[0]["_stream_meta"]["source"]["partition"] == streams[2]

    pipe = pipeline({**source, "config": {"maxRecordsPerBatch": 15}},
                    {"$emit": {"connectionName": "redis", "stream": out}})
    ck, name, err = crash_or_kill(
        pipe, tmp_path, f, lambda c, n, fault: _run(reg, pipe, c, max_input=total, name=n, fault=fault),
        lambda: _read_stream(redis_server, out))
    assert redis_server.password not in err
    _run(reg, pipe, ck, max_input=total, name=name)
    assert plain(_read_stream(redis_server, out)) == want          # nothing lost, nothing twice


def test_server_killed_and_restarted_mid_run_the_processor_resumes_exactly(spark, redis_server, tmp_path):
    """A windowed processor from three streams into a stream of the same server; after its first
    micro-batch the server is killed (SIGKILL; append-only file, fsync always) and started again
    on its port, then the rest of the input arrives: the processor's retries carry it across the
    outage and the output holds every window exactly once."""
    streams = [_name(f"rs{i}") for i in range(3)]
    out = _name("rs-out")
    parts = records(per_partition=16, seed=33)
    _put(redis_server, streams, [p[:8] for p in parts])
    _f, reg = _registry(tmp_path, redis_server.url, retry={"attempts": 8, "backoffMs": 200, "timeoutMs": 2000})
    pipe = pipeline({"connectionName": "redis", "stream": streams, "config": {"maxRecordsPerBatch": 6}},
                    {"$emit": {"connectionName": "redis", "stream": out}})

    def outage() -> None:
        redis_server.stop(kill=True)
        redis_server.start()
        _put(redis_server, streams, [p[8:] for p in parts])

    run_across_outage(pipe, reg, tmp_path / "ck", sum(len(p) for p in parts), outage)
    assert plain(_read_stream(redis_server, out)) == expected(parts)


def test_unreachable_server_retries_then_fails_naming_the_connection(spark, tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    f, reg = _registry(tmp_path, f"redis://:hunter2-redis@127.0.0.1:{port}/0",
                       retry={"attempts": 3, "backoffMs": 50, "timeoutMs": 500})
    assert "hunter2-redis" not in str(reg.list())
    pipe = pipeline({"connectionName": "redis", "stream": "s"},
                    {"$merge": {"into": {"connectionName": "store", "db": "r", "coll": "x"}}})
    with pytest.raises(Exception) as e:
        _run(reg, pipe, tmp_path / "c")
    msg = str(e.value)
    assert "connection 'redis'" in msg and "3 attempt(s)" in msg, msg[-2000:]
    assert "hunter2-redis" not in msg


def test_merge_into_a_stream_is_refused(tmp_path):
    from headrace.errors import PipelineError
    from headrace.spec import parse_pipeline
    from headrace.validate import check_connections

    f, reg = _registry(tmp_path, "redis://127.0.0.1:1/0")
    p = parse_pipeline(pipeline({"connectionName": "redis", "stream": "a"},
                                {"$merge": {"into": {"connectionName": "redis", "db": "x", "coll": "y"}}}))
    with pytest.raises(PipelineError) as e:
        check_connections(p, reg)
    assert e.value.code == "MERGE_NOT_SUPPORTED" and "Redis stream" in str(e.value) and "$emit" in str(e.value)


def test_emit_to_a_stream_named_per_document(spark, redis_server, tmp_path):
    """``$emit.stream`` as an expression: each document is appended to the stream it names; one
    whose name is not a string goes to the DLQ; a replay appends nothing twice."""
    base = _name("dyn")
    docs = [{"_id": i, "k": k} for i, k in enumerate(["a", "b", "a", None, "b"])]
    f, reg = _registry(tmp_path, redis_server.url)
    pipe = {"pipeline": [{"$source": {"documents": docs}},
                         {"$emit": {"connectionName": "redis", "stream": {"$concat": [base, ":", "$k"]}}}],
            "options": {"dlq": {"connectionName": "store", "db": "r", "coll": "dlq"}}}
    for ckpt in ("c1", "c2"):
        _run(reg, pipe, tmp_path / ckpt)
        assert [d["_id"] for d in _read_stream(redis_server, f"{base}:a")] == [0, 2]
        assert [d["_id"] for d in _read_stream(redis_server, f"{base}:b")] == [1, 4]
    dlq = _store(tmp_path, "dlq")      # one entry per run (a new checkpoint is a new run)
    assert {d["doc"]["_id"] for d in dlq} == {3}
    assert dlq[0]["errInfo"]["reason"] == "$emit stream must evaluate to a non-empty string, found null"
