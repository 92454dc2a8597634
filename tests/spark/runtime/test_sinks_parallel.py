"""Sinks written by every partition (:mod:`headrace.spark.runtime.sinks`): a stateless batch
read as two input partitions writes the JSON-lines file in the batch's order, with the same
documents a one-task write gives, and a ``$merge`` from both partitions stores every document
once, with the engine's deterministic ``_id``s."""
from __future__ import annotations

import json

from headrace import ejson
from headrace.launch import prepare, start
from headrace.store import open_store

N = 60


def _pipeline(sink: dict) -> list:
    return [{"$source": {"connectionName": "in", "config": {"maxRecordsPerBatch": 25, "parallelism": 2}}},
            {"$match": {"i": {"$ne": 7}}},
            {"$addFields": {"j": {"$multiply": ["$i", 2]}}},
            sink]


def _run(tmp_path, name: str, sink: dict, **opts) -> dict:
    inp = tmp_path / "in.jsonl"
    if not inp.exists():
        inp.write_text("".join(json.dumps({"i": i, "s": "x" * (i % 5)}) + "\n" for i in range(N)))
    run = prepare(_pipeline(sink), home=tmp_path / "home", extra_connections={"in": {"type": "file", "path": str(inp)}})
    return start(run, name=name, checkpoint=tmp_path / f"ckpt-{name}", trigger_ms=0, **opts).run(max_input=N,
                                                                                                  duration_s=600)


def test_json_lines_from_every_partition_in_batch_order(spark, tmp_path):
    out = tmp_path / "out.jsonl"
    stats = _run(tmp_path, "jl", {"$emit": {"path": str(out)}})
    lines = out.read_text().splitlines()
    docs = [ejson.loads(x) for x in lines]
    assert [d["i"] for d in docs] == [i for i in range(N) if i != 7]
    assert all(d["j"] == 2 * d["i"] for d in docs)
    assert len({str(d["_id"]) for d in docs}) == len(docs)
    assert stats["outputMessageCount"] == len(docs)

    # a second run that also collects its outputs: the printed order is the file's order
    out2 = tmp_path / "out2.jsonl"
    seen = []
    _run(tmp_path, "jl2", {"$emit": {"path": str(out2)}}, on_output=seen.extend)
    strip = lambda d: {k: v for k, v in d.items() if k not in ("_id", "_stream_meta", "_ts")}  # noqa: E731
    assert [strip(d) for d in seen] == [strip(d) for d in docs]
    assert [strip(ejson.loads(x)) for x in out2.read_text().splitlines()] == [strip(d) for d in docs]


def test_merge_from_every_partition_stores_each_document_once(spark, tmp_path):
    stats = _run(tmp_path, "m", {"$merge": {"into": {"connectionName": "store", "db": "t", "coll": "c"}}})
    stored = list(open_store(tmp_path / "home" / "store").collection("t", "c").find())
    assert sorted(d["i"] for d in stored) == [i for i in range(N) if i != 7]
    assert len({str(d["_id"]) for d in stored}) == len(stored) == stats["outputMessageCount"]


def test_merge_into_collections_computed_per_document(spark, tmp_path):
    """``into.db``/``into.coll`` as expressions: each document goes to the collection it names; a
    name that is not a string, or an expression that fails, sends that document alone to the DLQ
    (operator ``$merge``, the original document); the rest is written from both partitions."""
    inp = tmp_path / "in.jsonl"
    inp.write_text("".join(json.dumps({"i": i, "s": "x" * (i % 5)}) + "\n" for i in range(N)))
    into = {"connectionName": "store",
            "db": {"$cond": [{"$eq": ["$i", 13]}, {"$toString": {"$toInt": "$s"}}, "t"]},
            "coll": {"$cond": [{"$eq": ["$i", 11]}, 5, {"$concat": ["c", {"$toString": {"$mod": ["$i", 3]}}]}]}}
    pipe = {"pipeline": _pipeline({"$merge": {"into": into}}),
            "options": {"dlq": {"connectionName": "store", "db": "t", "coll": "dlq"}}}
    run = prepare(pipe, home=tmp_path / "home", extra_connections={"in": {"type": "file", "path": str(inp)}})
    stats = start(run, name="dyn", checkpoint=tmp_path / "ckpt-dyn", trigger_ms=0).run(max_input=N, duration_s=600)
    store = open_store(tmp_path / "home" / "store")
    for m in range(3):
        got = sorted(d["i"] for d in store.collection("t", f"c{m}").find())
        assert got == [i for i in range(N) if i % 3 == m and i not in (7, 11, 13)], m
        assert all("__hr_sink" not in d for d in store.collection("t", f"c{m}").find())
    dlq = {d["doc"]["i"]: d for d in store.collection("t", "dlq").find()}
    assert set(dlq) == {11, 13}
    assert dlq[11]["operatorName"] == "$merge"
    assert dlq[11]["errInfo"]["reason"] == "$merge into.coll must evaluate to a non-empty string, found int 5"
    assert dlq[13]["operatorName"] == "$merge" and "$toInt" in dlq[13]["errInfo"]["reason"]
    assert dlq[13]["doc"]["s"] == "xxx" and "j" not in dlq[13]["doc"]     # the original document
    assert stats["dlqMessageCount"] == 2
