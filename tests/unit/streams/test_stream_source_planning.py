"""The Spark source's planning and reading logic, called directly (no SparkSession)."""
from __future__ import annotations

import datetime as dt
import json

import pytest
from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadMaxRows, ReadMinRows

from headrace.spark.sources import PLAIN
from headrace.spark.sources.arrow_rows import as_tuples
from headrace.spark.sources.stream import StreamDataSource, StreamReader
from headrace.streams import StreamError, create_stream, watermark_partitions


def _reader(home, **opts):
    return StreamReader({"home": str(home), "stream": "s", **opts})


def _rows(r, start, end):
    return [row for p in r.partitions(start, end) for row in as_tuples(r.read(p))]


def test_name_schema_and_options(home):
    create_stream(home, "s", 1)
    assert StreamDataSource.name() == "headrace_stream"
    assert StreamDataSource({}).schema().startswith("partition STRING, offset BIGINT, arrival TIMESTAMP")
    for opts, code in [({"stream": "nope"}, "STREAM_UNKNOWN"), ({"stream": ""}, "SOURCE_OPTION"),
                       ({"stream": "s", "maxRecordsPerBatch": "0"}, "SOURCE_OPTION"),
                       ({"stream": "s", "maxRecordsPerBatch": "x"}, "SOURCE_OPTION"),
                       ({"stream": "s", "startingPosition": "middle"}, "SOURCE_OPTION")]:
        with pytest.raises(StreamError) as ei:
            StreamReader({"home": str(home), **opts})
        assert ei.value.code == code
    assert _reader(home, maxRecordsPerBatch="7").getDefaultReadLimit() == ReadMaxRows(7)
    assert isinstance(_reader(home).getDefaultReadLimit(), ReadAllAvailable)


def test_parent_first_planning_and_limits(home):
    s = create_stream(home, "s", 2)
    s.put_many([(f"k{i}", {"i": i}) for i in range(40)])
    n0 = s.count("shard-000000")
    r = _reader(home)
    start = r.initialOffset()
    assert start == {"shard-000000": 0, "shard-000001": 0}
    a, b = s.split("shard-000000")
    s.put_many([(f"k{i}", {"i": i}) for i in range(40, 80)])
    # children are not readable before the parent is drained as of the batch start
    end = r.latestOffset(start, ReadAllAvailable())
    assert end == {"shard-000000": n0, "shard-000001": s.count("shard-000001")}
    assert list(end) == sorted(end)
    rows = _rows(r, start, end)
    assert {row[0] for row in rows} == {"shard-000000", "shard-000001"}
    end2 = r.latestOffset(end, ReadAllAvailable())
    assert set(end2) == {"shard-000000", "shard-000001", a, b}
    assert end2[a] == s.count(a) and end2.get(b, 0) == s.count(b)
    assert r.latestOffset(end2, ReadAllAvailable()) == end2  # nothing new: same offset
    assert r.partitions(end2, end2) == []
    # limits: round-robin sharing, min rows
    small = r.latestOffset(start, ReadMaxRows(10))
    assert sum(small.values()) == 10 and small["shard-000000"] == small["shard-000001"] == 5
    assert r.latestOffset(start, ReadMinRows(10_000)) == start
    parents = n0 + s.count("shard-000001")
    assert sum(r.latestOffset(start, ReadMaxRows(parents + 5)).values()) == parents  # parents only


def test_rows(home):
    s = create_stream(home, "s", 1)
    s.put("a", {"x": 1, "when": {"$date": "2024-06-01T00:00:00Z"}})
    s.put("b", raw="[1, 2]")
    r = _reader(home)
    end = r.latestOffset(r.initialOffset(), ReadAllAvailable())
    (p,) = r.partitions(r.initialOffset(), end)
    rows = as_tuples(r.read(p))
    part, off, arrival, raw, doc, err, kind, src_ts, key = rows[0]
    assert (part, off, kind, key, err) == ("shard-000000", 0, 0, "a", None)
    assert arrival.tzinfo is not None and arrival == src_ts
    assert abs((dt.datetime.now(dt.timezone.utc) - arrival).total_seconds()) < 60
    assert json.loads(raw)["x"] == 1 and doc is not None
    # plain JSON text is left to the JVM parser (headrace.spark.runtime.parse): no doc, no error yet
    # (the PLAIN marker: it has no fraction outside strings, so the JVM parses it as it is)
    assert rows[1][3] == "[1, 2]" and rows[1][4] is None and rows[1][5] == PLAIN


def test_latest_starting_position_and_available_now(home):
    s = create_stream(home, "s", 1)
    s.put_many([("k", {"i": i}) for i in range(5)])
    r = _reader(home, startingPosition="latest")
    assert r.initialOffset() == {"shard-000000": 5}
    r2 = _reader(home)
    r2.prepareForTriggerAvailableNow()
    s.put_many([("k", {"i": i}) for i in range(5, 9)])
    s.split("shard-000000")
    s.put_many([("k", {"i": i}) for i in range(9, 12)])
    end = r2.latestOffset(r2.initialOffset(), ReadAllAvailable())
    assert {k: v for k, v in end.items() if v} == {"shard-000000": 5}
    assert r2.latestOffset(end, ReadAllAvailable()) == end  # children did not exist at the start


def test_watermark_partitions_follow_the_offsets(home):
    s = create_stream(home, "s", 2)
    s.put_many([(f"k{i}", {"i": i}) for i in range(20)])
    a, b = s.split("shard-000000")
    r = _reader(home)
    o = r.initialOffset()
    assert watermark_partitions(home, "s", o) == sorted(["shard-000000", "shard-000001", a, b])
    o = r.latestOffset(o, ReadAllAvailable())
    assert watermark_partitions(home, "s", o) == sorted(["shard-000001", a, b])


def test_idle_ticks(home):
    """With tickMs, an idle stream yields a clock-tick batch per tickMs; data batches carry the
    last tick unchanged and hold no tick row."""
    import time

    from headrace.spark.sources import TICK

    s = create_stream(home, "s", 2)
    r = _reader(home, tickMs="5")
    start = r.initialOffset()
    t1 = r.latestOffset(start, ReadAllAvailable())          # idle: a tick
    assert set(t1) == {"shard-000000", "shard-000001", "~tick"} and list(t1) == sorted(t1)
    (p,) = r.partitions(start, t1)
    (row,) = as_tuples(r.read(p))
    assert row[6] == TICK and row[0] == "shard-000000" and row[3] is None and row[4] is None
    time.sleep(0.02)
    t2 = r.latestOffset(t1, ReadAllAvailable())
    assert t2["~tick"] > t1["~tick"]
    s.put_many([("k1", {"i": 1}), ("k2", {"i": 2})])
    d = r.latestOffset(t2, ReadAllAvailable())               # data: the tick does not move
    assert d["~tick"] == t2["~tick"] and sum(v for k, v in d.items() if k != "~tick") == 2
    rows = _rows(r, t2, d)
    assert len(rows) == 2 and all(x[6] == 0 for x in rows)
    # without tickMs no tick key ever appears
    plain = _reader(home)
    assert "~tick" not in plain.latestOffset(plain.initialOffset(), ReadAllAvailable())
    with pytest.raises(StreamError) as ei:
        _reader(home, tickMs="-1")
    assert ei.value.code == "SOURCE_OPTION"
