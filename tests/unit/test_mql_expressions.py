"""headrace.mql.expressions: validation of aggregation expressions (no Spark)."""
from __future__ import annotations

import pytest

from headrace.errors import NotSupportedYet, PipelineError
from headrace.mql.expressions import (
    NOT_SUPPORTED, OPERATORS, is_constant, operands, valid_timezone, validate_expression,
)

P = "$addFields.x"

VALID = [
    "$a", "$a.b.c", "$$ROOT", "$$CURRENT.a", "$$NOW", "$$REMOVE", 1, "text", None, [1, "$a"],
    {"a": "$b", "c": {"d": 1}},
    {"$add": [1, "$a", {"$multiply": ["$b", 2]}]},
    {"$add": "$a"},
    {"$add": []},
    {"$abs": "$a"}, {"$abs": ["$a"]},
    {"$round": ["$a", 2]}, {"$round": "$a"}, {"$trunc": ["$a", -1]},
    {"$cond": {"if": {"$gt": ["$a", 1]}, "then": "y", "else": "n"}},
    {"$cond": [{"$gt": ["$a", 1]}, "y", "n"]},
    {"$ifNull": ["$a", "$b", 0]},
    {"$switch": {"branches": [{"case": {"$eq": ["$a", 1]}, "then": "one"}], "default": "other"}},
    {"$let": {"vars": {"total": {"$add": ["$p", "$t"]}}, "in": {"$multiply": ["$$total", 2]}}},
    {"$map": {"input": "$a", "as": "x", "in": {"$add": ["$$x", 1]}}},
    {"$map": {"input": "$a", "in": "$$this.b"}},
    {"$filter": {"input": "$a", "cond": {"$gt": ["$$this", 1]}, "limit": 2}},
    {"$reduce": {"input": "$a", "initialValue": 0, "in": {"$add": ["$$value", "$$this"]}}},
    {"$dateTrunc": {"date": "$d", "unit": "hour", "binSize": 2, "timezone": "Europe/Paris"}},
    {"$dateAdd": {"startDate": "$d", "unit": "month", "amount": 1}},
    {"$dateDiff": {"startDate": "$a", "endDate": "$b", "unit": "week", "startOfWeek": "mon"}},
    {"$year": "$d"}, {"$year": ["$d"]}, {"$hour": {"date": "$d", "timezone": "+05:30"}},
    {"$dateToString": {"date": "$d", "format": "%Y-%m-%d", "onNull": "none"}},
    {"$dateFromString": {"dateString": "$s", "format": "%d-%m-%Y", "onError": None}},
    {"$dateFromParts": {"year": 2020, "month": 2}},
    {"$dateFromParts": {"isoWeekYear": 2020, "isoWeek": 3}},
    {"$convert": {"input": "$a", "to": "int", "onError": 0, "onNull": -1}},
    {"$convert": {"input": "$a", "to": 16}},
    {"$convert": {"input": "$a", "to": "$t"}},
    {"$convert": {"input": "$a", "to": {"type": "binData", "subtype": 4}, "format": "uuid"}},
    {"$convert": {"input": "$a", "to": 5, "byteOrder": "big"}},
    {"$toUUID": "$a"}, {"$tsSecond": "$t"}, {"$tsIncrement": {"$literal": {"$timestamp": {"t": 1, "i": 2}}}},
    {"$regexMatch": {"input": "$a", "regex": "^ab+", "options": "i"}},
    {"$regexFind": {"input": "$a", "regex": {"$regularExpression": {"pattern": "x", "options": "m"}}}},
    {"$getField": "price.usd"}, {"$getField": {"$literal": "$price"}},
    {"$getField": {"field": "a", "input": "$b"}},
    {"$setField": {"field": "a.b", "input": "$$ROOT", "value": "$$REMOVE"}},
    {"$meta": "stream.window.start"}, {"$meta": "stream.source.partition"},
    {"$literal": {"$foo": "$bar"}},
    {"$zip": {"inputs": ["$a", "$b"], "useLongestLength": True, "defaults": [0, 0]}},
    {"$sum": "$a"}, {"$max": ["$a", "$b"]},
    {"$concat": ["$a", "-", "$b"]}, {"$substrCP": ["$a", 0, 2]}, {"$indexOfCP": ["$a", "b", 1, 5]},
    {"$trim": {"input": "$a", "chars": "x"}},
    {"$range": [0, 10, 2]},
]


@pytest.mark.parametrize("expr", VALID, ids=lambda e: str(e)[:50])
def test_valid(expr):
    validate_expression(expr, P)


INVALID = [
    # code, expression, path, words in the message
    ("EXPR_UNKNOWN_OPERATOR", {"$foo": 1}, "$addFields.x.$foo", "unknown expression operator"),
    ("EXPR_UNKNOWN_OPERATOR", {"$push": "$a"}, "$addFields.x.$push", "accumulator"),
    ("EXPR_NOT_SUPPORTED_YET", {"$encStrContains": {"input": "$a", "substring": "b"}}, "$addFields.x.$encStrContains",
     "not supported yet"),
    ("EXPR_NOT_SUPPORTED_YET", {"$function": {"body": "x", "args": [], "lang": "js"}}, "$addFields.x.$function",
     "not supported yet"),
    ("EXPR_BAD_ARGS", {"$sortArray": {"input": "$a", "sortBy": 2}}, "$addFields.x.$sortArray.sortBy", "sortBy"),
    ("EXPR_BAD_ARGS", {"$percentile": {"input": "$a", "p": [1.5], "method": "approximate"}},
     "$addFields.x.$percentile.p", "between 0 and 1"),
    ("EXPR_BAD_ARGS", {"$median": {"input": "$a", "method": "exact"}}, "$addFields.x.$median.method", "method"),
    ("EXPR_BAD_ARGS", {"$setDifference": ["$a"]}, "$addFields.x.$setDifference", "takes 2 arguments"),
    ("EXPR_NOT_SUPPORTED_YET", "$$CLUSTER_TIME", P, "not supported yet"),
    ("EXPR_NOT_SUPPORTED_YET", {"$meta": "textScore"}, "$addFields.x.$meta", "not supported yet"),
    ("EXPR_NOT_SUPPORTED_YET", {"$convert": {"input": "$a", "to": "timestamp"}}, "$addFields.x.$convert.to",
     "not supported yet"),
    ("EXPR_NOT_SUPPORTED_YET", {"$convert": {"input": "$a", "to": "binData", "format": "$f"}},
     "$addFields.x.$convert.format", "computed 'format'"),
    ("EXPR_BAD_ARGS", {"$convert": {"input": "$a", "to": "int", "byteOrder": "middle"}},
     "$addFields.x.$convert.byteOrder", "invalid 'byteOrder'"),
    ("EXPR_BAD_ARGS", {"$convert": {"input": "$a", "to": {"type": "binData", "subtype": 9.5}}},
     "$addFields.x.$convert.to.subtype", "binData subtype number"),
    ("EXPR_NOT_SUPPORTED_YET", {"$dateToString": {"date": "$d", "format": "$f"}},
     "$addFields.x.$dateToString.format", "not supported yet"),
    ("EXPR_BAD_ARGS", {"$subtract": [1]}, "$addFields.x.$subtract", "takes 2 arguments"),
    ("EXPR_BAD_ARGS", {"$abs": [1, 2]}, "$addFields.x.$abs", "takes 1 argument"),
    ("EXPR_BAD_ARGS", {"$ifNull": ["$a"]}, "$addFields.x.$ifNull", "at least 2"),
    ("EXPR_BAD_ARGS", {"$cond": {"if": 1, "then": 2}}, "$addFields.x.$cond", "else"),
    ("EXPR_BAD_ARGS", {"$cond": [1, 2]}, "$addFields.x.$cond", "3 arguments"),
    ("EXPR_BAD_ARGS", {"$switch": {"branches": []}}, "$addFields.x.$switch.branches", "at least one branch"),
    ("EXPR_BAD_ARGS", {"$switch": {"branches": [{"case": 1}]}}, "$addFields.x.$switch.branches.0", "case"),
    ("EXPR_BAD_ARGS", {"$dateTrunc": {"date": "$d", "unit": "decade"}}, "$addFields.x.$dateTrunc.unit",
     "unknown time unit"),
    ("EXPR_BAD_ARGS", {"$dateTrunc": {"date": "$d"}}, "$addFields.x.$dateTrunc", "unit"),
    ("EXPR_BAD_ARGS", {"$dateAdd": {"startDate": "$d", "unit": "day", "amount": 1.5}},
     "$addFields.x.$dateAdd.amount", "integral"),
    ("EXPR_BAD_ARGS", {"$year": {"date": "$d", "timezone": "Mars/Olympus"}}, "$addFields.x.$year.timezone",
     "time zone"),
    ("EXPR_BAD_ARGS", {"$dateToString": {"date": "$d", "format": "%Q"}}, "$addFields.x.$dateToString.format",
     "format"),
    ("EXPR_BAD_ARGS", {"$dateFromParts": {"year": 2020, "isoWeek": 2}}, "$addFields.x.$dateFromParts", "not both"),
    ("EXPR_BAD_ARGS", {"$convert": {"input": "$a", "to": "float"}}, "$addFields.x.$convert.to", "target type"),
    ("EXPR_BAD_ARGS", {"$convert": {"input": "$a"}}, "$addFields.x.$convert", "'to'"),
    ("EXPR_BAD_ARGS", {"$convert": {"input": "$a", "to": "int", "bogus": 1}}, "$addFields.x.$convert.bogus",
     "unknown argument"),
    ("EXPR_BAD_ARGS", {"$regexMatch": {"input": "$a", "regex": "("}}, "$addFields.x.$regexMatch.regex",
     "regular expression"),
    ("EXPR_BAD_ARGS", {"$regexMatch": {"input": "$a", "regex": "a", "options": "q"}},
     "$addFields.x.$regexMatch.regex", "flag"),
    ("EXPR_BAD_ARGS", {"$round": ["$a", 200]}, "$addFields.x.$round.1", "place"),
    ("EXPR_BAD_ARGS", {"$range": [0, 10, 0]}, "$addFields.x.$range.2", "step"),
    ("EXPR_BAD_ARGS", {"$meta": "bogus"}, "$addFields.x.$meta", "unknown $meta"),
    ("EXPR_BAD_ARGS", {"$getField": {"field": "$a"}}, "$addFields.x.$getField.field", "constant string"),
    ("EXPR_BAD_ARGS", {"$getField": {"field": 5}}, "$addFields.x.$getField.field", "string"),
    ("EXPR_BAD_ARGS", {"$let": {"vars": {"Bad": 1}, "in": 1}}, "$addFields.x.$let.vars.Bad", "variable name"),
    ("EXPR_BAD_ARGS", {"$map": {"input": "$a", "as": "1x", "in": 1}}, "$addFields.x.$map.as", "variable name"),
    ("EXPR_BAD_ARGS", {"$filter": {"input": "$a"}}, "$addFields.x.$filter", "cond"),
    ("EXPR_BAD_ARGS", {"$zip": {"inputs": "$a"}}, "$addFields.x.$zip.inputs", "array"),
    ("EXPR_BAD_ARGS", {"$trim": "$a"}, "$addFields.x.$trim", "named arguments"),
    ("EXPR_INVALID_FIELD_PATH", "$", P, "by itself"),
    ("EXPR_INVALID_FIELD_PATH", "$a..b", P, "empty"),
    ("EXPR_INVALID_FIELD_PATH", "$a.$b", P, "start with '$'"),
    ("EXPR_UNDEFINED_VARIABLE", "$$x", P, "undefined variable: x"),
    ("EXPR_UNDEFINED_VARIABLE", "$$this", P, "undefined variable: this"),
    ("EXPR_UNDEFINED_VARIABLE", {"$let": {"vars": {"a": "$$a"}, "in": 1}}, "$addFields.x.$let.vars.a",
     "undefined variable: a"),
    ("EXPR_UNDEFINED_VARIABLE", {"$add": [1, "$$value"]}, "$addFields.x.$add.1", "undefined variable: value"),
    ("EXPR_INVALID_OBJECT", {"$add": [1], "b": 2}, P, "exactly one field"),
    ("EXPR_INVALID_OBJECT", {"a.b": 1}, "$addFields.x.a.b", "'.'"),
    ("EXPR_INVALID_OBJECT", {"a": {"$add": [1], "x": 1}}, "$addFields.x.a", "exactly one field"),
]


@pytest.mark.parametrize("code,expr,path,words", INVALID, ids=lambda v: str(v)[:40])
def test_invalid(code, expr, path, words):
    with pytest.raises(PipelineError) as info:
        validate_expression(expr, P)
    err = info.value
    assert err.code == code, str(err)
    assert err.where.path == path, str(err)
    assert words.lower() in str(err).lower()
    if code == "EXPR_NOT_SUPPORTED_YET":
        assert isinstance(err, NotSupportedYet)


def test_errors_say_expected_and_found():
    with pytest.raises(PipelineError) as info:
        validate_expression({"$subtract": [1]}, P)
    d = info.value.to_dict()
    assert d["expected"] and d["found"] == [1]


def test_variables_from_the_stage():
    validate_expression("$$limit", P, variables=["limit"])


def test_tables():
    assert not (NOT_SUPPORTED & set(OPERATORS))
    for name in ("$add", "$dateTrunc", "$convert", "$filter", "$meta", "$zip", "$setField"):
        assert name in OPERATORS
    for name in ("$sin", "$setUnion", "$sortArray", "$bitAnd", "$firstN", "$median", "$stdDevPop", "$unsetField"):
        assert name in OPERATORS
    for name in ("$function", "$accumulator", "$encStrContains"):
        assert name in NOT_SUPPORTED
    assert {"$rand", "$createObjectId", "$toUUID", "$tsSecond", "$tsIncrement"} <= set(OPERATORS)
    assert "$rand" in OPERATORS and "$createObjectId" in OPERATORS


def test_rand_and_create_object_id_take_only_an_empty_object():

    for op in ("$rand", "$createObjectId"):
        validate_expression({op: {}}, "x")
        for bad in ({"seed": 1}, 1, []):
            with pytest.raises(PipelineError) as exc:
                validate_expression({op: bad}, "x")
            assert exc.value.code == "EXPR_BAD_ARGS", (op, bad)
    assert operands(1) == [1] and operands([1, 2]) == [1, 2]
    assert is_constant({"a": [1, "x"]}) and not is_constant({"a": "$b"}) and is_constant({"$literal": "$x"})
    assert valid_timezone("America/New_York") and valid_timezone("+05:30") and valid_timezone("-0500")
    assert valid_timezone("+03") and not valid_timezone("Nowhere/City") and not valid_timezone("+5:00")
    # parseUtcOffset takes any two-digit hours and minutes (hours * 60 + minutes)
    assert valid_timezone("+25:00") and valid_timezone("+0575")


def test_no_pyspark_import():
    import subprocess
    import sys

    code = ("import sys, headrace.mql.expressions as m; m.validate_expression({'$add': [1]}, 'x');"
            "print('pyspark' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_hash_takes_a_known_constant_algorithm():
    for op in ("$hash", "$hexHash"):
        for alg in ("md5", "sha256", "xxh64"):
            validate_expression({op: {"input": "$s", "algorithm": alg}}, "x")
        # xxh64 runs in Python as a column of its own: not inside the lambdas of $map & co.
        with pytest.raises(NotSupportedYet) as exc:
            validate_expression({"$map": {"input": "$a", "in": {op: {"input": "$$this", "algorithm": "xxh64"}}}}, "x")
        assert exc.value.where.path == f"x.$map.in.{op}"
        for bad in ("sha1", "$alg", 5):
            with pytest.raises(PipelineError) as exc:
                validate_expression({op: {"input": "$s", "algorithm": bad}}, "x")
            assert exc.value.code == "EXPR_BAD_ARGS" and exc.value.where.path == f"x.{op}.algorithm", (op, bad)
        with pytest.raises(PipelineError):
            validate_expression({op: {"input": "$s"}}, "x")


def test_xxh64_is_refused_outside_the_stages_that_hoist_it():
    from headrace.spec import parse_pipeline

    xxh = {"$hexHash": {"input": "$s", "algorithm": "xxh64"}}
    parse_pipeline([{"$source": {"documents": []}}, {"$project": {"h": xxh}}, {"$match": {"$expr": xxh}}])
    window = {"$tumblingWindow": {"interval": {"size": 1, "unit": "second"},
                                  "pipeline": [{"$group": {"_id": None, "h": {"$first": xxh}}}]}}
    for stages, path in (([window], "$tumblingWindow.pipeline.0.$group.h.$first.$hexHash"),
                         ([{"$source": {"documents": [], "timeField": {"$toDate": xxh}}}],
                          "$source.timeField.$toDate.$hexHash"),
                         ([{"$merge": {"into": {"connectionName": "store", "db": "d",
                                                "coll": {"$toString": {"$bsonSize": "$$ROOT"}}}}}],
                          "$merge.into.coll.$toString.$bsonSize")):
        if stages[0].get("$source") is None:
            stages = [{"$source": {"documents": []}}] + stages
        with pytest.raises(NotSupportedYet) as exc:
            parse_pipeline(stages)
        assert exc.value.code == "EXPR_NOT_SUPPORTED_YET" and exc.value.where.path == path
