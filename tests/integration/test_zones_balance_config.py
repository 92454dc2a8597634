"""Balancer, configuration errors and the ``headrace zones`` CLI on real PostgreSQL servers."""
from __future__ import annotations

import json
import time

import psycopg
import pytest

from headrace import ejson
from headrace.cli import main
from headrace.errors import ConfigError
from headrace.store.base import MergeSpec

from headrace_test_servers import free_port

pytestmark = pytest.mark.integration


def count(server, schema, coll="msgs"):
    with psycopg.connect(server.dsn) as c:
        return c.execute(f'SELECT count(*) FROM "{schema}"."{coll}"').fetchone()[0]


def test_balancer_moves_documents_after_a_range_change_while_reads_stay_correct(pg3, zoned, schema):
    c = zoned(pg3, reads={"dedupeField": None})
    docs = [{"message_id": i, "userid": i % 100, "datacenter": ["alfa", "bravo", "charlie"][i % 3]} for i in range(300)]
    assert c.merge_many(docs, MergeSpec()).errors == []
    ids = sorted(ejson.dumps(d["_id"]) for d in c.find())
    # charlie's users below 50 now belong in alfa, bravo's from 50 up in charlie
    c.router.set_ranges([
        {"zone": "alfa", "min": {"datacenter": "alfa", "userid": "$minKey"}, "max": {"datacenter": "alfa", "userid": "$maxKey"}},
        {"zone": "bravo", "min": {"datacenter": "bravo", "userid": "$minKey"}, "max": {"datacenter": "bravo", "userid": 50}},
        {"zone": "charlie", "min": {"datacenter": "bravo", "userid": 50}, "max": {"datacenter": "bravo", "userid": "$maxKey"}},
        {"zone": "alfa", "min": {"datacenter": "charlie", "userid": "$minKey"}, "max": {"datacenter": "charlie", "userid": 50}},
        {"zone": "charlie", "min": {"datacenter": "charlie", "userid": 50}, "max": {"datacenter": "charlie", "userid": "$maxKey"}},
    ])
    st = c.status()
    assert st["violations"] == 100
    assert st["zones"]["bravo"]["violationsByTarget"] == {"charlie": 50}
    assert st["zones"]["charlie"]["violationsByTarget"] == {"alfa": 50}
    b = c.balancer(docs_per_second=200, batch_size=10).start()
    reads = 0
    while b.running or reads == 0:
        got = sorted(ejson.dumps(d["_id"]) for d in c.find())
        assert got == ids                          # every document exactly once, during the moves
        reads += 1
    rep = b.join()
    assert rep["state"] == "done" and rep["moved"] == 100 and reads >= 2
    assert [count(s, schema) for s in pg3] == [150, 50, 100]
    assert c.status()["violations"] == 0


def test_unreachable_zone_server_at_start_is_a_config_error(pg2, zoned, schema, tmp_path):
    dead = f"postgresql://app:topsecret@127.0.0.1:{free_port()}/postgres"
    with pytest.raises(ConfigError) as e:
        zoned(pg2, zones={"alfa": {"postgres": pg2[0].dsn}, "bravo": {"postgres": dead}})
    msg = str(e.value)
    assert e.value.code == "ZONES_UNREACHABLE"
    assert "connection 'events'" in msg and "zones.bravo.postgres" in msg and "zones.alfa" not in msg
    assert "topsecret" not in msg and "***" in msg
    # the same through a named postgres connection
    with pytest.raises(ConfigError) as e:
        zoned(pg2, zones={"alfa": {"connection": "pg_alfa"}, "bravo": {"connection": "pg_bravo"}},
              extra_connections={"pg_alfa": {"type": "postgres", "dsn": pg2[0].dsn},
                                 "pg_bravo": {"type": "postgres", "dsn": dead}})
    assert e.value.code == "ZONES_UNREACHABLE" and "zones.bravo.connection" in str(e.value)
    # checkZonesAtStart: false opens anyway; the zone is found down at the first write
    c = zoned(pg2, zones={"alfa": {"postgres": dead}, "bravo": {"postgres": pg2[1].dsn}}, checkZonesAtStart=False)
    r = c.merge_many([{"message_id": 1, "userid": 1}], MergeSpec())
    assert r.errors == [] and c.stats()["zones"]["alfa"]["up"] is False
    assert count(pg2[1], schema) == 1


def test_cli_status_find_trim_balance_against_servers(pg2, zoned, schema, capsys):
    c = zoned(pg2)
    c.merge_many([{"message_id": i, "userid": i, **({"datacenter": "bravo"} if i % 2 else {})} for i in range(6)],
                 MergeSpec())
    f = str(zoned.file)
    assert main(["zones", "status", "--connections", f, "events", f"{schema}.msgs"]) == 0
    out = capsys.readouterr().out
    assert "alfa   up     3          0" in out and "bravo  up     3          0" in out
    pg2[1].stop("fast")
    assert main(["zones", "status", "--connections", f, "events", f"{schema}.msgs", "--json"]) == 0
    st = json.loads(capsys.readouterr().out)
    assert st["zones"]["bravo"]["up"] is False and st["zones"]["alfa"]["count"] == 3 and st["zones"]["bravo"]["count"] is None
    assert main(["zones", "find", "--connections", f, "events", f"{schema}.msgs"]) == 1
    assert "error [ZONES_READ_UNAVAILABLE]" in capsys.readouterr().err
    assert main(["zones", "find", "--connections", f, "events", f"{schema}.msgs", "--allow-partial"]) == 0
    assert sorted(json.loads(x)["message_id"] for x in capsys.readouterr().out.splitlines()) == [0, 2, 4]
    pg2[1].start()
    pg2[1].pause()                                  # a hung zone: find and status answer anyway
    try:
        t0 = time.monotonic()
        assert main(["zones", "find", "--connections", f, "events", f"{schema}.msgs"]) == 1
        assert "do not answer" in capsys.readouterr().err
        assert main(["zones", "status", "--connections", f, "events", f"{schema}.msgs", "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["zones"]["bravo"]["up"] is False
        assert time.monotonic() - t0 < 10
    finally:
        pg2[1].resume()
    assert main(["zones", "find", "--connections", f, "events", f"{schema}.msgs", "--filter", '{"userid": {"$lt": 2}}']) == 0
    assert [json.loads(x)["message_id"] for x in capsys.readouterr().out.splitlines()] == [0, 1]
    assert main(["zones", "trim", "--connections", f, "events", f"{schema}.msgs"]) == 0
    assert json.loads(capsys.readouterr().out)["deleted"] == 0
    assert main(["zones", "balance", "--connections", f, "events", f"{schema}.msgs", "--now"]) == 0
    assert json.loads(capsys.readouterr().out)["moved"] == 0
    # the ranges change in the connections file: status shows the violations, balance moves them
    zoned(pg2, ranges=[
        {"zone": "alfa", "min": {"datacenter": "alfa", "userid": "$minKey"}, "max": {"datacenter": "alfa", "userid": "$maxKey"}},
        {"zone": "alfa", "min": {"datacenter": "bravo", "userid": "$minKey"}, "max": {"datacenter": "bravo", "userid": 3}},
        {"zone": "bravo", "min": {"datacenter": "bravo", "userid": 3}, "max": {"datacenter": "bravo", "userid": "$maxKey"}}])
    assert main(["zones", "status", "--connections", f, "events", f"{schema}.msgs"]) == 0
    out = capsys.readouterr().out
    assert "range violations: 1" in out and "1 document(s) in bravo belong in alfa" in out
    assert main(["zones", "balance", "--connections", f, "events", f"{schema}.msgs", "--now", "--rate", "1000"]) == 0
    assert json.loads(capsys.readouterr().out)["moved"] == 1
    assert [count(s, schema) for s in pg2] == [4, 2]
