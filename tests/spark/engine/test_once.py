"""``RunOptions.once``: an ephemeral run of inline documents (one micro-batch) as one batch job,
without a streaming query, gives what the streaming query gives: the same outputs (``_id``s
included), DLQ entries and counters."""
from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from headrace.launch import prepare, start

pytestmark = pytest.mark.spark

DOCS = [{"k": "a", "n": "7", "t": "2024-01-01T00:00:01Z"}, {"k": "b", "n": "q", "t": "2024-01-01T00:00:02Z"},
        {"k": "a", "n": "5", "t": "2024-01-01T00:00:12Z"}, {"k": "a", "n": "1", "t": "2024-01-01T00:00:03Z"}]
SOURCE = {"$source": {"documents": DOCS, "timeField": {"$dateFromString": {"dateString": "$t"}}}}
PIPELINES = {
    "stateless": [SOURCE, {"$addFields": {"v": {"$toInt": "$n"}}}, {"$project": {"_id": 0, "k": 1, "v": 1}}],
    "window": [SOURCE, {"$addFields": {"v": {"$toInt": "$n"}}},
               {"$tumblingWindow": {"interval": {"size": 10, "unit": "second"},
                                    "pipeline": [{"$group": {"_id": "$k", "s": {"$sum": "$v"}, "c": {"$count": {}}}}]}}],
}


def _run(pipeline, once: bool):
    outs, dlq = [], []
    with tempfile.TemporaryDirectory() as tmp:
        proc = start(prepare({"pipeline": pipeline}), name="once", checkpoint=Path(tmp),
                     on_output=outs.extend, on_dlq=dlq.extend, once=once)
        stats = proc.run()
        ran_query = proc.query is not None
    return outs, dlq, stats, ran_query


@pytest.mark.parametrize("name", sorted(PIPELINES))
def test_one_batch_job_gives_what_the_streaming_query_gives(spark, name):
    outs, dlq, stats, query = _run(PIPELINES[name], once=False)
    outs1, dlq1, stats1, query1 = _run(PIPELINES[name], once=True)
    assert query and not query1
    assert outs and len(dlq) == 1 and "q" in dlq[0]["errInfo"]["reason"]
    assert outs1 == outs
    strip = lambda ds: [{k: v for k, v in d.items() if k not in ("dlqTime", "_id")} for d in ds]  # noqa: E731
    assert strip(dlq1) == strip(dlq)
    keys = ("inputMessageCount", "outputMessageCount", "dlqMessageCount", "lateMessageCount", "batches",
            "watermark", "status")
    assert {k: stats1[k] for k in keys} == {k: stats[k] for k in keys}
