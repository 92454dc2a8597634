"""Keyed computations on Spark (transformWithStateInPandas + RocksDB): the same outputs as the
reference runner, a computation added while the others keep their state, kill -9 and restart."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from headrace.keyed.examples import Total
from headrace.spark.keyed.runner import SparkRunner

from .topologies import batches, counting_topology, fan_topology, reference_outputs

pytestmark = pytest.mark.spark
REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def fan_run(spark, tmp_path_factory):
    root = tmp_path_factory.mktemp("keyed-fan")
    sr = SparkRunner(fan_topology(), root, spark=spark)
    data = batches()
    inj = sr.injector("in")
    for recs, clock in data[:2]:
        inj.publish(recs, clock)
    sr.run_until_quiescent()
    mid = sr.stats()
    for recs, clock in data[2:]:
        inj.publish(recs, clock)
    inj.publish([], data[-1][1] + 1000, end=True)
    sr.run_until_quiescent()
    return sr, data, mid


def _per_window(counts) -> dict:
    out: dict = {}
    for k, v, _ in counts:
        out[(k, v["start"])] = out.get((k, v["start"]), 0) + v["count"]
    return out


def _final(totals) -> dict:
    out: dict = {}
    for k, v, ts in sorted(totals, key=lambda r: (r[0], r[1])):
        out[k] = v
    return out


def test_spark_gives_the_reference_runners_outputs(fan_run):
    """Outputs that do not depend on where batches start and end are equal: counts per window
    (a late record makes a second count of its window in either runner) and final totals."""
    sr, data, mid = fan_run
    assert _per_window(sr.output("counts")) == _per_window(reference_outputs(fan_topology(), data, "counts"))
    assert _final(sr.output("totals")) == _final(reference_outputs(fan_topology(), data, "totals"))
    counts = sr.output("counts")
    assert sum(v["count"] for _, v, _ in counts) == 2 * sum(len(r) for r, _ in data)   # fan-out doubled
    st = sr.stats()["computations"]
    assert st["wc"]["lowWatermark"] == st["tot"]["lowWatermark"] == 9_000_000_000_000
    assert st["wc"]["pendingTimers"] == 0 and st["wc"]["pendingRecords"] == 0
    # mid-run: the counter's low watermark was held by its earliest pending window
    assert mid["computations"]["wc"]["pendingTimers"] > 0
    assert mid["computations"]["wc"]["lowWatermark"] <= mid["computations"]["wc"]["inputWatermark"]


def test_adding_a_computation_leaves_the_others_alone(fan_run):
    sr, data, _ = fan_run
    before = {n: sr.ch.committed(n) for n in ("tee", "wc", "tot")}
    sr.add_computation("tot2", Total, ["counts"], ["totals2"], {"out": "totals2"})
    sr.run_until_quiescent()
    assert {n: sr.ch.committed(n) for n in ("tee", "wc", "tot")} == before   # not run again
    final = {}
    for k, v, ts in sr.output("totals"):
        final[k] = max(final.get(k, 0), v)
    assert {k: v for k, v, _ in sr.output("totals2")} == final   # read the existing stream from its start


def test_kill_minus_9_mid_run_then_restart_applies_every_record_once(tmp_path):
    data = batches(3)   # as _crash_run.py
    expected = reference_outputs(counting_topology(), data, "totals")
    root = str(tmp_path / "crash")
    env = {**os.environ, "HEADRACE_KEYED_KILL_AFTER": "wc:2", "PYTHONPATH": str(REPO)}
    first = subprocess.run([sys.executable, str(Path(__file__).with_name("_crash_run.py")), root], env=env,
                           capture_output=True, text=True, timeout=600, start_new_session=True)
    assert first.returncode == -9, first.stderr[-3000:]
    # killed after writing wc's batch 2 and before Spark committed it
    assert (Path(root) / "producers" / "wc" / "2.json").exists()
    assert not (Path(root) / "checkpoints" / "wc" / "commits" / "2").exists()
    env.pop("HEADRACE_KEYED_KILL_AFTER")
    second = subprocess.run([sys.executable, str(Path(__file__).with_name("_crash_run.py")), root], env=env,
                            capture_output=True, text=True, timeout=600, start_new_session=True)
    assert second.returncode == 0, second.stderr[-3000:]
    out = json.loads(second.stdout.strip().splitlines()[-1])
    assert _final(out["totals"]) == _final(expected)
    # counts exact per window; every window's timer fired once (no window lost or produced twice)
    ref_counts = reference_outputs(counting_topology(), data, "counts")
    assert _per_window(out["counts"]) == _per_window(ref_counts)
    assert sorted((k, v["start"]) for k, v, _ in out["counts"]) == sorted((k, v["start"]) for k, v, _ in ref_counts)
    assert sum(v["count"] for _, v, _ in out["counts"]) == sum(len(r) for r, _ in data)


def test_zeitgeist_on_spark_reports_the_reference_runners_periods(spark, tmp_path):
    from headrace.keyed.zeitgeist.detector import ModelParams
    from headrace.keyed.zeitgeist.generate import GenParams, generate
    from headrace.keyed.zeitgeist.replay import detect

    f = tmp_path / "z.jsonl"
    generate(f, GenParams(seed=9, minutes=3, queries=6, quiet_minutes=1.5, tail_minutes=0.5, dur_min_s=20,
                          dur_max_s=30, anomalies=3))
    params = ModelParams(warmup_ms=60_000)
    ref, _ = detect(f, params)
    got, stats = detect(f, params, engine="spark", workdir=str(tmp_path / "topo"))
    assert ref and [(d["query"], d["kind"], d["start"], d["end"]) for d in got] == \
        [(d["query"], d["kind"], d["start"], d["end"]) for d in ref]
    assert stats["computations"]["model"]["lowWatermark"] == 9_000_000_000_000
