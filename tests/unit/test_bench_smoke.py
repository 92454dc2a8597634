"""Benchmarks (``benchmarks/``): the generators are seeded and deterministic, and RESULTS.md
renders from numbers. No Spark, no peers."""
from __future__ import annotations

import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCH))

import gen  # noqa: E402
import report  # noqa: E402


def _params(name: str, seed: int | None = None) -> dict:
    p = gen.dataset_params(name, backlog=3_000, live=200)
    if seed is not None:
        p["seed"] = seed
    return p


def test_generators_are_seeded_and_deterministic(tmp_path: Path) -> None:
    for name in ("solar", "nexmark"):
        a = gen.generate(_params(name), tmp_path / f"{name}-a")
        b = gen.generate(_params(name), tmp_path / f"{name}-b")
        c = gen.generate(_params(name, seed=12345), tmp_path / f"{name}-c")
        da, db, dc = (gen.file_digest(tmp_path / f"{name}-{x}" / "data.jsonl") for x in "abc")
        assert da == db and a["reference"] == b["reference"] and a["key"] == b["key"]
        assert dc != da
        ets, offs = gen.load_arrays(tmp_path / f"{name}-a")
        assert len(ets) == 3_200 and len(offs) == 3_201
        # generated once: a second call with the same parameters keeps the file
        mtime = (tmp_path / f"{name}-a" / "data.jsonl").stat().st_mtime_ns
        gen.generate(_params(name), tmp_path / f"{name}-a")
        assert (tmp_path / f"{name}-a" / "data.jsonl").stat().st_mtime_ns == mtime


def test_nexmark_proportions_and_references() -> None:
    kinds = [d["event_type"] for d in gen.nexmark_records(5_000, seed=1, rate=1000)]
    assert kinds.count(0) == 100 and kinds.count(1) == 300 and kinds.count(2) == 4_600
    ref = gen.Reference()
    for d in gen.nexmark_records(60_000, seed=1, rate=1000):
        ref.add_nexmark(d, gen.parse_iso_ms(d["dateTime"]))
    res = ref.results(gen.T0_MS + 60_000)
    assert res["q7"] and res["q5"]
    assert all(r["we"] - r["ws"] == gen.WINDOW_MS for r in res["q5"] + res["q7"])
    starts = [r["ws"] for r in res["q5"]]
    assert all(b - a == gen.HOP_MS for a, b in zip(starts, starts[1:]))
    assert gen.compare("q7", res["q7"], res["q7"]) ["missing"] == 0
    bad = [dict(r, price=r["price"] + 1) for r in res["q7"]]
    assert gen.compare("q7", res["q7"], bad)["wrong"] == len(res["q7"])


def test_results_render_on_fake_numbers() -> None:
    doc = report.fake_doc()
    md = report.render(doc)
    assert md.startswith("# headrace benchmarks")
    assert "2 cores" in md and "24 GB" in md and "2024-01-01" in md
    assert "1,000 (900–1,100)" in md                       # median (min–max) of headrace's throughput
    assert "0.25x" in md                                   # headrace ÷ pyspark throughput: 1000 / 4000
    assert "2.50x" in md                                   # headrace ÷ pyspark p50: 500 / 200
    assert "not run: ImportError" in md
    assert "## What could not be run" in md
    assert report.percentile([1, 2, 3, 4], 50) == 2 and report.percentile([5], 99) == 5


def test_scaling_table_renders_runs_checks_and_failures() -> None:
    import scaling_bench

    ok = {"throughput": 4808.4, "drain_s": 41.6, "startup_s": 7.6, "rss_mb": 2496,
          "check": {"missing": 0, "wrong": 0}, "load_before": "1.59 1.61 2.20"}
    bad = {"error": "runner exited with code 1 before draining the backlog", "check": {"missing": 3, "wrong": 0},
           "load_before": "2.00 1.00 1.00"}
    md = scaling_bench.render([("local[2] (2 cores)", [ok]), ("standalone, 2 workers x 1 core", [bad])],
                              {"cpu": "x", "cores": 2, "memory_gb": 23.6, "load": "0.1 (1/5/15 min)"},
                              "2026-11-26 10:28 UTC", 200_000, 100_000)
    assert "| local[2] (2 cores) | 4,808 | 4,808 | 41.6 | 7.6 | 2496 | ✓ |" in md
    assert "| standalone, 2 workers x 1 core | — | failed: runner exited" in md and "missing 3, wrong 0" in md
    assert "200,000 solar lines" in md and "23.6 GB" in md
