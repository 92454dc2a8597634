"""A small NumberLong in the input is a ``long`` to ``$type`` (the expression and the query
operator), as in MongoDB: VARIANT keeps the smallest integer width, so the engine reads the
wrapper from the source record's text where the value is still the source's
(headrace.spark.source_text); ``$convert`` to binData gives it 8 bytes."""
from __future__ import annotations

import pytest

from headrace.testing import run_pipeline

pytestmark = pytest.mark.spark

DOCS = [
    {"_id": 0, "a": {"$numberLong": "71"}, "b": {"c": {"$numberLong": "5"}}},
    {"_id": 1, "a": 71, "b": {"c": 5}},
    {"_id": 2, "a": {"$numberLong": "1099511627776"}},
    {"_id": 3, "a": [{"$numberLong": "3"}, 4]},
]


def test_type_expression_tells_a_small_numberlong_from_an_int(spark):
    res = run_pipeline([{"$match": {"_id": {"$gte": 0}}},
                        {"$project": {"t": {"$type": "$a"}, "u": {"$type": ["$b.c"]}}}], DOCS)
    assert [(d["_id"], d["t"], d["u"]) for d in sorted(res.outputs, key=lambda d: d["_id"])] == [
        (0, "long", "long"), (1, "int", "int"), (2, "long", "missing"), (3, "array", "missing")]


@pytest.mark.parametrize("spec,want", [("long", [0, 2, 3]), (18, [0, 2, 3]), ("int", [1, 3]), (16, [1, 3]),
                                       ("number", [0, 1, 2, 3]), (["int", "long"], [0, 1, 2, 3])])
def test_type_query_tells_a_small_numberlong_from_an_int(spark, spec, want):
    res = run_pipeline([{"$match": {"a": {"$type": spec}}}, {"$project": {"_id": 1}}], DOCS)
    assert sorted(d["_id"] for d in res.outputs) == want


def test_a_small_numberlong_converts_to_eight_bytes_of_bindata(spark):
    size = {"$binarySize": {"$convert": {"input": "$a", "to": "binData"}}}
    res = run_pipeline([{"$match": {"_id": {"$lt": 3}}}, {"$project": {"n": size}}], DOCS)
    assert sorted((d["_id"], d["n"]) for d in res.outputs) == [(0, 8), (1, 4), (2, 8)]


def test_a_computed_value_loses_the_distinction(spark):
    """Where a stage computed the value, no text says it was a NumberLong: the README's known
    difference (a NumberLong within 32 bits is an int)."""
    res = run_pipeline([{"$addFields": {"a": {"$add": ["$a", 0]}}}, {"$project": {"t": {"$type": "$a"}}}],
                       DOCS[:1])
    assert [d["t"] for d in res.outputs] == ["int"]


@pytest.mark.parametrize("spec,want", [("long", [0, 2]), ("int", [1]), (["int", "long"], [0, 1, 2])])
def test_json_schema_bson_type_tells_a_small_numberlong_from_an_int(spark, spec, want):
    """``$jsonSchema``'s ``bsonType`` reads the record's text as ``$type`` does, nested too."""
    schema = {"required": ["a"], "properties": {"a": {"bsonType": spec}}}
    res = run_pipeline([{"$match": {"$jsonSchema": schema}}, {"$project": {"_id": 1}}], DOCS[:3])
    assert sorted(d["_id"] for d in res.outputs) == want
    nested = {"properties": {"b": {"properties": {"c": {"bsonType": "long"}}}}}
    res = run_pipeline([{"$match": {"$jsonSchema": nested}}, {"$project": {"_id": 1}}], DOCS[:2])
    assert sorted(d["_id"] for d in res.outputs) == [0]
