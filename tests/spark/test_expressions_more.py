"""Set, ranking, statistics, trigonometry and bitwise expressions on Spark, with the MongoDB
manual's examples (same table format as ``test_expressions.py``), plus the smaller
differences of issue 17 ($toDate of a date with a zone, ``$$value.field`` in ``$reduce``)."""
from __future__ import annotations

import datetime as _dt
import decimal
import math

import pytest

from _expr_helpers import MISSING as M, run_cases as run

pytestmark = pytest.mark.spark

D = decimal.Decimal
U = _dt.timezone.utc


FLOWERS = {"A": ["red", "blue"], "B": ["red", "blue", "green"], "C": ["blue", "red", "red"], "E": []}

SETS = [
    (FLOWERS, {"$setUnion": ["$A", "$B"]}, ["red", "blue", "green"]),
    (FLOWERS, {"$setUnion": ["$A", "$E"]}, ["red", "blue"]),
    ({"a": [1, 1.0, 2]}, {"$setUnion": ["$a"]}, [1, 2]),
    ({"A": ["a"]}, {"$setUnion": ["$A", "$nope"]}, None),
    (FLOWERS, {"$setIntersection": ["$A", "$B"]}, ["red", "blue"]),
    (FLOWERS, {"$setIntersection": ["$A", "$E"]}, []),
    (FLOWERS, {"$setDifference": ["$B", "$A"]}, ["green"]),
    (FLOWERS, {"$setDifference": ["$A", "$C"]}, []),
    (FLOWERS, {"$setEquals": ["$A", "$C"]}, True),
    (FLOWERS, {"$setEquals": ["$A", "$B"]}, False),
    (FLOWERS, {"$setIsSubset": ["$A", "$B"]}, True),
    (FLOWERS, {"$setIsSubset": ["$B", "$A"]}, False),
    ({"r": [True, 1, "someString"]}, {"$allElementsTrue": ["$r"]}, True),
    ({"r": [[False]]}, {"$allElementsTrue": ["$r"]}, True),
    ({"r": []}, {"$allElementsTrue": ["$r"]}, True),
    ({"r": [None, False, 0]}, {"$allElementsTrue": ["$r"]}, False),
    ({"r": [True, False]}, {"$anyElementTrue": ["$r"]}, True),
    ({"r": [None, False, 0]}, {"$anyElementTrue": ["$r"]}, False),
    ({"r": []}, {"$anyElementTrue": ["$r"]}, False),
    ({"a": 1}, {"$setUnion": ["$a"]}, None, "must be arrays"),
    ({}, {"$setEquals": ["$a", [1]]}, None, "must be arrays"),
    ({"a": "x"}, {"$allElementsTrue": ["$a"]}, None, "must be arrays"),
]

TEAM = [{"name": "pat", "age": 30, "address": {"street": "12 Baker St", "city": "London"}},
        {"name": "dallas", "age": 36, "address": {"street": "12 Cowper St", "city": "Palo Alto"}},
        {"name": "charlie", "age": 42, "address": {"street": "12 French St", "city": "New Brunswick"}}]

RANKING = [
    ({"team": TEAM}, {"$sortArray": {"input": "$team", "sortBy": {"name": 1}}}, [TEAM[2], TEAM[1], TEAM[0]]),
    ({"team": TEAM}, {"$sortArray": {"input": "$team", "sortBy": {"address.city": -1}}}, [TEAM[1], TEAM[2], TEAM[0]]),
    ({"team": TEAM}, {"$sortArray": {"input": "$team", "sortBy": {"age": -1, "name": 1}}}, [TEAM[2], TEAM[1], TEAM[0]]),
    ({}, {"$sortArray": {"input": [1, 4, 1, 6, 12, 5], "sortBy": 1}}, [1, 1, 4, 5, 6, 12]),
    ({}, {"$sortArray": {"input": [1, 4, 1, 6, 12, 5], "sortBy": -1}}, [12, 6, 5, 4, 1, 1]),
    ({"a": [20, 4, {"a": "Free"}, 6, 21, 5, "Gratis", {"a": None}, {"a": {"sale": True, "price": 19}},
            D("10.23"), {"a": "On sale"}]},
     {"$sortArray": {"input": "$a", "sortBy": 1}},
     [4, 5, 6, D("10.23"), 20, 21, "Gratis", {"a": None}, {"a": "Free"}, {"a": "On sale"},
      {"a": {"sale": True, "price": 19}}]),
    ({}, {"$sortArray": {"input": "$nope", "sortBy": 1}}, None),
    ({"a": 1}, {"$sortArray": {"input": "$a", "sortBy": 1}}, None, "requires an array"),
    ({"s": [10, 20, 30, 40]}, {"$firstN": {"n": 3, "input": "$s"}}, [10, 20, 30]),
    ({"s": [10, 20]}, {"$firstN": {"n": 3, "input": "$s"}}, [10, 20]),
    ({"s": [10, 20, 30, 40]}, {"$lastN": {"n": 3, "input": "$s"}}, [20, 30, 40]),
    ({"s": [10, 20]}, {"$lastN": {"n": 5, "input": "$s"}}, [10, 20]),
    ({"s": [1, 3, 6, None]}, {"$maxN": {"n": 2, "input": "$s"}}, [6, 3]),
    ({"s": [1, 3, 6, None]}, {"$minN": {"n": 2, "input": "$s"}}, [1, 3]),
    ({"s": [None]}, {"$minN": {"n": 2, "input": "$s"}}, []),
    ({"s": [1]}, {"$firstN": {"n": 0, "input": "$s"}}, None, "'n' must be a positive integer"),
    ({"s": 5}, {"$lastN": {"n": 1, "input": "$s"}}, None, "must be an array"),
]

SCORES = {"test01": 60, "test02": 89, "test03": 74}
STATS = [
    (SCORES, {"$median": {"input": ["$test01", "$test02", "$test03"], "method": "approximate"}}, 74.0),
    (SCORES, {"$percentile": {"input": ["$test01", "$test02", "$test03"], "p": [0.5, 0.95],
                              "method": "approximate"}}, [74.0, 89.0]),
    ({"s": [62, 81, 80]}, {"$percentile": {"input": "$s", "p": [0.5, 0.75, 0.9, 0.95], "method": "approximate"}},
     [80.0, 81.0, 81.0, 81.0]),
    ({"s": ["a", None]}, {"$median": {"input": "$s", "method": "approximate"}}, None),
    ({"scores": [85, 90, 71]}, {"$stdDevPop": "$scores"}, math.sqrt(194 / 3)),
    ({"scores": [85, 90, 71]}, {"$stdDevSamp": "$scores"}, math.sqrt(97)),
    ({"a": 85, "b": 90, "c": 71}, {"$stdDevPop": ["$a", "$b", "$c"]}, math.sqrt(194 / 3)),
    ({"scores": [85]}, {"$stdDevSamp": "$scores"}, None),
    ({"scores": ["x"]}, {"$stdDevPop": "$scores"}, None),
]

TRIG_BITS = [
    ({"angle": 30}, {"$sin": {"$degreesToRadians": "$angle"}}, math.sin(math.radians(30))),
    ({"x": 0.5}, {"$acos": "$x"}, math.acos(0.5)),
    ({"x": 1.0, "y": 1.0}, {"$atan2": ["$y", "$x"]}, math.atan2(1.0, 1.0)),
    ({"r": math.pi}, {"$radiansToDegrees": "$r"}, 180.0),
    ({"x": 2}, {"$cosh": "$x"}, math.cosh(2)),
    ({"x": None}, {"$tan": "$x"}, None),
    ({"x": 2}, {"$asin": "$x"}, None, "domain"),
    ({"x": "a"}, {"$sin": "$x"}, None, "only supports numeric types"),
    ({"a": 0, "b": 127}, {"$bitAnd": ["$a", "$b"]}, 0),
    ({"a": 2, "b": 3}, {"$bitAnd": ["$a", "$b"]}, 2),
    ({"a": 3, "b": 5}, {"$bitOr": ["$a", "$b"]}, 7),
    ({"a": 3, "b": 5}, {"$bitXor": ["$a", "$b"]}, 6),
    ({"a": 3}, {"$bitNot": "$a"}, -4),
    ({"a": 1.5, "b": 1}, {"$bitOr": ["$a", "$b"]}, None, "only supports int and long"),
    ({"a": None, "b": 1}, {"$bitOr": ["$a", "$b"]}, None),
]

SMALLER = [
    ({}, {"$toDate": "2018-03-15 +10:00"}, _dt.datetime(2018, 3, 14, 14, tzinfo=U)),
    ({}, {"$toDate": "2018-03-05"}, _dt.datetime(2018, 3, 5, tzinfo=U)),
    ({}, {"$reduce": {"input": [1, 2, 3, 4], "initialValue": {"sum": 5, "product": 2},
                      "in": {"sum": {"$add": ["$$value.sum", "$$this"]},
                             "product": {"$multiply": ["$$value.product", "$$this"]}}}}, {"sum": 15, "product": 48}),
    ({"item": "a", "price": 5}, {"$unsetField": {"field": "price", "input": "$$ROOT"}}, {"item": "a"}),
]


def test_set_expressions(spark):
    run(spark, SETS)


def test_ranking_expressions(spark):
    run(spark, RANKING)


def test_statistics_expressions(spark):
    run(spark, STATS)


def test_trigonometry_and_bits(spark):
    run(spark, TRIG_BITS)


def test_smaller_differences(spark):
    run(spark, SMALLER)


REGEX = [
    ({}, {"$regexFind": {"input": "abc", "regex": "(x)?(a)"}}, {"match": "a", "idx": 0, "captures": [None, "a"]}),
    ({}, {"$regexFind": {"input": "bcd", "regex": "(a*)b"}}, {"match": "b", "idx": 0, "captures": [""]}),
    ({}, {"$regexFindAll": {"input": "ab b", "regex": "(a)?b"}},
     [{"match": "ab", "idx": 0, "captures": ["a"]}, {"match": "b", "idx": 3, "captures": [None]}]),
    # a group that can match "": null when it did not take part, "" when it matched nothing
    ({}, {"$regexFind": {"input": "b", "regex": "b|(a*)"}}, {"match": "b", "idx": 0, "captures": [None]}),
    ({}, {"$regexFind": {"input": "xb", "regex": "(a*)c|b"}}, {"match": "b", "idx": 1, "captures": [None]}),
    ({}, {"$regexFind": {"input": "xb", "regex": "(a*)b"}}, {"match": "b", "idx": 1, "captures": [""]}),
    ({}, {"$regexFind": {"input": "\U0001F600ab", "regex": "(?<=a)(x*)b|(y?)a"}},
     {"match": "a", "idx": 1, "captures": [None, ""]}),
    ({}, {"$regexFind": {"input": "ab", "regex": "(?<=a)(x*)b"}}, {"match": "b", "idx": 1, "captures": [""]}),
    ({}, {"$regexFind": {"input": "AB", "regex": "(?<n>a*)c|(b?)b", "options": "i"}},
     {"match": "B", "idx": 1, "captures": [None, ""]}),
    ({}, {"$regexFindAll": {"input": "\U0001F600cb b", "regex": "(a*)c|b"}},
     [{"match": "c", "idx": 1, "captures": [""]}, {"match": "b", "idx": 2, "captures": [None]},
      {"match": "b", "idx": 4, "captures": [None]}]),
    # a regex computed per document: its groups counted in its text
    ({"r": "(x)?(a)b"}, {"$regexFind": {"input": "ab", "regex": "$r"}}, {"match": "ab", "idx": 0, "captures": [None, "a"]}),
    ({"r": "\\((a*)c|[(]b(?:x)?(?<n>y*)"}, {"$regexFind": {"input": "(b", "regex": "$r"}},
     {"match": "(b", "idx": 0, "captures": [None, ""]}),
    ({"r": "b"}, {"$regexFind": {"input": "ab", "regex": "$r"}}, {"match": "b", "idx": 1, "captures": []}),
    ({"r": "(a*)c|b"}, {"$regexFindAll": {"input": "cb", "regex": "$r"}},
     [{"match": "c", "idx": 0, "captures": [""]}, {"match": "b", "idx": 1, "captures": [None]}]),
]


def test_unmatched_capture_groups_are_null(spark):
    run(spark, REGEX)


# ------------------------------------------------------------------ $rand and $createObjectId

def test_rand_and_create_object_id_are_spread_independent_and_valid(spark):
    from _expr_helpers import eval_exprs

    docs = [{"_id": i} for i in range(300)]
    rands = [v for v, e in eval_exprs(spark, [(d, {"$rand": {}}) for d in docs])]
    assert all(isinstance(r, float) and 0.0 <= r < 1.0 for r in rands)
    assert len(set(rands)) == len(rands)
    assert 0.4 < sum(rands) / len(rands) < 0.6
    assert sum(r < 0.5 for r in rands) in range(120, 181)
    oids = [v for v, e in eval_exprs(spark, [(d, {"$createObjectId": {}}) for d in docs])]
    assert all(type(o).__name__ == "ObjectId" for o in oids), oids[:3]
    assert len({str(o) for o in oids}) == len(oids)
    # two places in one document, and every element of a $map, draw their own values
    (two, _), (mapped, _) = eval_exprs(spark, [
        ({}, {"a": {"$rand": {}}, "b": {"$rand": {}}}),
        ({}, {"$map": {"input": [1, 2, 3, 4], "in": {"$rand": {}}}}),
    ])
    assert two["a"] != two["b"]
    assert len(set(mapped)) == 4


def test_rand_and_create_object_id_repeat_on_replay(spark):
    """A rerun of the same input (a replay after a crash) gives the same values, so an ``_id``
    made by ``$createObjectId`` stays exactly-once; the manual's sampling ``$match`` keeps about
    the share it asks for."""
    from headrace.testing import run_pipeline

    docs = [{"n": i} for i in range(400)]
    pipeline = [{"$addFields": {"_id": {"$createObjectId": {}}, "r": {"$rand": {}}}},
                {"$match": {"$expr": {"$lt": [0.5, {"$rand": {}}]}}}]
    def draws(run):     # an ObjectId's first 4 bytes are the record's arrival second, new per run
        return sorted((d["n"], str(d["_id"])[8:], d["r"]) for d in run.outputs)

    first = draws(run_pipeline(pipeline, docs))
    assert first == draws(run_pipeline(pipeline, docs))
    assert 150 <= len(first) <= 250
    assert len({oid for _, oid, _ in first}) == len(first)

    # two clauses of one $match draw apart: each keeps half, both a quarter (not half)
    half = {"$expr": {"$lt": [{"$rand": {}}, 0.5]}}
    both = run_pipeline([{"$match": {"$and": [half, half]}}], docs).outputs
    assert 60 <= len(both) <= 140


def test_to_hashed_index_key_matches_the_reference_hash(spark):
    """The native hash against :func:`headrace.mql.bson.hashed_index_key` (MongoDB's, checked
    there against the manual's values) over every scalar type and the numeric edges."""
    from _expr_helpers import eval_exprs

    from headrace import ejson
    from headrace.mql.bson import MISSING, hashed_index_key

    values = ["", "string to hash", "é漢🎉", 0, 1, -1, 2**31, -(2**40), ejson.Int64(7), 1.5, -1.5, 1.0,
              float("nan"), float("inf"), float("-inf"), 1e30, -1e30, -0.0, decimal.Decimal("2.5"),
              decimal.Decimal("3.5"), decimal.Decimal("-2.5"), decimal.Decimal("1E+30"), True, False, None,
              _dt.datetime(1969, 12, 31, 23, 59, 59, 999000, tzinfo=_dt.timezone.utc),
              _dt.datetime(2024, 5, 6, 7, 8, 9, tzinfo=_dt.timezone.utc),
              ejson.ObjectId("5ab9cbfa31c2ab715d42129e"), b"", b"\x00\xffabc"]
    docs = [({"v": v}, {"$toHashedIndexKey": "$v"}) for v in values] + [({}, {"$toHashedIndexKey": "$v"})]
    got = eval_exprs(spark, docs)
    for v, (h, err) in zip(values + [MISSING], got):
        assert err is None and h == hashed_index_key(v), (v, h, err)
    (h, err), = eval_exprs(spark, [({"v": {"a": 1}}, {"$toHashedIndexKey": "$v"})])
    assert h is M and "document or an array is not supported yet" in err


def test_xxh64_gives_mongodbs_digests(spark):
    """``$hash``/``$hexHash`` with ``xxh64``: the values of MongoDB's own tests (jstests
    ``expression_hash.js``: seed 0, the 8 bytes big-endian), computed in a hoisted Python column,
    also where another operator reads the digest and over a digest itself."""
    import base64

    from _expr_helpers import eval_exprs

    b64 = lambda s: base64.b64decode(s)  # noqa: E731
    xxh = lambda x: {"$hash": {"input": x, "algorithm": "xxh64"}}  # noqa: E731
    cases = [({"s": "Hello World"}, xxh("$s"), b64("YzTSBxkkW8I=")),
             ({"s": "[1, 2, 3]"}, xxh("$s"), b64("wkwP8yqWE2o=")),
             ({"s": "🧐🤓😎"}, xxh("$s"), b64("tWWU4BmD+Z4=")),
             ({"s": ""}, xxh("$s"), b64("70bbN1HY6Zk=")),
             ({"b": b""}, xxh("$b"), b64("70bbN1HY6Zk=")),
             ({"b": b"hey"}, xxh("$b"), b64("Wv5M8jFeEv4=")),
             ({"s": "hey"}, xxh(xxh("$s")), b64("B+qrIpasjj4=")),
             ({"s": "Hello"}, xxh({"$concat": ["$s", " ", "World"]}), b64("YzTSBxkkW8I=")),
             ({"s": None}, xxh("$s"), None),
             ({}, xxh("$missing"), None),
             ({"s": "Hello World"}, {"$hexHash": {"input": "$s", "algorithm": "xxh64"}}, "6334D20719245BC2"),
             ({"s": "Hello World"}, {"$strLenCP": {"$hexHash": {"input": "$s", "algorithm": "xxh64"}}}, 16)]
    got = eval_exprs(spark, [(d, e) for d, e, _ in cases])
    for (d, e, want), (v, err) in zip(cases, got):
        assert err is None and v == want, (d, e, v, err)
    (v, err), = eval_exprs(spark, [({"s": 5}, xxh("$s"))])
    assert v is M and "requires a string or BinData input, found: int" in err


def test_bson_size_of_documents_in_a_hoisted_python_column(spark):
    """``$bsonSize`` against the Python reference (itself checked against pymongo's encoder):
    documents of every type, null and missing give null, anything else an error naming it."""
    from _expr_helpers import eval_exprs

    from headrace import ejson
    from headrace.mql.bson import bson_size

    docs = [{"a": 1}, {}, {"s": "é漢🎉", "n": None, "f": 1.5, "big": 2**40, "t": True},
            {"d": _dt.datetime(2024, 5, 6, tzinfo=_dt.timezone.utc), "o": ejson.ObjectId("5ab9cbfa31c2ab715d42129e"),
             "x": decimal.Decimal("2.5"), "b": b"\x00\x01", "arr": [1, [2], {"c": "d"}]}]
    got = eval_exprs(spark, [({"v": d}, {"$bsonSize": "$v"}) for d in docs]
                     + [({"v": None}, {"$bsonSize": "$v"}), ({}, {"$bsonSize": "$v"}),
                        ({"v": {"a": 1}}, {"$add": [{"$bsonSize": "$v"}, 1]})])
    assert [v for v, _ in got] == [bson_size(d) for d in docs] + [None, None, 13]
    assert all(e is None for _, e in got)
    bad = eval_exprs(spark, [({"v": 5}, {"$bsonSize": "$v"}), ({"v": [1]}, {"$bsonSize": "$v"}),
                             ({"v": ejson.ObjectId("5ab9cbfa31c2ab715d42129e")}, {"$bsonSize": "$v"})])
    for (v, e), t in zip(bad, ("int", "array", "objectId")):
        assert v is M and e.startswith(f"$bsonSize requires a document input, found: {t}"), (v, e)


def test_random_and_hash_operators_in_a_window(spark):
    """In a window's ``$group`` accumulators and in the stages after it (no source position
    there: the draw is keyed by the document and the window) the operators compile and draw
    independent values; an ObjectId made there starts with the window's start."""
    import json
    from pathlib import Path

    from headrace.testing import run_pipeline

    case = json.loads((Path(__file__).parents[1] / "golden" / "cases" / "tumbling_group.json").read_text())
    pipeline = case["pipeline"]
    pipeline[1]["$tumblingWindow"]["pipeline"] = [
        {"$group": {"_id": "$device", "r": {"$max": {"$rand": {}}}, "o": {"$first": {"$createObjectId": {}}}}},
        {"$addFields": {"r2": {"$rand": {}}, "h": {"$hexHash": {"input": "$_id", "algorithm": "md5"}},
                        "k": {"$toHashedIndexKey": "$_id"}}}]
    res = run_pipeline(pipeline)
    assert len(res.outputs) == 3 and not res.dlq
    draws = [d[f] for d in res.outputs for f in ("r", "r2")]
    assert all(0 <= x < 1 for x in draws) and len(set(draws)) == len(draws)
    assert len({str(d["o"]) for d in res.outputs}) == 3
    assert {str(d["o"])[:8] for d in res.outputs} <= {"66322ec0", "66322eca"}      # 12:00:00, 12:00:10
    a = [d for d in res.outputs if d["_id"] == "a"]
    assert a[0]["h"] == "0CC175B9C0F1B6A831C399E269772661" and a[0]["k"] == a[1]["k"]


def test_convert_numbers_to_and_from_bindata_bit_for_bit(spark):
    """``$convert`` between numbers and binData against Python's ``struct`` over the edges of
    IEEE 754 (subnormals, the largest double, -0.0, infinities, NaN, powers of two and their
    neighbours) and of two's complement, big-endian, and a few little-endian; then back again.
    A long that fits 32 bits reads back as an int (VARIANT keeps the smallest width), so it
    converts to 4 bytes: a known difference."""
    import base64
    import random
    import struct

    from _expr_helpers import eval_exprs

    from headrace import ejson

    rng = random.Random(5)
    doubles = [-0.0, 5e-324, -2.225073858507201e-308, 2.2250738585072014e-308, 1.7976931348623157e308,
               float("-inf"), 1.0, 1 / 3, 4503599627370497.0]
    doubles += [struct.unpack("<d", rng.randbytes(8))[0] for _ in range(2)]
    doubles = [d for d in doubles if d == d]
    longs = [-(2**63), -(2**31) - 1, rng.randint(-(2**63), 2**63 - 1)]
    cases, want = [], []

    def both(doc, expr, w):
        cases.append((doc, expr))
        want.append(w)

    for d in doubles:
        both({"v": d}, {"$convert": {"input": "$v", "to": "binData", "byteOrder": "big"}}, struct.pack(">d", d))
        both({"b": struct.pack(">d", d)}, {"$convert": {"input": "$b", "to": "double", "byteOrder": "big"}}, d)
    for d in (-1e-40, float("inf"), 1 / 3):     # single precision: a subnormal, infinity, a rounded value
        f32 = struct.unpack(">f", struct.pack(">f", d))[0]
        both({"b": struct.pack(">f", f32)}, {"$convert": {"input": "$b", "to": "double", "byteOrder": "big"}}, f32)
    for n in longs:
        both({"v": ejson.Int64(n)}, {"$convert": {"input": "$v", "to": "binData", "byteOrder": "big"}}, struct.pack(">q", n))
        both({"b": struct.pack(">q", n)}, {"$convert": {"input": "$b", "to": "long", "byteOrder": "big"}}, n)
    for n in (-1, -(2**31)):
        both({"v": n}, {"$convert": {"input": "$v", "to": "binData", "byteOrder": "big"}}, struct.pack(">i", n))
        for size, code in ((1, "b"), (2, "h"), (4, "i")):
            if -(2 ** (8 * size - 1)) <= n < 2 ** (8 * size - 1):
                both({"b": struct.pack(">" + code, n)}, {"$convert": {"input": "$b", "to": "int", "byteOrder": "big"}}, n)
    for d, n in ((-2.5, -(2**40)), (5e-324, 77)):                 # little-endian, the default
        both({"v": d}, {"$convert": {"input": "$v", "to": "binData"}}, struct.pack("<d", d))
        both({"b": struct.pack("<d", d)}, {"$convert": {"input": "$b", "to": "double"}}, d)
        both({"b": struct.pack("<q", n)}, {"$convert": {"input": "$b", "to": "long", "byteOrder": "little"}}, n)
        both({"b": struct.pack("<h", n % 30000)}, {"$convert": {"input": "$b", "to": "int"}}, n % 30000)
    assert len(cases) <= 50       # one query: each expression costs about half a second of analysis
    got = []
    for i in range(0, len(cases), 70):
        got += eval_exprs(spark, cases[i:i + 70])
    bad = []
    for (doc, expr), w, (v, err) in zip(cases, want, got):
        ok = err is None and (bytes(v) == w if isinstance(w, bytes) else
                              (v == w and str(v) == str(w) if isinstance(w, float) else v == w))
        if not ok:
            bad.append((doc, expr, w, v, err))
    assert not bad, bad[:5]
    nan_bits = eval_exprs(spark, [({"v": float("nan")}, {"$convert": {"input": "$v", "to": "binData", "byteOrder": "big"}})])
    assert base64.b16encode(bytes(nan_bits[0][0])) == b"7FF8000000000000"


def test_bindata_conversion_errors_and_timestamps(spark):
    from headrace import ejson

    u = ejson.Binary(bytes(range(16)), 4)
    ejson_binary = ejson.Binary(b"\xff\xfe", 128)
    run(spark, [
        ({"b": b"\x01\x02\x03"}, {"$convert": {"input": "$b", "to": "int"}}, None, "invalid length 3"),
        ({"b": b"\x01" * 8}, {"$convert": {"input": "$b", "to": "int"}}, None, "expected 1, 2 or 4 bytes"),
        ({"b": ejson_binary}, {"$convert": {"input": "$b", "to": "string", "format": "utf8"}}, None, "valid UTF-8"),
        ({"b": b"\x00"}, {"$convert": {"input": "$b", "to": "string", "format": "uuid"}}, None, "valid UUID"),
        ({"b": b"\x00"}, {"$convert": {"input": "$b", "to": "string"}}, None, "Format must be"),
        ({"s": "zz"}, {"$convert": {"input": "$s", "to": "binData", "format": "hex"}}, None, "cannot convert"),
        ({"s": "a"}, {"$convert": {"input": "$s", "to": "binData", "format": "base64"}}, None, "cannot convert"),
        ({"s": "00"}, {"$convert": {"input": "$s", "to": {"type": "binData", "subtype": 4}, "format": "hex"}}, None,
         "Only the 'uuid' format"),
        ({"b": u}, {"$convert": {"input": "$b", "to": {"type": "binData", "subtype": 4}}}, u),
        ({"b": u}, {"$convert": {"input": "$b", "to": "string", "format": "auto"}},
         "00010203-0405-0607-0809-0a0b0c0d0e0f"),
        ({"b": ejson_binary}, {"$convert": {"input": "$b", "to": "string", "format": "auto"}}, "//4="),
        ({"b": ejson_binary}, {"$toInt": "$b"}, None, "cannot convert binData"),
        ({"b": ejson_binary}, {"$convert": {"input": "$b", "to": "bool"}}, True),
        ({"s": "_-8"}, {"$convert": {"input": "$s", "to": "binData", "format": "base64url"}}, b"\xff\xef"),
        ({"t": ejson.Timestamp(1622731060, 2)}, {"$toDate": "$t"}, _dt.datetime(2021, 6, 3, 14, 37, 40, tzinfo=U)),
        ({"t": ejson.Timestamp(1622731060, 2)}, {"$tsSecond": "$t"}, 1622731060),
        ({"t": None}, {"$tsIncrement": "$t"}, None),
        ({"t": 5}, {"$tsIncrement": "$t"}, None, "requires a timestamp argument, found: int 5"),
        ({"s": "0e3b9063-8abd-4eb3-9f9f"}, {"$toUUID": "$s"}, None, "to a UUID"),
        ({"s": 7}, {"$toUUID": "$s"}, None, "cannot convert int 7"),
    ])
