"""headrace.mql.match: MongoDB's documented query examples (the manual's inventory collections
and operator pages), path/array edge cases, BSON order, regex translation, $jsonSchema."""
from __future__ import annotations

import datetime as dt
import decimal
import math

import pytest

from headrace import ejson
from headrace.ejson import MAXKEY, MINKEY, Int64, ObjectId
from headrace.errors import PipelineError
from headrace.mql.jsonschema import schema_failure_details, schema_matches
from headrace.mql.bson import MISSING, compare_values, type_name
from headrace.mql.explain import explain_failure, failure_details
from headrace.mql.match import matches
from headrace.mql.paths import iter_path
from headrace.mql.regex import compile_regex, translate_regex


def rx(pattern, options=""):
    return {"$regularExpression": {"pattern": pattern, "options": options}}


def found(docs, query, key="item"):
    return [d.get(key) for d in docs if matches(d, query)]


# --------------------------------------------------------------------- Query Documents

INVENTORY = [
    {"item": "journal", "qty": 25, "size": {"h": 14, "w": 21, "uom": "cm"}, "status": "A"},
    {"item": "notebook", "qty": 50, "size": {"h": 8.5, "w": 11, "uom": "in"}, "status": "A"},
    {"item": "paper", "qty": 100, "size": {"h": 8.5, "w": 11, "uom": "in"}, "status": "D"},
    {"item": "planner", "qty": 75, "size": {"h": 22.85, "w": 30, "uom": "cm"}, "status": "D"},
    {"item": "postcard", "qty": 45, "size": {"h": 10, "w": 15.25, "uom": "cm"}, "status": "A"},
]


@pytest.mark.parametrize("query, expected", [
    ({}, ["journal", "notebook", "paper", "planner", "postcard"]),
    ({"status": "D"}, ["paper", "planner"]),
    ({"status": {"$in": ["A", "D"]}}, ["journal", "notebook", "paper", "planner", "postcard"]),
    ({"status": "A", "qty": {"$lt": 30}}, ["journal"]),
    ({"$or": [{"status": "A"}, {"qty": {"$lt": 30}}]}, ["journal", "notebook", "postcard"]),
    ({"status": "A", "$or": [{"qty": {"$lt": 30}}, {"item": rx("^p")}]}, ["journal", "postcard"]),
    # embedded documents
    ({"size": {"h": 14, "w": 21, "uom": "cm"}}, ["journal"]),
    ({"size": {"w": 21, "h": 14, "uom": "cm"}}, []),  # field order matters
    ({"size.uom": "in"}, ["notebook", "paper"]),
    ({"size.h": {"$lt": 15}}, ["journal", "notebook", "paper", "postcard"]),
    ({"size.h": {"$lt": 15}, "size.uom": "in", "status": "D"}, ["paper"]),
])
def test_query_documents(query, expected):
    assert found(INVENTORY, query) == expected


ARRAYS = [
    {"item": "journal", "qty": 25, "tags": ["blank", "red"], "dim_cm": [14, 21]},
    {"item": "notebook", "qty": 50, "tags": ["red", "blank"], "dim_cm": [14, 21]},
    {"item": "paper", "qty": 100, "tags": ["red", "blank", "plain"], "dim_cm": [14, 21]},
    {"item": "planner", "qty": 75, "tags": ["blank", "red"], "dim_cm": [22.85, 30]},
    {"item": "postcard", "qty": 45, "tags": ["blue"], "dim_cm": [10, 15.25]},
]


@pytest.mark.parametrize("query, expected", [
    ({"tags": ["red", "blank"]}, ["notebook"]),
    ({"tags": {"$all": ["red", "blank"]}}, ["journal", "notebook", "paper", "planner"]),
    ({"tags": "red"}, ["journal", "notebook", "paper", "planner"]),
    ({"dim_cm": {"$gt": 25}}, ["planner"]),
    ({"dim_cm": {"$gt": 15, "$lt": 20}}, ["journal", "notebook", "paper", "postcard"]),
    ({"dim_cm": {"$elemMatch": {"$gt": 22, "$lt": 30}}}, ["planner"]),
    ({"dim_cm.1": {"$gt": 25}}, ["planner"]),
    ({"tags": {"$size": 3}}, ["paper"]),
])
def test_query_arrays(query, expected):
    assert found(ARRAYS, query) == expected


INSTOCK = [
    {"item": "journal", "instock": [{"warehouse": "A", "qty": 5}, {"warehouse": "C", "qty": 15}]},
    {"item": "notebook", "instock": [{"warehouse": "C", "qty": 5}]},
    {"item": "paper", "instock": [{"warehouse": "A", "qty": 60}, {"warehouse": "B", "qty": 15}]},
    {"item": "planner", "instock": [{"warehouse": "A", "qty": 40}, {"warehouse": "B", "qty": 5}]},
    {"item": "postcard", "instock": [{"warehouse": "B", "qty": 15}, {"warehouse": "C", "qty": 35}]},
]


@pytest.mark.parametrize("query, expected", [
    ({"instock": {"warehouse": "A", "qty": 5}}, ["journal"]),
    ({"instock": {"qty": 5, "warehouse": "A"}}, []),
    ({"instock.0.qty": {"$lte": 20}}, ["journal", "notebook", "postcard"]),
    ({"instock.qty": {"$lte": 20}}, ["journal", "notebook", "paper", "planner", "postcard"]),
    ({"instock": {"$elemMatch": {"qty": 5, "warehouse": "A"}}}, ["journal"]),
    ({"instock": {"$elemMatch": {"qty": {"$gt": 10, "$lte": 20}}}}, ["journal", "paper", "postcard"]),
    ({"instock.qty": {"$gt": 10, "$lte": 20}}, ["journal", "paper", "planner", "postcard"]),
    ({"instock.qty": 5, "instock.warehouse": "A"}, ["journal", "planner"]),
])
def test_query_arrays_of_documents(query, expected):
    assert found(INSTOCK, query) == expected


NULLS = [{"_id": 1, "item": None}, {"_id": 2}]


@pytest.mark.parametrize("query, expected", [
    ({"item": None}, [1, 2]),
    ({"item": {"$ne": None}}, []),
    ({"item": {"$type": 10}}, [1]),
    ({"item": {"$type": "null"}}, [1]),
    ({"item": {"$exists": False}}, [2]),
    ({"item": {"$in": [None]}}, [1, 2]),
    ({"item": {"$nin": [None]}}, []),
    ({"item": {"$gte": None}}, [1, 2]),
    ({"item": {"$lte": None}}, [1, 2]),
    ({"item": {"$gt": None}}, []),
])
def test_null_or_missing(query, expected):
    assert found(NULLS, query, "_id") == expected


# --------------------------------------------------------------------- operator pages

EQ = [
    {"_id": 1, "item": {"name": "ab", "code": "123"}, "qty": 15, "tags": ["A", "B", "C"]},
    {"_id": 2, "item": {"name": "cd", "code": "123"}, "qty": 20, "tags": ["B"]},
    {"_id": 3, "item": {"name": "ij", "code": "456"}, "qty": 25, "tags": ["A", "B"]},
    {"_id": 4, "item": {"name": "xy", "code": "456"}, "qty": 30, "tags": ["B", "A"]},
    {"_id": 5, "item": {"name": "mn", "code": "000"}, "qty": 20, "tags": [["A", "B"], "C"]},
]


@pytest.mark.parametrize("query, expected", [
    ({"qty": {"$eq": 20}}, [2, 5]),
    ({"qty": 20}, [2, 5]),
    ({"item.name": {"$eq": "ab"}}, [1]),
    ({"tags": {"$eq": "B"}}, [1, 2, 3, 4]),
    ({"tags": {"$eq": ["A", "B"]}}, [3, 5]),
    ({"qty": {"$gt": 20}}, [3, 4]),
    ({"qty": {"$gte": 20}}, [2, 3, 4, 5]),
    ({"qty": {"$lt": 20}}, [1]),
    ({"qty": {"$lte": 20}}, [1, 2, 5]),
    ({"qty": {"$ne": 20}}, [1, 3, 4]),
    ({"qty": {"$in": [15, 30]}}, [1, 4]),
    ({"qty": {"$nin": [15, 30]}}, [2, 3, 5]),
    ({"tags": {"$in": ["C"]}}, [1, 5]),
    ({"tags": {"$in": [rx("^c", "i")]}}, [1, 5]),
    ({"qty": {"$eq": 20.0}}, [2, 5]),
    ({"qty": {"$eq": Int64(20)}}, [2, 5]),
    ({"qty": {"$eq": decimal.Decimal("20.00")}}, [2, 5]),
    ({"qty": {"$gt": "1"}}, []),  # type bracketing: no string is compared with numbers
])
def test_comparison_operators(query, expected):
    assert found(EQ, query, "_id") == expected


def test_logical_operators():
    docs = [
        {"_id": 1, "price": 1.99, "sale": True, "qty": 5},
        {"_id": 2, "price": 1.99, "qty": 15},
        {"_id": 3, "sale": True, "qty": 20},
        {"_id": 4, "price": 3.5, "sale": False},
        {"_id": 5, "item": "x"},
    ]
    assert found(docs, {"$nor": [{"price": 1.99}, {"sale": True}]}, "_id") == [4, 5]
    assert found(docs, {"$and": [{"price": {"$ne": 1.99}}, {"price": {"$exists": True}}]}, "_id") == [4]
    assert found(docs, {"$or": [{"qty": {"$lt": 10}}, {"sale": False}]}, "_id") == [1, 4]
    assert found(docs, {"price": {"$not": {"$gt": 1.99}}}, "_id") == [1, 2, 3, 5]
    assert found(docs, {"item": {"$not": rx("^x")}}, "_id") == [1, 2, 3, 4]
    assert found(docs, {"price": {"$not": {"$gt": 1, "$lt": 2}}}, "_id") == [3, 4, 5]


SPICES = [
    {"saffron": 5, "cinnamon": 5, "mustard": None},
    {"saffron": 3, "cinnamon": None, "mustard": 8},
    {"saffron": None, "cinnamon": 3, "mustard": 9},
    {"saffron": 1, "cinnamon": 2, "mustard": 3},
    {"saffron": 2, "mustard": 5},
    {"saffron": 3, "cinnamon": 2},
    {"saffron": 4},
    {"cinnamon": 2, "mustard": 4},
    {"cinnamon": 2},
    {"mustard": 6},
]


def test_exists():
    assert sum(matches(d, {"saffron": {"$exists": True}}) for d in SPICES) == 7
    assert [d for d in SPICES if matches(d, {"cinnamon": {"$exists": False}})] == [
        {"saffron": 2, "mustard": 5}, {"saffron": 4}, {"mustard": 6}]
    assert matches({"a": [{}]}, {"a.b": {"$exists": False}})
    assert not matches({"a": []}, {"a": {"$exists": False}})
    assert matches({"a": 0}, {"a": {"$exists": 1}}) and not matches({"a": 0}, {"a": {"$exists": 0}})


ADDRESSES = [
    {"_id": 1, "address": "2030 Martian Way", "zipCode": "90698345"},
    {"_id": 2, "address": "156 Lunar Place", "zipCode": 43339374.0},
    {"_id": 3, "address": "2324 Pluto Place", "zipCode": Int64(3921412)},
    {"_id": 4, "address": "55 Saturn Ring", "zipCode": 88602117},
    {"_id": 5, "address": "104 Venus Drive", "zipCode": ["834847278", "1893289032"]},
]


@pytest.mark.parametrize("spec, expected", [
    (2, [1, 5]), ("string", [1, 5]), (1, [2]), ("double", [2]), (18, [3]), ("long", [3]),
    (16, [4]), ("int", [4]), ("number", [2, 3, 4]), (["string", "double"], [1, 2, 5]),
    ("array", [5]), (4, [5]), (4.0, [5]),
])
def test_type(spec, expected):
    assert found(ADDRESSES, {"zipCode": {"$type": spec}}, "_id") == expected


def test_type_names_of_values():
    assert [type_name(v) for v in (1, 2**31, Int64(1), 1.5, decimal.Decimal("1"), "s", {}, [], b"x",
                                   ObjectId("5234cc89687ea597eabee675"), True, dt.datetime(2020, 1, 1),
                                   None, MINKEY, MAXKEY, MISSING)] == [
        "int", "long", "long", "double", "decimal", "string", "object", "array", "binData",
        "objectId", "bool", "date", "null", "minKey", "maxKey", "missing"]


PRODUCTS = [
    {"_id": 100, "sku": "abc123", "description": "Single line description."},
    {"_id": 101, "sku": "abc789", "description": "First line\nSecond line"},
    {"_id": 102, "sku": "xyz456", "description": "Many spaces before     line"},
    {"_id": 103, "sku": "xyz789", "description": "Multiple\nline description"},
    {"_id": 104, "sku": "Abc789", "description": "SKU is in uppercase"},
]


@pytest.mark.parametrize("query, expected", [
    ({"sku": {"$regex": "789$"}}, [101, 103, 104]),
    ({"sku": rx("789$")}, [101, 103, 104]),
    ({"sku": {"$regex": "^ABC", "$options": "i"}}, [100, 101, 104]),
    ({"sku": {"$regex": rx("^ABC", "i")}}, [100, 101, 104]),
    ({"description": {"$regex": "^S", "$options": "m"}}, [100, 101, 104]),
    ({"description": {"$regex": "^S"}}, [100, 104]),
    ({"description": {"$regex": "m.*line", "$options": "si"}}, [102, 103]),
    ({"description": {"$regex": "m.*line", "$options": "i"}}, [102]),
    ({"sku": {"$regex": "abc #category code\n123 #item number", "$options": "x"}}, [100]),
    ({"sku": {"$in": [rx("^abc"), rx("^xyz4")]}}, [100, 101, 102]),
    ({"sku": {"$nin": [rx("^abc"), rx("^xyz4")]}}, [103, 104]),
    ({"sku": {"$not": {"$regex": "^abc"}}}, [102, 103, 104]),
    ({"sku": {"$regex": "\\d{3}$"}}, [100, 101, 102, 103, 104]),
])
def test_regex(query, expected):
    assert found(PRODUCTS, query, "_id") == expected


def test_regex_translation():
    # ASCII classes as in MongoDB's PCRE; Unicode-aware case folding with i
    assert compile_regex("^\\d+$").search("١٢") is None
    assert compile_regex("\\w").search("é") is None
    assert compile_regex("ÉCOLE", "i").search("école")
    assert compile_regex("a\\Z").search("a\n") and compile_regex("a\\z").search("a\n") is None
    assert compile_regex("\\Qa.b\\E").search("a.b") and compile_regex("\\Qa.b\\E").search("axb") is None
    assert compile_regex("(?<y>\\d{4})-\\k<y>").search("2020-2020")
    assert compile_regex("\\x{e9}").search("é")
    assert compile_regex("[[:digit:]]+").search("42")
    # a mid-pattern inline flag applies to the rest, including later alternatives
    r = compile_regex("a(?i)b|c")
    assert [bool(r.search(s)) for s in ("aB", "C", "AB")] == [True, True, False]
    assert translate_regex("a.b", "is", "java") == "(?disu)a.b"
    assert translate_regex("[ a]", "x", "java") == "(?dx)[\\x20a]"


def test_elem_match():
    scores = [{"_id": 1, "results": [82, 85, 88]}, {"_id": 2, "results": [75, 88, 89]}]
    assert found(scores, {"results": {"$elemMatch": {"$gte": 80, "$lt": 85}}}, "_id") == [1]
    survey = [
        {"_id": 1, "results": [{"product": "abc", "score": 10}, {"product": "xyz", "score": 5}]},
        {"_id": 2, "results": [{"product": "abc", "score": 8}, {"product": "xyz", "score": 7}]},
        {"_id": 3, "results": [{"product": "abc", "score": 7}, {"product": "xyz", "score": 8}]},
        {"_id": 4, "results": [{"product": "abc", "score": 7}, {"product": "def", "score": 8}]},
    ]
    assert found(survey, {"results": {"$elemMatch": {"product": "xyz", "score": {"$gte": 8}}}}, "_id") == [3]
    assert found(survey, {"results": {"$elemMatch": {"product": "xyz"}}}, "_id") == [1, 2, 3]
    assert found(survey, {"results.product": "xyz"}, "_id") == [1, 2, 3]
    assert found(survey, {"results": {"$elemMatch": {"product": {"$ne": "xyz"}}}}, "_id") == [1, 2, 3, 4]
    assert found(survey, {"results.product": {"$ne": "xyz"}}, "_id") == [4]
    assert found(survey, {"results": {"$elemMatch": {"$or": [{"score": 10}, {"product": "def"}]}}}, "_id") == [1, 4]
    # $elemMatch sees the array itself, not nested elements; arrays are documents with "0", "1"...
    assert matches({"a": [[1, 2]]}, {"a": {"$elemMatch": {"0": 1}}})
    assert not matches({"a": [[1]]}, {"a": {"$elemMatch": {"$eq": 1}}})
    assert matches({"a": [[1]]}, {"a": {"$elemMatch": {"$size": 1}}})
    assert not matches({"a": 5}, {"a": {"$elemMatch": {"$eq": 5}}})


def test_size():
    assert matches({"field": ["red", "green"]}, {"field": {"$size": 2}})
    assert not matches({"field": ["red", "green"]}, {"field": {"$size": 1}})
    assert matches({"field": []}, {"field": {"$size": 0}})
    assert not matches({"field": [[1, 2]]}, {"field": {"$size": 2}})  # leaf arrays not traversed
    assert matches({"a": [{"b": [1, 2]}, {"b": [3]}]}, {"a.b": {"$size": 1}})
    assert not matches({}, {"a": {"$size": 0}})


ALL = [
    {"code": "xyz", "tags": ["school", "book", "bag", "headphone", "appliance"],
     "qty": [{"size": "S", "num": 10, "color": "blue"}, {"size": "M", "num": 45, "color": "blue"},
             {"size": "L", "num": 100, "color": "green"}]},
    {"code": "abc", "tags": ["appliance", "school", "book"],
     "qty": [{"size": "6", "num": 100, "color": "green"}, {"size": "6", "num": 50, "color": "blue"},
             {"size": "8", "num": 100, "color": "brown"}]},
    {"code": "efg", "tags": ["school", "book"],
     "qty": [{"size": "S", "num": 10, "color": "blue"}, {"size": "M", "num": 100, "color": "blue"},
             {"size": "L", "num": 100, "color": "green"}]},
    {"code": "ijk", "tags": ["electronics", "school"], "qty": [{"size": "M", "num": 100, "color": "green"}]},
]


def test_all():
    assert found(ALL, {"tags": {"$all": ["appliance", "school", "book"]}}, "code") == ["xyz", "abc"]
    assert found(ALL, {"qty": {"$all": [{"$elemMatch": {"size": "M", "num": {"$gt": 50}}},
                                        {"$elemMatch": {"num": 100, "color": "green"}}]}}, "code") == ["efg", "ijk"]
    assert found(ALL, {"qty.num": {"$all": [50]}}, "code") == ["abc"]
    assert found(ALL, {"qty.num": 50}, "code") == ["abc"]
    assert found(ALL, {"tags": {"$all": []}}, "code") == []
    assert matches({"tags": [["ssl", "security"], "x"]}, {"tags": {"$all": [["ssl", "security"]]}})
    assert matches({"tags": "x"}, {"tags": {"$all": ["x"]}})


MOD = [{"_id": 1, "item": "abc123", "qty": 0}, {"_id": 2, "item": "xyz123", "qty": 5},
       {"_id": 3, "item": "ijk123", "qty": 12}]


@pytest.mark.parametrize("arg", [[4, 0], [4.0, 0], [4.5, 0], [4.99, 0], [-4, 0],
                                 [decimal.Decimal("4.7"), 0]])
def test_mod(arg):
    assert found(MOD, {"qty": {"$mod": arg}}, "_id") == [1, 3]


def test_mod_signs_and_types():
    assert matches({"a": -5}, {"a": {"$mod": [3, -2]}})  # C semantics: sign of the dividend
    assert not matches({"a": -5}, {"a": {"$mod": [3, 1]}})
    assert matches({"a": 7.9}, {"a": {"$mod": [7, 0]}})  # truncated
    assert not matches({"a": float("nan")}, {"a": {"$mod": [2, 0]}})
    assert not matches({"a": float("inf")}, {"a": {"$mod": [2, 0]}})
    assert not matches({"a": "4"}, {"a": {"$mod": [2, 0]}})
    assert matches({"a": [3, 4]}, {"a": {"$mod": [2, 0]}})


def test_expr_with_an_evaluator():
    docs = [{"_id": 1, "spent": 400, "budget": 450}, {"_id": 2, "spent": 500, "budget": 400}]

    def ev(doc, e):  # just enough for {$gt: ["$spent", "$budget"]}
        a, b = (doc.get(x[1:]) for x in e["$gt"])
        return a > b

    assert [d["_id"] for d in docs if matches(d, {"$expr": {"$gt": ["$spent", "$budget"]}}, expr=ev)] == [2]
    with pytest.raises(NotImplementedError):
        matches(docs[0], {"$expr": {"$gt": ["$spent", "$budget"]}})


# --------------------------------------------------------------------- paths and arrays


def test_paths_through_arrays():
    d = {"a": [{"b": 1}, {"c": 2}], "x": [1, [2, 3]], "s": 5}
    assert list(iter_path(d, "a.b")) == [1, MISSING]
    assert list(iter_path(d, "x")) == [1, [2, 3], [1, [2, 3]]]
    assert list(iter_path(d, "x", traverse_leaf=False)) == [[1, [2, 3]]]
    assert list(iter_path(d, "x.1.0")) == [2]
    assert list(iter_path(d, "s.t")) == [MISSING]
    assert matches(d, {"a.b": None})  # {c: 2} has no b
    assert not matches({"a": [1, 2]}, {"a.b": None})  # scalars in the array offer nothing
    assert not matches({"a": []}, {"a.b": None})
    assert matches({"a": 5}, {"a.b": None})
    assert not matches(d, {"x": 2})  # nested arrays are not searched
    assert matches(d, {"x": [2, 3]})
    assert matches({"a": [{"0": 7}]}, {"a.0": 7})  # field "0" of an element
    assert matches({"a": [[{"b": 1}]]}, {"a.0.b": 1})
    assert matches({"a": {"b": [{"c": [5, 9]}]}}, {"a.b.c": 9})


def test_minkey_maxkey_and_nan():
    assert matches({}, {"a": {"$gt": MINKEY}})  # missing is above MinKey
    assert matches({"a": "x"}, {"a": {"$lt": MAXKEY}})
    assert not matches({"a": MAXKEY}, {"a": {"$lt": MAXKEY}})
    assert matches({"a": MAXKEY}, {"a": {"$lte": MAXKEY}})
    assert matches({"a": MINKEY}, {"a": MINKEY})
    nan = float("nan")
    assert matches({"a": nan}, {"a": nan})
    assert matches({"a": nan}, {"a": decimal.Decimal("NaN")})
    assert not matches({"a": nan}, {"a": {"$lt": 0}}) and not matches({"a": nan}, {"a": {"$gt": 0}})
    assert matches({"a": nan}, {"a": {"$gte": nan}}) and not matches({"a": 1.0}, {"a": {"$gte": nan}})


def test_dates_objectids_bindata():
    t = dt.datetime(2024, 5, 1, tzinfo=ejson.UTC)
    oid = ObjectId("5234cc89687ea597eabee675")
    d = {"t": t, "o": oid, "b": b"\x01\x02"}
    assert matches(d, {"t": {"$gte": dt.datetime(2024, 1, 1, tzinfo=ejson.UTC)}})
    assert not matches(d, {"t": {"$gte": "2024-01-01"}})
    assert matches(d, {"o": ObjectId("5234cc89687ea597eabee675")})
    assert matches(d, {"o": {"$gt": ObjectId("5234cc89687ea597eabee674")}})
    assert matches(d, {"b": {"$gt": b"\xff"}})  # longer binData sorts after shorter


def test_compare_values_bson_order():
    order = [MINKEY, None, -math.inf, 1, 2.5, decimal.Decimal("3"), "", "a", "b", {}, {"a": 1},
             [], [1], b"", ObjectId("000000000000000000000000"), False, True,
             dt.datetime(1970, 1, 1, tzinfo=ejson.UTC), MAXKEY]
    for i, a in enumerate(order):
        for j, b in enumerate(order):
            assert compare_values(a, b) == (i > j) - (i < j), (a, b)
    assert compare_values(float("nan"), -math.inf) == -1
    assert compare_values(1, 1.0) == 0 and compare_values(Int64(2**62), float(2**62)) == 0
    assert compare_values({"a": 1, "b": 2}, {"b": 2, "a": 1}) != 0
    assert compare_values({"a": 1, "b": 2}, {"b": 2, "a": 1}, unordered_fields=True) == 0
    assert compare_values({"b": 1}, {"a": "x"}) == -1  # field types before names
    assert compare_values(MISSING, None) == 0


def test_dbref_and_regex_literals_are_values():
    assert matches({"r": {"$ref": "c", "$id": 1}}, {"r": {"$ref": "c", "$id": 1}})
    with pytest.raises(PipelineError) as e:
        matches({"a": 1}, {"a": {"$foo": 1}})
    assert e.value.code == "QUERY_UNKNOWN_OPERATOR"


# --------------------------------------------------------------------- $jsonSchema

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
    {"item": "journal", "qty": 25, "size": {"h": 14.0, "w": 21.0, "uom": "cm"}, "instock": True},
    {"item": "notebook", "qty": 50, "size": {"h": 8.5, "w": 11.0, "uom": "in"}, "instock": True},
    {"item": "paper", "qty": 100, "size": {"h": 8.5, "w": 11.0, "uom": "in"}, "instock": 1.0},
    {"item": "planner", "qty": 75, "size": {"h": 22.85, "w": 30.0, "uom": "cm"}, "instock": 1.0},
    {"item": "postcard", "qty": 45, "size": {"h": 10.0, "w": 15.25, "uom": "cm"}, "instock": True},
    {"item": "apple", "qty": 45, "status": "A", "instock": True},
    {"item": "pears", "qty": 50, "status": "A", "instock": True},
]


def test_json_schema_manual_example():
    assert found(SCHEMA_DOCS, {"$jsonSchema": SCHEMA}) == ["journal", "notebook", "postcard", "apple", "pears"]
    assert found(SCHEMA_DOCS, {"$nor": [{"$jsonSchema": SCHEMA}]}) == ["paper", "planner"]


STUDENTS = {
    "bsonType": "object",
    "title": "Student Object Validation",
    "required": ["address", "major", "name", "year"],
    "properties": {
        "name": {"bsonType": "string", "description": "'name' must be a string and is required"},
        "year": {"bsonType": "int", "minimum": 2017, "maximum": 3017,
                 "description": "'year' must be an integer in [ 2017, 3017 ] and is required"},
        "gpa": {"bsonType": ["double"], "description": "'gpa' must be a double if the field exists"},
        "major": {"enum": ["Math", "English", "Computer Science", "History", None]},
        "address": {"bsonType": "object", "required": ["city"],
                    "properties": {"street": {"bsonType": "string"}, "city": {"bsonType": "string"}}},
    },
}


def test_json_schema_students_and_explanation():
    ok = {"name": "Alice", "year": 2019, "major": "History", "gpa": 3.0,
          "address": {"city": "NYC", "street": "33rd Street"}}
    bad = dict(ok, gpa=3)
    assert schema_matches(ok, STUDENTS) and not schema_matches(bad, STUDENTS)
    details = schema_failure_details(bad, STUDENTS)
    rule = details["schemaRulesNotSatisfied"][0]
    assert rule["operatorName"] == "properties"
    prop = rule["propertiesNotSatisfied"][0]
    assert prop["propertyName"] == "gpa" and prop["description"].startswith("'gpa'")
    assert prop["details"][0] == {"operatorName": "bsonType", "specifiedAs": {"bsonType": ["double"]},
                                  "reason": "type did not match", "consideredValue": 3, "consideredType": "int"}
    assert "type did not match" in explain_failure({"$jsonSchema": STUDENTS}, bad)
    assert explain_failure({"$jsonSchema": STUDENTS}, ok) == "Document failed validation"
    assert schema_matches(dict(ok, year=2016.0), {"properties": {"year": {"minimum": 2017}}}) is False
    assert schema_matches(dict(ok, major=None), STUDENTS)


@pytest.mark.parametrize("schema, value, ok", [
    ({"type": "number"}, 1, True), ({"type": "number"}, "1", False),
    ({"type": ["string", "null"]}, None, True), ({"type": "boolean"}, True, True),
    ({"bsonType": "long"}, Int64(1), True), ({"bsonType": "number"}, decimal.Decimal(1), True),
    ({"minimum": 5}, "abc", True), ({"minimum": 5, "exclusiveMinimum": True}, 5, False),
    ({"maximum": 5, "exclusiveMaximum": False}, 5, True), ({"maximum": 5}, float("nan"), False),
    ({"multipleOf": 0.1}, 0.3, True), ({"multipleOf": 3}, 7, False), ({"multipleOf": 2}, "x", True),
    ({"minLength": 2, "maxLength": 3}, "日本語", True), ({"maxLength": 2}, "日本語", False),
    ({"pattern": "^a"}, "abc", True), ({"pattern": "^b"}, "abc", False), ({"pattern": "^b"}, 1, True),
    ({"enum": [{"a": 1, "b": 2}]}, {"b": 2, "a": 1}, True), ({"enum": [1, "x"]}, 1.0, True),
    ({"enum": [[1, 2]]}, [2, 1], False),
    ({"items": {"bsonType": "int"}}, [1, 2], True), ({"items": {"bsonType": "int"}}, [1, "x"], False),
    ({"items": [{"bsonType": "int"}, {"bsonType": "string"}]}, [1, "x", None], True),
    ({"items": [{"bsonType": "int"}], "additionalItems": False}, [1, 2], False),
    ({"items": [{"bsonType": "int"}], "additionalItems": {"bsonType": "string"}}, [1, "a", "b"], True),
    ({"additionalItems": False}, [1, 2], True),
    ({"minItems": 1, "maxItems": 2}, [], False), ({"uniqueItems": True}, [1, 1.0], False),
    ({"uniqueItems": True}, [{"a": 1, "b": 2}, {"b": 2, "a": 1}], False),
    ({"uniqueItems": True}, [1, "1"], True),
    ({"minProperties": 2}, {"a": 1}, False), ({"maxProperties": 1}, {"a": 1}, True),
    ({"additionalProperties": False, "properties": {"a": {}}}, {"a": 1, "b": 2}, False),
    ({"additionalProperties": {"bsonType": "int"}, "properties": {"a": {}}}, {"a": "x", "b": 2}, True),
    ({"patternProperties": {"^x_": {"bsonType": "int"}}, "additionalProperties": False}, {"x_1": 1}, True),
    ({"patternProperties": {"^x_": {"bsonType": "int"}}}, {"x_1": "s"}, False),
    ({"properties": {"x_1": {"bsonType": "string"}}, "patternProperties": {"^x_": {"bsonType": "int"}}},
     {"x_1": "s"}, False),
    ({"dependencies": {"a": ["b"]}}, {"a": 1}, False), ({"dependencies": {"a": ["b"]}}, {"c": 1}, True),
    ({"dependencies": {"a": {"required": ["c"]}}}, {"a": 1, "c": 2}, True),
    ({"allOf": [{"minimum": 1}, {"maximum": 3}]}, 4, False),
    ({"anyOf": [{"bsonType": "int"}, {"bsonType": "string"}]}, "x", True),
    ({"oneOf": [{"bsonType": "number"}, {"bsonType": "int"}]}, 1, False),
    ({"oneOf": [{"bsonType": "number"}, {"bsonType": "int"}]}, 1.5, True),
    ({"not": {"bsonType": "string"}}, "x", False),
    ({"properties": {"a": {"bsonType": "int"}}}, {"a": [1]}, False),  # no array traversal
    ({"required": ["a"]}, {"a": None}, True),
])
def test_json_schema_keywords(schema, value, ok):
    assert schema_matches(value, schema) is ok


def test_json_schema_top_level_type():
    assert matches({"a": 1}, {"$jsonSchema": {"bsonType": "object"}})
    assert not matches({"a": 1}, {"$jsonSchema": {"bsonType": "string"}})
    assert matches({"a": 1}, {"$jsonSchema": {"type": ["string", "object"]}})


def test_failure_details_for_queries():
    d = failure_details({"qty": {"$gt": 30}}, {"qty": 25, "status": "A"})
    assert d == {"operatorName": "$gt", "specifiedAs": {"qty": {"$gt": 30}}, "reason": "comparison failed",
                 "consideredValue": 25}
    d = failure_details({"qty": {"$gt": 30}, "status": "A"}, {"qty": 25, "status": "A"})
    assert d["operatorName"] == "$and" and [c["index"] for c in d["clausesNotSatisfied"]] == [0]
    d = failure_details({"qty": {"$gt": 30}, "status": "A"}, {"status": "B"})
    assert d["operatorName"] == "$and" and [c["index"] for c in d["clausesNotSatisfied"]] == [0, 1]
    assert d["clausesNotSatisfied"][0]["details"]["reason"] == "field was missing"
    assert failure_details({"qty": 1}, {"qty": 1}) is None
    # on the driver $expr cannot be evaluated: it is reported, nothing raises
    q = {"qty": {"$gt": 30}, "$expr": {"$gt": ["$qty", "$limit"]}}
    d = failure_details(q, {"qty": 40})
    assert d["clausesNotSatisfied"] == [{"index": 1, "details": {
        "operatorName": "$expr", "specifiedAs": {"$expr": {"$gt": ["$qty", "$limit"]}},
        "reason": "expression was not evaluated"}}]
    assert explain_failure(q, {"qty": 40, "when": dt.datetime(2024, 1, 1)}).startswith("Document failed validation: {")
