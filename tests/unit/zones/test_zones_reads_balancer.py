"""Broadcast reads with de-duplication, and the balancer (SQLite zones)."""
from __future__ import annotations

import datetime as dt
import threading
import time

from headrace import ejson
from headrace.collections import open_collection
from headrace.store.base import MergeSpec
from headrace.store.sqlite import SQLiteStore

from zones_helpers import registry_with, zoned_options

UTC = dt.timezone.utc


def open_events(tmp_path, **over):
    reg = registry_with(tmp_path, {"events": zoned_options(tmp_path, **over)})
    return open_collection(reg, "events", "app", "msgs")


def raw(tmp_path, zone):
    return SQLiteStore(tmp_path / zone).collection("app", "msgs")


def oid_at(seconds: int, tail: int) -> ejson.ObjectId:
    return ejson.ObjectId(seconds.to_bytes(4, "big") + tail.to_bytes(8, "big"))


def test_dedupe_by_message_id_uses_insert_time_in_id(tmp_path):
    c = open_events(tmp_path)
    raw(tmp_path, "alfa").insert_many([{"_id": oid_at(2000, 1), "message_id": 7, "datacenter": "alfa", "userid": 1},
                                       {"_id": oid_at(1000, 9), "message_id": 8, "datacenter": "alfa", "userid": 1}])
    raw(tmp_path, "bravo").insert_many([{"_id": oid_at(1000, 5), "message_id": 7, "datacenter": "bravo", "userid": 1},
                                        {"_id": oid_at(1000, 3), "message_id": 8, "datacenter": "bravo", "userid": 1},
                                        {"_id": oid_at(1000, 4), "datacenter": "bravo", "userid": 2}])
    first = {d.get("message_id"): d["_id"] for d in c.find(keep="first")}
    last = {d.get("message_id"): d["_id"] for d in c.find(keep="last")}
    assert first == {7: oid_at(1000, 5), 8: oid_at(1000, 3), None: oid_at(1000, 4)}
    assert last == {7: oid_at(2000, 1), 8: oid_at(1000, 9), None: oid_at(1000, 4)}
    assert len(list(c.find(dedupe=False))) == 5


def test_ties_without_object_ids_break_by_zone_then_position(tmp_path):
    c = open_events(tmp_path)
    raw(tmp_path, "bravo").insert_many([{"_id": "b1", "message_id": 1, "datacenter": "bravo", "userid": 1}])
    raw(tmp_path, "alfa").insert_many([{"_id": "a1", "message_id": 1, "datacenter": "alfa", "userid": 1},
                                       {"_id": "a2", "message_id": 1, "datacenter": "alfa", "userid": 1}])
    assert [d["_id"] for d in c.find(keep="first")] == ["a1"]
    assert [d["_id"] for d in c.find(keep="last")] == ["b1"]


def test_same_id_in_two_zones_is_one_document(tmp_path):
    c = open_events(tmp_path, reads={"dedupeField": None})
    doc = {"_id": 1, "datacenter": "bravo", "userid": 5}
    raw(tmp_path, "alfa").insert_many([doc])
    raw(tmp_path, "bravo").insert_many([doc])
    got = list(c.find())
    assert got == [doc]
    assert c.count() == 1


def _seed_for_balance(c, n_per_zone: int):
    docs = [{"message_id": f"{z}{i}", "userid": i, "datacenter": z} for z in ("alfa", "bravo") for i in range(n_per_zone)]
    assert c.merge_many(docs, MergeSpec()).errors == []
    return docs


NEW_RANGES = [
    {"zone": "alfa", "min": {"datacenter": "alfa", "userid": "$minKey"}, "max": {"datacenter": "alfa", "userid": "$maxKey"}},
    {"zone": "alfa", "min": {"datacenter": "bravo", "userid": "$minKey"}, "max": {"datacenter": "bravo", "userid": 10}},
    {"zone": "bravo", "min": {"datacenter": "bravo", "userid": 10}, "max": {"datacenter": "bravo", "userid": "$maxKey"}},
]


def test_balancer_moves_violations_after_a_range_change(tmp_path):
    c = open_events(tmp_path)
    _seed_for_balance(c, 20)
    c.router.set_ranges(NEW_RANGES)
    st = c.status()
    assert st["violations"] == 10 and st["zones"]["bravo"]["violationsByTarget"] == {"alfa": 10}
    t0 = time.monotonic()
    rep = c.balancer(docs_per_second=40, batch_size=5).run()
    took = time.monotonic() - t0
    assert rep["state"] == "done" and rep["moved"] == 10 and rep["skipped"] == 0
    assert took >= 0.2                                 # 10 documents at 40/s, 5 per batch
    st = c.status()
    assert st["violations"] == 0
    assert st["zones"]["alfa"]["count"] == 30 and st["zones"]["bravo"]["count"] == 10
    assert sorted(d["message_id"] for d in c.find()) == sorted(f"{z}{i}" for z in ("alfa", "bravo") for i in range(20))
    assert c.balancer().run()["moved"] == 0


def test_reads_stay_correct_while_the_balancer_runs(tmp_path):
    c = open_events(tmp_path, reads={"dedupeField": None})
    n = 150
    _seed_for_balance(c, n)
    ids = {ejson.dumps(d["_id"]) for d in c.find()}
    assert len(ids) == 2 * n
    c.router.set_ranges([
        {"zone": "alfa", "min": {"datacenter": "alfa", "userid": "$minKey"}, "max": {"datacenter": "alfa", "userid": "$maxKey"}},
        {"zone": "alfa", "min": {"datacenter": "bravo", "userid": "$minKey"}, "max": {"datacenter": "bravo", "userid": "$maxKey"}},
    ])
    b = c.balancer(docs_per_second=300, batch_size=3).start()
    reads = 0
    while b.running or reads == 0:
        got = [ejson.dumps(d["_id"]) for d in c.find()]
        assert len(got) == len(set(got)) == 2 * n and set(got) == ids
        reads += 1
    assert b.join()["moved"] == n and reads >= 2
    assert c.status()["zones"]["bravo"]["count"] == 0


def test_balancer_waits_for_its_window_and_can_be_stopped(tmp_path):
    c = open_events(tmp_path, balancer={"window": "01:00-05:00"})
    _seed_for_balance(c, 12)
    c.router.set_ranges(NEW_RANGES)
    outside = lambda: dt.datetime(2024, 1, 1, 12, 0, tzinfo=UTC)   # noqa: E731
    b = c.balancer(now=outside).start()
    time.sleep(0.3)
    assert b.report["state"] == "waiting for window" and b.report["moved"] == 0
    b.stop()
    assert b.join(5)["state"] == "stopped" and c.status()["violations"] == 10
    inside = lambda: dt.datetime(2024, 1, 1, 2, 30, tzinfo=UTC)    # noqa: E731
    assert c.balancer(now=inside).run()["moved"] == 10


def test_balancer_skips_moves_to_a_down_zone(tmp_path):
    c = open_events(tmp_path)
    _seed_for_balance(c, 12)
    c.router.set_ranges(NEW_RANGES)
    c.router.mark_down("alfa", "test: down")
    rep = c.balancer().run()
    assert rep["moved"] == 0 and rep["skipped"] == 10 and rep["scanned"] == 12   # alfa is not read; moves into it wait
    c.router.mark_up("alfa")
    c.router.mark_down("bravo", "test: down")
    assert c.balancer().run()["violations"] == 0
    c.router.mark_up("bravo")
    assert c.balancer().run()["moved"] == 10


def test_trim_dry_run(tmp_path):
    c = open_events(tmp_path)
    raw(tmp_path, "alfa").insert_many([{"_id": oid_at(1, 1), "message_id": 1, "datacenter": "alfa", "userid": 1}])
    raw(tmp_path, "bravo").insert_many([{"_id": oid_at(2, 1), "message_id": 1, "datacenter": "bravo", "userid": 1}])
    rep = c.trim(dry_run=True)
    assert rep["deleted"] == 1 and rep["dryRun"] and len(list(c.find(dedupe=False))) == 2
    rep = c.trim(keep="last")
    assert rep["deletedByZone"] == {"alfa": 1, "bravo": 0}
    assert [d["datacenter"] for d in c.find(dedupe=False)] == ["bravo"]


def test_concurrent_writers_share_the_router(tmp_path):
    c = open_events(tmp_path)
    errs = []

    def writer(k):
        for b in range(5):
            r = c.merge_many([{"message_id": f"{k}-{b}-{i}", "userid": i, **({"datacenter": "bravo"} if i % 2 else {})}
                              for i in range(20)], MergeSpec())
            errs.extend(r.errors)

    ts = [threading.Thread(target=writer, args=(k,)) for k in range(3)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert errs == [] and c.count() == 300
    st = c.stats()["zones"]
    assert st["alfa"]["writes"] == 150 and st["bravo"]["writes"] == 150
