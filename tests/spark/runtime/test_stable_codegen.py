"""A windowed processor's generated code is the same from one micro-batch to the next
(:mod:`headrace.spark.runtime.params`): once its first batches have compiled their classes,
later batches, whose frontier, closing windows and sequence base all differ, compile none
(Spark's code generator counts its compiles in ``CodegenMetrics``)."""
from __future__ import annotations

import pytest

from headrace.launch import prepare, start

pytestmark = pytest.mark.spark

WINDOWS = {
    # partial aggregates (a hopping window: the open-window filter on the frontier)
    "group": {"$hoppingWindow": {"interval": {"size": 4, "unit": "second"}, "hopSize": {"size": 2, "unit": "second"},
                                 "allowedLateness": {"size": 0, "unit": "second"},
                                 "pipeline": [{"$group": {"_id": "$p", "n": {"$count": {}}, "s": {"$avg": "$v"},
                                                          "all": {"$push": "$v"}}}]}},
    # documents kept (the closing windows' starts)
    "documents": {"$tumblingWindow": {"interval": {"size": 2, "unit": "second"},
                                      "allowedLateness": {"size": 0, "unit": "second"},
                                      "pipeline": [{"$sort": {"v": -1}}, {"$limit": 2}]}},
}


def _at(s: int) -> dict:
    return {"$date": f"2024-01-01T00:00:{s:02d}Z"}


def _docs() -> list[dict]:
    # 16 micro-batches (one per arrival second), event time advancing a second per batch, with a
    # late document now and then: W, the frontier and the closing windows move every batch
    rows = [(a, a - 8 if a % 5 == 4 and a > 8 else a, j) for a in range(16) for j in range(3)]
    return [{"arrival": _at(a), "t": _at(t), "p": j % 2, "v": i * 1.5} for i, (a, t, j) in enumerate(rows)]


@pytest.mark.parametrize("name", sorted(WINDOWS))
def test_no_new_classes_once_warm(name, spark, tmp_path, monkeypatch):
    monkeypatch.setenv("HEADRACE_CODEGEN_MIN_ROWS", "0")      # generated code for every batch
    src = {"$source": {"documents": _docs(), "timeField": "$t", "replay": {"arrivalField": "arrival"}}}
    run = prepare({"pipeline": [src, WINDOWS[name]]}, home=tmp_path / "home")
    metric = spark.sparkContext._jvm.org.apache.spark.metrics.source.CodegenMetrics.METRIC_COMPILATION_TIME()
    counts: list[int] = []
    outputs: list = []
    proc = start(run, name=f"stable_{name}", checkpoint=tmp_path / "ck", on_output=outputs.extend,
                 on_batch=lambda *_: counts.append(metric.getCount()))
    proc.run(duration_s=300)
    assert len(counts) >= 14 and outputs
    assert proc.counters["late"] > 0
    # batches 0-5 meet the first window closes; batch 9 the first late documents (a batch whose
    # event times cannot be late skips looking for them: a plan of its own); after them the code
    # is the same every batch, also at batch 14's late documents (before runtime/params.py: new
    # classes every batch) until the end of the input, whose batch closes every window
    warm = counts[10:-1]
    assert warm[-1] == warm[0], f"classes compiled per batch: {[b - a for a, b in zip(counts, counts[1:])]}"
