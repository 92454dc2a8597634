"""A Decimal128's exponent kept end to end (``headrace/spark/expr/decimal_variant.py`` ``to_variant``,
``headrace/spark/docs.py`` ``variant_holds``): MongoDB prints ``NumberDecimal("200.0")``,
``NumberDecimal("2E+2")`` and ``NumberDecimal("200")`` as they are, and computes the exponent
of a result as IEEE 754 does (a sum at its operands' smaller exponent, a product at their sum,
an exact quotient at their difference). Spark drops a VARIANT decimal's trailing zeros when it
reads one, so such decimals travel as ``{"$numberDecimal"}`` wrappers; they still compare, group
and sort by value."""
from __future__ import annotations

import decimal
import json

import pytest

from headrace import ejson
from headrace.spark.docs import variant_holds
from headrace.testing import run_pipeline

pytestmark = pytest.mark.spark

D = decimal.Decimal


def nd(text: str) -> dict:
    return {"$numberDecimal": text}


def _texts(outputs: list[dict]) -> list[dict]:
    return [json.loads(ejson.dumps(d)) for d in outputs]


def test_variant_holds_only_what_spark_reads_back_as_it_is():
    assert variant_holds(D("2.5")) and variant_holds(D("200")) and variant_holds(D("0")) and variant_holds(D("-7"))
    for text in ("2.50", "200.0", "2E+2", "0.00", "-0", "1E-40", "1" * 39):
        assert not variant_holds(D(text)), text


def test_exponents_pass_through_and_compute_as_mongodb(spark):
    docs = [{"_id": 1, "a": ejson.loads(json.dumps(nd("50.0"))), "b": ejson.loads(json.dumps(nd("2E+2"))),
             "c": ejson.loads(json.dumps(nd("0.00"))), "p": ejson.loads(json.dumps(nd("1.50")))}]
    res = run_pipeline([{"$source": {"documents": docs}}, {"$project": {
        "a": 1, "b": 1, "c": 1,
        "sum": {"$add": ["$p", 1]},                       # exponent min(-2, 0): 2.50
        "prod": {"$multiply": ["$a", 4]},                 # 200.0
        "quot": {"$divide": ["$a", 2]},                   # exact: ideal exponent -1: 25.0
        "third": {"$divide": ["$p", 3]},                  # exact: 0.50
        "dbl": {"$add": [nd("1"), 0.5]},                  # a double counts as 15 digits: 0.500000000000000
        "str": {"$toString": "$a"},
        "type": {"$type": "$a"},
        "round": {"$round": ["$p", 0]},                   # quantize: 2
        "trunc": {"$trunc": ["$b", -1]},                  # quantize at exponent 1: 2.0E+2
        "zero": {"$subtract": ["$p", "$p"]},              # 0.00
        "eq": {"$eq": ["$p", nd("1.5")]},                 # by value
        "cmp": {"$cmp": ["$a", 50]}, "gt": {"$gt": ["$a", 49.5]}, "num": {"$isNumber": "$a"},
        "double": {"$toDouble": "$a"}, "long": {"$toLong": "$b"},
    }}], strip_meta=True)
    assert _texts(res.outputs) == [{
        "_id": 1, "a": nd("50.0"), "b": nd("2E+2"), "c": nd("0.00"), "sum": nd("2.50"), "prod": nd("200.0"),
        "quot": nd("25.0"), "third": nd("0.50"), "dbl": nd("1.500000000000000"), "str": "50.0", "type": "decimal",
        "round": nd("2"), "trunc": nd("2.0E+2"), "zero": nd("0.00"), "eq": True,
        "cmp": 0, "gt": True, "num": True, "double": 50.0, "long": 200}]
    assert not res.dlq


def test_trailing_zeros_group_match_and_sort_by_value(spark):
    docs = [{"_id": 1, "price": D("2.50")}, {"_id": 2, "price": D("2.5")}, {"_id": 3, "price": D("10")},
            {"_id": 4, "price": D("1.0")}]
    matched = run_pipeline([{"$source": {"documents": docs}}, {"$match": {"price": 2.5}}, {"$project": {"_id": 1}}],
                           strip_meta=True)
    assert [d["_id"] for d in matched.outputs] == [1, 2]
    at = ejson.millis_to_datetime(1_717_200_000_000)
    grouped = run_pipeline([{"$source": {"documents": [{**d, "t": at} for d in docs], "timeField": "$t"}},
                            {"$tumblingWindow": {"interval": {"size": 1, "unit": "hour"}, "pipeline": [
                                {"$group": {"_id": "$price", "n": {"$count": {}}, "total": {"$sum": "$price"},
                                            "avg": {"$avg": "$price"}}},
                                {"$sort": {"_id": 1}}]}}], strip_meta=True)
    assert [(str(d["_id"]), d["n"]) for d in grouped.outputs] == [("1.0", 1), ("2.50", 2), ("10", 1)]
    assert [str(d["total"]) for d in grouped.outputs] == ["1.0", "5.00", "10"]
    assert [str(d["avg"]) for d in grouped.outputs] == ["1.0", "2.50", "10"]
