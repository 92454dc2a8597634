"""A stage reads each field path once per row (``headrace.spark.hoist``), and builds its Column
trees once per processor (``Env.once``)."""
from __future__ import annotations

import pytest

from headrace.spec.model import Stage
from headrace.spec.stages import spec_of
from _expr_helpers import _decode, doc_frame

pytestmark = pytest.mark.spark


def _stage(name, arg):
    return Stage(name, 1, arg, spec_of(name, arg))


def _batch(spark, docs):
    from pyspark.sql import functions as F

    return doc_frame(spark, docs).withColumns({"_err": F.lit(None).cast("string"),
                                               "_op": F.lit(None).cast("string")})


def _run(df, st, env):
    from headrace.spark.stages import apply_stages

    out = apply_stages(df, [st], env)
    rows = out.select("doc", "_err").collect()
    return out, [(_decode(r["doc"]), r["_err"]) for r in rows]


def test_a_field_path_is_read_once_per_stage(spark):
    from headrace.spark.stages import Env

    st = _stage("$project", {"s": {"$substr": ["$isbn", 0, 3]}, "n": {"$toInt": "$$ROOT.isbn"},
                             "c": {"$concat": ["$$CURRENT.isbn", "-", "$isbn"]}})
    out, got = _run(_batch(spark, [{"_id": 1, "isbn": "0451"}, {"_id": 2, "isbn": "x"}]), st, Env())
    assert got[0] == ({"_id": 1, "s": "045", "n": 451, "c": "0451-0451"}, None)
    assert got[1][1].startswith("$toInt")   # "x" does not convert: that row fails alone
    plan = out._jdf.queryExecution().optimizedPlan().toString()
    assert plan.count("$['isbn']") == 1, plan


def test_a_stage_builds_its_trees_once_and_reuses_them_per_batch(spark):
    from headrace.spark.stages import Env

    env = Env()
    st = _stage("$addFields", {"t": {"$multiply": ["$a", 2]}})
    _, first = _run(_batch(spark, [{"a": 1}]), st, env)
    built = dict(env._memo)
    _, second = _run(_batch(spark, [{"a": 5}, {"a": "z"}]), st, env)
    assert env._memo == built                        # nothing rebuilt for the second batch
    assert first == [({"a": 1, "t": 2}, None)]
    assert second[0] == ({"a": 5, "t": 10}, None) and "$multiply" in second[1][1]
    # a different stage (even an equal one) is compiled for itself
    _run(_batch(spark, [{"a": 1}]), _stage("$addFields", {"t": {"$multiply": ["$a", 2]}}), env)
    assert len(env._memo) == 2


def test_known_paths_are_read_once_and_set_fields_binds_no_lambda(spark):
    """Over a batch whose facts know ``obs.w`` (int), ``$addFields`` of two fields that read it
    reads it from the document once, and binds its values and the document between the two
    fields as columns, not in a one-element ``transform`` (evaluated without generated code)."""
    from pyspark.sql import functions as F

    from headrace.mql.doc_facts import DocFacts
    from headrace.spark.stages import Env, apply_stages
    from headrace.spark.values.facts import batch_facts

    rows = ['{"obs": {"w": 3}}', '{"obs": {"w": 40}}', '{"obs": {"w": null}}', '{"obs": {}}']
    df = spark.createDataFrame([(r,) for r in rows], "raw string").select(
        F.parse_json("raw").alias("doc"), "raw", F.lit(None).cast("string").alias("_err"),
        F.lit(None).cast("string").alias("_op"))
    facts = DocFacts.from_schemas([df.agg(F.schema_of_variant_agg("doc")).collect()[0][0]])
    st = _stage("$addFields", {"kw": {"$divide": ["$obs.w", 1000]}, "hot": {"$gt": ["$obs.w", 30]}})
    env = Env()
    with env.active(), batch_facts(facts):
        out = apply_stages(df, [st], env, raw=("raw", "_ts"))
    plan = out._jdf.queryExecution().optimizedPlan().toString()
    assert plan.count("variant_get(doc") == 1 and "lambdafunction" not in plan, plan
    got = [(_decode(r["doc"]), r["_err"]) for r in out.select("doc", "_err").collect()]
    assert got == [({"obs": {"w": 3}, "kw": 0.003, "hot": False}, None),
                   ({"obs": {"w": 40}, "kw": 0.04, "hot": True}, None),
                   ({"obs": {"w": None}, "kw": None, "hot": False}, None),
                   ({"obs": {}, "kw": None, "hot": False}, None)]
