"""``$source.dedup`` and ``options.guarantee`` validation (no Spark)."""
import pytest

from headrace.errors import PipelineError
from headrace.spec import parse_pipeline
from headrace.spec.model import Duration

H = {"size": 10, "unit": "minute"}


def src(dedup):
    return [{"$source": {"connectionName": "s", "stream": "x", "dedup": dedup}}]


def test_dedup_parses_with_an_expression_and_a_horizon():
    p = parse_pipeline(src({"idField": "$msgId", "horizon": H}))
    assert p.source.dedup.id_field == "$msgId" and p.source.dedup.horizon == Duration(10, "minute")
    p = parse_pipeline(src({"idField": {"$concat": ["$producer", "-", {"$toString": "$seq"}]}, "horizon": H}))
    assert p.source.dedup.horizon.ms == 600_000


@pytest.mark.parametrize("dedup,code,path", [
    ("$msgId", "TYPE_MISMATCH", "dedup"),
    ({"horizon": H}, "MISSING_OPTION", "dedup.idField"),
    ({"idField": "$msgId"}, "MISSING_OPTION", "dedup.horizon"),
    ({"idField": "$msgId", "horizon": H, "ttl": 1}, "UNKNOWN_OPTION", "dedup.ttl"),
    ({"idField": "msgId", "horizon": H}, "DEDUP_ID_CONSTANT", "dedup.idField"),
    ({"idField": {"$literal": 1}, "horizon": H}, "DEDUP_ID_CONSTANT", "dedup.idField"),
    ({"idField": {"$nope": 1}, "horizon": H}, None, "dedup.idField"),
    ({"idField": "$msgId", "horizon": {"size": 0, "unit": "minute"}}, "BAD_VALUE", "dedup.horizon.size"),
    ({"idField": "$msgId", "horizon": {"size": 1, "unit": "week"}}, "BAD_VALUE", "dedup.horizon.unit"),
    ({"idField": "$msgId", "horizon": {"size": 500, "unit": "ms"}}, "DEDUP_HORIZON_RANGE", "dedup.horizon"),
    ({"idField": "$msgId", "horizon": {"size": 31, "unit": "day"}}, "DEDUP_HORIZON_RANGE", "dedup.horizon"),
])
def test_bad_dedup_options_have_stable_codes_and_paths(dedup, code, path):
    with pytest.raises(PipelineError) as info:
        parse_pipeline(src(dedup))
    e = info.value
    if code:
        assert e.code == code
    assert (e.where.position, e.where.stage) == (0, "$source")
    assert e.where.path.startswith(path)


def test_constant_id_error_suggests_the_field_path():
    with pytest.raises(PipelineError) as info:
        parse_pipeline(src({"idField": "msgId", "horizon": H}))
    assert '"$msgId"' in str(info.value)


def test_guarantee_is_per_processor_and_validated():
    assert parse_pipeline({"pipeline": src({"idField": "$m", "horizon": H})}).options.guarantee == "exactlyOnce"
    p = parse_pipeline({"pipeline": src({"idField": "$m", "horizon": H}), "options": {"guarantee": "atLeastOnce"}})
    assert p.options.guarantee == "atLeastOnce"
    with pytest.raises(PipelineError) as info:
        parse_pipeline({"pipeline": src({"idField": "$m", "horizon": H}), "options": {"guarantee": "once"}})
    assert info.value.code == "BAD_VALUE" and info.value.where.path == "options.guarantee"


def test_modify_with_resume_refuses_a_changed_dedup_id_or_horizon_and_allows_adding_it():
    from headrace.instance.compat import incompatibilities

    a = parse_pipeline(src({"idField": "$m", "horizon": H}))
    b = parse_pipeline(src({"idField": "$n", "horizon": {"size": 1, "unit": "hour"}}))
    plain = parse_pipeline([{"$source": {"connectionName": "s", "stream": "x"}}])
    got = incompatibilities(a, b)
    assert [r["field"] for r in got] == ["$source.dedup.idField", "$source.dedup.horizon"]
    assert {r["code"] for r in got} == {"DEDUP_CHANGED"}
    assert incompatibilities(plain, a) == [] and incompatibilities(a, plain) == []
