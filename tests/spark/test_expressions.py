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
from headrace.mql.expressions import validate_expression
from _expr_helpers import MISSING as M, check_cases

pytestmark = pytest.mark.spark

D = decimal.Decimal
U = ejson.UTC
OID = ejson.ObjectId("5ab9cbe531c2ab715d42129e")


def dt(*a):
    return _dt.datetime(*a, tzinfo=U)


def run(spark, cases, meta=None, hoist=True):
    for c in cases:
        validate_expression(c[1], "case")
    check_cases(spark, cases, meta, hoist=hoist)


ARITHMETIC = [
    # $add (docs: sales items) and typing
    ({"price": 10, "fee": 2}, {"$add": ["$price", "$fee"]}, 12),
    ({"a": 1, "b": 2.5}, {"$add": ["$a", "$b"]}, 3.5),
    ({"a": 2**31 - 1}, {"$add": ["$a", 1]}, 2**31),                  # int overflow -> long
    ({"a": 2**63 - 1}, {"$add": ["$a", 1]}, float(2**63)),           # long overflow -> double
    ({"a": D("1.50")}, {"$add": ["$a", 1]}, D("2.5")),
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

DATES = [
    ({"date": dt(2014, 1, 1, 8, 15, 39, 736000)}, {"$year": "$date"}, 2014),
    ({"date": dt(2014, 1, 1, 8, 15, 39, 736000)}, {"$month": "$date"}, 1),
    ({"date": dt(2014, 1, 1, 8, 15, 39, 736000)}, {"$dayOfMonth": "$date"}, 1),
    ({"date": dt(2014, 1, 1, 8, 15, 39, 736000)}, {"$hour": "$date"}, 8),
    ({"date": dt(2014, 1, 1, 8, 15, 39, 736000)}, {"$minute": "$date"}, 15),
    ({"date": dt(2014, 1, 1, 8, 15, 39, 736000)}, {"$second": "$date"}, 39),
    ({"date": dt(2014, 1, 1, 8, 15, 39, 736000)}, {"$millisecond": "$date"}, 736),
    ({"date": dt(2014, 1, 1, 8, 15, 39, 736000)}, {"$dayOfYear": "$date"}, 1),
    ({"date": dt(2014, 1, 1, 8, 15, 39, 736000)}, {"$dayOfWeek": "$date"}, 4),
    ({"date": dt(2014, 1, 1, 8, 15, 39, 736000)}, {"$week": "$date"}, 0),
    ({"date": dt(2016, 1, 1)}, {"$isoWeek": "$date"}, 53),
    ({"date": dt(2016, 1, 1)}, {"$isoWeekYear": "$date"}, 2015),
    ({"date": dt(2016, 1, 1)}, {"$isoDayOfWeek": "$date"}, 5),
    ({"date": dt(2014, 1, 1, 8, 15, 39, 736000)}, {"$hour": {"date": "$date", "timezone": "America/New_York"}}, 3),
    ({"date": dt(2014, 1, 1, 8, 15, 39, 736000)}, {"$minute": {"date": "$date", "timezone": "+0530"}}, 45),
    ({"date": dt(2014, 1, 1, 8, 15, 39, 736000)}, {"$hour": ["$date"]}, 8),
    ({"date": OID}, {"$year": "$date"}, 2018),
    ({}, {"$year": "$date"}, None),
    ({"date": "2014-01-01"}, {"$year": "$date"}, None, "can't convert"),
    # $dateToString (docs)
    ({"date": dt(2014, 1, 1, 8, 15, 39, 736000)}, {"$dateToString": {"format": "%Y-%m-%d", "date": "$date"}},
     "2014-01-01"),
    ({"date": dt(2014, 1, 1, 8, 15, 39, 736000)},
     {"$dateToString": {"format": "%H:%M:%S:%L%z", "date": "$date", "timezone": "America/New_York"}},
     "03:15:39:736-0500"),
    ({"date": dt(2014, 1, 1, 8, 15, 39, 736000)},
     {"$dateToString": {"format": "%Z", "date": "$date", "timezone": "America/New_York"}}, "-300"),
    ({"date": dt(2014, 1, 1, 8, 15, 39, 736000)}, {"$dateToString": {"date": "$date"}}, "2014-01-01T08:15:39.736Z"),
    ({"date": dt(2014, 1, 1, 8, 15, 39, 736000)},
     {"$dateToString": {"format": "%j %w %U %V %u %G %b %B %%", "date": "$date"}},
     "001 4 00 01 3 2014 Jan January %"),
    ({}, {"$dateToString": {"date": "$date", "onNull": "none"}}, "none"),
    ({"date": None}, {"$dateToString": {"date": "$date"}}, None),
    # $dateFromString (docs)
    ({"s": "2017-02-08T12:10:40.787"}, {"$dateFromString": {"dateString": "$s", "timezone": "America/New_York"}},
     dt(2017, 2, 8, 17, 10, 40, 787000)),
    ({"s": "2017-02-08"}, {"$dateFromString": {"dateString": "$s"}}, dt(2017, 2, 8)),
    ({"s": "2017-02-08T12:10:40Z"}, {"$dateFromString": {"dateString": "$s"}}, dt(2017, 2, 8, 12, 10, 40)),
    ({"s": "2017-02-08T12:10:40+01:00"}, {"$dateFromString": {"dateString": "$s"}}, dt(2017, 2, 8, 11, 10, 40)),
    ({"s": "06-15-2018"}, {"$dateFromString": {"dateString": "$s", "format": "%m-%d-%Y"}}, dt(2018, 6, 15)),
    ({"s": "15-06-2018"}, {"$dateFromString": {"dateString": "$s", "format": "%d-%m-%Y"}}, dt(2018, 6, 15)),
    ({"s": "WEDNESDAY"}, {"$dateFromString": {"dateString": "$s"}}, None, "error parsing"),
    ({"s": "WEDNESDAY"}, {"$dateFromString": {"dateString": "$s", "onError": "bad"}}, "bad"),
    ({"s": None}, {"$dateFromString": {"dateString": "$s", "onNull": dt(1970, 1, 1)}}, dt(1970, 1, 1)),
    ({"s": "2017-02-08T12:10:40Z"}, {"$dateFromString": {"dateString": "$s", "timezone": "Europe/London"}},
     None, "timezone argument"),
    # $dateTrunc (docs: binSize and startOfWeek)
    ({"d": dt(2021, 3, 15, 10, 30)}, {"$dateTrunc": {"date": "$d", "unit": "month"}}, dt(2021, 3, 1)),
    ({"d": dt(2021, 3, 15, 10, 30)}, {"$dateTrunc": {"date": "$d", "unit": "hour", "binSize": 2}}, dt(2021, 3, 15, 10)),
    ({"d": dt(2021, 3, 15, 11, 30)}, {"$dateTrunc": {"date": "$d", "unit": "hour", "binSize": 2}}, dt(2021, 3, 15, 10)),
    ({"d": dt(2021, 3, 17, 10, 30)}, {"$dateTrunc": {"date": "$d", "unit": "week"}}, dt(2021, 3, 14)),
    ({"d": dt(2021, 3, 17, 10, 30)}, {"$dateTrunc": {"date": "$d", "unit": "week", "startOfWeek": "monday"}},
     dt(2021, 3, 15)),
    ({"d": dt(2021, 3, 15, 10, 30)}, {"$dateTrunc": {"date": "$d", "unit": "quarter"}}, dt(2021, 1, 1)),
    ({"d": dt(2021, 3, 15, 10, 30)}, {"$dateTrunc": {"date": "$d", "unit": "year", "binSize": 2}}, dt(2020, 1, 1)),
    ({"d": dt(2021, 3, 15, 3, 30)}, {"$dateTrunc": {"date": "$d", "unit": "day", "timezone": "America/New_York"}},
     dt(2021, 3, 14, 5)),  # local midnight was still EST (-05:00)
    # $dateAdd / $dateSubtract / $dateDiff
    ({"d": dt(2021, 1, 31)}, {"$dateAdd": {"startDate": "$d", "unit": "month", "amount": 1}}, dt(2021, 2, 28)),
    ({"d": dt(2021, 1, 31)}, {"$dateAdd": {"startDate": "$d", "unit": "day", "amount": 3}}, dt(2021, 2, 3)),
    ({"d": dt(2020, 10, 24, 18, 10)},
     {"$dateAdd": {"startDate": "$d", "unit": "hour", "amount": 2}}, dt(2020, 10, 24, 20, 10)),
    ({"d": dt(2021, 3, 13, 12)},
     {"$dateAdd": {"startDate": "$d", "unit": "day", "amount": 1, "timezone": "America/New_York"}},
     dt(2021, 3, 14, 11)),  # the day has 23 hours there
    ({"d": dt(2021, 1, 31)}, {"$dateSubtract": {"startDate": "$d", "unit": "hour", "amount": 3}},
     dt(2021, 1, 30, 21)),
    ({"d": dt(2021, 3, 31)}, {"$dateSubtract": {"startDate": "$d", "unit": "month", "amount": 1}}, dt(2021, 2, 28)),
    ({"a": dt(2020, 12, 31, 23), "b": dt(2021, 1, 1, 1)},
     {"$dateDiff": {"startDate": "$a", "endDate": "$b", "unit": "year"}}, 1),
    ({"a": dt(2020, 12, 31, 23), "b": dt(2021, 1, 1, 1)},
     {"$dateDiff": {"startDate": "$a", "endDate": "$b", "unit": "day"}}, 1),
    ({"a": dt(2020, 12, 31, 23), "b": dt(2021, 1, 1, 1)},
     {"$dateDiff": {"startDate": "$a", "endDate": "$b", "unit": "hour"}}, 2),
    ({"a": dt(2021, 1, 1), "b": dt(2021, 3, 1)},
     {"$dateDiff": {"startDate": "$a", "endDate": "$b", "unit": "month"}}, 2),
    ({"a": dt(2021, 3, 1), "b": dt(2021, 1, 1)},
     {"$dateDiff": {"startDate": "$a", "endDate": "$b", "unit": "month"}}, -2),
    # $dateToParts / $dateFromParts (docs)
    ({"date": dt(2017, 1, 1, 1, 29, 9, 123000)}, {"$dateToParts": {"date": "$date"}},
     {"year": 2017, "month": 1, "day": 1, "hour": 1, "minute": 29, "second": 9, "millisecond": 123}),
    ({"date": dt(2017, 1, 1, 1, 29, 9, 123000)}, {"$dateToParts": {"date": "$date", "iso8601": True}},
     {"isoWeekYear": 2016, "isoWeek": 52, "isoDayOfWeek": 7, "hour": 1, "minute": 29, "second": 9,
      "millisecond": 123}),
    ({"date": dt(2017, 1, 1, 1, 29, 9, 123000)}, {"$dateToParts": {"date": "$date", "timezone": "America/New_York"}},
     {"year": 2016, "month": 12, "day": 31, "hour": 20, "minute": 29, "second": 9, "millisecond": 123}),
    ({}, {"$dateFromParts": {"year": 2017, "month": 2, "day": 8, "hour": 12}}, dt(2017, 2, 8, 12)),
    ({}, {"$dateFromParts": {"isoWeekYear": 2017, "isoWeek": 6, "isoDayOfWeek": 3, "hour": 12}}, dt(2017, 2, 8, 12)),
    ({}, {"$dateFromParts": {"year": 2016, "month": 12, "day": 31, "hour": 23, "minute": 46, "second": 12,
                             "timezone": "America/New_York"}}, dt(2017, 1, 1, 4, 46, 12)),
    ({}, {"$dateFromParts": {"year": 2017, "month": 14, "day": 1}}, dt(2018, 2, 1)),
    ({}, {"$dateFromParts": {"year": 2017, "month": 1, "day": 0}}, dt(2016, 12, 31)),
    ({"y": None}, {"$dateFromParts": {"year": "$y"}}, None),
    ({"y": "x"}, {"$dateFromParts": {"year": "$y"}}, None, "must evaluate to an integer"),
]

TYPES = [
    ({"a": "5"}, {"$toInt": "$a"}, 5),
    ({"a": "abc"}, {"$toInt": "$a"}, None, "cannot convert"),
    ({"a": 5.9}, {"$toInt": "$a"}, 5),
    ({"a": -5.9}, {"$toInt": "$a"}, -5),
    ({"a": True}, {"$toInt": "$a"}, 1),
    ({"a": 2**40}, {"$toInt": "$a"}, None, "cannot convert"),
    ({"a": None}, {"$toInt": "$a"}, None),
    ({"a": "5.5"}, {"$toDouble": "$a"}, 5.5),
    ({"a": "1e3"}, {"$toDouble": "$a"}, 1000.0),
    ({"a": dt(2018, 3, 27, 16, 58, 51, 538000)}, {"$toDouble": "$a"}, 1522169931538.0),
    ({"a": "5.5.5"}, {"$toDouble": "$a"}, None, "cannot convert"),
    ({"a": dt(2018, 3, 27, 16, 58, 51, 538000)}, {"$toLong": "$a"}, 1522169931538),
    ({"a": "5"}, {"$toLong": "$a"}, 5),
    ({"a": "5.5"}, {"$toDecimal": "$a"}, D("5.5")),
    ({"a": 2.5}, {"$toDecimal": "$a"}, D("2.5")),
    ({"a": dt(2018, 3, 27, 16, 58, 51, 538000)}, {"$toString": "$a"}, "2018-03-27T16:58:51.538Z"),
    ({"a": 2.5}, {"$toString": "$a"}, "2.5"),
    # a double as MongoDB's str::stream writes it: C's %g (six significant digits)
    ({"a": 1.23456789}, {"$toString": "$a"}, "1.23457"),
    ({"a": 1e20}, {"$toString": "$a"}, "1e+20"),
    ({"a": 2.5e-7}, {"$toString": "$a"}, "2.5e-07"),
    ({"a": 1234567.0}, {"$toString": "$a"}, "1.23457e+06"),
    ({"a": 0.0001}, {"$toString": "$a"}, "0.0001"),
    ({"a": 1e-310}, {"$toString": "$a"}, "1e-310"),
    ({"a": -0.0}, {"$toString": "$a"}, "-0"),
    ({"a": float("-inf")}, {"$toString": "$a"}, "-Infinity"),
    ({"a": float("inf")}, {"$toUpper": "$a"}, "INF"),
    ({"a": 123456.4}, {"$substrBytes": ["$a", 0, 10]}, "123456"),
    ({"a": 1}, {"$toString": "$a"}, "1"),
    ({"a": True}, {"$toString": "$a"}, "true"),
    ({"a": OID}, {"$toString": "$a"}, "5ab9cbe531c2ab715d42129e"),
    ({"a": [1]}, {"$toString": "$a"}, None, "cannot convert"),
    ({"a": "5ab9cbe531c2ab715d42129e"}, {"$toObjectId": "$a"}, OID),
    ({"a": "5ab9cbe531c2ab715d4212"}, {"$toObjectId": "$a"}, None, "cannot convert"),
    ({"a": OID}, {"$toDate": "$a"}, dt(2018, 3, 27, 4, 43, 17)),
    ({"a": "2018-03-03"}, {"$toDate": "$a"}, dt(2018, 3, 3)),
    ({"a": "2018-03-20 11:00:06 +0500"}, {"$toDate": "$a"}, dt(2018, 3, 20, 6, 0, 6)),
    ({"a": 1522039108044}, {"$toDate": "$a"}, dt(2018, 3, 26, 4, 38, 28, 44000)),
    ({"a": 120000000000.5}, {"$toDate": "$a"}, dt(1973, 10, 20, 21, 20)),
    ({"a": "x"}, {"$toDate": "$a"}, None, "cannot convert"),
    ({"a": "false"}, {"$toBool": "$a"}, True),
    ({"a": ""}, {"$toBool": "$a"}, True),
    ({"a": 0}, {"$toBool": "$a"}, False),
    ({"a": D("0")}, {"$toBool": "$a"}, False),
    ({"a": [1]}, {"$toBool": "$a"}, True),
    ({"a": "x"}, {"$convert": {"input": "$a", "to": "int", "onError": "err", "onNull": "nul"}}, "err"),
    ({}, {"$convert": {"input": "$a", "to": "int", "onError": "err", "onNull": "nul"}}, "nul"),
    ({"a": "12"}, {"$convert": {"input": "$a", "to": 16}}, 12),
    ({"a": "12", "t": "double"}, {"$convert": {"input": "$a", "to": "$t"}}, 12.0),
    ({"a": "12", "t": "bogus"}, {"$convert": {"input": "$a", "to": "$t"}}, None, "unknown target"),
    ({"a": 1.5}, {"$type": "$a"}, "double"),
    ({"a": 1}, {"$type": "$a"}, "int"),
    ({"a": 2**40}, {"$type": "$a"}, "long"),
    ({"a": D("1")}, {"$type": "$a"}, "decimal"),
    ({"a": "s"}, {"$type": "$a"}, "string"),
    ({"a": {"x": 1}}, {"$type": "$a"}, "object"),
    ({"a": [2]}, {"$type": "$a"}, "array"),
    ({"a": OID}, {"$type": "$a"}, "objectId"),
    ({"a": None}, {"$type": "$a"}, "null"),
    ({}, {"$type": "$a"}, "missing"),
    ({"a": D("1")}, {"$isNumber": "$a"}, True),
    ({"a": "1"}, {"$isNumber": "$a"}, False),
    ({}, {"$isNumber": "$a"}, False),
]

ARRAYS = [
    ({"colors": ["blue", "black", "red"]}, {"$size": "$colors"}, 3),
    ({}, {"$size": "$colors"}, None, "must be an array"),
    ({"favorites": ["chocolate", "cake", "butter", "apples"]}, {"$arrayElemAt": ["$favorites", 0]}, "chocolate"),
    ({"favorites": ["chocolate", "cake", "butter", "apples"]}, {"$arrayElemAt": ["$favorites", -1]}, "apples"),
    ({"favorites": ["a", "b", "c"]}, {"$arrayElemAt": ["$favorites", 15]}, M),
    ({"favorites": ["a", "b", "c"]}, {"$arrayElemAt": ["$favorites", 1.0]}, "b"),
    ({"favorites": ["a", "b", "c"]}, {"$arrayElemAt": ["$favorites", 1.5]}, None, "32-bit"),
    ({"favorites": "a"}, {"$arrayElemAt": ["$favorites", 0]}, None, "must be an array"),
    ({"favorites": None}, {"$arrayElemAt": ["$favorites", 0]}, None),
    ({"items": [1, 2, 3]}, {"$first": "$items"}, 1),
    ({"items": [[1, 2], 3]}, {"$first": "$items"}, [1, 2]),
    ({"items": []}, {"$first": "$items"}, M),
    ({"items": None}, {"$first": "$items"}, None),
    ({"items": 5}, {"$first": "$items"}, None, "must be an array"),
    ({"items": [1, 2, 3]}, {"$last": "$items"}, 3),
    ({"in_stock": ["apples", "oranges"]}, {"$in": ["bananas", "$in_stock"]}, False),
    ({"in_stock": ["apples", "oranges"]}, {"$in": ["oranges", "$in_stock"]}, True),
    ({"f": [1, 2]}, {"$in": [2.0, "$f"]}, True),
    ({"f": [[1], 2]}, {"$in": [[1], "$f"]}, True),
    ({"f": [None]}, {"$in": ["$missing", "$f"]}, False),
    ({"f": "x"}, {"$in": [1, "$f"]}, None, "requires an array"),
    ({"items": [{"item_id": 43, "quantity": 2, "price": 10}, {"item_id": 2, "quantity": 1, "price": 240}]},
     {"$filter": {"input": "$items", "as": "item", "cond": {"$gte": ["$$item.price", 100]}}},
     [{"item_id": 2, "quantity": 1, "price": 240}]),
    ({"items": [{"name": "pen", "price": 5}, {"name": "book", "price": 15}, {"name": "bag", "price": 25}]},
     {"$filter": {"input": "$items", "cond": {"$gte": ["$$this.price", 10]}, "limit": 1}},
     [{"name": "book", "price": 15}]),
    ({}, {"$filter": {"input": "$items", "cond": True}}, None),
    ({"items": 1}, {"$filter": {"input": "$items", "cond": True}}, None, "must be an array"),
    ({"quizzes": [5, 6, 7]}, {"$map": {"input": "$quizzes", "as": "grade", "in": {"$add": ["$$grade", 2]}}},
     [7, 8, 9]),
    ({"values": [1.5, 2.75]}, {"$map": {"input": "$values", "in": {"$trunc": "$$this"}}}, [1.0, 2.0]),
    ({"q": [{"a": 1}, {}]}, {"$map": {"input": "$q", "in": "$$this.a"}}, [1, None]),
    ({"q": ["1", "x"]}, {"$map": {"input": "$q", "in": {"$toInt": "$$this"}}}, None, "cannot convert"),
    ({"a": ["a", "b", "c"]},
     {"$reduce": {"input": "$a", "initialValue": "", "in": {"$concat": ["$$value", "$$this"]}}}, "abc"),
    ({"a": [1, 2, 3, 4]},
     {"$reduce": {"input": "$a", "initialValue": {"sum": 5, "product": 2},
                  "in": {"sum": {"$add": ["$$value.sum", "$$this"]},
                         "product": {"$multiply": ["$$value.product", "$$this"]}}}}, {"sum": 15, "product": 48}),
    ({"a": [[3, 4], [5, 6]]},
     {"$reduce": {"input": "$a", "initialValue": [1, 2], "in": {"$concatArrays": ["$$value", "$$this"]}}},
     [1, 2, 3, 4, 5, 6]),
    ({"a": ["1", "x"]}, {"$reduce": {"input": "$a", "initialValue": 0,
                                     "in": {"$add": ["$$value", {"$toInt": "$$this"}]}}}, None, "cannot convert"),
    ({"instock": ["chocolate"], "ordered": ["butter", "apples"]},
     {"$concatArrays": ["$instock", "$ordered"]}, ["chocolate", "butter", "apples"]),
    ({"instock": ["chocolate"]}, {"$concatArrays": ["$instock", "$ordered"]}, None),
    ({"instock": ["chocolate"], "ordered": "x"}, {"$concatArrays": ["$instock", "$ordered"]}, None, "only supports arrays"),
    ({"a": [1, 2, 3, 4]}, {"$slice": ["$a", 2]}, [1, 2]),
    ({"a": [1, 2, 3, 4]}, {"$slice": ["$a", -2]}, [3, 4]),
    ({"a": [1, 2, 3, 4]}, {"$slice": ["$a", 15]}, [1, 2, 3, 4]),
    ({"a": [1, 2, 3, 4]}, {"$slice": ["$a", 1, 2]}, [2, 3]),
    ({"a": [1, 2, 3, 4]}, {"$slice": ["$a", -3, 2]}, [2, 3]),
    ({"a": [1, 2, 3, 4]}, {"$slice": ["$a", -20, 2]}, [1, 2]),
    ({"a": [1, 2, 3, 4]}, {"$slice": ["$a", 15, 2]}, []),
    ({"a": [1, 2, 3, 4]}, {"$slice": ["$a", 1, 0]}, None, "positive"),
    ({"favorites": ["chocolate", "cake", "butter", "apples"]}, {"$reverseArray": "$favorites"},
     ["apples", "butter", "cake", "chocolate"]),
    ({"favorites": []}, {"$reverseArray": "$favorites"}, []),
    ({}, {"$reverseArray": "$favorites"}, None),
    ({"a": [1]}, {"$isArray": "$a"}, True),
    ({"a": "x"}, {"$isArray": "$a"}, False),
    ({"distance": 880}, {"$range": [0, "$distance", 250]}, [0, 250, 500, 750]),
    ({}, {"$range": [0, 5]}, [0, 1, 2, 3, 4]),
    ({}, {"$range": [0, 10, 2]}, [0, 2, 4, 6, 8]),
    ({}, {"$range": [10, 0, -2]}, [10, 8, 6, 4, 2]),
    ({}, {"$range": [0, 10, -1]}, []),
    ({"e": 1.5}, {"$range": [0, "$e"]}, None, "32-bit integer"),
    ({"items": ["one", "two", "three"]}, {"$indexOfArray": ["$items", "two"]}, 1),
    ({"items": [1, 2, 3]}, {"$indexOfArray": ["$items", 2.0]}, 1),
    ({"items": ["a", "b"]}, {"$indexOfArray": ["$items", "c"]}, -1),
    ({"items": ["a", "b", "a"]}, {"$indexOfArray": ["$items", "a", 1]}, 2),
    ({"items": ["a", "b", "a"]}, {"$indexOfArray": ["$items", "a", 1, 2]}, -1),
    ({"items": None}, {"$indexOfArray": ["$items", "a"]}, None),
    ({"items": "x"}, {"$indexOfArray": ["$items", "a"]}, None, "requires an array"),
    ({"dimensions": [{"k": "l", "v": 25}, {"k": "w", "v": 10}, {"k": "uom", "v": "cm"}]},
     {"$arrayToObject": "$dimensions"}, {"l": 25, "w": 10, "uom": "cm"}),
    ({"dimensions": [["l", 25], ["w", 10]]}, {"$arrayToObject": "$dimensions"}, {"l": 25, "w": 10}),
    ({"d": [["qty", 25], ["qty", 30]]}, {"$arrayToObject": "$d"}, {"qty": 30}),
    ({"d": [["qty"]]}, {"$arrayToObject": "$d"}, None, "pairs"),
    ({"dimensions": {"l": 25, "w": 10, "uom": "cm"}}, {"$objectToArray": "$dimensions"},
     [{"k": "l", "v": 25}, {"k": "uom", "v": "cm"}, {"k": "w", "v": 10}]),
    ({"d": 1}, {"$objectToArray": "$d"}, None, "requires a document"),
    ({"matrix": [[1, 2], [2, 3], [3, 4]]},
     {"$zip": {"inputs": [{"$arrayElemAt": ["$matrix", 0]}, {"$arrayElemAt": ["$matrix", 1]},
                          {"$arrayElemAt": ["$matrix", 2]}]}}, [[1, 2, 3], [2, 3, 4]]),
    ({"a": [1, 2, 3], "b": ["a", "b"]}, {"$zip": {"inputs": ["$a", "$b"]}}, [[1, "a"], [2, "b"]]),
    ({"a": [1, 2, 3], "b": ["a", "b"]},
     {"$zip": {"inputs": ["$a", "$b"], "useLongestLength": True, "defaults": [0, "z"]}},
     [[1, "a"], [2, "b"], [3, "z"]]),
    ({"a": [1, 2, 3], "b": ["a"]}, {"$zip": {"inputs": ["$a", "$b"], "useLongestLength": True}},
     [[1, "a"], [2, None], [3, None]]),
    # $sum / $avg / $min / $max (docs: quizzes, labs, final, midterm)
    ({"quizzes": [10, 6, 7], "labs": [5, 8], "final": 80, "midterm": 75}, {"$sum": "$quizzes"}, 23),
    ({"quizzes": [10, 6, 7], "labs": [5, 8], "final": 80, "midterm": 75}, {"$avg": "$labs"}, 6.5),
    ({"quizzes": [10, 6, 7], "labs": [5, 8], "final": 80, "midterm": 75}, {"$max": "$quizzes"}, 10),
    ({"quizzes": [10, 6, 7], "labs": [5, 8], "final": 80, "midterm": 75}, {"$min": "$labs"}, 5),
    ({"quizzes": [10, 6, 7], "labs": [5, 8], "final": 80, "midterm": 75}, {"$avg": ["$final", "$midterm"]}, 77.5),
    ({"quizzes": [10, 6, 7], "labs": [5, 8], "final": 80, "midterm": 75}, {"$sum": ["$final", "$midterm"]}, 155),
    ({"q": [10, 5.5, "x"]}, {"$sum": "$q"}, 15.5),
    ({"q": [2**62, 2**62]}, {"$sum": "$q"}, float(2**63)),
    ({"q": [D("1.5"), 1]}, {"$sum": "$q"}, D("2.5")),
    ({"q": ["a", "b"]}, {"$sum": "$q"}, 0),
    ({}, {"$sum": "$q"}, 0),
    ({}, {"$avg": "$q"}, None),
    ({"q": [10, 5, 2, None]}, {"$min": "$q"}, 2),
    ({"q": [10, 5, 2, "a"]}, {"$max": "$q"}, "a"),
    ({"a": 1, "b": 3}, {"$max": ["$a", "$b"]}, 3),
    ({"a": 1, "b": 3}, {"$sum": ["$a", "$b", "$c"]}, 4),
    ({"a": 1}, {"$min": ["$x", "$y"]}, None),
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
    ({"a": D("9" * 19)}, {"$multiply": ["$a", "$a", "$a"]}, D("9.999999999999999997E+56")),
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


def test_dates(spark):
    run(spark, DATES)


def test_types(spark):
    run(spark, TYPES)


def test_arrays(spark):
    run(spark, ARRAYS)


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
