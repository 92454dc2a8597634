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


def test_a_stage_whose_whole_stage_code_does_not_compile_runs_without_it(spark):
    """:meth:`CodegenSwitch.check`: a plan whose whole-stage code compiles keeps it; one that does
    not (``$dateFromString``'s generic parse, twice: "Code grows beyond 64 KB") turns whole-stage
    code off for the processor's later jobs, expressions still generated, results the same."""
    from pyspark.sql import functions as F

    from headrace.spark import values as V
    from headrace.spark.expr import compile_expression
    from headrace.spark.session import CodegenSwitch
    from headrace.spark.stages import Env

    s = spark.newSession()
    df = s.createDataFrame([('{"a": "2026-01-02 03:04:05", "b": "2026-02-03"}',)], "raw string").select(
        F.parse_json("raw").alias("doc"))
    parse = lambda f: V.as_timestamp(compile_expression(  # noqa: E731
        {"$dateFromString": {"dateString": f}}, Env().ctx(where="$project")).value)
    small, large = CodegenSwitch(), CodegenSwitch()
    small.set(s, 1 << 40)
    assert small.check(df.select(V.type_name(F.col("doc")).alias("x")))
    assert s.conf.get("spark.sql.codegen.wholeStage") == "true"
    large.set(s, 1 << 40)
    big = df.select(parse("$a").alias("a"), parse("$b").alias("b"))
    assert not large.check(big)
    assert (s.conf.get("spark.sql.codegen.wholeStage"), s.conf.get("spark.sql.codegen.factoryMode")) == \
        ("false", "FALLBACK")
    assert large.check(big) is False                 # checked once
    row = big.select(F.unix_millis("a").alias("a"), F.unix_millis("b").alias("b")).collect()[0]
    assert (row["a"], row["b"]) == (1767323045000, 1770076800000)
