"""Query equality with embedded documents in MongoDB's field order (headrace.spark.predicates_order):
the manual's examples and hand cases against the oracle, a processor, and a seeded random
differential test."""
from __future__ import annotations

import os

import pytest
from _query_helpers import evaluate, mismatches

from headrace.mql.match import matches

pytestmark = pytest.mark.spark


# The manual: "Equality matches on the whole embedded document require an exact match of the
# specified <value> document, including the field order." VARIANT sorts fields, so the engine
# reads the order from the source records' text (headrace.spark.predicates_order).
ORDER_DOCS = [
    {"item": "journal", "size": {"h": 14, "uom": "cm", "w": 21},
     "instock": [{"warehouse": "A", "qty": 5}, {"qty": 15, "warehouse": "C"}]},
    {"item": "paper", "size": {"w": 21, "h": 14, "uom": "cm"},
     "instock": [{"qty": 5, "warehouse": "A"}], "dims": {"box": {"l": 1, "w": 2}, "n": 1}},
    {"item": "planner", "size": {"h": 14, "uom": "cm", "w": 21.0},
     "instock": {"qty": 5, "warehouse": "A"}, "dims": {"n": 1, "box": {"w": 2, "l": 1}}},
]
ORDER_CASES = [
    ({"size": {"h": 14, "uom": "cm", "w": 21}}, ["journal", "planner"]),
    ({"size": {"w": 21, "h": 14, "uom": "cm"}}, ["paper"]),
    ({"size": {"$eq": {"uom": "cm", "h": 14, "w": 21}}}, []),
    ({"size": {"$ne": {"h": 14, "uom": "cm", "w": 21}}}, ["paper"]),
    ({"instock": {"warehouse": "A", "qty": 5}}, ["journal"]),          # an element of the array
    ({"instock": {"qty": 5, "warehouse": "A"}}, ["paper", "planner"]),  # not journal's 2nd element
    ({"instock.0": {"qty": 5, "warehouse": "A"}}, ["paper"]),
    ({"instock": [{"qty": 5, "warehouse": "A"}]}, ["paper"]),
    ({"instock": {"$in": [{"qty": 15, "warehouse": "C"}, 3]}}, ["journal"]),
    ({"instock": {"$nin": [{"warehouse": "A", "qty": 5}, {"qty": 5, "warehouse": "A"}]}}, []),
    ({"instock": {"$all": [{"warehouse": "A", "qty": 5}, {"qty": 15, "warehouse": "C"}]}}, ["journal"]),
    ({"dims": {"box": {"l": 1, "w": 2}, "n": 1}}, ["paper"]),
    ({"dims": {"n": 1, "box": {"l": 1, "w": 2}}}, []),                 # top level in order, inside not
    ({"$or": [{"size": {"w": 21, "h": 14, "uom": "cm"}}, {"item": "journal"}]}, ["journal", "paper"]),
]


def test_embedded_document_equality_is_field_order_sensitive(spark):
    for q, want in ORDER_CASES:
        assert [d["item"] for d in ORDER_DOCS if matches(d, q)] == want, q    # the oracle agrees
    got = evaluate(spark, ORDER_DOCS, [q for q, _ in ORDER_CASES], text=True)
    for (q, want), row in zip(ORDER_CASES, got):
        assert [d["item"] for d, hit in zip(ORDER_DOCS, row) if hit] == want, q


def test_a_processor_matches_embedded_documents_in_field_order(spark):
    """The manual's example through a processor, after stages that keep the field: the order
    comes from the records' raw text."""
    from headrace.testing import run_pipeline

    q = {"$or": [{"size": {"w": 21, "h": 14, "uom": "cm"}}, {"instock": {"qty": 15, "warehouse": "C"}}]}
    stages = [{"$addFields": {"x": 1}}, {"$match": {"item": {"$ne": "none"}}}, {"$project": {"x": 0}}]
    res = run_pipeline(stages + [{"$match": q}, {"$project": {"_id": 0, "item": 1}}], ORDER_DOCS)
    assert sorted(d["item"] for d in res.outputs) == ["journal", "paper"]


def test_computed_documents_still_compare_without_field_order(spark):
    """Where the value is not the source's (here rebuilt by ``$addFields``), no text says its
    order: equality ignores it, the known difference the README lists."""
    from headrace.testing import run_pipeline

    res = run_pipeline([{"$addFields": {"size": {"$mergeObjects": ["$size", {}]}}},
                        {"$match": {"size": {"w": 21, "h": 14, "uom": "cm"}}}, {"$project": {"_id": 0, "item": 1}}],
                       ORDER_DOCS)
    assert sorted(d["item"] for d in res.outputs) == ["journal", "paper", "planner"]


def test_random_document_equality_in_field_order_agrees_with_the_oracle(spark):
    """Documents whose embedded documents have their fields in random order, and equality
    queries (``$eq $ne $in $nin $all``, through arrays and indexes) whose constants are values of
    those documents with their fields shuffled again: the engine, reading the order from the
    documents' text, agrees with the oracle."""
    import random

    r = random.Random(int(os.environ.get("HEADRACE_QUERY_SEED", "20240601")))

    def obj(depth):
        keys = r.sample(["a", "b", "c"], r.randint(1, 3))
        return {k: (obj(depth - 1) if depth and r.random() < 0.3 else r.choice([1, 2.0, "x"])) for k in keys}

    def value():
        x = r.random()
        return obj(1) if x < 0.5 else [obj(1) if r.random() < 0.7 else 1 for _ in range(r.randint(1, 3))]

    def shuffled(v):
        if isinstance(v, dict):
            keys = list(v)
            r.shuffle(keys)
            return {k: shuffled(v[k]) for k in keys}
        return [shuffled(x) for x in v] if isinstance(v, list) else v

    docs = [{"item": i, "p": value(), "q": {"r": value()}} for i in range(40)]
    queries = []
    for _ in range(int(os.environ.get("HEADRACE_QUERY_COUNT", "64")) // 3):
        d = r.choice(docs)
        path, v = r.choice([("p", d["p"]), ("q.r", d["q"]["r"]), ("q", d["q"])])
        if isinstance(v, list) and r.random() < 0.5:
            path, v = (f"{path}.0", v[0]) if r.random() < 0.5 else (path, r.choice(v))
        c = shuffled(v) if r.random() < 0.6 else v
        op = r.choice(["eq", "$eq", "$ne", "$in", "$nin", "$all"])
        arg = c if op in ("eq", "$eq", "$ne") else [c, 3] if op in ("$in", "$nin") else [c]
        queries.append({path: arg} if op == "eq" else {path: {op: arg}})
    bad = mismatches(spark, docs, queries, text=True)
    assert not bad, f"{len(bad)} disagreements, e.g.:\n" + "\n".join(
        f"{q} on {d}: spark {s}, mongodb {m}" for q, d, s, m in bad[:15])
