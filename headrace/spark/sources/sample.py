"""``sample_stream_solar``: solar panel readings at a steady rate, replayable.

Record ``i`` is a pure function of (seed, i, t0): ``t0`` (the start instant, in the offset) and
the rate fix its arrival ``t0 + i / rate``, so a restarted query re-reads identical records.
Shape: ``device_id``, ``group_id``, ``timestamp`` (ISO string, the event time, a little before
arrival), ``max_watts``, ``event_type`` (0, or 1 for ~5% with ``event_details`` and no ``obs``),
``obs: {watts, temp}``.
"""
from __future__ import annotations

import random
import time
from typing import Any, Iterator

from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition

from ... import ejson
from ...spec import defaults
from . import DATA, SOURCE_SCHEMA

DETAILS = ("Network error", "Device error", "Power outage", "Maintenance")


def sample_record(i: int, seed: int, devices: int, t_ms: int) -> dict:
    """The i-th sample document (event time ``t_ms`` minus a small random delay)."""
    rnd = random.Random(seed * 1_000_003 + i)
    dev = rnd.randrange(devices)
    ts = ejson.millis_to_datetime(t_ms - rnd.randrange(0, 1500))
    doc: dict[str, Any] = {
        "device_id": f"device_{dev}",
        "group_id": dev % 10,
        "timestamp": ts.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ts.microsecond // 1000:03d}+00:00",
        "max_watts": 450,
        "event_type": 0,
    }
    if rnd.random() < 0.05:
        doc["event_type"] = 1
        doc["event_details"] = rnd.choice(DETAILS)
    else:
        doc["obs"] = {"watts": rnd.randrange(0, 451), "temp": rnd.randrange(5, 35)}
    return doc


class SampleDataSource(DataSource):
    """``format("headrace_sample")``; options ``rate`` (docs/s), ``devices``, ``seed``,
    ``maxRecordsPerBatch``, ``backlog`` (records already available at start, for benchmarks)."""

    @classmethod
    def name(cls) -> str:
        return "headrace_sample"

    def schema(self) -> str:
        return SOURCE_SCHEMA

    def streamReader(self, schema: Any) -> "SampleReader":
        o = self.options
        return SampleReader(float(o.get("rate", defaults.SAMPLE_RATE_PER_S)),
                            int(o.get("devices", defaults.SAMPLE_DEVICES)), int(o.get("seed", defaults.SAMPLE_SEED)),
                            int(o.get("maxRecordsPerBatch", defaults.MAX_RECORDS_PER_BATCH)),
                            int(o.get("backlog", 0)))


class SampleReader(DataSourceStreamReader):
    def __init__(self, rate: float, devices: int, seed: int, max_rows: int, backlog: int):
        self.rate, self.devices, self.seed, self.max_rows, self.backlog = rate, devices, seed, max_rows, backlog

    def initialOffset(self) -> dict:
        t0 = int(time.time() * 1000) - int(self.backlog / self.rate * 1000)
        return {"t0": t0, "i": 0}

    def latestOffset(self, start: dict | None = None, limit: Any = None) -> dict:
        start = start or self.initialOffset()
        t0 = start["t0"]
        due = int((time.time() * 1000 - t0) * self.rate / 1000)
        return {"t0": t0, "i": max(start["i"], min(due, start["i"] + self.max_rows))}

    def partitions(self, start: dict, end: dict) -> list[InputPartition]:
        lo, hi = start["i"], end["i"]
        n = max(1, min(4, (hi - lo) // 50_000))
        step = (hi - lo + n - 1) // n or 1
        return [InputPartition((start["t0"], a, min(a + step, hi))) for a in range(lo, hi, step)] or \
            [InputPartition((start["t0"], lo, hi))]

    def read(self, partition: InputPartition) -> Iterator[tuple]:
        """Records as JSON text (parsed on the JVM, :mod:`headrace.spark.runtime.parse`)."""
        import json

        t0, lo, hi = partition.value
        for i in range(lo, hi):
            t_ms = t0 + int(i * 1000 / self.rate)
            arrival = ejson.millis_to_datetime(t_ms)
            doc = sample_record(i, self.seed, self.devices, t_ms)
            yield ("0", i, arrival, json.dumps(doc, separators=(",", ":")), None, None, DATA, arrival,
                   doc["device_id"])

    def commit(self, end: dict) -> None:
        pass
