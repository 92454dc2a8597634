"""Field order end to end (:mod:`headrace.mql.field_order`): what a sink writes and a run prints
lists fields in MongoDB's order, not VARIANT's (by name): source order through the stages, a
DLQ entry's original document, the store, and a window's ``$group`` output (``_id``, then the
accumulators in the specification's order)."""
from __future__ import annotations

import json

from headrace.launch import prepare, start
from headrace.store import open_store
from headrace.testing import run_pipeline

LINES = [{"zeta": 1, "n": "7", "b": {"y": 1, "x": 2}, "alpha": "a"},
         {"zeta": 2, "n": "q", "b": {"y": 3, "x": 4}, "alpha": "b"}]
STAGES = [{"$addFields": {"m": {"$toInt": "$n"}, "b.w": 0}},
          {"$project": {"_id": 0, "zeta": 1, "c": {"$literal": {"s": 1, "r": 2}}, "b": 1, "m": 1}}]


def _run(tmp_path, name: str, sink: dict) -> list:
    inp = tmp_path / "in.jsonl"
    inp.write_text("".join(json.dumps(d) + "\n" for d in LINES))
    run = prepare([{"$source": {"connectionName": "in"}}] + STAGES + [sink], home=tmp_path / "home",
                  extra_connections={"in": {"type": "file", "path": str(inp)}})
    dlq: list = []
    start(run, name=name, checkpoint=tmp_path / f"ckpt-{name}", trigger_ms=0, on_dlq=dlq.extend).run(
        max_input=len(LINES), duration_s=600)
    return dlq


def _keys(d: dict) -> list:
    return [k for k in d if k not in ("_id", "_stream_meta", "_ts")]


def test_json_lines_and_dlq_keep_mongodb_field_order(spark, tmp_path):
    out = tmp_path / "out.jsonl"
    dlq = _run(tmp_path, "jl", {"$emit": {"path": str(out)}})
    docs = [json.loads(x) for x in out.read_text().splitlines()]     # json keeps the file's order
    assert len(docs) == 1
    assert _keys(docs[0]) == ["zeta", "b", "m", "c"]
    assert list(docs[0]["b"]) == ["y", "x", "w"] and list(docs[0]["c"]) == ["s", "r"]
    assert len(dlq) == 1 and _keys(dlq[0]["doc"]) == ["zeta", "n", "b", "alpha"]
    assert list(dlq[0]["doc"]["b"]) == ["y", "x"]


def test_store_keeps_mongodb_field_order(spark, tmp_path):
    _run(tmp_path, "st", {"$merge": {"into": {"connectionName": "store", "db": "t", "coll": "c"}}})
    stored = list(open_store(tmp_path / "home" / "store").collection("t", "c").find())
    assert len(stored) == 1 and _keys(stored[0]) == ["zeta", "b", "m", "c"]
    assert list(stored[0]["b"]) == ["y", "x", "w"]


def test_window_group_output_order(spark):
    docs = [{"k": "a", "v": 1, "t": {"$date": "2024-01-01T00:00:00Z"}},
            {"k": "a", "v": 2, "t": {"$date": "2024-01-01T00:00:05Z"}}]
    res = run_pipeline([{"$source": {"documents": docs, "timeField": "$t"}},
                        {"$tumblingWindow": {"interval": {"size": 1, "unit": "minute"}, "pipeline": [
                            {"$group": {"_id": {"key": "$k", "first": "$v"}, "total": {"$sum": "$v"},
                                        "count": {"$sum": 1}, "all": {"$push": {"v": "$v", "k": "$k"}}}}]}},
                        {"$addFields": {"avg": {"$divide": ["$total", "$count"]}}}], strip_meta=True)
    assert len(res.outputs) == 2
    for d in res.outputs:
        assert list(d) == ["_id", "total", "count", "all", "avg"]
        assert list(d["_id"]) == ["key", "first"] and list(d["all"][0]) == ["v", "k"]


def test_window_that_emits_its_documents_keeps_their_order(spark):
    """No ``$group``: the window keeps each document's raw text beside it, for the sink."""
    docs = [{"zeta": i, "t": {"$date": f"2024-01-01T00:00:0{i}Z"}, "b": {"y": i, "x": 0}, "alpha": "a"}
            for i in range(3)]
    res = run_pipeline([{"$source": {"documents": docs, "timeField": "$t"}},
                        {"$addFields": {"m": 1}},
                        {"$tumblingWindow": {"interval": {"size": 1, "unit": "minute"}, "pipeline": [
                            {"$sort": {"zeta": -1}}, {"$limit": 2}, {"$set": {"b.a": 0}}]}},
                        {"$project": {"t": 0}}], strip_meta=True)
    assert [d["zeta"] for d in res.outputs] == [2, 1]
    for d in res.outputs:
        assert [k for k in d if k != "_id"] == ["zeta", "b", "alpha", "m"]
        assert list(d["b"]) == ["y", "x", "a"]


def test_object_to_array_of_a_source_field_lists_its_fields_in_order(spark):
    """``$objectToArray`` of a field still the source record's lists the record's order inside
    the expressions and stages that use it (``$arrayElemAt``, ``$map``, ``$unwind``), as
    MongoDB; of a computed document, name order (the README's known difference)."""
    docs = [{"_id": 1, "inv": {"w2": 5, "w1": 10, "a": {"z": 1, "y": 2}}}]
    res = run_pipeline([{"$addFields": {"arr": {"$objectToArray": "$inv"}}}, {"$unwind": "$arr"},
                        {"$project": {"k": "$arr.k", "v": "$arr.v"}}], docs, strip_meta=True)
    assert [(d["k"], d["v"]) for d in res.outputs] == [("w2", 5), ("w1", 10), ("a", {"z": 1, "y": 2})]
    assert list(res.outputs[2]["v"]) == ["z", "y"]
    res = run_pipeline([{"$project": {
        "first": {"$arrayElemAt": [{"$objectToArray": "$inv"}, 0]},
        "ks": {"$map": {"input": {"$objectToArray": "$inv.a"}, "in": "$$this.k"}},
        "computed": {"$map": {"input": {"$objectToArray": {"$mergeObjects": ["$inv.a", {}]}}, "in": "$$this.k"}},
    }}], docs, strip_meta=True)
    assert res.outputs == [{"_id": 1, "first": {"k": "w2", "v": 5}, "ks": ["z", "y"], "computed": ["y", "z"]}]
