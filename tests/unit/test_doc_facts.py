"""headrace.mql.doc_facts: the typed fast path's reading of ``schema_of_variant_agg`` (pure Python)."""
import pytest

from headrace.mql.doc_facts import DocFacts, merge, parse_schema

SOLAR = ("OBJECT<device_id: STRING, event_type: BIGINT, obs: OBJECT<temp: BIGINT, watts: BIGINT>, "
         "timestamp: STRING>")


def test_parse_objects_arrays_decimals_and_quoted_names():
    s = "OBJECT<`$oid`: STRING, `a b`: BIGINT, `c``d`: DECIMAL(2,1), `e:f`: OBJECT<`x,y`: ARRAY<BIGINT>>, n: VOID>"
    assert parse_schema(s) == ("object", {"$oid": "STRING", "a b": "BIGINT", "c`d": "DECIMAL(2,1)",
                                          "e:f": ("object", {"x,y": ("array", "BIGINT")}), "n": "VOID"})
    assert parse_schema("OBJECT<>") == ("object", {})
    with pytest.raises(ValueError):
        parse_schema("OBJECT<a BIGINT>")


def test_kind_answers_only_unambiguous_scalars_without_arrays_on_the_way():
    f = DocFacts.from_schemas([SOLAR])
    assert f.kind("event_type") == "int"
    assert f.kind("device_id") == "string"
    assert f.kind("obs.watts") == "int"
    assert f.kind("obs.nope") == "missing"
    assert f.kind("nope.deeper") == "missing"
    assert f.kind("obs") is None                       # a document
    assert f.kind("device_id.x") is None                # a scalar on the way
    g = DocFacts.from_schemas(["OBJECT<a: ARRAY<OBJECT<b: BIGINT>>, d: DOUBLE, m: DECIMAL(5,2), v: VARIANT, "
                               "t: TIMESTAMP, n: VOID, z: BOOLEAN>"])
    assert g.kind("a.b") is None and g.kind("a") is None
    # a merged DOUBLE or DECIMAL may hide integers: never answered
    assert g.kind("d") is None and g.kind("m") is None and g.kind("v") is None
    assert (g.kind("t"), g.kind("n"), g.kind("n.x"), g.kind("z")) == ("date", "null", "missing", "bool")


def test_partitions_merge_conservatively():
    a = parse_schema("OBJECT<a: BIGINT, b: STRING, c: VOID>")
    b = parse_schema("OBJECT<a: BIGINT, b: BIGINT, c: STRING, d: BOOLEAN>")
    assert merge(a, b) == ("object", {"a": "BIGINT", "b": "VARIANT", "c": "STRING", "d": "BOOLEAN"})
    f = DocFacts.from_schemas(["OBJECT<a: BIGINT, b: STRING>", None, "OBJECT<a: BIGINT, b: BIGINT>"])
    assert f.kind("a") == "int" and f.kind("b") is None
    assert DocFacts.from_schemas([None]).kind("a") == "missing"        # no document at all
    assert DocFacts.from_schemas(["OBJECT<a BIGINT>"]) is None          # unreadable: no facts


def test_very_wide_schemas_give_no_facts():
    wide = "OBJECT<" + ", ".join(f"f{i}: BIGINT" for i in range(20_000)) + ">"
    assert DocFacts.from_schemas([wide]) is None
