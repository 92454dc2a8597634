"""Shard-key comparison order and zoned connection validation (stable error codes)."""
from __future__ import annotations

import datetime as dt
import decimal

import pytest

from headrace import ejson
from headrace.errors import ConfigError
from headrace.store.base import MergeSpec
from headrace.zones import open_collection, parse
from headrace.zones.config import parse_window
from headrace.zones.order import ShardKeyError, shard_key_values, sort_key

from zones_helpers import ranges_by_datacenter, registry_with, zoned_options

UTC = dt.timezone.utc


def test_bson_type_order():
    ordered = [ejson.MINKEY, None, float("nan"), -5, 1.5, decimal.Decimal("2"), 3, "", "a", "b",
               {"a": 1}, [1], b"\x00", ejson.ObjectId("00" * 12), False, True,
               dt.datetime(2020, 1, 1, tzinfo=UTC), ejson.MAXKEY]
    keys = [sort_key(v) for v in ordered]
    assert keys == sorted(keys)
    assert sort_key(1) == sort_key(1.0) == sort_key(decimal.Decimal("1"))
    assert sort_key(ejson.Int64(7)) < sort_key(7.5)


def test_order_agrees_with_the_query_matcher_oracle():
    from headrace.mql import bson as mm

    vals = [ejson.MINKEY, None, -1, 0.5, 2, "x", "y", {"a": 1}, {"a": 2}, {"b": 0}, b"ab", ejson.ObjectId("01" * 12),
            False, True, dt.datetime(2021, 5, 1, tzinfo=UTC), ejson.MAXKEY]
    for a in vals:
        for b in vals:
            mine = (sort_key(a) > sort_key(b)) - (sort_key(a) < sort_key(b))
            assert mine == mm.compare_values(a, b), (a, b)


def test_shard_key_values_dotted_missing_and_array():
    assert shard_key_values({"a": {"b": 1}, "c": "x"}, ("a.b", "c")) == (1, "x")
    with pytest.raises(ShardKeyError) as e:
        shard_key_values({"a": {}}, ("a.b",))
    assert e.value.field == "a.b" and "'a.b' is missing" in str(e.value)
    with pytest.raises(ShardKeyError, match="array"):
        shard_key_values({"a": [1]}, ("a",))


def _conn(tmp_path, **over):
    reg = registry_with(tmp_path, {"events": zoned_options(tmp_path, **over)})
    return reg, reg.get("events")


def _config_error(tmp_path, **over) -> ConfigError:
    reg, conn = _conn(tmp_path, **over)
    with pytest.raises(ConfigError) as e:
        parse(conn, reg)
    assert "connection 'events'" in str(e.value)
    return e.value


def test_valid_config_parses(tmp_path):
    reg, conn = _conn(tmp_path)
    cfg = parse(conn, reg)
    assert cfg.shard_key == ("datacenter", "userid")
    assert cfg.zone_field == "datacenter"
    assert [z.name for z in cfg.zones] == ["alfa", "bravo"]
    assert cfg.ranges[0].min == ("alfa", ejson.MINKEY) and cfg.ranges[0].max == ("alfa", ejson.MAXKEY)
    assert cfg.default_zone == "alfa" and cfg.writer.write_timeout_s == 0.3


def test_overlapping_ranges(tmp_path):
    rs = [{"zone": "alfa", "min": {"datacenter": "a", "userid": 0}, "max": {"datacenter": "a", "userid": 100}},
          {"zone": "bravo", "min": {"datacenter": "a", "userid": 50}, "max": {"datacenter": "b", "userid": 0}}]
    e = _config_error(tmp_path, ranges=rs)
    assert e.code == "ZONES_RANGE_OVERLAP"
    assert "ranges[1]" in str(e) and "ranges[0]" in str(e)


def test_adjacent_ranges_do_not_overlap(tmp_path):
    rs = [{"zone": "alfa", "min": {"datacenter": "a", "userid": "$minKey"}, "max": {"datacenter": "a", "userid": 100}},
          {"zone": "bravo", "min": {"datacenter": "a", "userid": 100}, "max": {"datacenter": "a", "userid": "$maxKey"}}]
    reg, conn = _conn(tmp_path, ranges=rs)
    assert len(parse(conn, reg).ranges) == 2


def test_range_naming_unknown_zone(tmp_path):
    rs = ranges_by_datacenter("alfa") + [{"zone": "delta", "min": {"datacenter": "d", "userid": 0},
                                          "max": {"datacenter": "d", "userid": 9}}]
    e = _config_error(tmp_path, ranges=rs)
    assert e.code == "ZONES_RANGE_ZONE" and "ranges[1].zone" in str(e) and "'delta'" in str(e)


@pytest.mark.parametrize("bad,where", [
    ({"zone": "alfa", "min": {"datacenter": "b", "userid": 0}, "max": {"datacenter": "a", "userid": 0}}, "ranges[0]"),
    ({"zone": "alfa", "min": {"datacenter": "a", "userid": 5}, "max": {"datacenter": "a", "userid": 5}}, "ranges[0]"),
    ({"zone": "alfa", "min": {"datacenter": "a"}, "max": {"datacenter": "b", "userid": 0}}, "ranges[0].min"),
    ({"zone": "alfa", "min": {"datacenter": "a", "userid": 0, "x": 1}, "max": {"datacenter": "b", "userid": 0}},
     "ranges[0].min"),
    ({"zone": "alfa", "min": {"datacenter": "a", "userid": [1]}, "max": {"datacenter": "b", "userid": 0}},
     "ranges[0].min.userid"),
    ({"zone": "alfa", "min": 5, "max": {"datacenter": "b", "userid": 0}}, "ranges[0].min"),
])
def test_bad_bounds(tmp_path, bad, where):
    e = _config_error(tmp_path, ranges=[bad])
    assert e.code == "ZONES_RANGE_BOUNDS"
    assert f"{where}:" in str(e)


@pytest.mark.parametrize("over,code,field", [
    ({"shardKey": {"datacenter": "hashed"}}, "ZONES_SHARD_KEY", "shardKey.datacenter"),
    ({"shardKey": {}}, "ZONES_SHARD_KEY", "shardKey"),
    ({"zoneField": "region"}, "ZONES_SHARD_KEY", "zoneField"),
    ({"zones": {}}, "ZONES_INVALID", "zones"),
    ({"zones": {"alfa": {"store": "/tmp/x", "postgres": "postgresql://h/db"}, "bravo": {"store": "/tmp/y"}}},
     "ZONES_ZONE", "zones.alfa"),
    ({"zones": {"alfa": {"connection": "nope"}, "bravo": {"store": "/tmp/y"}}}, "ZONES_CONNECTION_UNKNOWN",
     "zones.alfa.connection"),
    ({"zones": {"alfa": {"postgres": ""}, "bravo": {"store": "/tmp/y"}}}, "POSTGRES_INVALID", "zones.alfa.dsn"),
    ({"writer": {"onAllZonesDown": "drop"}}, "ZONES_WRITER", "writer.onAllZonesDown"),
    ({"writer": {"writeTimeoutMs": 0}}, "ZONES_WRITER", "writer.writeTimeoutMs"),
    ({"writer": {"homeZone": "zulu"}}, "ZONES_WRITER", "writer.homeZone"),
    ({"defaultZone": "zulu"}, "ZONES_INVALID", "defaultZone"),
    ({"reads": {"keep": "middle"}}, "ZONES_READS", "reads.keep"),
    ({"balancer": {"window": "25:00-01:00"}}, "ZONES_BALANCER", "balancer.window"),
    ({"zonez": 1}, "ZONES_INVALID", "zonez"),
])
def test_config_errors_name_connection_and_field(tmp_path, over, code, field):
    e = _config_error(tmp_path, **over)
    assert e.code == code
    assert f"{field}:" in str(e)


def test_password_is_redacted_in_errors(tmp_path):
    zones = {"alfa": {"postgres": "postgresql://u:hunter2@127.0.0.1:1/x"}, "bravo": {"store": str(tmp_path / "b")}}
    reg, conn = _conn(tmp_path, zones=zones)
    with pytest.raises(ConfigError) as e:
        open_collection(reg, conn, "app", "c")
    assert e.value.code == "ZONES_UNREACHABLE"
    assert "zones.alfa.postgres" in str(e.value) and "hunter2" not in str(e.value)


def test_zone_by_connection_name(tmp_path):
    reg = registry_with(tmp_path, {
        "st": {"type": "store", "path": str(tmp_path / "st")},
        "events": zoned_options(tmp_path, zones={"alfa": {"connection": "st"}, "bravo": {"store": str(tmp_path / "b")}}),
    })
    cfg = parse(reg.get("events"), reg)
    assert cfg.zones[0].kind == "store" and cfg.zones[0].target == str(tmp_path / "st")


def test_window_parse_and_wrap():
    w = parse_window("22:30-02:00")
    assert w.contains(23 * 60) and w.contains(60) and not w.contains(3 * 60)
    assert w.seconds_until_open(22 * 60) == 30 * 60
    w2 = parse_window("01:00-05:00")
    assert w2.contains(60) and not w2.contains(300)
    with pytest.raises(ConfigError):
        parse_window("01:00-01:00")


def test_unreachable_sqlite_zone_at_start(tmp_path):
    (tmp_path / "file").write_text("not a directory")
    zones = {"alfa": {"store": str(tmp_path / "alfa")}, "bravo": {"store": str(tmp_path / "file" / "bravo")}}
    reg, conn = _conn(tmp_path, zones=zones)
    with pytest.raises(ConfigError) as e:
        open_collection(reg, conn, "app", "c")
    assert e.value.code == "ZONES_UNREACHABLE" and "zones.bravo.store" in str(e.value) and "zones.alfa" not in str(e.value)
    reg, conn = _conn(tmp_path, zones=zones, checkZonesAtStart=False)
    c = open_collection(reg, conn, "app", "c")
    assert c.merge_many([{"userid": 1, "datacenter": "bravo"}], MergeSpec()).errors == []
    assert c.stats()["zones"]["bravo"]["up"] is False and c.stats()["zones"]["alfa"]["failoversIn"] == 1
