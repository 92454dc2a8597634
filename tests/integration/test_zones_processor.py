"""A processor writing through ``$merge`` into a zoned connection on real PostgreSQL servers:
one server stops in the middle of the run, every document still lands (home zone or rewritten
to the next one), the failover shows in the processor's stats (``sink``: the writes happen on
the executors), and writes return home after the restart."""
from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from headrace import ejson
from headrace.spec import parse_pipeline

pytestmark = [pytest.mark.integration, pytest.mark.spark]
BASE = 1_714_564_800_000


def test_processor_survives_a_zone_going_down(spark, pg2, zoned, schema):
    from headrace.spark.engine import Processor, RunOptions

    coll = zoned(pg2)
    docs = [{"arrival": ejson.format_date(ejson.millis_to_datetime(BASE + (i // 4) * 1000)),
             "message_id": i, "userid": i, "datacenter": "alfa"} for i in range(48)]
    alfa = pg2[0]

    def fault(batch_id, phase):
        if batch_id == 3:
            alfa.stop()
        if batch_id == 7:
            alfa.start()

    pipe = [{"$source": {"documents": docs, "replay": {"arrivalField": "arrival"}}},
            {"$merge": {"into": {"connectionName": "events", "db": schema, "coll": "msgs"}}}]
    with tempfile.TemporaryDirectory() as tmp:
        proc = Processor(parse_pipeline(pipe), RunOptions(name="z", checkpoint=Path(tmp), registry=zoned.registry,
                                                          fault=fault))
        stats = proc.run()
    assert stats["dlqMessageCount"] == 0
    assert sorted(d["message_id"] for d in coll.find()) == list(range(48))   # every document, once on read
    zstats = stats["sink"]          # the zones' statistics, as the executors that wrote reported them
    assert zstats["failovers"] >= 1
    assert zstats["zones"]["bravo"]["writes"] >= 1                           # rewritten to the next zone
    last = [d for d in coll.find() if d["message_id"] == 47][0]
    assert last["datacenter"] == "alfa"                                       # back home after the restart
