"""How many Spark jobs a micro-batch runs: a stateless and a windowed pipeline over replayed
documents (one micro-batch per arrival instant), counted from Spark's status tracker (the jobs
of the query's run id, i.e. everything its micro-batches ran, Spark's own included).

Run: ``.venv/bin/python benchmarks/jobs_per_batch.py``; prints one line per pipeline.
"""
from __future__ import annotations

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if "HEADRACE_ROOT" not in __import__("os").environ:
    sys.path.insert(0, str(ROOT))

BATCHES = 6


def _docs() -> list[dict]:
    out = []
    for i in range(BATCHES):
        for j in range(5):
            out.append({"arrival": f"2026-01-01T12:00:{i * 5:02d}Z", "t": f"2026-01-01T12:00:{i * 5 + j:02d}Z",
                        "v": i * 10 + j})
    return out


PIPELINES = {
    "stateless ($match, $addFields)": [{"$match": {"v": {"$gte": 0}}}, {"$addFields": {"w": {"$add": ["$v", 1]}}}],
    "tumbling window ($group)": [{"$tumblingWindow": {"interval": {"size": 10, "unit": "second"},
                                                      "pipeline": [{"$group": {"_id": None, "n": {"$sum": 1}}}]}}],
}


def _launcher():
    try:
        from headrace.launch import prepare, start
    except ImportError:     # an older checkout (before headrace.launch), for a before/after figure
        from headrace.connections import load_registry
        from headrace.spark.session import get_spark
        from headrace.spec import parse_pipeline

        def prepare(stages):
            return parse_pipeline({"pipeline": stages})

        def start(parsed, name, checkpoint, on_output):
            get_spark()
            from headrace.spark.engine import Processor, RunOptions

            return Processor(parsed, RunOptions(name=name, checkpoint=Path(checkpoint), registry=load_registry(),
                                                on_output=on_output))
    return prepare, start


def main() -> int:
    prepare, start = _launcher()

    for name, stages in PIPELINES.items():
        src = {"$source": {"documents": _docs(), "timeField": {"$dateFromString": {"dateString": "$t"}},
                           "replay": {"arrivalField": "arrival"}}}
        run = prepare([src, *stages])
        with tempfile.TemporaryDirectory() as tmp:
            proc = start(run, name="jobs", checkpoint=tmp, on_output=lambda d: None)
            stats = proc.run()
            from headrace.spark.session import get_spark

            tracker = get_spark().sparkContext.statusTracker()
            jobs = tracker.getJobIdsForGroup(str(proc.query.runId))
        n = stats["batches"]
        print(f"{name}: {len(jobs)} jobs over {n} micro-batches = {len(jobs) / max(1, n):.1f} per batch", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
