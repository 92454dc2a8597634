"""Pipeline parsing and validation (no Spark): codes first, then where, expected and found."""
import pytest

from headrace.errors import NotSupportedYet, PipelineError
from headrace.spec import parse_pipeline
from headrace.spec.model import EmitSpec, MergeIntoSpec

SRC = {"$source": {"connectionName": "sample_stream_solar"}}
WIN = {"interval": {"size": 10, "unit": "second"}, "pipeline": [{"$count": "n"}]}


def err(p) -> PipelineError:
    with pytest.raises(PipelineError) as info:
        parse_pipeline(p)
    return info.value


def test_parses_a_full_pipeline_with_defaults():
    p = parse_pipeline({"pipeline": [SRC, {"$match": {"a": 1}}, {"$tumblingWindow": WIN}, {"$set": {"b": 1}},
                                     {"$merge": {"into": {"connectionName": "store", "db": "d", "coll": "c"}}}],
                        "options": {"dlq": {"connectionName": "store", "db": "d", "coll": "dlq"}}})
    assert p.source.ts_field_name == "_ts"
    assert p.window.allowed_lateness_ms == 3000 and p.window.boundary == "eventTime"
    assert [s.name for s in p.before] == ["$match"] and [s.name for s in p.after] == ["$set"]
    assert isinstance(p.sink, MergeIntoSpec) and p.sink.on == ("_id",) and p.sink.when_matched == "merge"
    assert p.options.dlq.coll == "dlq"


def test_error_names_position_stage_path_expected_found():
    e = err([SRC, {"$tumblingWindow": {**WIN, "interval": {"size": 10, "unit": "fortnight"}}}])
    assert e.code == "BAD_VALUE"
    assert (e.where.position, e.where.stage, e.where.path) == (1, "$tumblingWindow", "interval.unit")
    assert "fortnight" in str(e) and "expected one of" in str(e)


@pytest.mark.parametrize("stages,code,path", [
    ([SRC, {"$tumblingWindow": {**WIN, "boundary": "processingTime", "idleTimeout": {"size": 1, "unit": "second"}}}],
     "WINDOW_PROCESSING_TIME_OPTION", "idleTimeout"),
    ([SRC, {"$hoppingWindow": {**WIN, "hopSize": {"size": 20, "unit": "second"}}}], "WINDOW_HOP", "hopSize"),
    ([SRC, {"$tumblingWindow": {**WIN, "interval": {"size": 0, "unit": "second"}}}], "BAD_VALUE", "interval.size"),
    ([SRC, {"$tumblingWindow": {**WIN, "interval": {"size": 1.5, "unit": "second"}}}], "TYPE_MISMATCH",
     "interval.size"),
    ([SRC, {"$tumblingWindow": {"pipeline": [{"$count": "n"}]}}], "MISSING_OPTION", "interval"),
    ([SRC, {"$sessionWindow": {"gap": {"size": 1, "unit": "second"}, "pipeline": [{"$count": "n"}]}}],
     "MISSING_OPTION", "partitionBy"),
    ([SRC, {"$tumblingWindow": {**WIN, "pipeline": [{"$merge": {}}]}}], "STAGE_ORDER", "pipeline.0"),
    ([SRC, {"$unwind": "sizes"}], "BAD_VALUE", "path"),
    ([SRC, {"$project": {"a": 1, "b": 0}}], "PROJECT_MIXED", "b"),
    ([SRC, {"$project": {"a": {"b": 1}, "c": 0}}], "PROJECT_MIXED", "c"),
    ([SRC, {"$project": {"a": {"b": 0, "c": 1}}}], "PROJECT_MIXED", "a.c"),
    ([SRC, {"$project": {"contact.address.country": 1, "contact": 1}}], "PROJECT_PATH_COLLISION",
     "contact.address.country"),
    ([SRC, {"$emit": {"connectionName": "store", "db": "x"}}], "MISSING_OPTION", "coll"),
    ([SRC, {"$merge": {"into": {"connectionName": "store", "db": "d", "coll": "c"}, "whenMatched": "explode"}}],
     "BAD_VALUE", "whenMatched"),
    ([{"$source": {"documents": [{"a": 1}], "replay": {"arrivalField": "at"}}}], "REPLAY_ARRIVAL", "documents.0"),
    ([{"$source": {"documents": [{"at": "2024-01-01T00:01:00Z"}, {"at": "2024-01-01T00:00:00Z"}],
                   "replay": {"arrivalField": "at"}}}], "REPLAY_ORDER", "documents.1.at"),
    ([{"$source": {"connectionName": "x", "documents": []}}], "SOURCE_SHAPE", None),
    ([{"$source": {"connectionName": "x", "bogus": 1}}], "UNKNOWN_OPTION", "bogus"),
])
def test_refusals(stages, code, path):
    e = err(stages)
    assert e.code == code, str(e)
    assert e.where.path == path


def test_not_supported_yet_is_not_unknown():
    e = err([SRC, {"$lookup": {"from": "x"}}])
    assert isinstance(e, NotSupportedYet) and e.code == "STAGE_NOT_SUPPORTED_YET" and "not supported yet" in str(e)
    e = err([{"$source": {"connectionName": "k", "initialSync": {"enable": True}}}])
    assert e.code == "OPTION_NOT_SUPPORTED_YET"


def test_emit_to_file_and_options():
    p = parse_pipeline({"pipeline": [SRC, {"$emit": {"path": "/tmp/x.jsonl"}}], "options": {"streamMeta": False}})
    assert isinstance(p.sink, EmitSpec) and p.sink.path == "/tmp/x.jsonl" and p.options.stream_meta is False
    assert err({"pipeline": [SRC], "options": {"dlq": {"db": "d"}}}).code == "MISSING_OPTION"
    assert err({"pipeline": [SRC], "extra": 1}).code == "PIPELINE_SHAPE"


# ------------------------------------------------------------------ window offset (ASP form)

@pytest.mark.parametrize("kind,extra", [("$tumblingWindow", {}),
                                        ("$hoppingWindow", {"hopSize": {"size": 5, "unit": "second"}})])
def test_window_offset_in_the_atlas_form(kind, extra):
    p = parse_pipeline([SRC, {kind: {**WIN, **extra, "offset": {"offsetFromUtc": 2, "unit": "second"}}}])
    assert p.window.offset_ms == 2000
    p = parse_pipeline([SRC, {kind: {**WIN, **extra, "offset": {"offsetFromUtc": -1, "unit": "hour"}}}])
    assert p.window.offset_ms == -3_600_000


@pytest.mark.parametrize("offset,code,path", [
    ({"size": 2, "unit": "second"}, "WINDOW_OFFSET_FORM", "offset"),
    ({"offsetFromUtc": 2}, "MISSING_OPTION", "offset.unit"),
    ({"offsetFromUtc": 1.5, "unit": "second"}, "TYPE_MISMATCH", "offset.offsetFromUtc"),
    ({"offsetFromUtc": 1, "unit": "week"}, "BAD_VALUE", "offset.unit"),
    ({"offsetFromUtc": 1, "unit": "second", "size": 1}, "UNKNOWN_OPTION", "offset.size"),
])
def test_window_offset_refusals(offset, code, path):
    e = err([SRC, {"$tumblingWindow": {**WIN, "offset": offset}}])
    assert e.code == code, str(e)
    assert e.where.path == path
    if code == "WINDOW_OFFSET_FORM":
        assert '{"offsetFromUtc": <int>, "unit"' in str(e)


# ------------------------------------------------------------------ Extended JSON constants

def test_extended_json_constants_are_typed_literals():
    import datetime as dt
    import decimal

    from headrace import ejson

    p = parse_pipeline([SRC, {"$project": {"x": {"$toInt": {"$numberDecimal": "1.5"}},
                                           "d": {"$dayOfYear": {"$date": "2014-03-01T08:00:00Z"}}}},
                        {"$match": {"_id": {"$ne": {"$oid": "5ab9cbe531c2ab715d42129e"}},
                                    "n": {"$in": [{"$numberLong": "5"}, {"$numberDouble": "2.5"}]}}}])
    proj, match = p.before
    assert proj.arg["x"] == {"$toInt": decimal.Decimal("1.5")}
    assert proj.arg["d"] == {"$dayOfYear": dt.datetime(2014, 3, 1, 8, tzinfo=dt.timezone.utc)}
    assert match.arg["_id"] == {"$ne": ejson.ObjectId("5ab9cbe531c2ab715d42129e")}
    assert [type(v) for v in match.arg["n"]["$in"]] == [ejson.Int64, float]


def test_malformed_extended_json_constant():
    e = err([SRC, {"$addFields": {"a": {"$add": [{"$date": "not a date"}, 1]}}}])
    assert e.code == "BAD_VALUE" and e.where.path == "a.$add.0.$date"
