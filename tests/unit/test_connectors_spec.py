"""Kafka, Redis and MongoDB in the pipeline language and the connection registry (no servers)."""
from __future__ import annotations

import pytest

from headrace.connections import load_registry
from headrace.errors import ConfigError, PipelineError
from headrace.spec import parse_pipeline
from headrace.spec.model import EmitSpec
from headrace.validate import check_connections


def _reg(tmp_path, conns: str):
    f = tmp_path / "c.yaml"
    f.write_text("connections:\n" + conns)
    return load_registry(f, tmp_path / "home")


def test_connections_validated_and_secrets_redacted(tmp_path):
    reg = _reg(tmp_path, "  k: {type: kafka, bootstrapServers: 'a:1,b:2', authentication: {mechanism: PLAIN, "
                         "username: u, password: pw-kafka}}\n"
                         "  r: {type: redis, url: 'redis://:pw-redis@127.0.0.1:1/0'}\n"
                         "  m: {type: mongodb, uri: 'mongodb://u:pw-mongo@127.0.0.1:1/'}\n")
    listing = str(reg.list())
    assert not any(pw in listing for pw in ("pw-kafka", "pw-redis", "pw-mongo"))
    for bad in ("  k: {type: kafka}\n", "  k: {type: kafka, bootstrapServers: x, security: {protocol: NOPE}}\n",
                "  r: {type: redis}\n", "  m: {type: mongodb, uri: 'http://x'}\n"):
        with pytest.raises(ConfigError) as e:
            _reg(tmp_path, bad)
        assert e.value.code == "CONNECTION_INVALID"


def test_source_and_emit_shapes(tmp_path):
    p = parse_pipeline([{"$source": {"connectionName": "k", "topic": ["a", "b"],
                                     "config": {"auto_offset_reset": "latest", "group_id": "g"}}},
                        {"$emit": {"connectionName": "k", "topic": "out"}}])
    assert p.source.topics == ("a", "b") and p.sink == EmitSpec(p.sink.position, "k", "", "out")
    p = parse_pipeline([{"$source": {"connectionName": "r", "stream": ["s1", "s2"], "config": {"startAt": "0-0"}}},
                        {"$emit": {"connectionName": "r", "stream": "o"}}])
    assert p.source.streams == ("s1", "s2") and p.source.stream is None
    p = parse_pipeline([{"$source": {"connectionName": "m", "db": "d", "coll": "c",
                                     "config": {"fullDocument": "updateLookup", "pipeline": [{"$match": {}}]}}}])
    assert (p.source.db, p.source.coll) == ("d", "c")
    for bad, code in (({"connectionName": "k", "topic": []}, "TYPE_MISMATCH"),
                      ({"connectionName": "k", "topic": ["a", "a"]}, "BAD_VALUE"),
                      ({"connectionName": "k", "topic": "a", "config": {"auto_offset_reset": "middle"}}, "BAD_VALUE"),
                      ({"connectionName": "m", "coll": "c"}, "MISSING_OPTION")):
        with pytest.raises(PipelineError) as e:
            parse_pipeline([{"$source": bad}])
        assert e.value.code == code
    p = parse_pipeline([{"$source": {"connectionName": "k", "topic": "a"}},
                        {"$emit": {"connectionName": "k", "topic": {"$concat": ["a", "$x"]}}}])
    assert p.sink.dynamic() == (("coll", {"$concat": ["a", "$x"]}),)


def test_merge_refused_into_topics_and_streams_but_not_mongodb(tmp_path):
    reg = _reg(tmp_path, "  k: {type: kafka, bootstrapServers: 'a:1'}\n  r: {type: redis, url: 'redis://h:1/0'}\n"
                         "  m: {type: mongodb, uri: 'mongodb://h:1/'}\n")
    for name in ("k", "r"):
        p = parse_pipeline([{"$source": {"connectionName": "k", "topic": "a"}},
                            {"$merge": {"into": {"connectionName": name, "db": "d", "coll": "c"}}}])
        with pytest.raises(PipelineError) as e:
            check_connections(p, reg)
        assert e.value.code == "MERGE_NOT_SUPPORTED" and "$emit" in str(e.value)
    check_connections(parse_pipeline([{"$source": {"connectionName": "m", "db": "d", "coll": "c"}},
                                      {"$merge": {"into": {"connectionName": "m", "db": "d", "coll": "o"}}}]), reg)


def test_max_bytes_per_batch_is_for_files_only(tmp_path):
    """``maxBytesPerBatch`` bounds a file's micro-batches; on another source it is refused before
    anything runs, naming the connection and showing the bound that source has."""
    reg = _reg(tmp_path, f"  f: {{type: file, path: '{tmp_path / 'in.jsonl'}'}}\n  k: {{type: kafka, bootstrapServers: 'a:1'}}\n")
    check_connections(parse_pipeline([{"$source": {"connectionName": "f", "config": {"maxBytesPerBatch": 1 << 20}}}]),
                      reg)
    for src in ({"connectionName": "k", "topic": "a", "config": {"maxBytesPerBatch": 100}},
                {"documents": [{"a": 1}], "config": {"maxBytesPerBatch": 100}}):
        with pytest.raises(PipelineError) as e:
            check_connections(parse_pipeline([{"$source": src}]), reg)
        assert e.value.code == "SOURCE_CONFIG" and e.value.where.path == "config.maxBytesPerBatch"
        assert "maxRecordsPerBatch" in str(e.value)
    with pytest.raises(PipelineError) as e:
        parse_pipeline([{"$source": {"connectionName": "f", "config": {"maxBytesPerBatch": 0}}}])
    assert e.value.code == "BAD_VALUE"
