"""Connectors benchmark: write and read throughput (records/s) through Kafka, Redis and MongoDB,
beside the embedded stream, on private servers started for the run.

Run: ``.venv/bin/python benchmarks/connectors_bench.py [--records N] [--no-spark]``. Prints a
markdown table and writes ``benchmarks/results/connectors.md``. The servers are the tests' own
(``tests/integration/servers.py``): Tansu (Kafka protocol, memory storage), ``redis-server``
(append-only file, ``appendfsync always``), ``secantusdb`` (MongoDB wire protocol over
WiredTiger); the embedded stream fsyncs each ``put_many``. Records are ~200-byte documents.

- **write**: what one executor task of a sink does, without Spark: the connector's sink class
  (``KafkaTopic``, ``RedisStream``, ``MongoCollection``; the stream's ``put_many``) writing the N
  records in batches of 1,000, idempotence checks included.
- **read**: the connector's reader without Spark: every record read back (Kafka ``read_range``
  per partition, Redis ``XRANGE`` pages, the MongoDB change stream, ``Stream.read`` per shard).
- **processor**: a processor reading the N records from the system (3 partitions, streams or
  shards where the system has them; one change stream for MongoDB) through Spark (``local[2]``,
  session warmed first) with one ``$addFields`` into a JSON-lines file: records/s over the run.
"""
from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from headrace.connections import Connection  # noqa: E402
from headrace.store.base import MergeSpec  # noqa: E402

PAD = "x" * 140
CHUNK = 1000
PARTS = 3


def load_servers():
    from zones_bench import load_servers as load  # the tests' own servers, as the zones benchmark

    return load()


def machine() -> str:
    from zones_bench import machine as m  # the same description as the other benchmarks

    return m()


def docs(n: int, start: int = 0) -> list[dict]:
    return [{"_id": f"r{i:08d}", "device": f"d{i % 50:03d}", "i": i, "t": 1_717_200_000_000 + i, "pad": PAD}
            for i in range(start, start + n)]


def rate(n: int, secs: float) -> float:
    return n / secs if secs > 0 else float("inf")


# ------------------------------------------------------------------ write and read, no Spark

def kafka_client(srv, n: int) -> tuple[float, float, str]:
    from headrace.connectors.kafka import KafkaClient, KafkaTopic, read_range

    topic = f"b-{uuid.uuid4().hex[:8]}"
    srv.create_topic(topic, PARTS)
    opts = {"bootstrapServers": srv.bootstrap}
    sink = KafkaTopic(Connection("kafka", "kafka", opts), topic)
    data = docs(n)
    t0 = time.perf_counter()
    for k in range(0, n, CHUNK):
        assert not sink.merge_many(data[k:k + CHUNK], MergeSpec()).errors
    w = time.perf_counter() - t0
    kc = KafkaClient("kafka", opts)
    tps = kc.partitions([topic])
    ends, lows = kc.ends(tps), kc.lows(tps)
    kc.close()
    t0 = time.perf_counter()
    got = sum(1 for (t, p) in tps for _ in read_range("kafka", opts, t, p, lows[(t, p)], ends[(t, p)]))
    r = time.perf_counter() - t0
    assert got == n, (got, n)
    return rate(n, w), rate(n, r), topic


def redis_client(srv, n: int) -> tuple[float, float, list[str]]:
    from headrace.connectors.redis_stream import RedisClient, RedisStream

    opts = {"url": srv.url}
    names = [f"b-{uuid.uuid4().hex[:8]}-{j}" for j in range(PARTS)]
    sinks = [RedisStream(Connection("redis", "redis", opts), s) for s in names]
    data = docs(n)
    t0 = time.perf_counter()
    for k in range(0, n, CHUNK):
        assert not sinks[(k // CHUNK) % PARTS].merge_many(data[k:k + CHUNK], MergeSpec()).errors
    w = time.perf_counter() - t0
    c = RedisClient("redis", opts)
    t0 = time.perf_counter()
    got = sum(1 for s in names for _ in c.read(s, "0-0", "+"))
    r = time.perf_counter() - t0
    c.close()
    assert got == n, (got, n)
    return rate(n, w), rate(n, r), names


def mongo_client(srv, n: int) -> tuple[float, float, tuple[str, float]]:
    from headrace.connectors.mongodb import ChangeStreams, MongoCollection

    opts = {"uri": srv.uri}
    db = f"b{uuid.uuid4().hex[:8]}"
    cs = ChangeStreams("mongo", opts, db, "in")
    start_token = cs.initial_token()
    since = time.time() - 1
    sink = MongoCollection(Connection("mongo", "mongodb", opts), db, "in")
    data = docs(n)
    t0 = time.perf_counter()
    for k in range(0, n, CHUNK):
        assert not sink.merge_many(data[k:k + CHUNK], MergeSpec(when_matched="replace")).errors
    w = time.perf_counter() - t0
    t0 = time.perf_counter()
    token, got, upto = start_token, 0, None
    while got < n:
        upto, k = cs.advance(token, 10_000)
        got += len(cs.read(token, upto))
        token = upto
    r = time.perf_counter() - t0
    cs.close()
    assert got == n, (got, n)
    return rate(n, w), rate(n, r), (db, since)


def stream_client(home: Path, n: int) -> tuple[float, float, str]:
    from headrace.streams import Stream, create_stream

    name = f"b{uuid.uuid4().hex[:6]}"
    create_stream(home, name, shards=PARTS)
    s = Stream(home, name)
    data = docs(n)
    t0 = time.perf_counter()
    for k in range(0, n, CHUNK):
        s.put_many([(d["device"], d) for d in data[k:k + CHUNK]])
    w = time.perf_counter() - t0
    t0 = time.perf_counter()
    got = sum(1 for sh in s.shards() for _ in s.read(sh.id))
    r = time.perf_counter() - t0
    assert got == n, (got, n)
    return rate(n, w), rate(n, r), name


# ------------------------------------------------------------------ through a processor

def processor_rate(tmp: Path, name: str, source: dict, conns: dict, n: int) -> float:
    from headrace.launch import prepare, start

    out = tmp / f"{name}.jsonl"
    pipe = [{"$source": source}, {"$addFields": {"w": {"$multiply": ["$i", 2]}}}, {"$emit": {"path": str(out)}}]
    run = prepare(pipe, home=tmp / "home", extra_connections=conns)
    t0 = time.perf_counter()
    stats = start(run, name=name, checkpoint=tmp / f"ckpt-{name}", trigger_ms=0).run(max_input=n, duration_s=900)
    secs = time.perf_counter() - t0
    assert stats["outputMessageCount"] == n, stats
    return rate(n, secs)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=20_000)
    ap.add_argument("--no-spark", action="store_true", help="only the write and read parts")
    ap.add_argument("--out", default=str(ROOT / "benchmarks/results/connectors.md"))
    a = ap.parse_args()
    sys.path.insert(0, str(ROOT / "benchmarks"))
    servers = load_servers()
    where = machine()       # with the load before the run
    tmp = Path(tempfile.mkdtemp(prefix="hr-conn-bench-"))
    rows, n = [], a.records
    kafka = servers.TansuServer(tmp / "tansu")
    redis = servers.RedisServer(tmp / "redis")
    mongo = servers.SecantusServer(tmp / "mongo")
    for s in (kafka, redis, mongo):
        s.start()
    try:
        kw, kr, topic = kafka_client(kafka, n)
        rw, rr, streams = redis_client(redis, n)
        mw, mr, (db, since) = mongo_client(mongo, n)
        sw, sr, sname = stream_client(tmp / "home", n)
        proc = {}
        if not a.no_spark:
            from headrace.spark.session import get_spark

            get_spark()
            processor_rate(tmp, "warm", {"documents": docs(10)}, {}, 10)
            proc["kafka"] = processor_rate(tmp, "kafka", {"connectionName": "kafka", "topic": topic},
                                           {"kafka": {"type": "kafka", "bootstrapServers": kafka.bootstrap}}, n)
            proc["redis"] = processor_rate(tmp, "redis", {"connectionName": "redis", "stream": streams,
                                                          "config": {"startAt": "earliest"}},
                                           {"redis": {"type": "redis", "url": redis.url}}, n)
            proc["mongodb"] = processor_rate(tmp, "mongodb", {"connectionName": "mongo", "db": db, "coll": "in",
                                                              "config": {"startAtOperationTime": int(since)}},
                                             {"mongo": {"type": "mongodb", "uri": mongo.uri}}, n)
            proc["stream"] = processor_rate(tmp, "stream", {"connectionName": "stream", "stream": sname}, {}, n)
    finally:
        for s in (kafka, redis, mongo):
            s.stop()
    rows = [("Kafka (Tansu, memory)", kw, kr, proc.get("kafka")),
            ("Redis Streams (AOF, fsync always)", rw, rr, proc.get("redis")),
            ("MongoDB (secantusdb, journaled writes)", mw, mr, proc.get("mongodb")),
            ("embedded stream (fsync per put_many)", sw, sr, proc.get("stream"))]
    f = lambda x: "—" if x is None else f"{x:,.0f}"  # noqa: E731
    lines = [f"# Connectors: records/s ({n:,} records of ~200 bytes)", "",
             f"Machine: {where} before the run; "
             f"{_dt.datetime.now(_dt.timezone.utc):%Y-%m-%d %H:%M} UTC. "
             f"Command: `.venv/bin/python benchmarks/connectors_bench.py --records {n}`.", "",
             "| system | write (sink class, batches of 1,000) | read (reader, no Spark) | processor (source → $addFields → JSON lines, Spark local[2]) |",
             "|---|---|---|---|"]
    lines += [f"| {name} | {f(w)} | {f(r)} | {f(p)} |" for name, w, r, p in rows]
    lines += ["", f"Load after the run: {os.getloadavg()[0]:.2f}."]
    text = "\n".join(lines) + "\n"
    print(text)
    Path(a.out).write_text(text)


if __name__ == "__main__":
    main()
