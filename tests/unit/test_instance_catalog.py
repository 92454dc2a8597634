"""The SQLite catalog survives a reopen and keeps the history of every change."""
import pytest

from headrace.instance.catalog import Catalog

PIPE = [{"$source": {"connectionName": "stream", "stream": "s"}}, {"$emit": {"path": "/tmp/x.jsonl"}}]


def test_create_update_reopen_history(tmp_path):
    c = Catalog(tmp_path / "cat.sqlite")
    row = c.create("p1", PIPE, {"dlq": None}, str(tmp_path / "ck/p1"))
    assert (row.state, row.worker, row.slot) == ("CREATED", None, None)
    with pytest.raises(KeyError):
        c.create("p1", PIPE, {}, "x")
    c.update("p1", "start", state="STARTED", worker=1, slot=2)
    c.update("p1", last_stats={"inputMessageCount": 3})
    c.update("p1", "modify", pipeline=PIPE[:1], detail={"resumeFromCheckpoint": True})
    c.close()
    c2 = Catalog(tmp_path / "cat.sqlite")
    row = c2.get("p1")
    assert (row.state, row.worker, row.slot, row.pipeline) == ("STARTED", 1, 2, PIPE[:1])
    assert row.last_stats == {"inputMessageCount": 3}
    assert [h["action"] for h in c2.history("p1")] == ["create", "start", "modify"]
    assert c2.history("p1")[2]["detail"] == {"resumeFromCheckpoint": True}
    with pytest.raises(ValueError):
        c2.update("p1", state="RUNNING")
    c2.delete("p1")
    assert c2.get("p1") is None and c2.list() == []
    assert c2.history("p1")[-1]["action"] == "drop"
