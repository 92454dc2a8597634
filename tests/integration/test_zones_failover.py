"""Zoned writes on two and three real PostgreSQL servers: routing, failover on a stopped,
crashed or hung server, timed-out writes that still commit, all zones down."""
from __future__ import annotations

import logging
import threading
import time

import psycopg
import pytest

from headrace.store.base import MergeSpec
from headrace.zones import ZonesDownError

pytestmark = pytest.mark.integration
INSERT = MergeSpec()


def rows(server, schema, coll="msgs"):
    """Documents stored on one server, straight from SQL."""
    with psycopg.connect(server.dsn) as c:
        try:
            return [r[0] for r in c.execute(f'SELECT doc FROM "{schema}"."{coll}" ORDER BY seq').fetchall()]
        except psycopg.errors.UndefinedTable:
            return []


def plain(v):
    """A canonical Extended JSON number from JSONB as a Python int."""
    return int(v["$numberInt"]) if isinstance(v, dict) else v


def wait_for(pred, timeout=10.0, step=0.05):
    deadline = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > deadline:
            return False
        time.sleep(step)
    return True


def test_routing_by_range_on_three_servers(pg3, zoned, schema):
    c = zoned(pg3, writer={"setZoneField": "never"}, defaultZone="charlie")
    docs = [{"message_id": i, "userid": i, "datacenter": ["alfa", "bravo", "charlie", "delta"][i % 4]} for i in range(40)]
    r = c.merge_many(docs, INSERT)
    assert r.errors == [] and r.inserted == 40
    by_server = [[(d["datacenter"], plain(d["userid"])) for d in rows(s, schema)] for s in pg3]
    assert {dc for dc, _ in by_server[0]} == {"alfa"} and len(by_server[0]) == 10
    assert {dc for dc, _ in by_server[1]} == {"bravo"} and len(by_server[1]) == 10
    assert {dc for dc, _ in by_server[2]} == {"charlie", "delta"} and len(by_server[2]) == 20   # delta: default zone
    assert sorted(d["message_id"] for d in c.find()) == list(range(40))
    st = c.stats()["zones"]
    assert [st[z]["writes"] for z in ("alfa", "bravo", "charlie")] == [10, 10, 20] and c.stats()["failovers"] == 0


def test_server_stopped_mid_stream_every_document_lands_and_writes_return_home(pg3, zoned, schema, caplog):
    caplog.set_level(logging.INFO, logger="headrace.zones")
    alfa = pg3[0]
    c = zoned(pg3)
    sent: list[int] = []
    errors: list = []

    def write_batch(k: int) -> None:
        docs = [{"message_id": k * 40 + i, "userid": i, **({"datacenter": "charlie"} if i % 8 == 0 else {})}
                for i in range(40)]
        r = c.merge_many(docs, INSERT)            # what the processor's write loop does, batch by batch
        errors.extend(r.errors)
        sent.extend(d["message_id"] for d in docs)

    k = 0
    for _ in range(5):
        write_batch(k)
        k += 1
    stopper = threading.Thread(target=alfa.stop, args=("immediate",))
    stopper.start()                                # crash alfa while batches keep coming
    while stopper.is_alive() or c.stats()["zones"]["alfa"]["up"]:
        write_batch(k)
        k += 1
        time.sleep(0.01)
        assert k < 500
    stopper.join()
    for _ in range(5):                             # alfa is down: these go to bravo
        write_batch(k)
        k += 1
    st = c.stats()
    assert st["zones"]["alfa"]["up"] is False and st["zones"]["alfa"]["failoversOut"] > 0
    assert st["zones"]["bravo"]["failoversIn"] == st["zones"]["alfa"]["failoversOut"]
    alfa.start()
    home_before = len(rows(alfa, schema))
    assert wait_for(lambda: (write_batch(k + len(sent)), len(rows(alfa, schema)) > home_before)[1], timeout=15)
    write_batch(10_000)
    assert errors == []
    got = [d["message_id"] for d in c.find()]
    assert sorted(got) == sorted(sent) and len(got) == len(set(got))
    # failed-over documents carry the rewritten zone field; documents for charlie never moved
    in_bravo = rows(pg3[1], schema)
    assert in_bravo and all(d["datacenter"] == "bravo" for d in in_bravo)
    assert all(d["datacenter"] == "charlie" for d in rows(pg3[2], schema))
    last = {plain(d["message_id"]) for d in rows(alfa, schema)}
    assert {10_000 * 40 + i for i in range(40) if i % 8} <= last      # the last batch went home
    st = c.stats()["zones"]
    assert st["alfa"]["up"] is True and st["alfa"]["lastError"]
    logs = "\n".join(caplog.messages)
    assert "zone 'alfa' is down" in logs and "failing over" in logs and "from zone 'alfa' to zone 'bravo'" in logs
    assert "zone 'alfa' answers again" in logs and "writes return home" in logs


def test_write_that_times_out_but_commits_makes_a_duplicate_reads_resolve(pg2, zoned, schema):
    c = zoned(pg2, writer={"writeTimeoutMs": 500, "probeIntervalMs": 60_000})
    c.merge_many([{"message_id": 0, "userid": 0}, {"message_id": -1, "userid": 0, "datacenter": "bravo"}], INSERT)
    with psycopg.connect(pg2[0].dsn, autocommit=True) as a:     # alfa acknowledges late, but commits
        a.execute(f'CREATE FUNCTION "{schema}".nap() RETURNS trigger LANGUAGE plpgsql AS '
                  "$$BEGIN PERFORM pg_sleep(2.5); RETURN NEW; END$$")
        a.execute(f'CREATE TRIGGER nap AFTER INSERT ON "{schema}".msgs FOR EACH ROW WHEN (NEW.doc ? \'slow\') '
                  f'EXECUTE FUNCTION "{schema}".nap()')
    t0 = time.monotonic()
    r = c.merge_many([{"message_id": i, "userid": i, **({"slow": True} if i == 1 else {})} for i in range(1, 6)], INSERT)
    assert time.monotonic() - t0 < 2.2 and r.errors == [] and r.inserted == 5   # did not wait for the commit
    st = c.stats()["zones"]["alfa"]
    assert st["up"] is False and st["timeouts"] == 1 and "may still complete" in st["lastError"]
    assert wait_for(lambda: len(rows(pg2[0], schema)) == 6, timeout=10)        # the late commit landed
    assert len(rows(pg2[1], schema)) == 6
    first = {d["message_id"]: d for d in c.find(keep="first")}
    last = {d["message_id"]: d for d in c.find(keep="last")}
    assert sorted(first) == list(range(-1, 6))
    assert all(first[i]["datacenter"] == "alfa" and last[i]["datacenter"] == "bravo" for i in range(1, 6))
    assert all(first[i]["_id"].generation_time <= last[i]["_id"].generation_time for i in range(1, 6))
    assert len(list(c.find(dedupe=False))) == 12
    rep = c.trim(keep="first")
    assert rep["deleted"] == 5 and rep["deletedByZone"] == {"alfa": 0, "bravo": 5}
    assert sorted(d["message_id"] for d in c.find(dedupe=False)) == list(range(-1, 6))


def test_hung_server_times_out_fails_over_and_comes_back(pg2, zoned, schema):
    alfa = pg2[0]
    c = zoned(pg2, writer={"writeTimeoutMs": 700, "probeIntervalMs": 200})
    c.merge_many([{"message_id": 0, "userid": 0}], INSERT)
    alfa.pause()                                   # no error, no answer: only the timeout tells
    try:
        t0 = time.monotonic()
        r1 = c.merge_many([{"message_id": i, "userid": i} for i in range(1, 11)], INSERT)
        took = time.monotonic() - t0
        r2 = c.merge_many([{"message_id": i, "userid": i} for i in range(11, 21)], INSERT)
    finally:
        alfa.resume()
    assert r1.errors == [] and r2.errors == [] and took < 3
    st = c.stats()["zones"]
    assert st["alfa"]["timeouts"] >= 1 and st["bravo"]["failoversIn"] == 20
    assert [plain(d["message_id"]) for d in rows(pg2[1], schema)] == list(range(1, 21))
    assert wait_for(lambda: (c.merge_many([{"message_id": 99, "userid": 9}], INSERT),
                             any(plain(d["message_id"]) == 99 for d in rows(alfa, schema)))[1], timeout=15)
    got = [d["message_id"] for d in c.find()]
    assert sorted(set(got)) == sorted(got) and set(got) == set(range(21)) | {99}


def test_all_zones_down_keeps_every_document(pg2, zoned, schema, caplog):
    c = zoned(pg2, writer={"writeTimeoutMs": 1000, "probeIntervalMs": 200})
    c.merge_many([{"message_id": 0, "userid": 0}], INSERT)
    for s in pg2:
        s.stop("immediate")
    docs = [{"message_id": i, "userid": i} for i in range(1, 21)]
    r = c.merge_many(docs, INSERT)
    assert r.inserted == 0 and [i for i, _ in r.errors] == list(range(20))      # every document reported
    assert all("all zones of connection 'events' are down" in e for _, e in r.errors)
    st = c.stats()
    assert st["docsKept"] == 20 and not st["zones"]["alfa"]["up"] and not st["zones"]["bravo"]["up"]
    assert "every zone is down; 20 document(s) not written, reported for the dead letter queue" in caplog.text
    for s in pg2:
        s.start()
    time.sleep(0.25)
    r = c.merge_many([docs[i] for i, _ in r.errors], INSERT)      # a replay of the dead letters lands
    assert r.errors == [] and sorted(d["message_id"] for d in c.find()) == list(range(21))


def test_all_zones_down_fail_policy_fails_the_write(pg2, zoned, schema):
    c = zoned(pg2, writer={"onAllZonesDown": "fail", "writeTimeoutMs": 1000})
    c.merge_many([{"message_id": 0, "userid": 0}], INSERT)
    for s in pg2:
        s.stop("fast")
    with pytest.raises(ZonesDownError) as e:
        c.merge_many([{"message_id": 1, "userid": 1}], INSERT)
    assert e.value.code == "ZONES_ALL_DOWN" and "onAllZonesDown: fail" in str(e.value)
