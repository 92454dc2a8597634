"""The main job (``headrace demo``) end to end on the shared session, and ``explain``."""
from __future__ import annotations

import argparse
import json

import pytest

from headrace.cli import main
from headrace.store import open_store

pytestmark = pytest.mark.spark


def test_demo_writes_window_results(spark, tmp_path, capsys):
    """The stream starts ``backlog`` seconds of readings back: the first micro-batch closes windows."""
    from headrace.demo import run_demo

    args = argparse.Namespace(duration=30.0, rate=100.0, backlog=20.0, home=str(tmp_path / "h"))
    assert run_demo(args) == 0
    out = capsys.readouterr().out
    docs = list(open_store(tmp_path / "h" / "store").collection("demo", "solar_10s").find())
    assert docs, out
    d = docs[0]
    assert d["_id"]["device_id"].startswith("device_") and d["readings"] >= 1
    assert 0 <= d["avg_watts"] <= 450 and d["max_watts"] <= 450
    assert d["_stream_meta"]["window"]["end"] > d["_stream_meta"]["window"]["start"]
    assert "summary:" in out and "demo.sqlite" in out


def test_explain_shows_both_plans(spark, tmp_path, capsys):
    f = tmp_path / "p.json"
    f.write_text(json.dumps([{"$source": {"connectionName": "sample_stream_solar"}},
                             {"$match": {"event_type": 0}}, {"$project": {"device_id": 1}},
                             {"$tumblingWindow": {"interval": {"size": 10, "unit": "second"},
                                                  "pipeline": [{"$count": "n"}]}}]))
    assert main(["explain", str(f)]) == 0
    out = capsys.readouterr().out
    assert "== Logical plan ==" in out and "Window: tumbling interval=10000ms" in out
    assert "== Spark plan" in out and "Filter" in out
