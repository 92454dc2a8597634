"""``headrace dlq replay``: documents that failed a ``$validate`` (and an entry holding raw text)
are fixed by a new pipeline and replayed into the store exactly once, however often the
command runs."""
from __future__ import annotations

import json

import pytest

from headrace.connections import load_registry

pytestmark = pytest.mark.spark


def test_replay_fixed_documents_into_the_store_exactly_once(spark, tmp_path, capsys):
    from headrace.cli import main
    from headrace.collections import open_collection
    from headrace.store.base import MergeSpec
    from headrace.testing import run_pipeline

    home = tmp_path / "home"
    reg = load_registry(None, home)
    docs = [{"_id": i, "n": i if i % 3 else str(i)} for i in range(1, 10)]     # 3, 6, 9 are strings
    first = {"pipeline": [
        {"$source": {"documents": docs}},
        {"$validate": {"validator": {"$jsonSchema": {"required": ["n"], "properties": {"n": {"bsonType": "int"}}}},
                       "validationAction": "dlq"}},
        {"$merge": {"into": {"connectionName": "store", "db": "app", "coll": "out"}}}],
        "options": {"dlq": {"connectionName": "store", "db": "app", "coll": "dlq"}}}
    run_pipeline(first, registry=reg)
    out = open_collection(reg, "store", "app", "out")
    dlq = open_collection(reg, "store", "app", "dlq")
    assert sorted(d["_id"] for d in out.find()) == [1, 2, 4, 5, 7, 8]
    assert dlq.count() == 3
    # an entry whose document is raw text (as for unparseable input), and one that stays unparseable
    dlq.merge_many([{"_id": "raw-1", "doc": '{"_id": 100, "n": "100"}', "errInfo": {"reason": "x"}},
                    {"_id": "raw-2", "doc": "{still not json", "errInfo": {"reason": "x"}}], MergeSpec())

    fixed = tmp_path / "fixed.json"
    fixed.write_text(json.dumps({"pipeline": [
        {"$source": {"connectionName": "store"}},
        {"$addFields": {"n": {"$toInt": "$n"}, "fixed": True}},
        {"$merge": {"into": {"connectionName": "store", "db": "app", "coll": "out"}}}]}))
    args = ["dlq", "replay", "--from", "store", "app.dlq", "--into", str(fixed), "--home", str(home)]
    assert main(args + ["--dry-run"]) == 0
    cap = capsys.readouterr()
    assert len(cap.out.strip().splitlines()) == 4 and json.loads(cap.err)["wouldReplay"] == 4
    assert out.count() == 6                                             # a dry run changes nothing

    assert main(args) == 0
    res = json.loads(capsys.readouterr().err)
    assert res["replayed"] == 4 and res["skipped"] == ["raw-2"]
    got = {d["_id"]: d for d in out.find()}
    assert sorted(got) == [1, 2, 3, 4, 5, 6, 7, 8, 9, 100]
    assert all(got[i]["n"] == i and got[i]["fixed"] for i in (3, 6, 9, 100))
    marked = {d["_id"]: d for d in dlq.find()}
    assert all("replayedAt" in marked[k] for k in marked if k != "raw-2") and "replayedAt" not in marked["raw-2"]

    assert main(args) == 0                                              # again: nothing is replayed twice
    assert json.loads(capsys.readouterr().err)["replayed"] == 0
    assert out.count() == 10
