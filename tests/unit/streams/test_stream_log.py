"""Shard log: framing, durability bookkeeping, torn-write recovery."""
from __future__ import annotations

import os
import struct

import pytest

from headrace.streams import CorruptLog, Stream, create_stream
from headrace.streams.log import HEADER, IDX, ShardLog, encode


def _files(s: Stream, shard: str):
    return s.shards_dir / f"{shard}.log", s.shards_dir / f"{shard}.idx"


def _put(s: Stream, n: int, start: int = 0):
    return s.put_many([("k", {"i": i}) for i in range(start, start + n)])


def test_roundtrip_and_sequence_numbers(home):
    s = create_stream(home, "s", 1)
    res = _put(s, 5)
    assert [r.seq for r in res] == [0, 1, 2, 3, 4]
    assert [r.shard for r in res] == ["shard-000000"] * 5
    recs = list(s.read("shard-000000"))
    assert [(r.seq, r.key, r.data) for r in recs] == [(i, "k", f'{{"i":{i}}}') for i in range(5)]
    assert [r.seq for r in s.read("shard-000000", 2, 4)] == [2, 3]
    arrivals = [r.arrival_us for r in recs]
    assert arrivals == sorted(arrivals)


def test_arrival_never_decreases_even_if_the_clock_does(home):
    t = iter([100, 50, 200, 10, 300])
    s = create_stream(home, "s", 1)
    s2 = Stream(home, "s", clock_us=lambda: next(t))
    for i in range(5):
        s2.put("k", {"i": i})
    assert [r.arrival_us for r in s.read("shard-000000")] == [100, 100, 200, 200, 300]


@pytest.mark.parametrize("tail", [
    "partial_header", "partial_payload", "bad_crc", "garbage", "wrong_seq"])
def test_torn_tail_is_cut_on_next_write(home, tail):
    s = create_stream(home, "s", 1)
    _put(s, 3)
    log, idx = _files(s, "shard-000000")
    good = log.stat().st_size
    frame = encode(3, 1, b"k", b'{"torn":1}')
    junk = {"partial_header": frame[:HEADER.size - 3], "partial_payload": frame[:-4],
            "bad_crc": frame[:-1] + bytes([frame[-1] ^ 0xFF]), "garbage": os.urandom(100),
            "wrong_seq": encode(7, 1, b"k", b"{}")}[tail]
    with open(log, "ab") as f:
        f.write(junk)
    # readers never see it (not indexed) ...
    assert [r.seq for r in Stream(home, "s").read("shard-000000")] == [0, 1, 2]
    # ... and the next writer (a fresh process would do the same) cuts it before appending
    s2 = Stream(home, "s")
    r = s2.put("k", {"i": 3})
    assert (r.shard, r.seq) == ("shard-000000", 3)
    assert [(x.seq, x.data) for x in s2.read("shard-000000")][-1] == (3, '{"i":3}')
    assert log.stat().st_size == good + len(encode(3, 0, b"k", b'{"i":3}'))
    assert idx.stat().st_size == 4 * IDX.size


def test_complete_unindexed_frame_is_kept(home):
    """A writer that crashed after writing a whole frame but before indexing it: the frame is
    complete and valid, so recovery keeps it (the put was not acknowledged; it may survive)."""
    s = create_stream(home, "s", 1)
    _put(s, 2)
    log, idx = _files(s, "shard-000000")
    with open(log, "ab") as f:
        f.write(encode(2, 5, b"k", b'{"i":2}'))
    with open(idx, "ab") as f:
        f.write(b"\x01\x02\x03")  # torn index entry too
    assert Stream(home, "s").count("shard-000000") == 2
    r = Stream(home, "s").put("k", {"i": 3})
    assert r.seq == 3
    assert [x.data for x in s.read("shard-000000")] == ['{"i":0}', '{"i":1}', '{"i":2}', '{"i":3}']


def test_index_not_matching_log_is_rebuilt(home):
    s = create_stream(home, "s", 1)
    _put(s, 4)
    log, idx = _files(s, "shard-000000")
    with open(idx, "r+b") as f:  # corrupt the last index entry
        f.seek(3 * IDX.size)
        f.write(struct.pack("<Q", 1))
    lg = ShardLog(s.shards_dir, "shard-000000")
    with lg.locked():
        assert lg.recover_locked() == 4
    assert [r.seq for r in s.read("shard-000000")] == [0, 1, 2, 3]


def test_split_cuts_torn_tail_before_closing(home):
    s = create_stream(home, "s", 1)
    _put(s, 3)
    log, _ = _files(s, "shard-000000")
    with open(log, "ab") as f:
        f.write(encode(3, 1, b"k", b"{}")[:-2])
    s.split("shard-000000")
    assert s.shard("shard-000000").end_seq == 3
    assert [r.seq for r in s.read("shard-000000")] == [0, 1, 2]


def test_corruption_of_durable_data_is_reported(home):
    s = create_stream(home, "s", 1)
    _put(s, 3)
    log, _ = _files(s, "shard-000000")
    with open(log, "r+b") as f:
        f.seek(HEADER.size + 2)
        f.write(b"\xff\xff")
    with pytest.raises(CorruptLog) as ei:
        list(s.read("shard-000000"))
    assert ei.value.code == "STREAM_CORRUPT"


def test_large_records_and_many_reads_across_chunks(home):
    s = create_stream(home, "s", 1)
    big = "x" * 700_000
    s.put_many([("k", {"b": big, "i": i}) for i in range(4)])
    recs = list(s.read("shard-000000"))
    assert [len(r.data) for r in recs] == [len(recs[0].data)] * 4
    assert [r.seq for r in s.read("shard-000000", 1, 3)] == [1, 2]
