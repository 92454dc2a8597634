"""headrace.spark.query / headrace.spark.jsonschema: MongoDB's documented query examples, edge
cases, and a randomized differential test against the reference ``headrace.mql.match``.

Each test builds one DataFrame and evaluates many query columns in a few Spark jobs."""
from __future__ import annotations

import datetime as dt
import decimal
import os

import pytest
from _query_helpers import OID_A, OID_B, Gen, evaluate, mismatches

from headrace import ejson
from headrace.ejson import MAXKEY, MINKEY, Int64
from headrace.errors import PipelineError
from headrace.mql.jsonschema import validate_schema
from headrace.mql.match import matches
from headrace.mql.query import validate_query

pytestmark = pytest.mark.spark


def rx(pattern, options=""):
    return {"$regularExpression": {"pattern": pattern, "options": options}}


# --------------------------------------------------------------------- the manual's examples

INVENTORY = [
    {"item": "journal", "qty": 25, "size": {"h": 14, "uom": "cm", "w": 21}, "status": "A"},
    {"item": "notebook", "qty": 50, "size": {"h": 8.5, "uom": "in", "w": 11}, "status": "A"},
    {"item": "paper", "qty": 100, "size": {"h": 8.5, "uom": "in", "w": 11}, "status": "D"},
    {"item": "planner", "qty": 75, "size": {"h": 22.85, "uom": "cm", "w": 30}, "status": "D"},
    {"item": "postcard", "qty": 45, "size": {"h": 10, "uom": "cm", "w": 15.25}, "status": "A"},
]
ARRAYS = [
    {"item": "journal", "qty": 25, "tags": ["blank", "red"], "dim_cm": [14, 21]},
    {"item": "notebook", "qty": 50, "tags": ["red", "blank"], "dim_cm": [14, 21]},
    {"item": "paper", "qty": 100, "tags": ["red", "blank", "plain"], "dim_cm": [14, 21]},
    {"item": "planner", "qty": 75, "tags": ["blank", "red"], "dim_cm": [22.85, 30]},
    {"item": "postcard", "qty": 45, "tags": ["blue"], "dim_cm": [10, 15.25]},
]
INSTOCK = [
    {"item": "journal", "instock": [{"qty": 5, "warehouse": "A"}, {"qty": 15, "warehouse": "C"}]},
    {"item": "notebook", "instock": [{"qty": 5, "warehouse": "C"}]},
    {"item": "paper", "instock": [{"qty": 60, "warehouse": "A"}, {"qty": 15, "warehouse": "B"}]},
    {"item": "planner", "instock": [{"qty": 40, "warehouse": "A"}, {"qty": 5, "warehouse": "B"}]},
    {"item": "postcard", "instock": [{"qty": 15, "warehouse": "B"}, {"qty": 35, "warehouse": "C"}]},
]
NULLS = [{"item": 1, "x": None}, {"item": 2}]
PRODUCTS = [
    {"item": 100, "sku": "abc123", "description": "Single line description."},
    {"item": 101, "sku": "abc789", "description": "First line\nSecond line"},
    {"item": 102, "sku": "xyz456", "description": "Many spaces before     line"},
    {"item": 103, "sku": "xyz789", "description": "Multiple\nline description"},
    {"item": 104, "sku": "Abc789", "description": "SKU is in uppercase"},
]
ADDRESSES = [
    {"item": 1, "zipCode": "90698345"}, {"item": 2, "zipCode": 43339374.0},
    {"item": 3, "zipCode": Int64(3921412000)}, {"item": 4, "zipCode": 88602117},
    {"item": 5, "zipCode": ["834847278", "1893289032"]},
]
SURVEY = [
    {"item": 1, "results": [{"product": "abc", "score": 10}, {"product": "xyz", "score": 5}]},
    {"item": 2, "results": [{"product": "abc", "score": 8}, {"product": "xyz", "score": 7}]},
    {"item": 3, "results": [{"product": "abc", "score": 7}, {"product": "xyz", "score": 8}]},
    {"item": 4, "results": [{"product": "abc", "score": 7}, {"product": "def", "score": 8}]},
    {"item": 5, "results": [82, 85, 88]}, {"item": 6, "results": [75, 88, 89]},
]
ALL = [
    {"item": "xyz", "tags": ["school", "book", "bag", "headphone", "appliance"],
     "qty": [{"color": "blue", "num": 10, "size": "S"}, {"color": "blue", "num": 45, "size": "M"},
             {"color": "green", "num": 100, "size": "L"}]},
    {"item": "abc", "tags": ["appliance", "school", "book"],
     "qty": [{"color": "green", "num": 100, "size": "6"}, {"color": "blue", "num": 50, "size": "6"},
             {"color": "brown", "num": 100, "size": "8"}]},
    {"item": "efg", "tags": ["school", "book"],
     "qty": [{"color": "blue", "num": 10, "size": "S"}, {"color": "blue", "num": 100, "size": "M"},
             {"color": "green", "num": 100, "size": "L"}]},
    {"item": "ijk", "tags": ["electronics", "school"], "qty": [{"color": "green", "num": 100, "size": "M"}]},
]
MOD = [{"item": 1, "qty": 0}, {"item": 2, "qty": 5}, {"item": 3, "qty": 12}]
SCHEMA = {
    "required": ["item", "qty", "instock"],
    "properties": {
        "item": {"bsonType": "string"},
        "qty": {"bsonType": "int"},
        "size": {"bsonType": "object", "required": ["uom"],
                 "properties": {"uom": {"bsonType": "string"}, "h": {"bsonType": "double"},
                                "w": {"bsonType": "double"}}},
        "instock": {"bsonType": "bool"},
    },
}
SCHEMA_DOCS = [
    {"instock": True, "item": "journal", "qty": 25, "size": {"h": 14.0, "uom": "cm", "w": 21.0}},
    {"instock": True, "item": "notebook", "qty": 50, "size": {"h": 8.5, "uom": "in", "w": 11.0}},
    {"instock": 1.0, "item": "paper", "qty": 100, "size": {"h": 8.5, "uom": "in", "w": 11.0}},
    {"instock": 1.0, "item": "planner", "qty": 75, "size": {"h": 22.85, "uom": "cm", "w": 30.0}},
    {"instock": True, "item": "postcard", "qty": 45, "size": {"h": 10.0, "uom": "cm", "w": 15.25}},
    {"instock": True, "item": "apple", "qty": 45, "status": "A"},
    {"instock": True, "item": "pears", "qty": 50, "status": "A"},
]

EXAMPLES = [
    (INVENTORY, {}, ["journal", "notebook", "paper", "planner", "postcard"]),
    (INVENTORY, {"status": "D"}, ["paper", "planner"]),
    (INVENTORY, {"status": {"$in": ["A", "D"]}}, ["journal", "notebook", "paper", "planner", "postcard"]),
    (INVENTORY, {"status": "A", "qty": {"$lt": 30}}, ["journal"]),
    (INVENTORY, {"$or": [{"status": "A"}, {"qty": {"$lt": 30}}]}, ["journal", "notebook", "postcard"]),
    (INVENTORY, {"status": "A", "$or": [{"qty": {"$lt": 30}}, {"item": rx("^p")}]}, ["journal", "postcard"]),
    (INVENTORY, {"size": {"h": 14, "uom": "cm", "w": 21}}, ["journal"]),
    (INVENTORY, {"size.uom": "in"}, ["notebook", "paper"]),
    (INVENTORY, {"size.h": {"$lt": 15}}, ["journal", "notebook", "paper", "postcard"]),
    (INVENTORY, {"size.h": {"$lt": 15}, "size.uom": "in", "status": "D"}, ["paper"]),
    (ARRAYS, {"tags": ["red", "blank"]}, ["notebook"]),
    (ARRAYS, {"tags": {"$all": ["red", "blank"]}}, ["journal", "notebook", "paper", "planner"]),
    (ARRAYS, {"tags": "red"}, ["journal", "notebook", "paper", "planner"]),
    (ARRAYS, {"dim_cm": {"$gt": 25}}, ["planner"]),
    (ARRAYS, {"dim_cm": {"$gt": 15, "$lt": 20}}, ["journal", "notebook", "paper", "postcard"]),
    (ARRAYS, {"dim_cm": {"$elemMatch": {"$gt": 22, "$lt": 30}}}, ["planner"]),
    (ARRAYS, {"dim_cm.1": {"$gt": 25}}, ["planner"]),
    (ARRAYS, {"tags": {"$size": 3}}, ["paper"]),
    (INSTOCK, {"instock": {"qty": 5, "warehouse": "A"}}, ["journal"]),
    (INSTOCK, {"instock.0.qty": {"$lte": 20}}, ["journal", "notebook", "postcard"]),
    (INSTOCK, {"instock.qty": {"$lte": 20}}, ["journal", "notebook", "paper", "planner", "postcard"]),
    (INSTOCK, {"instock": {"$elemMatch": {"qty": 5, "warehouse": "A"}}}, ["journal"]),
    (INSTOCK, {"instock": {"$elemMatch": {"qty": {"$gt": 10, "$lte": 20}}}}, ["journal", "paper", "postcard"]),
    (INSTOCK, {"instock.qty": {"$gt": 10, "$lte": 20}}, ["journal", "paper", "planner", "postcard"]),
    (INSTOCK, {"instock.qty": 5, "instock.warehouse": "A"}, ["journal", "planner"]),
    (NULLS, {"x": None}, [1, 2]),
    (NULLS, {"x": {"$ne": None}}, []),
    (NULLS, {"x": {"$type": 10}}, [1]),
    (NULLS, {"x": {"$exists": False}}, [2]),
    (PRODUCTS, {"sku": {"$regex": "789$"}}, [101, 103, 104]),
    (PRODUCTS, {"sku": {"$regex": "^ABC", "$options": "i"}}, [100, 101, 104]),
    (PRODUCTS, {"description": {"$regex": "^S", "$options": "m"}}, [100, 101, 104]),
    (PRODUCTS, {"description": {"$regex": "^S"}}, [100, 104]),
    (PRODUCTS, {"description": {"$regex": "m.*line", "$options": "si"}}, [102, 103]),
    (PRODUCTS, {"description": {"$regex": "m.*line", "$options": "i"}}, [102]),
    (PRODUCTS, {"sku": {"$regex": "abc #category code\n123 #item number", "$options": "x"}}, [100]),
    (PRODUCTS, {"sku": {"$in": [rx("^abc"), rx("^xyz4")]}}, [100, 101, 102]),
    (PRODUCTS, {"sku": {"$not": rx("^abc")}}, [102, 103, 104]),
    (ADDRESSES, {"zipCode": {"$type": "string"}}, [1, 5]),
    (ADDRESSES, {"zipCode": {"$type": 1}}, [2]),
    (ADDRESSES, {"zipCode": {"$type": "long"}}, [3]),
    (ADDRESSES, {"zipCode": {"$type": "int"}}, [4]),
    (ADDRESSES, {"zipCode": {"$type": "number"}}, [2, 3, 4]),
    (ADDRESSES, {"zipCode": {"$type": ["string", "double"]}}, [1, 2, 5]),
    (ADDRESSES, {"zipCode": {"$type": "array"}}, [5]),
    (SURVEY, {"results": {"$elemMatch": {"$gte": 80, "$lt": 85}}}, [5]),
    (SURVEY, {"results": {"$elemMatch": {"product": "xyz", "score": {"$gte": 8}}}}, [3]),
    (SURVEY, {"results": {"$elemMatch": {"product": "xyz"}}}, [1, 2, 3]),
    (SURVEY, {"results.product": {"$ne": "xyz"}}, [4, 5, 6]),
    (SURVEY, {"results": {"$elemMatch": {"product": {"$ne": "xyz"}}}}, [1, 2, 3, 4]),
    (ALL, {"tags": {"$all": ["appliance", "school", "book"]}}, ["xyz", "abc"]),
    (ALL, {"qty": {"$all": [{"$elemMatch": {"size": "M", "num": {"$gt": 50}}},
                            {"$elemMatch": {"num": 100, "color": "green"}}]}}, ["efg", "ijk"]),
    (ALL, {"qty.num": {"$all": [50]}}, ["abc"]),
    (MOD, {"qty": {"$mod": [4, 0]}}, [1, 3]),
    (MOD, {"qty": {"$mod": [4.5, 0]}}, [1, 3]),
    (MOD, {"qty": {"$mod": [-4, 0]}}, [1, 3]),
    (SCHEMA_DOCS, {"$jsonSchema": SCHEMA}, ["journal", "notebook", "postcard", "apple", "pears"]),
    (SCHEMA_DOCS, {"$nor": [{"$jsonSchema": SCHEMA}]}, ["paper", "planner"]),
]


def _run(spark, cases):
    """Evaluate (docs, query) cases in as few jobs as possible: every collection's documents in
    one frame, each query a column; returns the matching documents' ``item`` per case."""
    docs, offsets = [], {}
    for coll, _, _ in cases:
        if id(coll) not in offsets:
            offsets[id(coll)] = (len(docs), len(coll))
            docs.extend(coll)
    res = evaluate(spark, docs, [q for _, q, _ in cases])
    out = []
    for (coll, _, _), row in zip(cases, res):
        start, n = offsets[id(coll)]
        out.append([docs[start + i].get("item") for i in range(n) if row[start + i]])
    return out


def test_documented_examples(spark):
    for _, q, _ in EXAMPLES:
        validate_query(q, "$match")
    got = _run(spark, EXAMPLES)
    for (coll, q, want), have in zip(EXAMPLES, got):
        assert [d.get("item") for d in coll if matches(d, q)] == want, q  # the oracle agrees
        assert have == want, q


# --------------------------------------------------------------------- edge cases vs the oracle

EDGE_DOCS = [
    {"a": float("nan")}, {"a": decimal.Decimal("NaN")}, {"a": float("inf")}, {"a": -0.0},
    {"a": 2**53 + 1}, {"a": float(2**53)}, {"a": Int64(2**62)}, {"a": float(2**62)},
    {"a": decimal.Decimal("1.000000000000000001")}, {"a": decimal.Decimal("2.5")}, {"a": 1},
    {"a": MINKEY}, {"a": MAXKEY}, {"a": None}, {}, {"a": []}, {"a": [[]]}, {"a": [None]},
    {"a": dt.datetime(2024, 1, 1, tzinfo=ejson.UTC)}, {"a": dt.datetime(2024, 1, 1, 0, 0, 0, 1000, tzinfo=ejson.UTC)},
    {"a": OID_A}, {"a": OID_B}, {"a": b"\x02"}, {"a": b"\x01\x00"}, {"a": True}, {"a": "é"}, {"a": "É"},
    {"a": "line1\nline2"}, {"a": {"0": "x", "b": 1}}, {"a": [{"0": "y"}, "z"]}, {"a": [[1, 2], [3]]},
    {"a": [1, [2, [3]]]}, {"a": {"b": [{"c": [1, 2]}, {"c": 3}]}}, {"a": [{"b": [{"c": 4}]}]},
    {"a": "2024-01-01"}, {"a": -5}, {"a": Int64(-2**63)}, {"a": 6.0}, {"a": decimal.Decimal("6")},
]
EDGE_QUERIES = [
    {"a": float("nan")}, {"a": {"$gte": float("nan")}}, {"a": {"$lt": 0}}, {"a": {"$gt": -1e308}},
    {"a": 0}, {"a": 2**53 + 1}, {"a": {"$gt": 2**53}}, {"a": float(2**53)}, {"a": Int64(2**62)},
    {"a": {"$lt": 2**62}}, {"a": 1}, {"a": {"$gt": 1}}, {"a": decimal.Decimal("2.5")}, {"a": 2.5},
    {"a": {"$gt": MINKEY}}, {"a": {"$lt": MAXKEY}}, {"a": {"$lte": MINKEY}}, {"a": MAXKEY},
    {"a": None}, {"a": {"$ne": None}}, {"a": {"$gte": None}}, {"a": {"$gt": None}}, {"a": []},
    {"a": [[]]}, {"a": {"$size": 0}}, {"a": {"$size": 1}}, {"a": {"$exists": True}},
    {"a": {"$gte": dt.datetime(2024, 1, 1, tzinfo=ejson.UTC)}}, {"a": dt.datetime(2024, 1, 1, tzinfo=ejson.UTC)},
    {"a": {"$gt": OID_A}}, {"a": OID_B}, {"a": {"$gt": b"\x01"}}, {"a": {"$lt": b"\x00\x00"}},
    {"a": {"$regex": "é", "$options": "i"}}, {"a": {"$regex": "^line2$", "$options": "m"}},
    {"a": {"$regex": "^line2$"}}, {"a": {"$regex": "1.l", "$options": "s"}}, {"a": {"$regex": "1$"}},
    {"a.0": "x"}, {"a.0": "y"}, {"a.0": [1, 2]}, {"a.0": 1}, {"a.1": 3}, {"a.1": [3]}, {"a.0.0": 1},
    {"a.b.c": 2}, {"a.b.c": [1, 2]}, {"a.b.c": {"$size": 2}}, {"a.b.c": 4}, {"a.b.0.c": 4}, {"a.b": None},
    {"a": {"$type": "long"}}, {"a": {"$type": "int"}}, {"a": {"$type": "decimal"}}, {"a": {"$type": "objectId"}},
    {"a": {"$type": "object"}}, {"a": {"$type": "array"}}, {"a": {"$type": ["minKey", "maxKey"]}},
    {"a": {"$mod": [2, 0]}}, {"a": {"$mod": [2, 1]}}, {"a": {"$elemMatch": {"$size": 1}}},
    {"a": {"$elemMatch": {"0": "y"}}}, {"a": {"$all": [[3]]}}, {"a": {"$in": [None, 1]}},
    {"a": {"$nin": [None, "é"]}}, {"a": {"$not": {"$type": "number"}}}, {"a": {"$lt": "2025"}},
    {"a": {"$gte": {}}}, {"a": {"$lt": []}},
    {"a": {"$bitsAllSet": [1]}}, {"a": {"$bitsAnySet": 6}}, {"a": {"$bitsAllClear": [0, 70]}},
    {"a": {"$bitsAnyClear": b"\x03"}}, {"a": {"$bitsAllSet": [63]}}, {"a": {"$bitsAllSet": []}},
    {"a": {"$bitsAnySet": [9, 70]}}, {"a": {"$not": {"$bitsAllClear": 1}}},
]


def test_edge_cases_agree_with_the_oracle(spark):
    for q in EDGE_QUERIES:
        validate_query(q, "$match")
    bad = mismatches(spark, EDGE_DOCS, EDGE_QUERIES)
    assert not bad, "\n".join(f"{q} on {d}: spark {s}, mongodb {m}" for q, d, s, m in bad[:20])


# --------------------------------------------------------------------- randomized differential


def _valid(q, check=validate_query) -> bool:
    try:
        check(q, "")
        return True
    except PipelineError:
        return False


def test_random_queries_agree_with_the_oracle(spark):
    """Random documents x random queries (every operator, logical nesting, $jsonSchema).
    ``HEADRACE_QUERY_SEED`` / ``HEADRACE_QUERY_COUNT`` widen the search locally."""
    seed = int(os.environ.get("HEADRACE_QUERY_SEED", "20240601"))
    count = int(os.environ.get("HEADRACE_QUERY_COUNT", "64"))
    g = Gen(seed)
    docs = [g.doc() for _ in range(160)]
    queries = [q for q in (g.query() for _ in range(count)) if _valid(q)]
    schemas = [s for s in (g.schema() for _ in range(count // 3)) if _valid(s, validate_schema)]
    queries += [{"$jsonSchema": s} for s in schemas]
    assert len(queries) >= count
    bad = mismatches(spark, docs, queries)
    assert not bad, f"{len(bad)} disagreements, e.g.:\n" + "\n".join(
        f"{q} on {d}: spark {s}, mongodb {m}" for q, d, s, m in bad[:15])


# --------------------------------------------------------------------- compiling


def test_registered_operators_and_errors(spark):
    from pyspark.sql import functions as F

    from headrace.spark.query import compile_query
    from headrace.spark.registry import QUERY_OPERATORS, Ctx

    for op in ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin", "$and", "$or", "$nor", "$not",
               "$exists", "$type", "$regex", "$options", "$expr", "$elemMatch", "$size", "$all", "$mod",
               "$jsonSchema", "$comment"):
        assert op in QUERY_OPERATORS, op
    ctx = Ctx(root=F.col("doc"))
    c = compile_query({"a": 1}, ctx)
    assert c.error is None
    with pytest.raises(PipelineError) as e:
        compile_query({"a": {"$near": [0, 0]}}, ctx)
    assert e.value.code == "QUERY_NOT_SUPPORTED_YET"
    with pytest.raises(PipelineError) as e:
        compile_query({"$foo": 1}, ctx)
    assert e.value.code == "QUERY_UNKNOWN_OPERATOR"


def test_expr_values_and_errors(spark):
    expr = pytest.importorskip("headrace.spark.expr", reason="expression compiler not available")
    if not hasattr(expr, "compile_expression"):
        pytest.skip("expression compiler not available")
    from pyspark.sql import functions as F

    from headrace.spark.query import compile_query
    from headrace.spark.registry import Ctx
    from _query_helpers import docs_frame

    docs = [{"spent": 400, "budget": 450}, {"spent": 500, "budget": 400}, {"spent": "x", "budget": 1}]
    df = docs_frame(spark, docs)
    c = compile_query({"$expr": {"$gt": ["$spent", "$budget"]}, "budget": {"$gte": 1}}, Ctx(root=F.col("doc")))
    rows = sorted(df.select("i", c.value.alias("v")).collect())
    assert [r.v for r in rows][:2] == [False, True]
    c2 = compile_query({"$or": [{"$expr": {"$toInt": "$spent"}}]}, Ctx(root=F.col("doc")))
    assert c2.error is not None
    errs = sorted(df.select("i", c2.error.alias("e")).collect())
    assert errs[0].e is None and errs[2].e is not None
