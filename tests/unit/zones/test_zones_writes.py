"""Zoned writes on SQLite zones: routing, zone field policy, failover on error/timeout, all zones down."""
from __future__ import annotations

import logging
import time

import pytest

from headrace import ejson
from headrace.collections import open_collection
from headrace.store.base import MergeSpec
from headrace.store.sqlite import SQLiteStore
from headrace.zones import ZonesDownError

from zones_helpers import ZoneLock, registry_with, zoned_options

INSERT = MergeSpec()


def open_events(tmp_path, names=("alfa", "bravo"), **over):
    reg = registry_with(tmp_path, {"events": zoned_options(tmp_path, names, **over)})
    return open_collection(reg, "events", "app", "msgs")


def zone_docs(tmp_path, zone, coll="msgs"):
    return list(SQLiteStore(tmp_path / zone).collection("app", coll).find())


def test_routing_by_compound_ranges_with_bounds(tmp_path):
    rs = [{"zone": "alfa", "min": {"datacenter": "eu", "userid": "$minKey"}, "max": {"datacenter": "eu", "userid": 100}},
          {"zone": "bravo", "min": {"datacenter": "eu", "userid": 100}, "max": {"datacenter": "eu", "userid": "$maxKey"}},
          {"zone": "charlie", "min": {"datacenter": "us", "userid": "$minKey"}, "max": {"datacenter": "us", "userid": "$maxKey"}}]
    c = open_events(tmp_path, ("alfa", "bravo", "charlie"), ranges=rs, defaultZone="charlie",
                    writer={"setZoneField": "never"})
    docs = [{"datacenter": "eu", "userid": 99}, {"datacenter": "eu", "userid": 100},      # max exclusive, min inclusive
            {"datacenter": "eu", "userid": -1e9}, {"datacenter": "eu", "userid": "zz"},   # strings sort above numbers
            {"datacenter": "us", "userid": None}, {"datacenter": "ap", "userid": 1},       # no range -> default zone
            {"datacenter": "eu", "userid": 99.5}, {"datacenter": "eu", "userid": ejson.MAXKEY}]
    r = c.merge_many(docs, INSERT)
    assert r.errors == [] and r.inserted == 8
    got = {z: sorted(ejson.dumps(d["userid"]) for d in zone_docs(tmp_path, z)) for z in ("alfa", "bravo", "charlie")}
    assert got["alfa"] == sorted(["99", "-1000000000.0", "99.5"])
    assert got["bravo"] == sorted(["100", '"zz"'])
    # MaxKey is the exclusive upper bound of bravo's range: no range holds it -> default zone
    assert got["charlie"] == sorted(["null", "1", '{"$maxKey":1}'])


def test_zone_field_policy_and_missing_shard_key_fields(tmp_path):
    c = open_events(tmp_path)
    r = c.merge_many([{"message_id": 1, "userid": 1},                       # stamped with the home zone
                      {"message_id": 2, "userid": 2, "datacenter": "bravo"},
                      {"message_id": 3, "datacenter": "bravo"},            # userid missing
                      {"message_id": 4, "userid": [1, 2]}], INSERT)
    assert r.inserted == 2
    assert [i for i, _ in r.errors] == [2, 3]
    assert "'userid' is missing" in r.errors[0][1] and "array" in r.errors[1][1]
    assert [d["datacenter"] for d in zone_docs(tmp_path, "alfa")] == ["alfa"]
    assert [d["message_id"] for d in zone_docs(tmp_path, "bravo")] == [2]


def test_set_zone_field_never_and_always(tmp_path):
    c = open_events(tmp_path / "a", writer={"setZoneField": "never"})
    r = c.merge_many([{"userid": 1}], INSERT)
    assert r.errors and "'datacenter' is missing" in r.errors[0][1]
    c2 = open_events(tmp_path / "b", writer={"setZoneField": "always"})
    assert c2.merge_many([{"userid": 1, "datacenter": "bravo"}], INSERT).inserted == 1
    assert [d["datacenter"] for d in zone_docs(tmp_path / "b", "alfa")] == ["alfa"]


def test_backend_per_document_errors_keep_their_index(tmp_path):
    c = open_events(tmp_path)
    c.merge_many([{"_id": 1, "userid": 1}, {"_id": 2, "userid": 2, "datacenter": "bravo"}], INSERT)
    r = c.merge_many([{"_id": 9, "userid": 9}, {"_id": 2, "userid": 2, "datacenter": "bravo"}, {"_id": 1, "userid": 1}],
                     MergeSpec(when_matched="fail"))
    assert r.inserted == 1 and [i for i, _ in r.errors] == [1, 2]
    assert all("whenMatched: fail" in e for _, e in r.errors)


def test_failover_on_timeout_then_home_again(tmp_path, caplog):
    caplog.set_level(logging.INFO, logger="headrace.zones")
    c = open_events(tmp_path)
    c.merge_many([{"message_id": 0, "userid": 0}, {"message_id": -1, "userid": 0, "datacenter": "bravo"}], INSERT)
    lock = ZoneLock(tmp_path / "alfa")
    t0 = time.monotonic()
    r = c.merge_many([{"message_id": i, "userid": i} for i in range(1, 6)], INSERT)
    assert time.monotonic() - t0 < 2
    assert r.errors == [] and r.inserted == 5
    st = c.stats()["zones"]
    assert st["alfa"]["up"] is False and st["alfa"]["timeouts"] == 1 and st["alfa"]["failoversOut"] == 5
    assert st["bravo"]["failoversIn"] == 5 and "no acknowledgement within 300 ms" in st["alfa"]["lastError"]
    assert [d["datacenter"] for d in zone_docs(tmp_path, "bravo")][1:] == ["bravo"] * 5
    assert any("zone 'alfa' is down" in m for m in caplog.messages)
    assert any("failing over 5 document(s) from zone 'alfa' to zone 'bravo'" in m for m in caplog.messages)
    # while alfa is down (probe not due), writes go straight to bravo
    assert c.merge_many([{"message_id": 6, "userid": 6}], INSERT).inserted == 1
    assert zone_docs(tmp_path, "bravo")[-1]["message_id"] == 6
    # the timed-out write was not cancelled: once the lock goes, it commits -> duplicates in alfa
    lock.release()
    deadline = time.monotonic() + 5
    while len(zone_docs(tmp_path, "alfa")) < 6 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert [d["message_id"] for d in zone_docs(tmp_path, "alfa")] == [0, 1, 2, 3, 4, 5]
    # reads resolve the duplicates: first inserted (alfa's attempt) or last (bravo's)
    first = {d["message_id"]: d["datacenter"] for d in c.find(keep="first")}
    last = {d["message_id"]: d["datacenter"] for d in c.find(keep="last")}
    assert sorted(first) == list(range(-1, 7))
    assert [first[i] for i in range(1, 6)] == ["alfa"] * 5 and [last[i] for i in range(1, 6)] == ["bravo"] * 5
    assert len(list(c.find(dedupe=False))) == 13
    # after the probe interval, writes return home
    time.sleep(0.25)
    assert c.merge_many([{"message_id": 7, "userid": 7}], INSERT).inserted == 1
    assert zone_docs(tmp_path, "alfa")[-1]["message_id"] == 7
    assert c.stats()["zones"]["alfa"]["up"] is True
    assert any("zone 'alfa' answers again" in m and "writes return home" in m for m in caplog.messages)
    # trim deletes duplicates down to the one reads keep
    rep = c.trim(keep="first")
    assert rep["duplicateGroups"] == 5 and rep["deleted"] == 5 and rep["deletedByZone"] == {"alfa": 0, "bravo": 5}
    assert len(list(c.find(dedupe=False))) == 9 and c.trim()["deleted"] == 0


def test_failover_on_error(tmp_path):
    c = open_events(tmp_path, ("alfa", "bravo", "charlie"))
    (tmp_path / "alfa").mkdir(parents=True, exist_ok=True)
    (tmp_path / "alfa" / "app.sqlite").mkdir()        # alfa's database cannot be opened: an error, not a timeout
    r = c.merge_many([{"message_id": 1, "userid": 1}, {"message_id": 2, "userid": 2, "datacenter": "charlie"}], INSERT)
    assert r.errors == [] and r.inserted == 2
    st = c.stats()
    assert st["zones"]["alfa"]["up"] is False and st["zones"]["alfa"]["errors"] == 1
    assert "OperationalError" in st["zones"]["alfa"]["lastError"] and st["failovers"] == 1
    assert [d["datacenter"] for d in zone_docs(tmp_path, "bravo")] == ["bravo"]      # the next zone after alfa
    assert [d["message_id"] for d in zone_docs(tmp_path, "charlie")] == [2]


def test_next_zone_skips_down_zones_cyclically(tmp_path):
    c = open_events(tmp_path, ("alfa", "bravo", "charlie"), writer={"homeZone": "bravo", "probeIntervalMs": 60000})
    c.merge_many([{"userid": 0, "datacenter": z} for z in ("alfa", "bravo", "charlie")], INSERT)
    locks = [ZoneLock(tmp_path / "bravo"), ZoneLock(tmp_path / "charlie")]
    r = c.merge_many([{"message_id": 1, "userid": 1}], INSERT)      # bravo -> charlie -> alfa
    assert r.errors == []
    assert zone_docs(tmp_path, "alfa")[-1]["datacenter"] == "alfa"
    assert c.stats()["zones"]["charlie"]["failoversOut"] == 1
    for lk in locks:
        lk.release()


def test_all_zones_down_dlq_policy_keeps_every_document(tmp_path, caplog):
    c = open_events(tmp_path)
    c.merge_many([{"userid": 0, "datacenter": z} for z in ("alfa", "bravo")], INSERT)
    locks = [ZoneLock(tmp_path / "alfa"), ZoneLock(tmp_path / "bravo")]
    docs = [{"message_id": i, "userid": i} for i in range(4)]
    r = c.merge_many(docs, INSERT)
    assert r.inserted == 0 and [i for i, _ in r.errors] == [0, 1, 2, 3]
    assert all("all zones of connection 'events' are down" in e and "dead letter queue" in e for _, e in r.errors)
    assert c.stats()["docsKept"] == 4
    assert any("every zone is down; 4 document(s) not written" in m for m in caplog.messages)
    assert docs[0] == {"message_id": 0, "userid": 0}      # the caller's documents are not modified
    for lk in locks:
        lk.release()


def test_all_zones_down_fail_policy_raises(tmp_path):
    c = open_events(tmp_path, writer={"onAllZonesDown": "fail"})
    c.merge_many([{"userid": 0, "datacenter": z} for z in ("alfa", "bravo")], INSERT)
    locks = [ZoneLock(tmp_path / "alfa"), ZoneLock(tmp_path / "bravo")]
    with pytest.raises(ZonesDownError) as e:
        c.merge_many([{"message_id": 1, "userid": 1}], INSERT)
    assert e.value.code == "ZONES_ALL_DOWN" and "1 document(s)" in str(e.value)
    for lk in locks:
        lk.release()


def test_router_state_is_shared_across_opens(tmp_path):
    reg = registry_with(tmp_path, {"events": zoned_options(tmp_path)})
    a = open_collection(reg, "events", "app", "one")
    b = open_collection(reg, "events", "app", "two")
    assert a.router is b.router
    a.router.mark_down("alfa", "test")
    assert b.stats()["zones"]["alfa"]["up"] is False
