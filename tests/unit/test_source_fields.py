"""headrace.mql.source_fields: which top-level fields still hold the source record's value."""
from headrace.mql.source_fields import SourceFields
from headrace.spec.stages import spec_of


def _after(stages, ts="_ts"):
    f = SourceFields.at_source(ts)
    for name, arg in stages:
        f = f.after(name, spec_of(name, arg))
    return f


def test_at_source_everything_but_the_time_field():
    f = SourceFields.at_source("meta.ts")
    assert f.intact("size.h") and f.intact("size") and not f.intact("meta") and not f.intact("meta.x")


def test_stages_that_change_a_field_end_its_source_value():
    f = _after([("$match", {"a": 1}), ("$addFields", {"b.c": 1, "x": "$a"}), ("$unset", ["d.e"]),
                ("$unwind", {"path": "$u", "includeArrayIndex": "i"}), ("$validate", {"validator": {}})])
    assert f.intact("a.b") and f.intact("size")
    assert not any(f.intact(p) for p in ("b", "x", "d", "u", "i"))


def test_project_keeps_fields_copied_whole():
    inc = _after([("$project", {"size": 1, "h": "$size.h", "dims": {"w": 1}})])
    assert inc.intact("size.w") and not inc.intact("h") and not inc.intact("dims")
    exc = _after([("$project", {"size": 0})])
    assert not exc.intact("size") and exc.intact("item")


def test_other_stages_end_all_knowledge():
    f = _after([("$replaceRoot", {"newRoot": "$a"})])
    assert not f.intact("a") and not f.intact("size")
