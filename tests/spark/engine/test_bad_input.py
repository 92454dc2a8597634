"""Bad input of every kind lands in the DLQ with a reason naming what failed; nothing is dropped."""
from __future__ import annotations

import json

import pytest

from headrace.connections import load_registry
from headrace.testing import run_pipeline

pytestmark = pytest.mark.spark


def test_file_source_unparseable_lines_keep_raw_text(spark, tmp_path):
    f = tmp_path / "in.jsonl"
    lines = ['{"a": 1, "ts": "2024-05-01T12:00:00Z"}', '{not json', '[1, 2]', '{"a": "x", "ts": "yesterday"}',
             '{"a": 3, "ts": {"$date": "2024-05-01T12:00:01Z"}}']
    f.write_text("\n".join(lines) + "\n")
    reg = load_registry(None, tmp_path / "home", extra={"in": {"type": "file", "path": str(f)}})
    res = run_pipeline([{"$source": {"connectionName": "in", "timeField": {"$toDate": "$ts"}}},
                        {"$addFields": {"b": {"$multiply": ["$a", 2]}}}],
                       registry=reg, max_input=5, strip_meta=True)
    assert [d["a"] for d in res.outputs] == [1, 3] and [d["b"] for d in res.outputs] == [2, 6]
    by_doc = {json.dumps(d["doc"], default=str): d for d in res.dlq}
    assert len(res.dlq) == 3
    bad = by_doc['"{not json"']
    assert bad["operatorName"] == "$source" and "not valid JSON" in bad["errInfo"]["reason"]
    assert by_doc['"[1, 2]"']["errInfo"]["reason"].startswith("Input is not a JSON object")
    tf = [d for d in res.dlq if isinstance(d["doc"], dict)][0]
    assert "timeField" in tf["errInfo"]["reason"] and tf["doc"]["a"] == "x"
    for d in res.dlq:
        assert d["processorName"] == "test" and d["_stream_meta"]["source"]["type"] == "file"


def test_expression_errors_and_sink_errors(spark, tmp_path):
    reg = load_registry(None, tmp_path / "home")
    pipe = {"pipeline": [{"$source": {"documents": [{"_id": 1, "a": 4, "b": 2}, {"_id": 2, "a": 1, "b": 0},
                                                    {"_id": 3, "a": 9, "b": 3}]}},
                         {"$addFields": {"q": {"$divide": ["$a", "$b"]}}},
                         {"$merge": {"into": {"connectionName": "store", "db": "t", "coll": "c"},
                                     "whenMatched": "fail"}}],
            "options": {"dlq": {"connectionName": "store", "db": "t", "coll": "dlq"}}}
    from headrace.store import open_store

    open_store(tmp_path / "home" / "store").collection("t", "c").insert_many([{"_id": 3, "q": 0}])
    res = run_pipeline(pipe, registry=reg)
    reasons = sorted((d["operatorName"], d["doc"]["_id"]) for d in res.dlq)
    assert reasons == [("$addFields", 2), ("$merge", 3)]
    stored = list(open_store(tmp_path / "home" / "store").collection("t", "dlq").find())
    assert len(stored) == 2 and all("reason" in d["errInfo"] for d in stored)
    assert [d["_id"] for d in open_store(tmp_path / "home" / "store").collection("t", "c").find()] == [3, 1]


def test_dlq_entry_of_a_failing_stage_carries_the_original_document(spark):
    res = run_pipeline([{"$source": {"documents": [{"_id": 1, "n": "7"}, {"_id": 2, "n": "q"}]}},
                        {"$addFields": {"added": 1}},
                        {"$set": {"c": {"$toInt": "$n"}}}], strip_meta=True)
    assert [d["c"] for d in res.outputs] == [7]
    (bad,) = res.dlq
    assert bad["doc"] == {"_id": 2, "n": "q"}          # as the source gave it, not with "added"
    assert bad["operatorName"] == "$set" and "q" in bad["errInfo"]["reason"]


def test_input_message_size_counts_utf8_bytes(spark, tmp_path):
    """``inputMessageSize`` is the bytes read (Atlas's "bytes ingested"), not characters: a line
    with ``é`` (two bytes in UTF-8) counts both."""
    f = tmp_path / "in.jsonl"
    lines = ['{"a": "été"}', '{"a": "x"}', '{bad']
    f.write_text("\n".join(lines) + "\n", encoding="utf-8")
    reg = load_registry(None, tmp_path / "home", extra={"in": {"type": "file", "path": str(f)}})
    res = run_pipeline([{"$source": {"connectionName": "in"}}], registry=reg, max_input=3)
    assert res.stats["inputMessageSize"] == sum(len(x.encode("utf-8")) for x in lines)


def test_merge_when_matched_delete_removes_the_matching_documents(spark, tmp_path):
    """``whenMatched: "delete"`` (Atlas Stream Processing's $merge): each output document that
    matches a stored one on ``on`` removes it; one that matches nothing follows ``whenNotMatched``
    (here inserted); a ``whenMatched`` outside the documented set is refused before anything runs."""
    from headrace.errors import PipelineError
    from headrace.store import open_store

    reg = load_registry(None, tmp_path / "home")
    into = {"connectionName": "store", "db": "t", "coll": "c"}
    coll = open_store(tmp_path / "home" / "store").collection("t", "c")
    coll.insert_many([{"_id": 1, "k": "a"}, {"_id": 2, "k": "b"}, {"_id": 3, "k": "c"}])
    pipe = [{"$source": {"documents": [{"_id": 11, "k": "b"}, {"_id": 12, "k": "z"}]}},
            {"$merge": {"into": into, "on": "k", "whenMatched": "delete", "whenNotMatched": "insert"}}]
    res = run_pipeline(pipe, registry=reg)
    assert not res.dlq
    assert [(d["_id"], d["k"]) for d in coll.find()] == [(1, "a"), (3, "c"), (12, "z")]
    with pytest.raises(PipelineError) as e:
        run_pipeline([pipe[0], {"$merge": {"into": into, "whenMatched": "remove"}}], registry=reg)
    assert e.value.code == "BAD_VALUE" and "delete" in str(e.value)
