"""The typed fast path (:mod:`headrace.spark.values.facts`): field paths whose type a micro-batch's
facts know compile to cheap typed reads, and every result is the generic path's: the same
outputs, DLQ entries and emission batches with ``HEADRACE_FAST_PATH=off``, over batches whose
facts differ (a field that is an int in one batch and a string in the next, nulls, missing
fields, arrays, documents)."""
from __future__ import annotations

import pytest
from pyspark.sql import functions as F

from headrace import ejson
from headrace.mql.doc_facts import DocFacts
from headrace.mql.source_fields import SourceFields
from headrace.spark import values as V
from headrace.spark.query import compile_query
from headrace.spark.registry import Ctx
from headrace.spark.values.facts import batch_facts, recording, source_doc
from headrace.testing import run_pipeline

pytestmark = pytest.mark.spark

BASE = 1_717_200_000_000


def _iso(ms: int) -> str:
    return ejson.format_date(ejson.millis_to_datetime(BASE + ms))


def _docs() -> list[dict]:
    """Three micro-batches (by arrival): ints, then strings and nulls where the ints were, then
    ints again with a document, an array and a missing value among them."""
    out = []
    for i in range(12):
        batch = i // 4
        d = {"arrival": _iso(batch * 20_000), "t": _iso(i * 1_500), "k": f"k{i % 3}", "flag": i % 2 == 0,
             "obs": {"w": i * 7 % 11, "t": 20 + i}, "n": i}
        if batch == 1:
            d["obs"] = {"w": "x" if i % 2 else None, "t": 20 + i}
            d["k"] = None if i == 5 else d["k"]
        if batch == 2 and i == 9:
            d["obs"] = {"w": [1, 2]}
        if batch == 2 and i == 10:
            del d["obs"]
        if i == 11:
            d["n"] = {"deep": 1}
        out.append(d)
    return out


STATELESS = [
    {"$match": {"$or": [{"obs.w": {"$gte": 3}}, {"obs.w": {"$in": ["x", None]}}, {"flag": True},
                        {"n": {"$type": "object"}}, {"obs.w": {"$exists": False}}]}},
    {"$match": {"k": {"$ne": "k1"}, "obs.t": {"$not": {"$lt": 21}}}},
    {"$project": {"_id": 0, "k": 1, "w": "$obs.w", "w2": {"$multiply": ["$obs.w", 2]},
                  "label": {"$concat": ["$k", "-", {"$toString": "$obs.t"}]}, "ty": {"$type": "$obs.w"},
                  "n": {"$add": ["$n", 1]}}},
]

WINDOW = [
    {"$tumblingWindow": {"interval": {"size": 10, "unit": "second"}, "pipeline": [
        {"$group": {"_id": "$k", "avg": {"$avg": "$obs.w"}, "max": {"$max": "$obs.w"}, "min": {"$min": "$obs.t"},
                    "sum": {"$sum": "$obs.w"}, "n": {"$count": {}}, "first": {"$first": "$flag"},
                    "top": {"$top": {"sortBy": {"obs.t": -1}, "output": "$obs.w"}}}},
        {"$sort": {"_id": 1}}]}},
]


def _keyed(key: str) -> list:
    """A window grouping by ``key``: with the facts, an int, string or boolean key's partial
    rows read ``_id`` back from the group key (no ``min_by`` of a VARIANT)."""
    return [{"$tumblingWindow": {"interval": {"size": 10, "unit": "second"}, "pipeline": [
        {"$group": {"_id": key, "n": {"$count": {}}, "s": {"$sum": "$n"}}}, {"$sort": {"_id": 1}}]}}]


def _pipeline(stages: list) -> list:
    return [{"$source": {"documents": _docs(), "timeField": {"$toDate": "$t"},
                         "replay": {"arrivalField": "arrival"}}}, *stages]


def _both(monkeypatch, stages):
    runs = []
    for mode in ("on", "off"):
        with monkeypatch.context() as m:
            m.setenv("HEADRACE_FAST_PATH", mode)
            runs.append(run_pipeline(_pipeline(stages), strip_meta=True))
    return runs


@pytest.mark.parametrize("stages", [STATELESS, WINDOW, [STATELESS[0]] + WINDOW, _keyed("$obs.t"), _keyed("$flag")],
                         ids=["stateless", "window", "match+window", "int-key", "bool-key"])
def test_fast_path_results_equal_the_generic_path(spark, monkeypatch, stages):
    fast, generic = _both(monkeypatch, stages)
    assert generic.outputs, "the pipeline has outputs"
    assert fast.outputs == generic.outputs
    assert fast.emitted_at == generic.emitted_at
    strip = lambda xs: [{k: v for k, v in d.items() if k != "dlqTime"} for d in xs]  # noqa: E731
    assert strip(fast.dlq) == strip(generic.dlq)


def test_known_paths_compile_without_the_type_dispatch(spark):
    """Over a batch whose facts know ``a`` (int) and ``s.x`` (string), ``$match`` reads them
    directly (no ``schema_of_variant``, no array iteration) and selects the same rows; the
    compilation records which answers it relied on."""
    rows = ['{"a": 1, "s": {"x": "p"}}', '{"a": null, "s": {"x": "q"}}', '{"s": {}}', '{"a": 5, "s": null}']
    df = spark.createDataFrame([(r,) for r in rows], "j string").select(F.parse_json("j").alias("doc"))
    facts = DocFacts.from_schemas([df.agg(F.schema_of_variant_agg("doc")).collect()[0][0]])
    assert (facts.kind("a"), facts.kind("s.x")) == ("int", "string")
    query = {"$or": [{"a": {"$gte": 2}}, {"s.x": "q"}, {"a": {"$exists": False}}]}
    generic = compile_query(query, Ctx(root=F.col("doc"))).value
    with batch_facts(facts), recording() as log:
        fast = compile_query(query, Ctx(root=source_doc(SourceFields()))).value
    assert sorted(set(log)) == [("a", "int"), ("s.x", "string")]
    assert "schema_of_variant" in str(generic) and "schema_of_variant" not in str(fast)
    got = [r[0] for r in df.select(fast).collect()]
    assert got == [r[0] for r in df.select(generic).collect()] == [False, True, True, True]
    # a changed field (not the source's any more) is never read with the facts
    with batch_facts(facts), recording() as log:
        compile_query(query, Ctx(root=source_doc(SourceFields(frozenset({"a"})))))
    assert ("a", "int") not in log
    assert V.known_type(V.same_type(F.col("x"), F.col("y"))) is None


@pytest.mark.parametrize("values", [["a", "b", None], [3, -2**40, None], [True, False]], ids=["string", "int", "bool"])
def test_partial_rows_of_a_typed_key_hash_aggregate(spark, values):
    """A window's partial rows grouped by a key of known int, string or boolean type take
    ``_id`` from the group key: the aggregate is a hash aggregate (no VARIANT buffer), and
    ``_id`` is each group's value, a null for a null or missing key."""
    from headrace.spark.ctxvar import bound
    from headrace.spark.docs import from_variant
    from headrace.spark.ordering import INTERPRETED
    from headrace.spark.windows import partial as P
    from headrace.spec import parse_pipeline

    docs = [{} if v is None and rep == 0 else {"k": v} for rep in range(3) for v in values]
    df = spark.createDataFrame([(i + 1, ejson.dumps(d)) for i, d in enumerate(docs)], "_seq long, j string").select(
        F.struct(F.timestamp_millis(F.lit(0)).alias("start"), F.timestamp_millis(F.lit(10_000)).alias("end"),
                 F.lit("").alias("key")).alias("_w"), "_seq", F.parse_json("j").alias("doc"),
        F.lit(0).cast("long").alias("_t"), F.lit(0).cast("long").alias("_arr"))
    facts = DocFacts.from_schemas([df.agg(F.schema_of_variant_agg("doc")).collect()[0][0]])
    win = parse_pipeline({"pipeline": [{"$source": {"documents": [{"a": 1}]}}, {"$tumblingWindow": {
        "interval": {"size": 10, "unit": "second"}, "pipeline": [{"$group": {"_id": "$k", "n": {"$count": {}}}}]}}]})
    plan = P.partial_plan(win.window)
    with batch_facts(facts), bound(INTERPRETED, False):   # a batch of this thread may have left it set
        out = P.pre_aggregate(df, plan, SourceFields())
    physical = out._jdf.queryExecution().executedPlan().toString()
    assert "HashAggregate" in physical and "SortAggregate" not in physical and "ObjectHashAggregate" not in physical
    count = next(c for c in out.columns if c.startswith("_a0_"))
    got = sorted(repr((from_variant(r["_id"]), r[count])) for r in out.collect())
    assert got == sorted(repr((v, 3)) for v in values)
