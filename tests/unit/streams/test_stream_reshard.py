"""Shards, hash ranges, split/merge, lineage, routing, and bad input."""
from __future__ import annotations

import json

import pytest

from headrace.streams import (MAX_HASH, InvalidArgument, MergeNotAdjacent, ShardClosed, ShardUnknown,
                              SplitKeyOutOfRange, Stream, StreamExists, StreamUnknown, create_stream, hash_key,
                              readable, watermark_partitions)

from stream_helpers import drain_order


def _ranges(s: Stream):
    return [(x.id, x.start, x.end) for x in s.meta().open_shards()]


def test_create_divides_the_hash_space_evenly(home):
    s = create_stream(home, "s", 3)
    r = _ranges(s)
    assert r[0][1] == 0 and r[-1][2] == MAX_HASH
    assert all(a[2] + 1 == b[1] for a, b in zip(r, r[1:]))
    widths = [e - b + 1 for _, b, e in r]
    assert max(widths) - min(widths) <= 1


def test_hash_key_is_md5_of_the_partition_key():
    import hashlib

    assert hash_key("abc") == int(hashlib.md5(b"abc").hexdigest(), 16)


def test_routing_follows_ranges(home):
    s = create_stream(home, "s", 4)
    for i in range(50):
        k = f"key{i}"
        r = s.put(k, {"i": i})
        sh = s.shard(r.shard)
        assert sh.start <= hash_key(k) <= sh.end


def test_split_default_middle_and_explicit_key(home):
    s = create_stream(home, "s", 1)
    a, b = s.split("shard-000000")
    assert (s.shard(a).start, s.shard(a).end) == (0, MAX_HASH // 2)
    assert (s.shard(b).start, s.shard(b).end) == (MAX_HASH // 2 + 1, MAX_HASH)
    parent = s.shard("shard-000000")
    assert not parent.open and parent.children == [a, b] and parent.end_seq == 0
    assert s.shard(a).parents == ["shard-000000"]
    c, d = s.split(b, at=str(MAX_HASH))  # the upper child owns exactly the last key
    assert (s.shard(d).start, s.shard(d).end) == (MAX_HASH, MAX_HASH)
    with pytest.raises(SplitKeyOutOfRange):
        s.split(d)  # a single-key shard cannot be split


def test_merge_and_lineage(home):
    s = create_stream(home, "s", 2)
    s.put_many([(f"k{i}", i) for i in range(20)])
    child = s.merge("shard-000001", "shard-000000")  # either order
    c = s.shard(child)
    assert (c.start, c.end) == (0, MAX_HASH) and c.parents == ["shard-000000", "shard-000001"]
    assert s.describe()["open_shards"] == 1
    # a child is readable only once both parents are drained
    meta = s.meta()
    assert [x.id for x in readable(meta, {})] == ["shard-000000", "shard-000001"]
    ends = {p: s.shard(p).end_seq for p in c.parents}
    assert [x.id for x in readable(meta, {"shard-000000": ends["shard-000000"]})] == ["shard-000001"]
    assert [x.id for x in readable(meta, ends)] == [child]


def test_per_key_order_across_splits_and_merges_single_process(home):
    s = create_stream(home, "s", 2)
    keys = [f"key{i}" for i in range(12)]
    n = 0
    ops = ["split", "merge", "split", "split", "merge", "split", "merge"]
    for op in ops:
        s.put_many([(k, {"k": k, "n": n + j}) for j, k in enumerate(keys * 5)])
        n += len(keys) * 5
        opn = s.meta().open_shards()
        if op == "split":
            s.split(max(opn, key=lambda x: x.end - x.start).id)
        else:
            a, b = min(zip(opn, opn[1:]), key=lambda p: p[1].end - p[0].start)
            s.merge(a.id, b.id)
    s.put_many([(k, {"k": k, "n": n + j}) for j, k in enumerate(keys)])
    recs = drain_order(s)
    assert len(recs) == n + len(keys)
    per_key: dict[str, list[int]] = {}
    for r in recs:
        d = json.loads(r.data)
        per_key.setdefault(d["k"], []).append(d["n"])
    for k, ns in per_key.items():
        assert ns == sorted(ns), k


def test_watermark_partitions(home):
    s = create_stream(home, "s", 2)
    assert watermark_partitions(home, "s") == ["shard-000000", "shard-000001"]
    s.put_many([(f"k{i}", i) for i in range(10)])
    a, b = s.split("shard-000000")
    ends = s.shard("shard-000000").end_seq
    assert ends > 0
    assert watermark_partitions(home, "s") == sorted(["shard-000000", "shard-000001", a, b])
    assert watermark_partitions(home, "s", {"shard-000000": ends}) == sorted(["shard-000001", a, b])
    c = s.merge(a, b)
    # a and b are empty and closed: never partitions; the merged child is
    assert watermark_partitions(home, "s", {"shard-000000": ends}) == sorted(["shard-000001", c])


# ---- bad input: clear errors, stable codes, nothing changed -------------------------------------
def _snapshot(home):
    return json.dumps(Stream(home, "s").describe(), sort_keys=True)


@pytest.mark.parametrize("call, exc, code", [
    (lambda s: s.split("shard-000099"), ShardUnknown, "SHARD_UNKNOWN"),
    (lambda s: s.merge("shard-000000", "shard-000099"), ShardUnknown, "SHARD_UNKNOWN"),
    (lambda s: s.merge("shard-000000", "shard-000002"), MergeNotAdjacent, "MERGE_NOT_ADJACENT"),
    (lambda s: s.merge("shard-000001", "shard-000001"), MergeNotAdjacent, "MERGE_NOT_ADJACENT"),
    (lambda s: s.split("shard-000003"), ShardClosed, "SHARD_CLOSED"),
    (lambda s: s.merge("shard-000003", "shard-000002"), ShardClosed, "SHARD_CLOSED"),
    (lambda s: s.split("shard-000000", at=0), SplitKeyOutOfRange, "SPLIT_KEY_OUT_OF_RANGE"),
    (lambda s: s.split("shard-000000", at=s.shard("shard-000001").start), SplitKeyOutOfRange,
     "SPLIT_KEY_OUT_OF_RANGE"),
    (lambda s: s.split("shard-000000", at="banana"), InvalidArgument, "HASH_KEY_INVALID"),
    (lambda s: s.split("shard-000000", at=str(MAX_HASH + 1)), InvalidArgument, "HASH_KEY_INVALID"),
    (lambda s: s.put("", {}), InvalidArgument, "KEY_INVALID"),
    (lambda s: s.put_many([("a", 1), ("b", float("nan"))]), InvalidArgument, "DATA_INVALID"),
    (lambda s: s.put_many([("a", 1), ("b", object())]), InvalidArgument, "DATA_INVALID"),
])
def test_bad_requests(home, call, exc, code):
    s = create_stream(home, "s", 4)
    s.split("shard-000003")
    s.put_many([(f"k{i}", i) for i in range(30)])
    before = _snapshot(home)
    with pytest.raises(exc) as ei:
        call(s)
    assert ei.value.code == code
    assert str(ei.value)
    assert _snapshot(home) == before  # nothing written, nothing changed


def test_bad_streams(home):
    with pytest.raises(StreamUnknown) as ei:
        Stream(home, "nope")
    assert ei.value.code == "STREAM_UNKNOWN" and "nope" in str(ei.value)
    create_stream(home, "s", 1)
    with pytest.raises(StreamExists):
        create_stream(home, "s", 2)
    for bad in ("", "../x", "a/b", ".hidden", "x" * 200):
        with pytest.raises(InvalidArgument) as ei:
            create_stream(home, bad, 1)
        assert ei.value.code == "NAME_INVALID"
    for n in (0, -1, 5000, True, "3"):
        with pytest.raises(InvalidArgument) as ei:
            create_stream(home, "t", n)
        assert ei.value.code == "SHARDS_INVALID"
    assert Stream(home, "s").describe()["open_shards"] == 1
