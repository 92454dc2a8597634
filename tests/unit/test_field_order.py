"""Field order templates (headrace.mql.field_order), without Spark: each stage's rule as MongoDB
states it, applied to a document whose fields come decoded in name order (as VARIANT gives them)."""
from __future__ import annotations

import json

import pytest

from headrace.mql.field_order import REST, Each, KeyOrder, OrderPlan, group_template, reorder, source_template
from headrace.spec import parse_pipeline
from headrace.testing import field_pairs


def _sorted(v):
    """A value as VARIANT decodes it: every document's fields by name."""
    if isinstance(v, dict):
        return {k: _sorted(v[k]) for k in sorted(v)}
    if isinstance(v, list):
        return [_sorted(x) for x in v]
    return v


def _out(stages: list, raw: dict, mongo_output: dict) -> None:
    """The output MongoDB gives (``mongo_output``, in its order), decoded by name, comes back in order."""
    plan = OrderPlan.of(parse_pipeline([{"$source": {"documents": []}}] + stages))
    got = reorder(_sorted(mongo_output), plan.output(json.dumps(raw)))
    assert field_pairs(got) == field_pairs(mongo_output)


DOC = {"_id": 1, "zeta": 1, "b": {"y": 1, "x": 2}, "arr": [{"q": 1, "p": 2}, {"q": 3, "p": 4}], "alpha": "a"}


def test_source_order_kept_through_order_keeping_stages():
    _out([{"$match": {"zeta": 1}}, {"$unset": "alpha"}, {"$project": {"zeta": 0}}],
         DOC, {"_id": 1, "b": {"y": 1, "x": 2}, "arr": [{"q": 1, "p": 2}, {"q": 3, "p": 4}]})


def test_add_fields_keeps_existing_places_and_appends_new_ones_in_spec_order():
    _out([{"$addFields": {"z": 1, "b.a": 5, "zeta": "new", "c": {"n": 1, "m": 2}}}], DOC,
         {"_id": 1, "zeta": "new", "b": {"y": 1, "x": 2, "a": 5}, "arr": [{"q": 1, "p": 2}, {"q": 3, "p": 4}],
          "alpha": "a", "z": 1, "c": {"n": 1, "m": 2}})


def test_add_fields_dotted_path_through_an_array_sets_each_element():
    _out([{"$set": {"arr.a": 0}}], {"arr": [{"q": 1, "p": 2}]}, {"arr": [{"q": 1, "p": 2, "a": 0}]})


def test_project_inclusion_document_order_then_computed_in_spec_order():
    _out([{"$project": {"alpha": 1, "c": {"$add": [1, 2]}, "b.x": 1, "a": "$zeta", "zeta": 1}}], DOC,
         {"_id": 1, "zeta": 1, "b": {"x": 2}, "alpha": "a", "c": 3, "a": 1})


def test_replace_root_and_expression_shapes():
    _out([{"$replaceRoot": {"newRoot": {"$mergeObjects": [{"k": 0, "d": 0}, "$b", {"d": 9, "e": 1}]}}}], DOC,
         {"k": 0, "d": 9, "y": 1, "x": 2, "e": 1})
    _out([{"$replaceWith": "$b"}], DOC, {"y": 1, "x": 2})
    _out([{"$project": {"_id": 0, "m": {"$map": {"input": "$arr", "as": "e", "in": {"w": "$$e.q", "v": "$$e"}}}}}],
         DOC, {"m": [{"w": 1, "v": {"q": 1, "p": 2}}, {"w": 3, "v": {"q": 3, "p": 4}}]})
    _out([{"$project": {"_id": 0, "f": {"$first": "$arr"}, "g": {"$filter": {"input": "$arr", "cond": True}}}}],
         DOC, {"f": {"q": 1, "p": 2}, "g": [{"q": 1, "p": 2}]})
    _out([{"$project": {"_id": 0, "o": {"$cond": [True, {"s": 1, "r": 2}, "$b"]}}}], DOC, {"o": {"s": 1, "r": 2}})


def test_unwind_gives_the_field_its_elements_template():
    _out([{"$unwind": {"path": "$arr", "includeArrayIndex": "i"}}], DOC,
         {"_id": 1, "zeta": 1, "b": {"y": 1, "x": 2}, "arr": {"q": 1, "p": 2}, "alpha": "a", "i": 0})


def test_operators_of_fixed_shape_and_source_values():
    _out([{"$project": {"_id": 0, "r": {"$regexFind": {"input": "$alpha", "regex": "a"}},
                        "p": {"$dateToParts": {"date": "$d", "iso8601": True}}}}], {"alpha": "a", "d": 1},
         {"r": {"match": "a", "idx": 0, "captures": []},
          "p": {"isoWeekYear": 1970, "isoWeek": 1, "isoDayOfWeek": 4, "hour": 0, "minute": 0, "second": 0,
                "millisecond": 0}})
    _out([{"$project": {"_id": 0, "o": {"$arrayToObject": "$kv"}, "j": {"$toObject": "$s"}}}],
         {"kv": [["z", 1], ["a", 2], ["z", 3]], "s": '{"n": 1, "m": {"y": 1, "x": 2}}'},
         {"o": {"z": 3, "a": 2}, "j": {"n": 1, "m": {"y": 1, "x": 2}}})


def test_object_to_array_lists_pairs_in_the_documents_order():
    plan = OrderPlan.of(parse_pipeline([{"$source": {"documents": []}},
                                        {"$project": {"_id": 0, "a": {"$objectToArray": "$d"}}}]))
    t = plan.output('{"d": {"l": 25, "w": 10, "uom": "cm"}}')
    assert t == {"a": KeyOrder(("l", "w", "uom"))}
    got = reorder({"a": [{"k": "l", "v": 25}, {"k": "uom", "v": "cm"}, {"k": "w", "v": 10}]}, t)
    assert [e["k"] for e in got["a"]] == ["l", "w", "uom"]


def test_group_output_is_id_then_accumulators_in_spec_order():
    t = group_template({"_id": {"s": "$s", "d": "$d"}, "total": {"$sum": "$v"}, "all": {"$push": {"y": 1, "x": 2}},
                        "count": {"$count": {}}})
    assert list(t) == ["_id", "total", "all", "count"]
    assert list(t["_id"]) == ["s", "d"] and t["all"] == Each({"y": None, "x": None})
    got = reorder({"_id": {"d": 1, "s": 2}, "all": [{"x": 2, "y": 1}], "count": 1, "total": 5}, t)
    assert field_pairs(got) == [("_id", [("s", 2), ("d", 1)]), ("total", 5), ("all", [[("y", 1), ("x", 2)]]),
                           ("count", 1)]


def test_window_plan_runs_the_inner_pipeline_and_the_stages_after():
    p = parse_pipeline([{"$source": {"documents": []}},
                        {"$tumblingWindow": {"interval": {"size": 1, "unit": "second"},
                                             "pipeline": [{"$group": {"_id": "$k", "n": {"$sum": 1}}}]}},
                        {"$addFields": {"b": 1, "a": 2}}])
    assert list(OrderPlan.of(p).window) == ["_id", "n", "b", "a"]


def test_unknown_fields_keep_their_place_or_go_last():
    assert list(reorder({"a": 1, "b": 2, "c": 3}, {"c": None, REST: None, "a": None})) == ["c", "b", "a"]
    assert list(reorder({"a": 1, "b": 2, "c": 3}, {"c": None})) == ["c", "a", "b"]
    assert reorder({"a": 1}, None) == {"a": 1}


@pytest.mark.parametrize("raw", [None, "not json", "[1, 2]", b'{"a": 1}'])
def test_source_template_of_any_text(raw):
    assert source_template(raw) == ({"a": 1} if raw == b'{"a": 1}' else None)


def test_the_source_time_field_comes_after_the_documents_fields():
    plan = OrderPlan.of(parse_pipeline([{"$source": {"documents": [], "tsFieldName": "when"}},
                                        {"$addFields": {"m": 1}}]))
    assert list(plan.source('{"b": 1, "a": 2}')) == ["b", "a", "when"]
    assert list(plan.output('{"b": 1, "when": 0, "a": 2}')) == ["b", "when", "a", "m"]


def test_an_element_of_object_to_array_results_is_k_then_v_in_the_values_order():
    from headrace.mql.order_templates import elements

    t = KeyOrder(("l", "w"), (("w", {"b": None, "a": None}),))
    assert elements(t) == {"k": None, "v": {"b": None, "a": None}}
    assert list(reorder({"v": {"a": 1, "b": 2}, "k": "w"}, elements(t))) == ["k", "v"]
    assert list(reorder({"v": {"a": 1, "b": 2}, "k": "w"}, elements(t))["v"]) == ["b", "a"]
