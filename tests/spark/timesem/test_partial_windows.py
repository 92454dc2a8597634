"""The engine keeps a ``$group``-first window as partial aggregates (one row per window and key,
not the documents) and emits exactly what the document path emits: the same outputs, in the
same micro-batch, the same DLQ entries, over randomised replay runs (out-of-order and late
events, idle partitions and timeouts, hopping windows, offsets; see test_random_model)."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from headrace import ejson
from headrace.spark.windows import partial as P
from headrace.testing import run_pipeline

from .test_random_model import BASE, scenario, to_pipeline

#: Long (several minutes per seed on this 2-core machine) and not yet verified in CI: run them with
#: HEADRACE_LONG_TESTS=1 (outside CI, like HEADRACE_KILL_TRIALS).
pytestmark = [pytest.mark.spark,
              pytest.mark.skipif(not os.environ.get("HEADRACE_LONG_TESTS"),
                                 reason="long engine-level equivalence run: HEADRACE_LONG_TESTS=1")]

GROUP = {"$group": {
    "_id": {"$mod": [{"$toLong": {"$toDate": "$t"}}, 3000]},
    "n": {"$count": {}}, "ts": {"$push": "$t"}, "first": {"$first": "$t"}, "last": {"$last": "$p"},
    "sum": {"$sum": {"$mod": [{"$toLong": {"$toDate": "$t"}}, 7000]}}, "avg": {"$avg": 1.5},
    "min": {"$min": "$t"}, "max": {"$max": "$p"}, "parts": {"$addToSet": "$p"},
    "top": {"$top": {"sortBy": {"p": 1}, "output": "$t"}}, "bottom": {"$bottom": {"sortBy": {"p": -1}, "output": "$t"}},
    "bottom2": {"$bottomN": {"n": 2, "sortBy": {"p": 1}, "output": "$t"}},
    "last2": {"$lastN": {"n": 2, "input": "$t"}}, "sd": {"$stdDevPop": {"$toLong": {"$toDate": "$t"}}},
    "m": {"$mergeObjects": {"$cond": [{"$eq": ["$p", "p0"]}, {"a": "$t"}, {"b": "$t"}]}}}}


def _pipeline(seed: int) -> list:
    src, win = to_pipeline(scenario(seed))
    (kind, spec), = win.items()
    return [src, {kind: {**spec, "pipeline": [GROUP, {"$sort": {"n": -1, "_id": 1}}]}}]


def _run(pipeline, monkeypatch, partial: bool):
    with monkeypatch.context() as m:
        if not partial:
            m.setattr(P, "partial_plan", lambda w: None)
        else:
            m.setattr(P, "COMPACT_AFTER", 1)   # compact every batch: merges of merged partials
        res = run_pipeline(pipeline)
    return res


@pytest.mark.parametrize("seed", range(3))
def test_partial_windows_equal_document_windows(spark, monkeypatch, seed):
    pipe = _pipeline(seed)
    docs = _run(pipe, monkeypatch, partial=False)
    part = _run(pipe, monkeypatch, partial=True)
    assert docs.outputs, "the scenario emits windows"
    assert part.outputs == docs.outputs
    assert part.emitted_at == docs.emitted_at
    strip = lambda xs: [{k: v for k, v in d.items() if k != "dlqTime"} for d in xs]  # noqa: E731
    assert strip(part.dlq) == strip(docs.dlq)


def test_state_is_one_row_per_window_and_key(spark, monkeypatch, tmp_path):
    """40 documents of 3 keys in one open window over 40 micro-batches: the state holds 3 rows
    (compacting after every batch), and the window emits their aggregates at the end."""
    from headrace.connections import load_registry
    from headrace.spec import parse_pipeline
    from headrace.spark.engine import Processor, RunOptions

    iso = lambda ms: ejson.format_date(ejson.millis_to_datetime(BASE + ms))  # noqa: E731
    docs = [{"arrival": iso(i * 100), "t": iso(i * 100), "k": f"k{i % 3}", "v": i} for i in range(40)]
    pipe = [{"$source": {"documents": docs, "timeField": {"$toDate": "$t"}, "replay": {"arrivalField": "arrival"}}},
            {"$tumblingWindow": {"interval": {"size": 1, "unit": "minute"},
                                 "pipeline": [{"$group": {"_id": "$k", "n": {"$count": {}}, "s": {"$sum": "$v"}}},
                                              {"$sort": {"_id": 1}}]}}]
    ckpt = tmp_path / "ckpt"
    rows_after: list[int] = []
    outputs: list[dict] = []

    def on_batch(batch_id, _clock, _w):
        import pyarrow.parquet as pq

        meta = json.loads((ckpt / "headrace" / "meta" / f"{batch_id}.json").read_text())
        rows_after.append(sum(pq.ParquetFile(f).metadata.num_rows
                              for st in meta["files"] for f in Path(st[3]).glob("*.parquet")))

    monkeypatch.setattr(P, "COMPACT_AFTER", 1)
    proc = Processor(parse_pipeline({"pipeline": pipe}),
                     RunOptions(name="p", checkpoint=ckpt, registry=load_registry(None, tmp_path),
                                on_output=outputs.extend, on_batch=on_batch))
    proc.run()
    assert len(rows_after) >= 40
    assert max(rows_after[:-1]) <= 3 and 3 in rows_after, rows_after
    got = [(d["_id"], d["n"], d["s"]) for d in outputs]
    assert got == [(f"k{j}", len(range(j, 40, 3)), sum(range(j, 40, 3))) for j in range(3)]
