"""Typed stage specs: each stage's argument is read once into a frozen dataclass,
and every stage compiler is registered with the spec type it takes."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from headrace.spec import parse_pipeline
from headrace.spec.parse import STATELESS
from headrace.spec.stages import (
    STAGE_SPECS, CountSpec, GroupSpec, LimitSpec, MatchSpec, ProjectSpec, ReplaceRootSpec, SetFieldsSpec, SortSpec,
    UnsetSpec, UnwindSpec, ValidateSpec,
)

SRC = {"$source": {"documents": [{"a": 1}]}}


def _stages(*stages):
    return parse_pipeline([SRC, *stages]).before


def test_every_stateless_stage_has_a_spec_builder():
    assert set(STATELESS) <= set(STAGE_SPECS)


def test_specs_are_frozen_and_read_once():
    (m, v, a, p, u, r, w, x) = _stages(
        {"$match": {"a": {"$gt": 0}}},
        {"$validate": {"validator": {"a": 1}, "validationAction": "dlq"}},
        {"$set": {"b": "$a", "c.d": 1}},
        {"$project": {"_id": 0, "a": 1, "s": {"t": 1, "u": {"$add": ["$a", 1]}}}},
        {"$unset": "b"},
        {"$replaceRoot": {"newRoot": {"x": "$a"}}},
        {"$replaceWith": "$$ROOT"},
        {"$unwind": {"path": "$a", "includeArrayIndex": "i", "preserveNullAndEmptyArrays": True}},
    )
    assert m.spec == MatchSpec({"a": {"$gt": 0}})
    assert v.spec == ValidateSpec({"a": 1}, "dlq")
    assert a.spec == SetFieldsSpec((("b", "$a"), ("c.d", 1)))
    assert p.spec == ProjectSpec(exclude=("_id",), include=(("a", None), ("s.t", None), ("s.u", {"$add": ["$a", 1]})),
                                 keep_id=False)
    assert u.spec == UnsetSpec(("b",))
    assert r.spec == ReplaceRootSpec({"x": "$a"}) and w.spec == ReplaceRootSpec("$$ROOT")
    assert x.spec == UnwindSpec("a", "i", True)
    with pytest.raises(dataclasses.FrozenInstanceError):
        x.spec.path = "b"


def test_project_exclusion_and_kept_id():
    (e, i) = _stages({"$project": {"a": 0, "b.c": 0}}, {"$project": {"a": 1}})
    assert e.spec == ProjectSpec(exclude=("a", "b.c"), include=(), keep_id=True)
    assert i.spec == ProjectSpec(exclude=(), include=(("a", None),), keep_id=True)


def test_window_inner_stateless_stages_carry_specs():
    p = parse_pipeline([SRC, {"$tumblingWindow": {"interval": {"size": 1, "unit": "second"}, "pipeline": [
        {"$unwind": "$a"}, {"$group": {"_id": None, "n": {"$sum": 1}}}]}}])
    inner = p.window.pipeline
    assert inner[0].spec == UnwindSpec("a") and inner[1].spec == GroupSpec(None, (("n", "$sum", 1),))


def test_window_only_stages_carry_specs():
    p = parse_pipeline([SRC, {"$hoppingWindow": {
        "interval": {"size": 2, "unit": "second"}, "hopSize": {"size": 1, "unit": "second"}, "pipeline": [
            {"$group": {"_id": "$k", "top": {"$max": "$v"}, "n": {"$count": {}}}},
            {"$sort": {"n": -1, "_id": 1}}, {"$limit": 2.0}, {"$count": "windows"}]}}])
    assert [st.spec for st in p.window.pipeline] == [
        GroupSpec("$k", (("top", "$max", "$v"), ("n", "$count", {}))),
        SortSpec((("n", -1), ("_id", 1))), LimitSpec(2), CountSpec("windows")]


def test_window_stage_compilers_do_not_read_raw_arguments():
    spark = Path(__file__).resolve().parents[2] / "headrace" / "spark"
    for f in [spark / "window_stages.py", *sorted((spark / "windows").glob("*.py"))]:
        assert ".arg" not in f.read_text(), f.name


def test_stage_modules_do_not_read_raw_arguments():
    root = Path(__file__).resolve().parents[2] / "headrace" / "spark" / "stages"
    for f in root.glob("*.py"):
        if f.name == "base.py":  # builds a spec for a Stage made by hand without one
            continue
        assert "st.arg" not in f.read_text(), f.name


def test_window_only_compilers_are_registered_with_their_spec_types():
    from headrace.spark import window_stages  # noqa: F401  (registers them)
    from headrace.spark.registry import STAGE_SPEC_TYPES, WINDOW_STAGES
    from headrace.spec.parse import WINDOW_ONLY

    assert set(WINDOW_STAGES) == set(WINDOW_ONLY)
    assert {n: STAGE_SPEC_TYPES[n] for n in WINDOW_ONLY} == {
        "$group": GroupSpec, "$sort": SortSpec, "$limit": LimitSpec, "$count": CountSpec}
