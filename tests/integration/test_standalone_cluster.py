"""Past one machine: a windowed pipeline on a Spark standalone master with two workers (each
executor its own process, not the driver's) writes the same sink and DLQ as on ``local[*]``."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration


def _pipeline(tmp: Path) -> Path:
    # three arrival instants: three data micro-batches (each closes the windows the last one left open)
    docs = [{"arrival": f"2024-01-01T12:00:{a:02d}Z", "t": f"2024-01-01T12:00:{s:02d}Z", "k": k, "v": v}
            for a, s, k, v in [(3, 1, "a", 1), (3, 2, "b", 2), (3, 3, "a", 3), (13, 12, "b", 4), (13, 13, "a", "x"),
                               (25, 25, "a", 6)]]
    docs.insert(3, {"arrival": "2024-01-01T12:00:03Z", "raw": "not an object"})
    pipe = {"pipeline": [
        {"$source": {"documents": docs, "replay": {"arrivalField": "arrival"},
                     "timeField": {"$toDate": "$t"}}},
        {"$addFields": {"n": {"$toInt": "$v"}}},
        {"$tumblingWindow": {"interval": {"size": 10, "unit": "second"}, "allowedLateness": {"size": 0, "unit": "ms"},
                             "pipeline": [{"$group": {"_id": "$k", "total": {"$sum": "$n"}, "count": {"$count": {}}}},
                                          {"$sort": {"_id": 1}}]}},
        {"$project": {"_id": 0, "k": "$_id", "total": 1, "count": 1}},
        {"$merge": {"into": {"connectionName": "store", "db": "db", "coll": "out"}}}],
        "options": {"dlq": {"connectionName": "store", "db": "db", "coll": "dlq"}}}
    p = tmp / "pipe.json"
    p.write_text(json.dumps(pipe))
    return p


def _run(pipe: Path, home: Path, master: str) -> tuple[list, list]:
    env = {**os.environ, "HEADRACE_HOME": str(home), "HEADRACE_SPARK_MASTER": master}
    exe = [sys.executable, "-m", "headrace.cli"]
    r = subprocess.run([*exe, "process", str(pipe)], env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    found = []
    for coll in ("out", "dlq"):
        f = subprocess.run([*exe, "store", "find", "db", coll], env=env, capture_output=True, text=True, timeout=120)
        assert f.returncode == 0, f.stderr
        docs = [json.loads(x) for x in f.stdout.splitlines()]
        for d in docs:
            d.pop("dlqTime", None)
        found.append(docs)
    return found[0], found[1]


def test_windowed_pipeline_on_a_standalone_cluster_equals_local(tmp_path):
    from headrace.spark.cluster import StandaloneCluster

    pipe = _pipeline(tmp_path)
    local_out, local_dlq = _run(pipe, tmp_path / "local", "local[2]")
    assert [d["total"] for d in local_out] == [4, 2, 4, 6] and len(local_dlq) == 2
    cluster = StandaloneCluster(workers=2).start()
    try:
        out, dlq = _run(pipe, tmp_path / "cluster", cluster.url)
    finally:
        cluster.stop()
    assert out == local_out
    assert dlq == local_dlq
