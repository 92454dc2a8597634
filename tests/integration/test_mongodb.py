"""MongoDB connector against a real server of MongoDB's wire protocol (``secantusdb``, test-only,
started on a free loopback port with its files in a temp dir by the ``mongo_server`` fixture):
the change stream reader on its own (resume tokens as positions), the ``$merge`` sink, and a
windowed processor from a change stream into a MongoDB collection with bad documents to the
DLQ, across a kill -9 of the CLI running it and across a kill -9 and restart of the server."""
from __future__ import annotations

import json
import uuid

import pytest
import yaml
from _connector_helpers import BASE, WINDOW_MS, check_merge_delete, plain

from headrace.connections import load_registry

pytestmark = pytest.mark.integration


def _db():
    return "d" + uuid.uuid4().hex[:8]


def _client(srv):
    from pymongo import MongoClient

    return MongoClient(srv.uri, serverSelectionTimeoutMS=5000)


def _registry(tmp_path, uri: str, **extra):
    f = tmp_path / "connections.yaml"
    f.write_text(yaml.safe_dump({"connections": {"mongo": {"type": "mongodb", "uri": uri, **extra}}}))
    return f, load_registry(f, home=tmp_path / "home")


def test_change_stream_reader_positions_are_resume_tokens(mongo_server):
    from headrace.spark.sources.mongodb import MongoReader

    db = _db()
    c = _client(mongo_server)
    r = MongoReader({"connection": "mongo", "connectionSecret": json.dumps({"uri": mongo_server.uri}),
                     "db": db, "coll": "in", "maxRecordsPerBatch": "3"})
    start = r.initialOffset()
    c[db]["in"].insert_many([{"i": i} for i in range(5)])
    end = r.latestOffset(start, r.getDefaultReadLimit())
    rows = [row for p in r.partitions(start, end) for row in r.read(p)]
    assert [json.loads(x[3])["fullDocument"]["i"] for x in rows] == [0, 1, 2]
    same = lambda rs: [(x[0], x[1], x[2], x[3], x[8]) for x in rs]  # noqa: E731 - VARIANT values compare by identity
    assert same(row for p in r.partitions(start, end) for row in r.read(p)) == same(rows)   # a replay reads the same
    end2 = r.latestOffset(end, r.getDefaultReadLimit())
    rows2 = [row for p in r.partitions(end, end2) for row in r.read(p)]
    assert [json.loads(x[3])["fullDocument"]["i"] for x in rows2] == [3, 4]
    assert r.latestOffset(end2, r.getDefaultReadLimit())["token"] == end2["token"]
    r.stop()
    c.close()


def test_merge_sink_is_idempotent_and_refuses_per_document(mongo_server, tmp_path):
    from headrace.collections import open_collection
    from headrace.store.base import MergeSpec

    db = _db()
    f, reg = _registry(tmp_path, mongo_server.uri)
    coll = open_collection(reg, "mongo", db, "out")
    docs = [{"_id": i, "v": i} for i in range(4)]
    assert not coll.merge_many(docs, MergeSpec(when_matched="replace")).errors
    assert not coll.merge_many(docs, MergeSpec(when_matched="replace")).errors        # replayed: same content
    assert sorted(d["_id"] for d in coll.find()) == [0, 1, 2, 3]
    res = coll.merge_many([{"_id": 1, "v": 9}, {"_id": 7, "v": 7}], MergeSpec(when_matched="fail"))
    assert [i for i, _ in res.errors] == [0] and "refused" in res.errors[0][1]
    assert coll.count() == 5
    # whenNotMatched: fail: documents that match nothing are refused, the others merged
    res = coll.merge_many([{"_id": 2, "w": 1}, {"_id": 8, "v": 8}, {"_id": 3.0, "w": 2}],
                          MergeSpec(when_matched="merge", when_not_matched="fail"))
    assert res.errors == [(1, "whenNotMatched: fail: no document matches the 'on' fields")]
    assert coll.count() == 5 and {d["_id"]: d.get("w") for d in coll.find()}[3] == 2
    res = coll.merge_many([{"_id": 5, "k": "a", "v": 1}, {"_id": 6, "k": "z"}],
                          MergeSpec(on=("k",), when_matched="replace", when_not_matched="fail"))
    assert [i for i, _ in res.errors] == [0, 1]


def _windowed(db: str, op_time, max_records: int) -> dict:
    """Windowed sums per key from the change stream of ``db.in`` into ``db.out``, DLQ ``db.dlq``."""
    return {"pipeline": [
        {"$source": {"connectionName": "mongo", "db": db, "coll": "in",
                     "config": {"startAtOperationTime": {"$timestamp": {"t": op_time.time, "i": op_time.inc}},
                                "maxRecordsPerBatch": max_records},
                     "timeField": {"$toDate": "$fullDocument.t"}}},
        {"$replaceWith": "$fullDocument"},
        {"$tumblingWindow": {"interval": {"size": WINDOW_MS // 1000, "unit": "second"},
                             "pipeline": [{"$group": {"_id": "$k", "sum": {"$sum": "$v"}, "n": {"$sum": 1}}}]}},
        {"$addFields": {"_id": {"$concat": ["$_id", "@", {"$toString": {"$toLong": {"$meta": "stream.window.start"}}}]}}},
        {"$project": {"sum": 1, "n": 1}},
        {"$merge": {"into": {"connectionName": "mongo", "db": db, "coll": "out"}}}],
        "options": {"dlq": {"connectionName": "mongo", "db": db, "coll": "dlq"}}}


def _inputs(n: int = 24) -> list[dict]:
    """``n`` documents 1.5 s apart over three keys, then one an hour later that closes the windows."""
    from headrace import ejson

    docs = [{"t": ejson.format_date(ejson.millis_to_datetime(BASE + i * 1500)), "k": f"k{i % 3}", "v": i}
            for i in range(n)]
    return docs + [{"t": ejson.format_date(ejson.millis_to_datetime(BASE + 3_600_000)), "k": "end", "v": 0}]


def _start(srv, first: int):
    """A new database, a client, the operation time before any input, the input, and its first
    ``first`` documents and a bad one (not a date) inserted."""
    db = _db()
    c = _client(srv)
    op_time = c[db].command("ping")["operationTime"]
    docs = _inputs()
    c[db]["in"].insert_many(docs[:first])
    c[db]["in"].insert_one({"t": "not a date", "k": "bad", "v": -1})
    return db, c, op_time, docs


def _want(docs: list[dict]) -> list[dict]:
    want: dict[str, list[int]] = {}
    for d in docs[:-1]:
        ms = BASE + int(d["v"]) * 1500
        key = f"{d['k']}@{ms - ms % WINDOW_MS}"
        want.setdefault(key, [0, 0])
        want[key][0] += d["v"]
        want[key][1] += 1
    return sorted(({"_id": k, "sum": v[0], "n": v[1]} for k, v in want.items()), key=lambda x: x["_id"])


def test_merge_delete(mongo_server, tmp_path):
    from headrace.collections import open_collection

    f, reg = _registry(tmp_path, mongo_server.uri)
    check_merge_delete(open_collection(reg, "mongo", _db(), "del"))


def test_windowed_processor_from_a_change_stream_across_a_kill_9_of_the_cli(spark, mongo_server, tmp_path):
    """The same windowed processor run by the CLI, killed with SIGKILL after its third
    micro-batch and restarted from its checkpoint (the change stream resumes from the token in
    it): exact windows, one DLQ entry."""
    from _connector_helpers import kill_cli_after_batch

    from headrace import ejson
    from headrace.spark.engine import Processor, RunOptions
    from headrace.spec import parse_pipeline
    from headrace.validate import check_connections

    db, c, op_time, docs = _start(mongo_server, 12)
    c[db]["in"].insert_many(docs[12:])
    f, reg = _registry(tmp_path, mongo_server.uri)
    pipe = _windowed(db, op_time, 4)
    pf, ck, _err = kill_cli_after_batch(pipe, tmp_path, f)
    assert c[db]["out"].count_documents({}) < len(_want(docs))      # killed before the end
    parsed = parse_pipeline(pipe)
    check_connections(parsed, reg)
    Processor(parsed, RunOptions(name=pf.stem, checkpoint=ck, registry=reg, trigger_ms=0)).run(
        max_input=len(docs) + 1, duration_s=240)
    assert plain(ejson.loads(ejson.dumps(x)) for x in c[db]["out"].find()) == _want(docs)
    dlq = list(c[db]["dlq"].find())
    assert len(dlq) == 1 and "not a date" in json.dumps(dlq[0]["doc"], default=str)
    c.close()


def test_windowed_processor_from_change_stream_into_mongodb_with_dlq_across_a_server_restart(
        spark, mongo_server, tmp_path):
    """A windowed processor from a change stream into a collection of the same server, bad
    documents to a DLQ collection; the server is killed (SIGKILL) after the first micro-batch and
    started again on its files: exact windows, one DLQ entry."""
    import threading

    from headrace import ejson
    from headrace.spark.engine import Processor, RunOptions
    from headrace.spec import parse_pipeline
    from headrace.validate import check_connections

    db, c, op_time, docs = _start(mongo_server, 10)
    f, reg = _registry(tmp_path, mongo_server.uri, retry={"attempts": 8, "backoffMs": 200, "timeoutMs": 2000})
    pipe = _windowed(db, op_time, 10)
    parsed = parse_pipeline(pipe)
    check_connections(parsed, reg)
    first = threading.Event()
    proc = Processor(parsed, RunOptions(name="m", checkpoint=tmp_path / "ck", registry=reg, trigger_ms=0,
                                        on_batch=lambda *_: first.set()))
    result: dict = {}

    def run() -> None:
        try:
            proc.run(max_input=len(docs) + 1, duration_s=240)
        except BaseException as exc:  # noqa: BLE001 - reported below
            result["error"] = exc

    t = threading.Thread(target=run)
    t.start()
    # after the first micro-batch the server is killed and started again on its files; the rest
    # of the input is written after the restart: the change stream resumes from its token
    assert first.wait(120), "no micro-batch ran"
    c.close()
    mongo_server.stop(kill=True)
    mongo_server.start()
    c = _client(mongo_server)
    c[db]["in"].insert_many(docs[10:])
    t.join(300)
    assert not t.is_alive() and "error" not in result, result.get("error")
    got = plain(ejson.loads(ejson.dumps(x)) for x in c[db]["out"].find())
    assert got == _want(docs)
    dlq = list(c[db]["dlq"].find())
    assert len(dlq) == 1 and "not a date" in json.dumps(dlq[0]["doc"], default=str)
    c.close()


def test_unreachable_server_retries_then_fails_naming_the_connection(spark, tmp_path):
    import socket

    from headrace.spark.engine import Processor, RunOptions
    from headrace.spec import parse_pipeline

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    f, reg = _registry(tmp_path, f"mongodb://app:hunter2-mongo@127.0.0.1:{port}/?directConnection=true",
                       retry={"attempts": 2, "backoffMs": 50, "timeoutMs": 500})
    assert "hunter2-mongo" not in str(reg.list())
    pipe = parse_pipeline([{"$source": {"connectionName": "mongo", "db": "d", "coll": "c"}},
                           {"$merge": {"into": {"connectionName": "store", "db": "r", "coll": "x"}}}])
    with pytest.raises(Exception) as e:
        Processor(pipe, RunOptions(name="m", checkpoint=tmp_path / "ck", registry=reg)).run(duration_s=60)
    msg = str(e.value)
    assert "connection 'mongo'" in msg and "2 attempt(s)" in msg, msg[-2000:]
    assert "hunter2-mongo" not in msg
