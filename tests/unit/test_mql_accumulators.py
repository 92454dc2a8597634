"""Validation of the window-only stages: $group (accumulators), $sort, $limit, $count."""
from __future__ import annotations

import pytest

from headrace.errors import NotSupportedYet, PipelineError
from headrace.mql.accumulators import (ACCUMULATORS, constant_n_of, parse_sort_spec, percentiles, validate_count,
                                       validate_group, validate_limit, validate_sort)

P = "pipeline.0.$group"


def err(fn, *args) -> PipelineError:
    with pytest.raises(PipelineError) as ei:
        fn(*args)
    return ei.value


# ------------------------------------------------------------------ $group: valid specs

VALID_GROUPS = [
    {"_id": None},
    {"_id": "$item"},
    {"_id": {"month": {"$month": "$date"}, "year": {"$year": "$date"}},
     "total": {"$sum": {"$multiply": ["$price", "$quantity"]}}, "avg": {"$avg": "$quantity"},
     "count": {"$sum": 1}},
    {"_id": None, "c": {"$count": {}}},
    {"_id": "$author", "books": {"$push": "$$ROOT"}, "titles": {"$addToSet": "$title"}},
    {"_id": "$item", "mn": {"$min": "$q"}, "mx": {"$max": "$q"}, "f": {"$first": "$q"}, "l": {"$last": "$q"}},
    {"_id": "$item", "m": {"$mergeObjects": "$quantity"}},
    {"_id": "$quiz", "p": {"$stdDevPop": "$score"}, "s": {"$stdDevSamp": "$score"}},
    {"_id": "$gameId", "t": {"$top": {"output": ["$playerId", "$score"], "sortBy": {"score": -1}}},
     "b": {"$bottom": {"output": "$playerId", "sortBy": {"score": -1, "playerId": 1}}}},
    {"_id": "$gameId", "t": {"$topN": {"output": "$score", "sortBy": {"score": -1}, "n": 3}},
     "b": {"$bottomN": {"output": "$score", "sortBy": {"score": -1}, "n": 3.0}}},
    {"_id": {"gameId": "$gameId"},
     "t": {"$topN": {"output": "$score", "sortBy": {"score": -1},
                     "n": {"$cond": {"if": {"$eq": ["$gameId", "G2"]}, "then": 1, "else": 3}}}}},
    {"_id": "$gameId", "f": {"$firstN": {"input": "$score", "n": 5}},
     "l": {"$lastN": {"input": ["$playerId", "$score"], "n": {"$literal": 2}}}},
    {"_id": None, "p": {"$percentile": {"input": "$test01", "p": [0.5, 0.75, 0.9, 0.95], "method": "approximate"}},
     "m": {"$median": {"input": "$test01", "method": "approximate"}}},
    {"_id": None, "p": {"$percentile": {"input": "$x", "p": [0, 1], "method": "approximate"}}},
]


@pytest.mark.parametrize("spec", VALID_GROUPS)
def test_valid_groups(spec):
    validate_group(spec, P)


def test_every_spec_accumulator_is_supported():
    spec_list = "$sum $avg $min $max $count $first $last $push $addToSet $top $bottom $topN $bottomN " \
                "$firstN $lastN $median $percentile $stdDevPop $stdDevSamp $mergeObjects"
    # beyond the spec's list: MongoDB's $maxN and $minN (issue 17: what MongoDB and ASP accept)
    assert set(spec_list.split()) | {"$maxN", "$minN"} == set(ACCUMULATORS)


@pytest.mark.parametrize("name", ["$maxN", "$minN"])
def test_max_min_n_take_input_and_n(name):
    validate_group({"_id": None, "f": {name: {"input": "$x", "n": 2}}}, P)
    assert err(validate_group, {"_id": None, "f": {name: "$x"}}, P).code == "ACC_BAD_ARGS"
    e = err(validate_group, {"_id": None, "f": {name: {"input": "$x", "n": 0}}}, P)
    assert e.code == "ACC_BAD_ARGS" and e.where.path == f"pipeline.0.$group.f.{name}.n"
    e = err(validate_group, {"_id": None, "f": {name: {"input": "$x"}}}, P)
    assert e.code == "ACC_BAD_ARGS" and "needs 'n'" in str(e)


# ------------------------------------------------------------------ $group: errors

def test_group_id_required():
    e = err(validate_group, {"total": {"$sum": 1}}, P)
    assert e.code == "GROUP_ID_REQUIRED"
    assert e.where.path == "pipeline.0.$group._id"
    assert "_id" in str(e) and "expected" in str(e) and "found" in str(e)


def test_group_not_object():
    assert err(validate_group, ["_id"], P).code == "TYPE_MISMATCH"


@pytest.mark.parametrize("field", ["a.b", "$a", ""])
def test_group_bad_field_names(field):
    e = err(validate_group, {"_id": None, field: {"$sum": 1}}, P)
    assert e.code == "GROUP_FIELD_NAME"


@pytest.mark.parametrize("value", [1, "$x", {"$sum": 1, "$avg": 1}, {}, [{"$sum": 1}]])
def test_group_field_must_be_one_accumulator(value):
    e = err(validate_group, {"_id": None, "f": value}, P)
    assert e.code == "GROUP_FIELD_NOT_ACCUMULATOR"
    assert e.where.path == "pipeline.0.$group.f"


def test_unknown_accumulator():
    e = err(validate_group, {"_id": None, "f": {"$sumOf": "$x"}}, P)
    assert e.code == "ACC_UNKNOWN"
    assert e.where.path == "pipeline.0.$group.f.$sumOf"
    assert e.found == "$sumOf"


@pytest.mark.parametrize("name", ["$accumulator", "$covariancePop", "$covarianceSamp",
                                  "$concatArrays", "$setUnion", "$expMovingAvg", "$derivative", "$integral"])
def test_real_mongodb_accumulators_not_supported_yet(name):
    e = err(validate_group, {"_id": None, "f": {name: "$x"}}, P)
    assert isinstance(e, NotSupportedYet)
    assert e.code == "ACC_NOT_SUPPORTED_YET"
    assert "not supported yet" in str(e)
    assert e.where.path == f"pipeline.0.$group.f.{name}"


@pytest.mark.parametrize("name", ["$sum", "$avg", "$min", "$max", "$push", "$addToSet", "$first", "$last",
                                  "$stdDevPop", "$stdDevSamp", "$mergeObjects"])
def test_unary_accumulators_refuse_argument_lists(name):
    e = err(validate_group, {"_id": None, "f": {name: ["$a", "$b"]}}, P)
    assert e.code == "ACC_BAD_ARGS"
    assert "unary" in str(e)


@pytest.mark.parametrize("arg", [1, None, {"x": 1}, []])
def test_count_takes_no_arguments(arg):
    e = err(validate_group, {"_id": None, "c": {"$count": arg}}, P)
    assert e.code == "ACC_BAD_ARGS"
    assert e.expected == "{}"


@pytest.mark.parametrize("name,arg,missing_or_bad", [
    ("$topN", {"sortBy": {"s": 1}, "output": "$x"}, "n"),
    ("$topN", {"n": 3, "output": "$x"}, "sortBy"),
    ("$topN", {"n": 3, "sortBy": {"s": 1}}, "output"),
    ("$bottomN", {"sortBy": {"s": 1}, "output": "$x"}, "n"),
    ("$top", {"output": "$x"}, "sortBy"),
    ("$bottom", {"sortBy": {"s": 1}}, "output"),
    ("$firstN", {"input": "$x"}, "n"),
    ("$lastN", {"n": 2}, "input"),
    ("$percentile", {"input": "$x", "method": "approximate"}, "p"),
    ("$percentile", {"input": "$x", "p": [0.5]}, "method"),
    ("$median", {"input": "$x"}, "method"),
    ("$median", {"method": "approximate"}, "input"),
])
def test_missing_arguments(name, arg, missing_or_bad):
    e = err(validate_group, {"_id": None, "f": {name: arg}}, P)
    assert e.code == "ACC_BAD_ARGS"
    assert e.where.path == f"pipeline.0.$group.f.{name}.{missing_or_bad}"
    assert missing_or_bad in e.expected          # expected names the needed fields


@pytest.mark.parametrize("name,arg,path", [
    ("$top", {"n": 1, "sortBy": {"s": 1}, "output": "$x"}, "n"),           # $top takes no n
    ("$firstN", {"input": "$x", "n": 2, "sortBy": {"s": 1}}, "sortBy"),
    ("$median", {"input": "$x", "method": "approximate", "p": [0.5]}, "p"),
])
def test_unknown_arguments(name, arg, path):
    e = err(validate_group, {"_id": None, "f": {name: arg}}, P)
    assert e.code == "ACC_BAD_ARGS"
    assert e.where.path.endswith(path)


@pytest.mark.parametrize("name", ["$topN", "$firstN", "$top", "$percentile", "$median"])
def test_object_argument_required(name):
    e = err(validate_group, {"_id": None, "f": {name: "$x"}}, P)
    assert e.code == "ACC_BAD_ARGS"


@pytest.mark.parametrize("n", [0, -1, 2.5, "3", None, True, {"$literal": 0}])
def test_constant_n_must_be_a_positive_integer(n):
    e = err(validate_group, {"_id": None, "f": {"$firstN": {"input": "$x", "n": n}}}, P)
    assert e.code == "ACC_BAD_ARGS"
    assert e.where.path == "pipeline.0.$group.f.$firstN.n"
    assert e.expected == "a positive integer"


@pytest.mark.parametrize("sort_by", [{}, {"s": 0}, {"s": 2}, {"s": "asc"}, {"$s": 1}, "s", {"a..b": 1}])
def test_sort_by_must_be_a_sort_spec(sort_by):
    e = err(validate_group, {"_id": None, "f": {"$topN": {"n": 1, "sortBy": sort_by, "output": "$x"}}}, P)
    assert e.code == "ACC_BAD_ARGS"
    assert e.where.path.startswith("pipeline.0.$group.f.$topN.sortBy")


@pytest.mark.parametrize("p", [[], 0.5, [1.5], [-0.1], ["0.5"], [None], [True], "$ps"])
def test_percentile_p_must_be_numbers_in_0_1(p):
    e = err(validate_group, {"_id": None, "f": {"$percentile": {"input": "$x", "p": p, "method": "approximate"}}}, P)
    assert e.code == "ACC_BAD_ARGS"
    assert e.where.path.startswith("pipeline.0.$group.f.$percentile.p")


@pytest.mark.parametrize("method", ["discrete", "continuous", "exact", 1, None])
def test_percentile_method_must_be_approximate(method):
    for name, arg in (("$percentile", {"input": "$x", "p": [0.5], "method": method}),
                      ("$median", {"input": "$x", "method": method})):
        e = err(validate_group, {"_id": None, "f": {name: arg}}, P)
        assert e.code == "ACC_BAD_ARGS"
        assert e.expected == "'approximate'"


def test_expressions_inside_accumulators_are_validated():
    # the expression validator reports an unknown operator inside the argument, at its path
    e = err(validate_group, {"_id": None, "f": {"$sum": {"$noSuchOperator": 1}}}, P)
    assert e.where.path.startswith("pipeline.0.$group.f.$sum")
    e = err(validate_group, {"_id": {"$noSuchOperator": 1}}, P)
    assert e.where.path.startswith("pipeline.0.$group._id")
    e = err(validate_group, {"_id": None, "f": {"$topN": {"n": 1, "sortBy": {"a": 1}, "output": {"$nope": 1}}}}, P)
    assert e.where.path.startswith("pipeline.0.$group.f.$topN.output")


def test_errors_are_placed_at_the_outer_stage():
    e = err(validate_group, {"_id": None, "f": {"$sumOf": 1}}, P).at(2, "$tumblingWindow")
    assert (e.where.position, e.where.stage) == (2, "$tumblingWindow")
    assert "stage 2 ($tumblingWindow)" in str(e) and "pipeline.0.$group.f.$sumOf" in str(e)


def test_helpers():
    assert constant_n_of(3) == 3 and constant_n_of(3.0) == 3 and constant_n_of({"$literal": 2}) == 2
    assert constant_n_of("$n") is None and constant_n_of(0) is None
    assert percentiles({"p": [0, 0.5, 1]}) == [0.0, 0.5, 1.0]
    assert parse_sort_spec({"a.b": -1, "c": 1}, "x") == [("a.b", -1), ("c", 1)]


# ------------------------------------------------------------------ $sort, $limit, $count

@pytest.mark.parametrize("spec", [{"a": 1}, {"a.b": -1, "c": 1}, {"a": 1.0}])
def test_valid_sorts(spec):
    validate_sort(spec, "pipeline.1.$sort")


@pytest.mark.parametrize("spec", [{}, [], "a", {"a": 0}, {"a": "desc"}, {"a": True}, {"$a": 1}])
def test_bad_sorts(spec):
    e = err(validate_sort, spec, "pipeline.1.$sort")
    assert e.code == "SORT_INVALID"
    assert e.where.path.startswith("pipeline.1.$sort")


def test_sort_by_meta_not_supported_yet():
    e = err(validate_sort, {"score": {"$meta": "textScore"}}, "pipeline.1.$sort")
    assert isinstance(e, NotSupportedYet)


@pytest.mark.parametrize("n", [1, 5, 2.0, 2**62])
def test_valid_limits(n):
    validate_limit(n, "pipeline.2.$limit")


@pytest.mark.parametrize("n", [0, -3, 1.5, "2", None, True, 2**63])
def test_bad_limits(n):
    e = err(validate_limit, n, "pipeline.2.$limit")
    assert e.code == "LIMIT_INVALID"
    assert e.where.path == "pipeline.2.$limit"


@pytest.mark.parametrize("f", ["passing_scores", "n"])
def test_valid_counts(f):
    validate_count(f, "pipeline.3.$count")


@pytest.mark.parametrize("f", ["", "$n", "a.b", 1, None, {"n": 1}])
def test_bad_counts(f):
    e = err(validate_count, f, "pipeline.3.$count")
    assert e.code == "COUNT_INVALID"
