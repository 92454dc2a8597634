"""What ``Processor.stats()`` reports: counters, watermark and per-partition positions, latency
percentiles, the state size, the sink's and de-duplication's figures (ASP's ``sp.processor.stats()``
fields, with headrace's own beside them)."""
from __future__ import annotations

from typing import Any

from ... import ejson
from ...timing import PLUS_INF


def processor_stats(p: Any) -> dict:
    """The statistics of ``p``, a :class:`headrace.spark.engine.Processor` (the caller holds its lock)."""
    ts = p.time
    lat = sorted(p.latencies)
    pit = p.p.source.partition_idle_timeout.ms if p.p.source.partition_idle_timeout else None
    parts = []
    for name in sorted(ts.partitions):
        st = ts.partitions[name]
        parts.append({"partition": name,
                      "position": p.positions.get(name),
                      "watermark": _fmt(st.max_event),
                      "lastArrival": _fmt(st.last_arrival),
                      "idle": ts.idle(name, ts.clock, pit) if ts.clock is not None else False})
    out = {
        "name": p.o.name,
        "status": "FAILED" if p.error else ("STOPPED" if p.finished.is_set() or p.stopped else "STARTED"),
        "inputMessageCount": p.counters["input"],
        "inputMessageSize": p.counters["inputBytes"],
        "outputMessageCount": p.counters["output"],
        "dlqMessageCount": p.counters["dlq"],
        "lateMessageCount": p.counters["late"],
        "batches": p.counters["batches"],
        "stateSize": p.checkpoints.size(),
        "watermark": _fmt(ts.watermark),
        "watermarkHeldBackBy": ts.holding_back(ts.clock, pit),
        "partitions": parts,
        "latency": {"p50": _pct(lat, 0.5), "p99": _pct(lat, 0.99), "unit": "seconds per micro-batch"},
        "lastCheckpoint": p.last_checkpoint,
    }
    if p.sink_stats:
        out["sink"] = p.sink_stats
    if p.p.source.dedup is not None:
        from .dedup import dedup_stats

        out["dedup"] = dedup_stats(p.counters) if p.p.options.guarantee != "atLeastOnce" \
            else {"skipped": "guarantee atLeastOnce"}
    out["guarantee"] = p.p.options.guarantee
    if p.error:
        out["error"] = str(p.error)
    return out


def _fmt(ms: int | None) -> str | None:
    if ms is None:
        return None
    if ms >= PLUS_INF:
        return "+infinity"
    return ejson.format_date(ejson.millis_to_datetime(ms))


def _pct(values: list[float], p: float) -> float | None:
    if not values:
        return None
    return round(values[min(len(values) - 1, int(p * len(values)))], 4)
