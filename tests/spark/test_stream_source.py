"""The ``headrace_stream`` Spark source over a stream that is split and merged between batches.

foreachBatch (on the driver) collects rows and reshards the stream between batches. Checks:
every record exactly once; a child shard's rows only in batches after all of its parents'
rows; per partition key, (batch, offset) order is put order; the row schema; watermark
partitions.
"""
from __future__ import annotations

import json
import threading

import pytest

from headrace.spark.docs import from_variant
from headrace.spark.sources.stream import StreamDataSource
from headrace.streams import Stream, create_stream, watermark_partitions

pytestmark = pytest.mark.spark

KEYS = [f"user{i}" for i in range(12)]
SCHEMA = [("partition", "string"), ("offset", "bigint"), ("arrival", "timestamp"), ("raw", "string"),
          ("doc", "variant"), ("error", "string"), ("kind", "tinyint"), ("source_ts", "timestamp"),
          ("key", "string")]


def _put(s: Stream, start: int, n: int) -> None:
    s.put_many([(KEYS[i % len(KEYS)], {"n": i, "k": KEYS[i % len(KEYS)]}) for i in range(start, start + n)])


def test_stream_source_parent_first_across_resharding(spark, tmp_path):
    home = tmp_path / "home"
    s = create_stream(home, "events", 2)
    _put(s, 0, 200)
    s.put("bad", raw="{not json")
    spark.dataSource.register(StreamDataSource)

    batches: dict[int, list] = {}
    total = {"n": 201}
    done = threading.Event()
    failure: list[BaseException] = []

    from pyspark.sql import functions as F

    from headrace.spark.runtime.parse import parse

    def on_batch(df, batch_id: int) -> None:
        try:
            if batch_id == 0:
                assert [(f.name, f.dataType.simpleString()) for f in df.schema.fields] == SCHEMA
            # the reader hands plain JSON text to the JVM parser, as the engine runs it
            rows = parse(df, F.col("kind") == 0).collect()
            batches[batch_id] = rows
            # reshard between batches, while parents still hold unread rows
            if batch_id == 0:
                s.split("shard-000000")
                _put(s, 200, 150)
                total["n"] += 150
            elif batch_id == 2:
                opn = s.meta().open_shards()
                s.merge(opn[0].id, opn[1].id)
                s.split("shard-000001")
                _put(s, 350, 150)
                total["n"] += 150
            if sum(len(r) for r in batches.values()) >= total["n"]:
                done.set()
        except BaseException as exc:  # surface in the test thread
            failure.append(exc)
            done.set()
            raise

    q = (spark.readStream.format("headrace_stream").option("home", str(home)).option("stream", "events")
         .option("maxRecordsPerBatch", "60").load()
         .writeStream.foreachBatch(on_batch).option("checkpointLocation", str(tmp_path / "ckpt")).start())
    try:
        assert done.wait(timeout=240), f"only {sum(len(r) for r in batches.values())} of {total['n']} rows"
    finally:
        q.stop()
    assert not failure, failure

    meta = s.meta()
    rows = [(b, r) for b in sorted(batches) for r in batches[b]]
    ids = [(r.partition, r.offset) for _, r in rows]
    assert len(ids) == len(set(ids)) == 501
    assert set(ids) == {(sh.id, i) for sh in meta.shards.values()
                        for i in range(sh.end_seq if not sh.open else s.count(sh.id))}
    assert all(len(batches[b]) <= 60 for b in batches)
    assert len(meta.shards) == 7 and sum(1 for sh in meta.shards.values() if sh.parents) == 5

    # parent-first: a child's rows only after every row of each parent
    first = {}
    last = {}
    for b, r in rows:
        first.setdefault(r.partition, b)
        last[r.partition] = b
    for sh in meta.shards.values():
        if sh.id in first:
            for p in sh.parents:
                if p in last:
                    assert last[p] < first[sh.id], (p, sh.id)

    # per key: (batch, offset) order is put order; one shard per key per batch
    per_key: dict[str, list] = {}
    for b, r in sorted(rows, key=lambda br: (br[0], br[1].partition, br[1].offset)):
        per_key.setdefault(r.key, []).append((b, r.partition, r.offset, r))
    for key, items in per_key.items():
        if key == "bad":
            continue
        shards_per_batch: dict[int, set] = {}
        for b, p, _, _ in items:
            shards_per_batch.setdefault(b, set()).add(p)
        assert all(len(v) == 1 for v in shards_per_batch.values()), key
        ns = [json.loads(r.raw)["n"] for *_, r in items]
        assert ns == sorted(ns), key
        assert len(ns) == len(range(KEYS.index(key), 500, len(KEYS)))

    # row contents
    for _, r in rows:
        assert r.kind == 0 and r.source_ts == r.arrival
        if r.key == "bad":
            assert r.doc is None and r.error and r.raw == "{not json"
        else:
            assert r.error is None and from_variant(r.doc) == json.loads(r.raw)
    recs = {(rec.shard, rec.seq): rec for sh in meta.shards.values() for rec in s.read(sh.id)}
    for _, r in rows:
        rec = recs[(r.partition, r.offset)]
        assert rec.key == r.key and rec.data == r.raw

    # positions from the rows (per partition: last offset + 1), as the engine can keep them:
    # every closed shard is drained, so only open shards remain watermark partitions
    positions: dict[str, int] = {}
    for _, r in rows:
        positions[r.partition] = max(positions.get(r.partition, 0), r.offset + 1)
    assert watermark_partitions(home, "events", positions) == sorted(
        sh.id for sh in meta.shards.values() if sh.open)
    # without positions nothing counts as drained: closed shards holding records stay listed
    assert watermark_partitions(home, "events") == sorted(
        sh.id for sh in meta.shards.values() if sh.open or sh.end_seq)


def test_stream_source_available_now(spark, tmp_path):
    """Trigger.AvailableNow reads what the shards hold at the start, parent-first, then stops."""
    home = tmp_path / "home"
    s = create_stream(home, "events", 1)
    _put(s, 0, 50)
    a, b = s.split("shard-000000")
    _put(s, 50, 50)
    spark.dataSource.register(StreamDataSource)
    batches: dict[int, list] = {}
    q = (spark.readStream.format("headrace_stream").option("home", str(home)).option("stream", "events")
         .option("maxRecordsPerBatch", "40").load()
         .writeStream.foreachBatch(lambda df, bid: batches.__setitem__(bid, df.collect()))
         .option("checkpointLocation", str(tmp_path / "ckpt")).trigger(availableNow=True).start())
    assert q.awaitTermination(timeout=180)
    rows = [(bid, r) for bid in sorted(batches) for r in batches[bid]]
    assert len(rows) == 100 and len({(r.partition, r.offset) for _, r in rows}) == 100
    parent_last = max(bid for bid, r in rows if r.partition == "shard-000000")
    assert all(bid > parent_last for bid, r in rows if r.partition in (a, b))
    for key in KEYS:
        ns = [json.loads(r.raw)["n"] for _, r in sorted(((bid, r) for bid, r in rows if r.key == key),
                                                         key=lambda br: (br[0], br[1].offset))]
        assert ns == sorted(ns)
