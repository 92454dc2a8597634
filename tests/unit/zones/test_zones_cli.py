"""``headrace zones`` commands on SQLite zones."""
from __future__ import annotations

import json

import pytest

from headrace import ejson
from headrace.cli import main
from headrace.store.sqlite import SQLiteStore

from zones_helpers import registry_with, zoned_options


@pytest.fixture
def setup(tmp_path):
    registry_with(tmp_path, {"events": zoned_options(tmp_path), "plain": {"type": "store", "path": str(tmp_path / "p")}})
    a = SQLiteStore(tmp_path / "alfa").collection("app", "msgs")
    b = SQLiteStore(tmp_path / "bravo").collection("app", "msgs")
    a.insert_many([{"_id": ejson.ObjectId(b"\x00\x00\x00\x01" + b"\x00" * 8), "message_id": 1, "datacenter": "alfa", "userid": 1},
                   {"_id": ejson.ObjectId(b"\x00\x00\x00\x03" + b"\x00" * 8), "message_id": 2, "datacenter": "bravo", "userid": 2}])
    b.insert_many([{"_id": ejson.ObjectId(b"\x00\x00\x00\x02" + b"\x00" * 8), "message_id": 1, "datacenter": "bravo", "userid": 1}])
    return str(tmp_path / "connections.yaml")


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_find_dedupes_and_prints_relaxed_extended_json(setup, capsys):
    code, out, _ = run(capsys, "zones", "find", "--connections", setup, "events", "app.msgs")
    assert code == 0
    lines = [json.loads(x) for x in out.splitlines()]
    assert [(d["message_id"], d["datacenter"]) for d in lines] == [(1, "alfa"), (2, "bravo")]
    assert lines[0]["_id"] == {"$oid": "00000001" + "0" * 16}
    code, out, _ = run(capsys, "zones", "find", "--connections", setup, "events", "app.msgs", "--keep", "last")
    assert [(json.loads(x)["message_id"], json.loads(x)["datacenter"]) for x in out.splitlines()] == [(2, "bravo"), (1, "bravo")]
    code, out, _ = run(capsys, "zones", "find", "--connections", setup, "events", "app.msgs", "--no-dedupe")
    assert len(out.splitlines()) == 3


def test_find_with_filter(setup, capsys):
    pytest.importorskip("headrace.mql.match")
    code, out, _ = run(capsys, "zones", "find", "--connections", setup, "events", "app.msgs", "--filter", '{"userid": {"$gte": 2}}')
    assert code == 0 and [json.loads(x)["message_id"] for x in out.splitlines()] == [2]
    code, _, err = run(capsys, "zones", "find", "--connections", setup, "events", "app.msgs", "--filter", "{nope")
    assert code == 2 and "error [FILTER_INVALID]" in err


def test_status_shows_zones_counts_and_violations(setup, capsys):
    code, out, _ = run(capsys, "zones", "status", "--connections", setup, "events", "app.msgs")
    assert code == 0
    assert "alfa   up     2          1" in out and "bravo  up     1          0" in out
    assert "range violations: 1" in out and "1 document(s) in alfa belong in bravo" in out
    assert "duplicates by message_id: 1" in out
    code, out, _ = run(capsys, "zones", "status", "--connections", setup, "events", "app.msgs", "--json")
    rep = json.loads(out)
    assert rep["zones"]["alfa"]["violations"] == 1 and rep["duplicates"] == 1
    code, out, _ = run(capsys, "zones", "status", "--connections", setup, "events")
    assert code == 0 and "alfa" in out and "up" in out


def test_trim_then_balance(setup, capsys):
    code, out, _ = run(capsys, "zones", "trim", "--connections", setup, "events", "app.msgs", "--dry-run")
    assert json.loads(out)["deleted"] == 1
    code, out, _ = run(capsys, "zones", "trim", "--connections", setup, "events", "app.msgs")
    assert code == 0 and json.loads(out)["deletedByZone"] == {"alfa": 0, "bravo": 1}
    code, out, err = run(capsys, "zones", "balance", "--connections", setup, "events", "app.msgs", "--now", "--rate", "100")
    rep = json.loads(out)
    assert code == 0 and rep["moved"] == 1 and "balance app.msgs: done; moved 1/1" in err
    code, out, _ = run(capsys, "zones", "status", "--connections", setup, "events", "app.msgs", "--json")
    assert json.loads(out)["violations"] == 0


def test_user_errors_exit_2_with_codes(setup, capsys):
    code, _, err = run(capsys, "zones", "find", "--connections", setup, "plain", "app.msgs")
    assert code == 2 and "error [CONNECTION_TYPE]" in err
    code, _, err = run(capsys, "zones", "find", "--connections", setup, "events", "msgs")
    assert code == 2 and "error [NAMESPACE_INVALID]" in err
    code, _, err = run(capsys, "zones", "find", "--connections", setup, "nope", "a.b")
    assert code == 2 and "error [CONNECTION_UNKNOWN]" in err
    code, _, err = run(capsys, "zones", "balance", "--connections", setup, "events", "a.b", "--window", "1-2")
    assert code == 2 and "error [ZONES_BALANCER]" in err
