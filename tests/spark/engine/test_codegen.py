"""Generated code is chosen per micro-batch by its input size (``HEADRACE_CODEGEN_MIN_ROWS``);
both ways of evaluating give the same outputs and DLQ entries."""
from __future__ import annotations

import pytest

from headrace.testing import run_pipeline

pytestmark = pytest.mark.spark

DOCS = [{"_id": i, "s": f"item-{i:03d}", "n": str(i) if i % 7 else "x", "a": [i, i + 1, None],
         "t": {"$date": 1_700_000_000_000 + i * 61_000}} for i in range(60)]
PIPELINE = [
    {"$source": {"documents": DOCS}},
    {"$match": {"$expr": {"$gt": [{"$strLenCP": "$s"}, 3]}}},
    {"$addFields": {"k": {"$toInt": "$n"}, "p": {"$substrCP": ["$s", 0, 4]},
                    "m": {"$dateToString": {"date": "$t", "format": "%Y-%m-%d %H:%M"}},
                    "x": {"$sum": "$a"}, "c": {"$cond": [{"$gt": ["$_id", 30]}, "hi", "lo"]}}},
    {"$project": {"a": 0}},
]


def test_generated_and_interpreted_evaluation_agree(monkeypatch):
    monkeypatch.setenv("HEADRACE_CODEGEN_MIN_ROWS", "0")          # every batch with generated code
    generated = run_pipeline(PIPELINE, strip_meta=True)
    monkeypatch.setenv("HEADRACE_CODEGEN_MIN_ROWS", "1000000")    # none
    interpreted = run_pipeline(PIPELINE, strip_meta=True)
    assert len(generated.outputs) == 51 and len(generated.dlq) == 9
    assert generated.outputs == interpreted.outputs
    strip = lambda ds: [{k: v for k, v in d.items() if k not in ("dlqTime", "_id")} for d in ds]  # noqa: E731
    assert strip(generated.dlq) == strip(interpreted.dlq)


def test_use_codegen_sets_the_sessions_evaluation_mode(spark):
    from headrace.spark.session import use_codegen

    s = spark.newSession()
    use_codegen(s, True)
    assert (s.conf.get("spark.sql.codegen.wholeStage"), s.conf.get("spark.sql.codegen.factoryMode")) == \
        ("true", "FALLBACK")
    use_codegen(s, False)
    assert (s.conf.get("spark.sql.codegen.wholeStage"), s.conf.get("spark.sql.codegen.factoryMode")) == \
        ("false", "NO_CODEGEN")
