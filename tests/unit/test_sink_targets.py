"""Per-document sink expressions without Spark: ``$emit``'s dynamic topic or stream and Kafka
``config`` (key, keyFormat, headers, outputFormat), ``$merge``'s dynamic ``into.db``/``into.coll``:
parsing, refusals before anything runs, the sink stage added after the last stage, routing of
documents to their targets, and Kafka message keys and headers both ways (``$emit.config`` writes
them, ``$source.config`` ``keyField``/``headersField`` reads them)."""
from __future__ import annotations

import pytest

from headrace.connectors.kafka_message import encode_headers, encode_key, message_of
from headrace.errors import PipelineError
from headrace.spark.runtime.targets import route
from headrace.spec import parse_pipeline
from headrace.spec.model import KafkaEmitConfig
from headrace.spec.stages import SINK_FIELD, SinkTargetSpec, with_sink_targets
from headrace.validate import check_connections

from test_connectors_spec import _reg

SRC = {"$source": {"documents": [{"a": 1}]}}


def _emit(**kw):
    return parse_pipeline([SRC, {"$emit": {"connectionName": "k", **kw}}])


def test_emit_config_and_dynamic_targets_are_parsed():
    p = _emit(topic={"$concat": ["t-", "$r"]}, config={"key": "$a", "keyFormat": "int", "headers": {"h": "$a"},
                                                       "outputFormat": "canonicalJson"})
    assert p.sink.config == KafkaEmitConfig("$a", "int", {"h": "$a"}, "canonicalJson")
    assert [k for k, _ in p.sink.dynamic()] == ["coll", "key", "headers"]
    assert _emit(topic="plain").sink.dynamic() == ()
    assert _emit(topic="$field").sink.dynamic() == (("coll", "$field"),)     # a topic name has no '$'
    m = parse_pipeline([SRC, {"$merge": {"into": {"connectionName": "s", "db": "$d", "coll": {"$toLower": "$c"}}}}])
    assert m.sink.dynamic() == (("db", "$d"), ("coll", {"$toLower": "$c"}))


@pytest.mark.parametrize("emit, code, where", [
    ({"topic": "t", "config": {"keyFormat": "int"}}, "MISSING_OPTION", "config.key"),
    ({"topic": "t", "config": {"key": "$a", "keyFormat": "uuid"}}, "BAD_VALUE", "config.keyFormat"),
    ({"topic": "t", "config": {"outputFormat": "basic"}}, "BAD_VALUE", "config.outputFormat"),
    ({"topic": "t", "config": {"headers": {"$nope": 1}}}, "EXPR_UNKNOWN_OPERATOR", "config.headers.$nope"),
    ({"topic": "t", "config": {"acks": 1}}, "OPTION_NOT_SUPPORTED_YET", "config.acks"),
    ({"topic": {"$bogus": 1}}, "EXPR_UNKNOWN_OPERATOR", "topic.$bogus"),
    ({"stream": "s", "config": {}}, "EMIT_SHAPE", None),
])
def test_bad_emit_options_are_refused_before_anything_runs(emit, code, where):
    with pytest.raises(PipelineError) as e:
        _emit(**emit)
    assert e.value.code == code
    if where:
        assert where in str(e.value)


def test_config_on_a_connection_that_is_not_kafka_is_refused(tmp_path):
    reg = _reg(tmp_path, "  k: {type: redis, url: 'redis://h:1/0'}\n")
    with pytest.raises(PipelineError) as e:
        check_connections(_emit(topic="t", config={"outputFormat": "canonicalJson"}), reg)
    assert e.value.code == "EMIT_CONFIG" and "'redis'" in str(e.value)


def test_the_sink_stage_comes_after_the_last_stage():
    p = _emit(topic="$t")
    q = with_sink_targets(p)
    assert [s.name for s in q.before] == ["$emit"] and isinstance(q.before[-1].spec, SinkTargetSpec)
    assert with_sink_targets(_emit(topic="t")) is not None and with_sink_targets(_emit(topic="t")).before == ()
    w = parse_pipeline([SRC, {"$tumblingWindow": {"interval": {"size": 1, "unit": "second"},
                                                  "pipeline": [{"$group": {"_id": "$k", "n": {"$sum": 1}}}]}},
                        {"$merge": {"into": {"connectionName": "s", "db": "d", "coll": "$c"}}}])
    q = with_sink_targets(w)
    assert q.before == () and [s.name for s in q.after] == ["$merge"]


def test_route_groups_in_order_and_refuses_a_target_that_is_not_a_string():
    docs = [{"_id": i, SINK_FIELD: {"coll": c}} for i, c in enumerate(["a", "b", "a", 5, None, ""])]
    del docs[4][SINK_FIELD]["coll"]
    groups, refused = route(docs, "$merge", "db0", None, (("coll", "$c"),))
    assert [(g.db, g.coll, g.index) for g in groups] == [("db0", "a", [0, 2]), ("db0", "b", [1])]
    assert all(SINK_FIELD not in d for d in docs)
    assert [i for i, _ in refused] == [3, 4, 5]
    assert refused[0][1] == "$merge into.coll must evaluate to a non-empty string, found int 5"
    assert "found missing" in refused[1][1]
    _, refused = route([{SINK_FIELD: {"coll": 1}}], "$emit", "", None, (("coll", "$t"),), "stream")
    assert refused[0][1].startswith("$emit stream must evaluate")


def test_kafka_keys_and_headers_are_encoded_as_the_formats_say():
    assert encode_key(5, "int") == b"\x00\x00\x00\x05" and encode_key(-1, "long") == b"\xff" * 8
    assert encode_key("k", "string") == b"k" and encode_key(b"\x01", "binData") == b"\x01"
    assert encode_key({"a": 1}, "json") == b'{"a":1}' and encode_key(None, "int") is None
    for v, fmt in (("a", "int"), (2**31, "int"), (1.5, "long"), (5, "string"), ("x", "binData"), (True, "int")):
        with pytest.raises(ValueError, match=f"keyFormat '{fmt}'"):
            encode_key(v, fmt)
    assert encode_headers({"a": "x", "b": 1, "c": None}) == [("a", b"x"), ("b", b"1"), ("c", None)]
    assert encode_headers([{"k": "a", "v": b"q"}, {"k": "a"}]) == [("a", b"q"), ("a", None)]
    for bad in (5, "x", [{"k": 1}], [{"k": "a", "x": 1}]):
        with pytest.raises(ValueError, match="config.headers"):
            encode_headers(bad)
    cfg = KafkaEmitConfig(key="$k", key_format="json", output_format="canonicalJson")
    assert message_of({"key": 1}, cfg) == (b'{"$numberInt":"1"}', [])
    assert message_of({}, None) == (None, [])


def test_kafka_source_key_and_header_fields_are_validated():
    p = parse_pipeline([{"$source": {"connectionName": "k", "topic": "t", "config": {
        "keyField": "key", "keyFormat": "long", "keyFormatError": "passThrough", "headersField": "h"}}}])
    assert p.source.config["keyFormat"] == "long"
    for bad in ({"keyFormat": "uuid"}, {"keyFormatError": "ignore"}, {"keyField": 5}):
        with pytest.raises(PipelineError) as e:
            parse_pipeline([{"$source": {"connectionName": "k", "topic": "t", "config": bad}}])
        assert e.value.code in ("BAD_VALUE", "TYPE_MISMATCH")


def test_kafka_message_keys_and_headers_are_read_as_the_formats_say():
    from headrace import ejson
    from headrace.connectors.kafka_message import decode_headers, decode_key, message_fields

    for v, fmt in ((5, "int"), (ejson.Int64(-2), "long"), ("k", "string"), ({"a": [1]}, "json"), (b"\x00", "binData")):
        assert decode_key(encode_key(v, fmt), fmt) == v
    for b, fmt in ((b"abc", "int"), (b"\xff", "string"), (b"{", "json")):
        with pytest.raises(ValueError, match=f"keyFormat '{fmt}'"):
            decode_key(b, fmt)
    assert decode_headers([("a", b"x"), ("b", b"\xff"), ("c", None)]) == [
        {"k": "a", "v": "x"}, {"k": "b", "v": b"\xff"}, {"k": "c", "v": None}]
    f = {"keyField": "key", "keyFormat": "int"}
    assert message_fields('{"a": 1}', b"\x00\x00\x00\x07", None, f) == ({"a": 1, "key": 7}, None)
    assert message_fields('{"a": 1}', b"\x07", None, f)[1].startswith("$source config.keyFormat")
    assert message_fields('{"a": 1}', b"\x07", None, {**f, "keyFormatError": "passThrough"}) == ({"a": 1}, None)
    assert message_fields('{"a": 1}', None, None, f) == ({"a": 1}, None)
    assert message_fields("[1]", None, None, f)[1] == "Input is not a JSON object (found list)"
