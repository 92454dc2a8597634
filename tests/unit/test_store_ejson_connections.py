"""The embedded store, Extended JSON and the connection registry (no Spark)."""
import datetime as dt
import decimal

import pytest

from headrace import ejson
from headrace.connections import load_registry, redact
from headrace.errors import ConfigError
from headrace.store import MergeSpec, open_store


def test_ejson_roundtrip_types():
    text = ('{"d":{"$date":"2024-01-02T03:04:05.678Z"},"o":{"$oid":"5f1d7f0c2b3c4d5e6f708192"},'
            '"l":{"$numberLong":"7"},"x":{"$numberDecimal":"1.10"},"f":1.5,"i":3,"n":null}')
    v = ejson.loads(text)
    assert v["d"] == dt.datetime(2024, 1, 2, 3, 4, 5, 678000, tzinfo=dt.timezone.utc)
    assert isinstance(v["o"], ejson.ObjectId) and isinstance(v["l"], ejson.Int64)
    assert v["x"] == decimal.Decimal("1.10")
    assert ejson.loads(ejson.dumps(v)) == v
    assert ejson.dumps({"l": ejson.Int64(7)}, relaxed=False) == '{"l":{"$numberLong":"7"}}'
    with pytest.raises(ejson.EJSONError):
        ejson.loads("{bad")


def test_ejson_keeps_timestamps_and_binary_subtypes():
    """``$timestamp`` is a :class:`~headrace.ejson.Timestamp` (it was read as a NumberLong) and
    ``$binary`` keeps its subtype (it was written back as subtype 0), in both notations."""
    text = ('{"ts":{"$timestamp":{"t":1622731060,"i":2}},'
            '"u":{"$binary":{"base64":"DjuQY4q9TrOfn/TFn9MKYA==","subType":"04"}},'
            '"b":{"$binary":{"base64":"AQI=","subType":"00"}},"legacy":{"$binary":"AQI=","$type":"80"}}')
    v = ejson.loads(text)
    assert v["ts"] == ejson.Timestamp(1622731060, 2) and v["u"].subtype == 4 and type(v["b"]) is bytes
    assert v["legacy"] == ejson.Binary(b"\x01\x02", 128) and v["legacy"] != b"\x01\x02"
    assert ejson.dumps(v) == ejson.dumps(v, relaxed=False) == (
        '{"ts":{"$timestamp":{"t":1622731060,"i":2}},'
        '"u":{"$binary":{"base64":"DjuQY4q9TrOfn/TFn9MKYA==","subType":"04"}},'
        '"b":{"$binary":{"base64":"AQI=","subType":"00"}},"legacy":{"$binary":{"base64":"AQI=","subType":"80"}}}')
    assert ejson.loads(ejson.dumps(v)) == v
    for bad in ('{"t":{"$timestamp":{"t":-1,"i":0}}}', '{"t":{"$timestamp":{"t":1}}}',
                '{"b":{"$binary":{"base64":"AQI=","subType":"zz"}}}'):
        with pytest.raises(ejson.EJSONError):
            ejson.loads(bad)


def test_relaxed_dumps_fast_path_writes_the_general_paths_text():
    """``ejson.dumps``'s direct encoding gives the text of converting the whole value first."""
    import json

    utc = dt.timezone.utc
    values = [
        {}, [], {"a": 1, "b": [1, 2.5, -0.0, 1e300, 2**70, True, None, "é漢🎉\n\"q\""]},
        {"i": ejson.Int64(5), "d": decimal.Decimal("1.50"), "o": ejson.ObjectId("5ab9cbfa31c2ab715d42129e")},
        {"t": dt.datetime(2024, 5, 6, 7, 8, 9, 123000, tzinfo=utc), "old": dt.datetime(1960, 1, 1, tzinfo=utc),
         "far": dt.datetime(9999, 12, 31, tzinfo=utc), "day": dt.date(2024, 1, 2)},
        {"b": b"\x00\xff", "k": [ejson.MINKEY, ejson.MAXKEY], "tup": (1, (2, {"x": b""}))},
        {"u": ejson.Binary(b"\x01", 4), "ts": ejson.Timestamp(5, 6)},
        {"nested": {"deep": [{"nan": float("nan")}, {"inf": float("-inf")}], "z": 1}},
        float("inf"), "plain", 7, None,
    ]
    for v in values:
        assert ejson.dumps(v) == json.dumps(ejson.to_plain(v, True), separators=(",", ":"), ensure_ascii=False), v


def test_store_merge_semantics(tmp_path):
    c = open_store(tmp_path).collection("db", "c")
    c.insert_many([{"_id": 1, "a": 1}])
    r = c.merge_many([{"_id": 1, "b": 2}, {"_id": 2, "a": 5}], MergeSpec())
    assert (r.merged, r.inserted) == (1, 1)
    assert list(c.find()) == [{"_id": 1, "a": 1, "b": 2}, {"_id": 2, "a": 5}]
    r = c.merge_many([{"_id": 1, "z": 0}], MergeSpec(when_matched="replace"))
    assert list(c.find())[0] == {"_id": 1, "z": 0}
    r = c.merge_many([{"_id": 1}, {"_id": 3}], MergeSpec(when_matched="fail", when_not_matched="discard"))
    assert len(r.errors) == 1 and r.discarded == 1 and c.count() == 2
    r = c.merge_many([{"k": 9, "v": 1}], MergeSpec(on=("k",)))
    r = c.merge_many([{"k": 9, "v": 2}], MergeSpec(on=("k",), when_matched="keepExisting"))
    assert r.kept == 1
    r = c.merge_many([{"v": 3}], MergeSpec(on=("k",)))
    assert r.errors and "on" in r.errors[0][1]


def test_store_merge_delete(tmp_path):
    """``whenMatched: "delete"`` in the embedded store (the same case runs against PostgreSQL and
    MongoDB in the integration tests: ``check_merge_delete``)."""
    c = open_store(tmp_path).collection("db", "d")
    c.insert_many([{"_id": 1, "a": 1}, {"_id": 2, "a": 2}])
    r = c.merge_many([{"_id": 1}, {"_id": 3, "a": 3}, {"_id": 3, "a": 4}, {"_id": 4, "a": 5}],
                     MergeSpec(when_matched="delete", when_not_matched="insert"))
    assert (r.deleted, r.inserted, r.errors) == (2, 2, [])
    assert list(c.find()) == [{"_id": 2, "a": 2}, {"_id": 4, "a": 5}]
    r = c.merge_many([{"_id": 2}, {"_id": 9}], MergeSpec(when_matched="delete", when_not_matched="discard"))
    assert (r.deleted, r.discarded, c.count()) == (1, 1, 1)
    r = c.merge_many([{"k": 4}], MergeSpec(on=("k",), when_matched="delete", when_not_matched="fail"))
    assert r.errors and c.count() == 1


def test_registry_yaml_and_redaction(tmp_path):
    f = tmp_path / "c.yaml"
    f.write_text("connections:\n  pg: {type: postgres, dsn: 'postgresql://u:hunter2@h/db', password: x}\n"
                 "  s: {type: store, path: data}\n")
    reg = load_registry(f, tmp_path / "home")
    assert "sample_stream_solar" in reg and reg.store_path("s") == tmp_path / "data"
    listing = str(reg.list())
    assert "hunter2" not in listing and "***" in listing
    assert redact({"token": "abc"}) == {"token": "***"}
    with pytest.raises(ConfigError) as e:
        reg.get("nope")
    assert e.value.code == "CONNECTION_UNKNOWN"
    f.write_text("connections:\n  k: {type: https}\n")
    with pytest.raises(ConfigError) as e:
        load_registry(f)
    assert e.value.code == "NOT_SUPPORTED_YET"
    f.write_text("connections: [1, 2\n")
    with pytest.raises(ConfigError):
        load_registry(f)


def test_sink_tasks_creating_one_database_at_once_all_write(tmp_path):
    """Sink tasks open the store concurrently; on a new database SQLite does not wait for the
    lock that switches it to WAL, so without a retry about one trial in eight failed with
    "database is locked" (seen in ``test_exactlyonce_pg``'s DLQ into the store)."""
    import threading

    for trial in range(40):
        path, errors = tmp_path / str(trial), []

        def write(i: int) -> None:
            try:
                open_store(path).collection("eo", "dlq").insert_many([{"_id": i}])
            except Exception as e:     # noqa: BLE001 - collected for the assertion
                errors.append(repr(e))

        threads = [threading.Thread(target=write, args=(i,)) for i in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors, f"trial {trial}: {errors}"
        assert open_store(path).collection("eo", "dlq").count() == 3
