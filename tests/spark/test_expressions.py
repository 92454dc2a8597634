"""Aggregation expressions on Spark: MongoDB's documented examples, as data tables.

Each case is ``(document, expression, expected)`` or ``(document, expression, expected,
error_substring)`` (then the row must carry that error, as a DLQ reason). ``MISSING`` means the
expression is missing (the field would not be written). Cases are validated with
``validate_expression`` first, then run a dozen per query.
"""
from __future__ import annotations

import datetime as _dt
import decimal

import pytest

from headrace import ejson
from _expr_helpers import MISSING as M, run_cases as run, utc_dt as dt

pytestmark = pytest.mark.spark

D = decimal.Decimal
U = ejson.UTC


ARITHMETIC = [
    # $add (docs: sales items) and typing
    ({"price": 10, "fee": 2}, {"$add": ["$price", "$fee"]}, 12),
    ({"a": 1, "b": 2.5}, {"$add": ["$a", "$b"]}, 3.5),
    ({"a": 2**31 - 1}, {"$add": ["$a", 1]}, 2**31),                  # int overflow -> long
    ({"a": 2**63 - 1}, {"$add": ["$a", 1]}, float(2**63)),           # long overflow -> double
    ({"a": D("1.50")}, {"$add": ["$a", 1]}, D("2.50")),        # the exponent of 1.50
    ({"a": None}, {"$add": ["$a", 1]}, None),
    ({}, {"$add": ["$a", 1]}, None),
    ({"a": "x"}, {"$add": ["$a", 1]}, None, "$add only supports numeric or date types"),
    ({"date": dt(2014, 3, 1, 8)}, {"$add": ["$date", 3 * 24 * 60 * 60000]}, dt(2014, 3, 4, 8)),
    ({}, {"$add": []}, 0),
    # $subtract
    ({"price": 10, "fee": 2, "discount": 5}, {"$subtract": [{"$add": ["$price", "$fee"]}, "$discount"]}, 7),
    ({"d": dt(2014, 3, 1, 8), "e": dt(2014, 3, 1, 9)}, {"$subtract": ["$e", "$d"]}, 3600000),
    ({"d": dt(2014, 3, 1, 8)}, {"$subtract": ["$d", 5 * 60 * 1000]}, dt(2014, 3, 1, 7, 55)),
    ({"d": dt(2014, 3, 1, 8)}, {"$subtract": [5, "$d"]}, None, "subtract a date"),
    # $multiply / $divide / $mod
    ({"price": 10, "quantity": 2}, {"$multiply": ["$price", "$quantity"]}, 20),
    ({"hours": 80, "workdays": 8}, {"$divide": ["$hours", "$workdays"]}, 10.0),
    ({"a": 9, "b": 2}, {"$divide": ["$a", "$b"]}, 4.5),
    ({"a": 5, "b": 0}, {"$divide": ["$a", "$b"]}, None, "divide by zero"),
    ({"hours": 80, "tasks": 7}, {"$mod": ["$hours", "$tasks"]}, 3),
    ({"a": -5, "b": 3}, {"$mod": ["$a", "$b"]}, -2),
    ({"a": 5.5, "b": 2}, {"$mod": ["$a", "$b"]}, 1.5),
    ({"a": 5, "b": 0}, {"$mod": ["$a", "$b"]}, None, "mod by zero"),
    # $abs / $ceil / $floor
    ({"start": 5, "end": 8}, {"$abs": {"$subtract": ["$start", "$end"]}}, 3),
    ({"a": -5.5}, {"$abs": "$a"}, 5.5),
    ({"a": None}, {"$abs": "$a"}, None),
    ({"value": 9.25}, {"$ceil": "$value"}, 10.0),
    ({"value": -2.8}, {"$ceil": "$value"}, -2.0),
    ({"value": 8}, {"$ceil": "$value"}, 8),
    ({"value": 9.25}, {"$floor": "$value"}, 9.0),
    ({"value": -5.34}, {"$floor": "$value"}, -6.0),
    # $round / $trunc (docs: 1234.5678; half to even)
    ({"v": 1234.5678}, {"$round": ["$v", 2]}, 1234.57),
    ({"v": 1234.5678}, {"$round": ["$v", -2]}, 1200.0),
    ({"v": 1234.5678}, {"$round": ["$v", -4]}, 0.0),
    ({"v": 1234.5678}, {"$round": ["$v", 0]}, 1235.0),
    ({"v": 19.25}, {"$round": ["$v", 1]}, 19.2),
    ({"v": 28.73}, {"$round": ["$v", 1]}, 28.7),
    ({"v": 34.32}, {"$round": ["$v", 1]}, 34.3),
    ({"v": -45.39}, {"$round": ["$v", 1]}, -45.4),
    ({"v": 10.5}, {"$round": "$v"}, 10.0),
    ({"v": 11.5}, {"$round": "$v"}, 12.0),
    ({"v": 1234}, {"$round": ["$v", -2]}, 1200),
    ({"v": 19.25}, {"$trunc": ["$v", 1]}, 19.2),
    ({"v": 28.73}, {"$trunc": ["$v", 1]}, 28.7),
    ({"v": -45.39}, {"$trunc": ["$v", 1]}, -45.3),
    ({"v": 1234.5678}, {"$trunc": ["$v", -2]}, 1200.0),
    ({"v": -1234.5678}, {"$trunc": "$v"}, -1234.0),
    ({"v": "x"}, {"$trunc": "$v"}, None, "only supports numeric"),
    # $sqrt / $pow / $exp / $ln / $log / $log10 (docs examples)
    ({"p1": {"x": 2, "y": 3}, "p2": {"x": 5, "y": 7}},
     {"$sqrt": {"$add": [{"$pow": [{"$subtract": ["$p2.y", "$p1.y"]}, 2]},
                         {"$pow": [{"$subtract": ["$p2.x", "$p1.x"]}, 2]}]}}, 5.0),
    ({"a": -25}, {"$sqrt": "$a"}, None, "$sqrt"),
    ({"a": 2, "b": 10}, {"$pow": ["$a", "$b"]}, 1024),
    ({"a": 5, "b": 0}, {"$pow": ["$a", "$b"]}, 1),
    ({"a": 2, "b": -1}, {"$pow": ["$a", "$b"]}, 0.5),
    ({"a": 0, "b": -1}, {"$pow": ["$a", "$b"]}, None, "base of 0"),
    # MongoDB's integer powers: exact while they fit in 64 bits, 0, 1 and -1 for any exponent
    ({}, {"$pow": [2, 62]}, 4611686018427387904),
    ({}, {"$pow": [3, 39]}, 4052555153018976267),
    ({}, {"$pow": [-2, 63]}, -9223372036854775808),
    ({}, {"$pow": [2, 63]}, 9.223372036854776e18),
    ({}, {"$pow": [-3, 3]}, -27),
    ({}, {"$pow": [1, -2]}, 1),
    ({}, {"$pow": [-1, -3]}, -1),
    ({}, {"$pow": [-1, 100]}, 1),
    ({}, {"$pow": [0, 0]}, 1),
    ({}, {"$pow": [2, 64]}, 1.8446744073709552e19),
    ({"rate": 0.05}, {"$exp": "$rate"}, 1.0512710963760241),
    ({"a": 0}, {"$exp": "$a"}, 1.0),
    ({"sales": 8700000}, {"$ln": "$sales"}, 15.978833583624812),
    ({"a": 1}, {"$ln": "$a"}, 0.0),
    ({"a": 0}, {"$ln": "$a"}, None, "positive"),
    ({"int": 5}, {"$floor": {"$add": [1, {"$log": ["$int", 2]}]}}, 3.0),
    ({"a": 100, "b": 10}, {"$log": ["$a", "$b"]}, 2.0),
    ({"a": 100, "b": 1}, {"$log": ["$a", "$b"]}, None, "base"),
    ({"H3O": 0.0025}, {"$multiply": [-1, {"$log10": "$H3O"}]}, 2.6020599913279625),
]

COMPARISON_BOOLEAN_CONDITIONAL = [
    # $cmp / $eq / $gt ... (docs: qty vs 250)
    ({"qty": 300}, {"$cmp": ["$qty", 250]}, 1),
    ({"qty": 250}, {"$cmp": ["$qty", 250]}, 0),
    ({"qty": 200}, {"$cmp": ["$qty", 250]}, -1),
    ({"qty": 250}, {"$eq": ["$qty", 250]}, True),
    ({"qty": 300}, {"$ne": ["$qty", 250]}, True),
    ({"qty": 300}, {"$gt": ["$qty", 250]}, True),
    ({"qty": 250}, {"$gte": ["$qty", 250]}, True),
    ({"qty": 250}, {"$lt": ["$qty", 250]}, False),
    ({"qty": 200}, {"$lte": ["$qty", 250]}, True),
    ({"a": 1, "b": 1.0}, {"$eq": ["$a", "$b"]}, True),
    ({"a": 1, "b": D("1.0")}, {"$eq": ["$a", "$b"]}, True),
    ({}, {"$eq": ["$a", None]}, False),          # missing is not null in expressions
    ({}, {"$lt": ["$a", None]}, True),
    ({"a": None}, {"$eq": ["$a", None]}, True),
    ({"a": "abc"}, {"$gt": ["$a", 5]}, True),     # strings sort after numbers
    ({"a": [1, 2]}, {"$gt": ["$a", [1]]}, True),
    ({"a": [1, 2], "b": [1, 3]}, {"$lt": ["$a", "$b"]}, True),
    ({"a": {"x": 1}, "b": {"x": 1.0}}, {"$eq": ["$a", "$b"]}, True),
    ({"a": dt(2020, 1, 1), "b": dt(2021, 1, 1)}, {"$lt": ["$a", "$b"]}, True),
    ({"a": float("nan")}, {"$lt": ["$a", -1e308]}, True),
    ({"a": True}, {"$gt": ["$a", "zzz"]}, True),
    # $and / $or / $not (docs: qty > 100 and < 250)
    ({"qty": 300}, {"$and": [{"$gt": ["$qty", 100]}, {"$lt": ["$qty", 250]}]}, False),
    ({"qty": 200}, {"$and": [{"$gt": ["$qty", 100]}, {"$lt": ["$qty", 250]}]}, True),
    ({"qty": 300}, {"$or": [{"$gt": ["$qty", 250]}, {"$lt": ["$qty", 200]}]}, True),
    ({"qty": 300}, {"$not": [{"$gt": ["$qty", 250]}]}, False),
    ({}, {"$and": [1, "green"]}, True),
    ({}, {"$and": []}, True),
    ({}, {"$and": [[], None]}, False),
    ({}, {"$or": [[False], False]}, True),
    ({}, {"$or": []}, False),
    ({"a": 0}, {"$not": ["$a"]}, True),
    ({"a": "x"}, {"$or": [True, {"$add": ["$a", 1]}]}, True),                 # short circuit
    ({"a": "x"}, {"$and": [True, {"$add": ["$a", 1]}]}, None, "$add only supports"),
    # $cond (docs: qty >= 250 -> 30 else 20)
    ({"qty": 300}, {"$cond": {"if": {"$gte": ["$qty", 250]}, "then": 30, "else": 20}}, 30),
    ({"qty": 100}, {"$cond": [{"$gte": ["$qty", 250]}, 30, 20]}, 20),
    ({"a": "x"}, {"$cond": [True, 1, {"$add": ["$a", 1]}]}, 1),
    # $ifNull (docs: description or "Unspecified"; multiple inputs)
    ({"description": "product 1"}, {"$ifNull": ["$description", "Unspecified"]}, "product 1"),
    ({"description": None}, {"$ifNull": ["$description", "Unspecified"]}, "Unspecified"),
    ({}, {"$ifNull": ["$description", "Unspecified"]}, "Unspecified"),
    ({"quantity": None}, {"$ifNull": ["$description", "$quantity", "Unspecified"]}, "Unspecified"),
    ({"quantity": 5}, {"$ifNull": ["$description", "$quantity", "Unspecified"]}, 5),
    ({}, {"$ifNull": ["$a", "$z"]}, M),
    # $switch (docs: score summary)
    ({"scores": [87, 86, 78]},
     {"$switch": {"branches": [{"case": {"$gte": [{"$avg": "$scores"}, 90]}, "then": "Doing great!"},
                               {"case": {"$and": [{"$gte": [{"$avg": "$scores"}, 80]},
                                                  {"$lt": [{"$avg": "$scores"}, 90]}]},
                                "then": "Doing pretty well."},
                               {"case": {"$lt": [{"$avg": "$scores"}, 80]}, "then": "Needs improvement."}],
                  "default": "No scores found."}}, "Doing pretty well."),
    ({"scores": []},
     {"$switch": {"branches": [{"case": {"$gte": [{"$avg": "$scores"}, 90]}, "then": "Doing great!"}],
                  "default": "No scores found."}}, "No scores found."),
    ({"a": 4}, {"$switch": {"branches": [{"case": {"$eq": ["$a", 1]}, "then": "one"}]}}, None, "no default"),
]

STRINGS = [
    ({"item": "ABC1", "description": "product 1"}, {"$concat": ["$item", " - ", "$description"]}, "ABC1 - product 1"),
    ({"item": "ABC1"}, {"$concat": ["$item", " - ", "$description"]}, None),
    ({"item": 1}, {"$concat": ["$item", "x"]}, None, "$concat only supports strings"),
    ({"quarter": "13Q1"}, {"$substrCP": ["$quarter", 0, 2]}, "13"),
    ({"quarter": "13Q1"}, {"$substrCP": ["$quarter", 2, {"$subtract": [{"$strLenCP": "$quarter"}, 2]}]}, "Q1"),
    ({"name": "cafétéria"}, {"$substrCP": ["$name", 5, 4]}, "éria"),
    ({"name": "寿司sushi"}, {"$substrCP": ["$name", 0, 3]}, "寿司s"),
    ({"quarter": "13Q1"}, {"$substrBytes": ["$quarter", 0, 2]}, "13"),
    ({"name": "cafétéria"}, {"$substrBytes": ["$name", 5, 3]}, "té"),
    ({"name": "cafétéria"}, {"$substrBytes": ["$name", 7, 3]}, None, "continuation"),
    ({"quarter": "13Q1"}, {"$substr": ["$quarter", 2, -1]}, "Q1"),
    ({"n": 2014}, {"$substr": ["$n", 0, 2]}, "20"),
    ({"item": "ABC1"}, {"$toLower": "$item"}, "abc1"),
    ({"description": "PRODUCT 1"}, {"$toLower": "$description"}, "product 1"),
    ({"item": "abc2"}, {"$toUpper": "$item"}, "ABC2"),
    ({"item": None}, {"$toUpper": "$item"}, ""),
    ({"item": "ébc"}, {"$toUpper": "$item"}, "éBC"),                     # ASCII only
    ({"city": "Berkeley, CA"}, {"$split": ["$city", ", "]}, ["Berkeley", "CA"]),
    ({"c": "a,b,"}, {"$split": ["$c", ","]}, ["a", "b", ""]),
    ({"c": "a.b"}, {"$split": ["$c", "."]}, ["a", "b"]),
    ({}, {"$split": ["$c", ","]}, None),
    ({"c": 1}, {"$split": ["$c", ","]}, None, "$split requires"),
    ({"c": "abc"}, {"$split": ["$c", ""]}, None, "non-empty separator"),
    ({"name": "cafétéria"}, {"$strLenCP": "$name"}, 9),
    ({"name": "寿司"}, {"$strLenCP": "$name"}, 2),
    ({"name": "cafétéria"}, {"$strLenBytes": "$name"}, 11),
    ({"name": "寿司"}, {"$strLenBytes": "$name"}, 6),
    ({"name": None}, {"$strLenCP": "$name"}, None, "requires a string"),
    ({"description": " \n good  bread \t "}, {"$trim": {"input": "$description"}}, "good  bread"),
    ({"description": "\u00a0 keyboard \u3000"}, {"$trim": {"input": "$description"}}, "keyboard"),
    ({"description": "xxhixx"}, {"$ltrim": {"input": "$description", "chars": "x"}}, "hixx"),
    ({"description": "xxhixx"}, {"$rtrim": {"input": "$description", "chars": "x"}}, "xxhi"),
    ({"description": " ggood bread "}, {"$ltrim": {"input": "$description", "chars": " g"}}, "ood bread "),
    ({"description": None}, {"$trim": {"input": "$description"}}, None),
    ({"item": "foo"}, {"$indexOfCP": ["$item", "foo"]}, 0),
    ({"item": "fóofoo"}, {"$indexOfCP": ["$item", "foo"]}, 3),
    ({"item": "vanilla"}, {"$indexOfCP": ["$item", "foo"]}, -1),
    ({"item": "cafeteria"}, {"$indexOfCP": ["$item", "e", 5]}, 5),
    ({"item": "cafeteria"}, {"$indexOfCP": ["$item", "e", 0, 3]}, -1),
    ({"item": None}, {"$indexOfCP": ["$item", "foo"]}, None),
    ({"description": "Single LINE description."},
     {"$regexMatch": {"input": "$description", "regex": "line", "options": "i"}}, True),
    ({"description": "Single LINE description."}, {"$regexMatch": {"input": "$description", "regex": "line"}}, False),
    ({"description": "First line\nsecond line"},
     {"$regexMatch": {"input": "$description", "regex": "^s", "options": "m"}}, True),
    ({"description": "First line\nsecond line"}, {"$regexMatch": {"input": "$description", "regex": "^s"}}, False),
    ({"description": "x"}, {"$regexMatch": {"input": "$description",
                                              "regex": {"$regularExpression": {"pattern": "X", "options": "i"}}}}, True),
    ({}, {"$regexMatch": {"input": "$description", "regex": "x"}}, False),
    ({"description": 5}, {"$regexMatch": {"input": "$description", "regex": "x"}}, None, "to be of type string"),
    ({"description": "Single LINE description."},
     {"$regexFind": {"input": "$description", "regex": "line", "options": "i"}},
     {"match": "LINE", "idx": 7, "captures": []}),
    ({"description": "abc"}, {"$regexFind": {"input": "$description", "regex": "x"}}, None),
    ({"email": "Contact: fred@example.com"},
     {"$regexFind": {"input": "$email", "regex": "([a-z0-9_.+-]+)@([a-z0-9-]+)\\.[a-z]+"}},
     {"match": "fred@example.com", "idx": 9, "captures": ["fred", "example"]}),
    ({"e": "a@x.com b@y.org"}, {"$regexFindAll": {"input": "$e", "regex": "([a-z]+)@([a-z]+)\\.[a-z]+"}},
     [{"match": "a@x.com", "idx": 0, "captures": ["a", "x"]}, {"match": "b@y.org", "idx": 8, "captures": ["b", "y"]}]),
    ({"e": "none here"}, {"$regexFindAll": {"input": "$e", "regex": "[0-9]+"}}, []),
    ({"item": "blue paint"}, {"$replaceOne": {"input": "$item", "find": "blue paint", "replacement": "red paint"}},
     "red paint"),
    ({"item": "blue paint with blue paintbrush"},
     {"$replaceOne": {"input": "$item", "find": "blue paint", "replacement": "red paint"}},
     "red paint with blue paintbrush"),
    ({"item": "blue paint with blue paintbrush"},
     {"$replaceAll": {"input": "$item", "find": "blue paint", "replacement": "red paint"}},
     "red paint with red paintbrush"),
    ({"item": None}, {"$replaceAll": {"input": "$item", "find": "blue", "replacement": "red"}}, None),
    # an empty 'find' matches before every character and at the end (MongoDB's special case)
    ({}, {"$replaceAll": {"input": "abc", "find": "", "replacement": "X"}}, "XaXbXcX"),
    ({}, {"$replaceAll": {"input": "", "find": "", "replacement": "X"}}, "X"),
    ({}, {"$replaceOne": {"input": "abc", "find": "", "replacement": "X"}}, "Xabc"),
    ({"item": 1}, {"$replaceAll": {"input": "$item", "find": "blue", "replacement": "red"}}, None, "be a string"),
    ({"quarter": "13Q4"}, {"$strcasecmp": ["$quarter", "13q4"]}, 0),
    ({"quarter": "13Q1"}, {"$strcasecmp": ["$quarter", "13q4"]}, -1),
    ({"quarter": "14Q2"}, {"$strcasecmp": ["$quarter", "13q4"]}, 1),
]

OBJECTS_AND_MORE = [
    ({"a": {"x": 1, "y": 2}, "b": {"y": 3}}, {"$mergeObjects": ["$a", "$b", {"z": None}]}, {"x": 1, "y": 3, "z": None}),
    ({"a": {"x": 1}, "b": None}, {"$mergeObjects": ["$a", "$b"]}, {"x": 1}),
    ({"a": {"x": {"p": 1}}, "b": {"x": {"q": 2}}}, {"$mergeObjects": ["$a", "$b"]}, {"x": {"q": 2}}),
    ({"a": {"x": 1}}, {"$mergeObjects": ["$a", 1]}, None, "requires object"),
    ({"a": {"x": 1}}, {"$mergeObjects": "$a"}, {"x": 1}),
    ({"price.usd": 45}, {"$getField": "price.usd"}, 45),
    ({"$price": 45}, {"$getField": {"$literal": "$price"}}, 45),
    ({"a": {"b": 1}}, {"$getField": {"field": "b", "input": "$a"}}, 1),
    ({"a": {"b": 1}}, {"$getField": {"field": "c", "input": "$a"}}, M),
    ({}, {"$getField": {"field": "c", "input": "$a"}}, None),
    ({"a": 5}, {"$getField": {"field": "c", "input": "$a"}}, None, "type Object"),
    ({"a": {"b": 1}}, {"$setField": {"field": "price.usd", "input": "$a", "value": 5}}, {"b": 1, "price.usd": 5}),
    ({"a": {"b": 1, "c": 2}}, {"$setField": {"field": "c", "input": "$a", "value": "$$REMOVE"}}, {"b": 1}),
    ({"a": {"b": 1}}, {"$setField": {"field": {"$literal": "$x"}, "input": "$a", "value": 2}}, {"b": 1, "$x": 2}),
    ({"p": 10, "d": 0.2},
     {"$let": {"vars": {"total": {"$multiply": ["$p", 2]}, "disc": "$d"},
               "in": {"$multiply": ["$$total", "$$disc"]}}}, 4.0),
    ({"price": 10, "tax": 0.5, "applyDiscount": True},
     {"$let": {"vars": {"total": {"$add": ["$price", "$tax"]}, "discounted": {"$cond": {
         "if": "$applyDiscount", "then": 0.9, "else": 1}}},
         "in": {"$multiply": ["$$total", "$$discounted"]}}}, 9.450000000000001),
    ({"a": "$x"}, {"$literal": "$a"}, "$a"),
    ({"a": 1}, {"$literal": {"$add": [1, 2]}}, {"$add": [1, 2]}),
    ({"a": 1, "b": {"c": 2}}, "$$ROOT", {"a": 1, "b": {"c": 2}}),
    ({"a": 1, "b": {"c": 2}}, "$$CURRENT.b.c", 2),
    ({"a": [{"b": 1}, {"b": 2}, {"c": 3}]}, "$a.b", [1, 2]),
    ({"a": 1}, "$$REMOVE", M),
    ({"a": 1}, {"x": "$a", "y": ["$a", "$z", {"$add": ["$a", 1]}], "z": "$nope"}, {"x": 1, "y": [1, None, 2]}),
    ({"a": 1}, {"x": {"y": {"$toInt": "q"}}}, None, "cannot convert"),
]


# inputs that would make Spark raise (ANSI overflow, bad casts): errors on the row, never a
# failed batch
ROBUSTNESS = [
    # Decimal128's range, not DECIMAL(38)'s: MongoDB's 34-digit product
    ({"a": D("9" * 19)}, {"$multiply": ["$a", "$a", "$a"]}, D("9.999999999999999997000000000000000E+56")),
    ({"a": D("9" * 19)}, {"$multiply": ["$a", float("inf")]}, None, "out of range"),
    ({"a": 1e300}, {"$add": [dt(2020, 1, 1), "$a"]}, None, "out of range"),
    ({"a": 10**15}, {"$dateAdd": {"startDate": dt(2020, 1, 1), "unit": "hour", "amount": "$a"}}, None, "out of range"),
    ({"a": 10**12}, {"$dateAdd": {"startDate": dt(2020, 1, 1), "unit": "month", "amount": "$a"}}, None,
     "out of range"),
    ({"a": 10**12}, {"$dateFromParts": {"year": 2020, "month": "$a"}}, None, "in range"),
    ({"a": 10**12}, {"$dateFromParts": {"year": 2020, "hour": "$a"}}, None, "in range"),
    ({"a": 10**12}, {"$substrCP": ["abc", "$a", "$a"]}, ""),
    ({"a": 10**12}, {"$slice": [[1, 2], "$a"]}, [1, 2]),
    ({"a": 1e300}, {"$toDate": "$a"}, None, "cannot convert"),
    ({"a": 1e300}, {"$toLong": "$a"}, None, "cannot convert"),
    ({"d": [["a", 1], [2, 3]]}, {"$arrayToObject": "$d"}, None, "pairs"),
    ({"a": 2**63 - 1}, {"$multiply": ["$a", 2]}, float(2**64 - 2)),
    ({"a": -(2**63)}, {"$abs": "$a"}, None, "long long min"),
]


def test_robustness(spark):
    run(spark, ROBUSTNESS)


def test_field_paths_inline_give_the_same_answers(spark):
    """Stages read field paths through a Hoister (once per row); accumulators, window keys and
    ``$source.timeField`` compile them inline. Both ways agree."""
    run(spark, ROBUSTNESS + STRINGS[:11], hoist=False)


def test_arithmetic(spark):
    run(spark, ARITHMETIC)


def test_comparison_boolean_conditional(spark):
    run(spark, COMPARISON_BOOLEAN_CONDITIONAL)


def test_strings(spark):
    run(spark, STRINGS)


def test_objects_variables_literals(spark):
    run(spark, OBJECTS_AND_MORE)


def test_meta(spark):
    from pyspark.sql import functions as F

    start = F.lit(_dt.datetime(2020, 1, 1, tzinfo=U)).cast("timestamp").cast("variant")
    run(spark, [
        ({"a": 1}, {"$meta": "stream.window.start"}, dt(2020, 1, 1)),
        ({"a": 1}, {"$meta": "stream.source.partition"}, M),
        ({"a": 1}, {"$dateDiff": {"startDate": {"$meta": "stream.window.start"}, "endDate": dt(2020, 1, 2),
                                  "unit": "hour"}}, 24),
    ], meta={"stream.window.start": start})


def test_now_is_a_date(spark):
    from headrace.spark.expr import compile_expression
    from headrace.spark.registry import Ctx
    from pyspark.sql import functions as F
    from _expr_helpers import doc_frame

    c = compile_expression({"$type": "$$NOW"}, Ctx(root=F.col("doc")))
    assert doc_frame(spark, [{}]).select(c.value.cast("string")).collect()[0][0] == "date"


def test_every_operator_has_a_compiler():
    import headrace.spark.expr  # noqa: F401
    from headrace.mql.expressions import OPERATORS
    from headrace.spark.registry import EXPRESSIONS

    assert set(OPERATORS) <= set(EXPRESSIONS)
