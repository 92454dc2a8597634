"""Run the Zeitgeist topology over a generated file (replay) or an embedded stream (live).

Replay: records are read in file (arrival) order and grouped into injector batches of
``batch_ms`` of arrival time; a batch's processing instant (the virtual clock) is the end of its
arrival interval; event time is ``ts``; the datacenter is the watermark partition. After the last
batch the injector's low watermark becomes the end of input, so every bucket closes. Reports are
the ``anomalies`` stream, one line per anomalous period (an ``open`` and its ``close``).
"""
from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, Callable, Iterator

from .. import defaults
from ..reference import ReferenceRunner
from .detector import ModelParams, topology
from .generate import iso, parse_iso


def batches(path: "str | Path", batch_ms: int = defaults.REPLAY_BATCH_MS) -> Iterator[tuple[int, list]]:
    """``(clock, records)`` per arrival interval; records ``(dc, None, query, {"id"}, ts)``."""
    cur, recs = None, []
    with open(path) as f:
        for line in f:
            if not line.strip():
                continue
            d = json.loads(line)
            a = parse_iso(d["arrival"])
            clock = (a // batch_ms + 1) * batch_ms
            if cur is not None and clock != cur:
                yield cur, recs
                recs = []
            cur = clock
            recs.append((d["dc"], None, d["query"], {"id": d["id"]}, parse_iso(d["ts"])))
    if cur is not None:
        yield cur, recs


def periods(records: list[tuple[str, Any, int]]) -> list[dict]:
    """Anomaly lines from the ``anomalies`` stream's ``(key, value, ts)`` records."""
    opened: dict[tuple, dict] = {}
    out = []
    for key, v, _ in sorted(records, key=lambda r: (r[1]["reportedAt"], r[0], r[1]["start"], r[1]["event"] != "open")):
        k = (key, v["kind"], v["start"])
        if v["event"] == "open":
            opened[k] = {"query": key, "kind": v["kind"], "start": v["start"], "end": None,
                         "reportedAt": v["reportedAt"]}
        else:
            d = opened.pop(k, None) or {"query": key, "kind": v["kind"], "start": v["start"],
                                        "reportedAt": v["reportedAt"]}
            d["end"] = v["end"]
            out.append(d)
    out.extend(opened.values())
    out.sort(key=lambda d: (d["start"], d["query"]))
    return [{"query": d["query"], "kind": d["kind"], "start": iso(d["start"]),
             "end": iso(d["end"]) if d["end"] is not None else None, "reportedAt": iso(d["reportedAt"])}
            for d in out]


def detect(path: "str | Path", params: ModelParams | None = None, lateness_ms: int = defaults.ZG_LATENESS_MS,
           batch_ms: int = defaults.REPLAY_BATCH_MS, engine: str = "reference", workdir: str | None = None,
           on_batch: Callable[[int], None] | None = None) -> tuple[list[dict], dict]:
    """Replay ``path`` through the topology; return (anomaly lines, stats)."""
    topo = topology(lateness_ms, params)
    if engine == "spark":
        return _detect_spark(path, topo, batch_ms, workdir)
    r = ReferenceRunner(topo)
    n = clock = 0
    for clock, recs in batches(path, batch_ms):
        r.inject("searches", recs, clock)
        r.run()
        n += len(recs)
        if on_batch:
            on_batch(n)
    r.inject("searches", [], clock + batch_ms, end=True)   # end of input: every bucket closes
    r.run()
    recs = [(x.key, x.value, x.timestamp) for x in r.output("anomalies")]
    return periods(recs), r.stats()


def _detect_spark(path, topo, batch_ms: int, workdir: str | None) -> tuple[list[dict], dict]:
    import tempfile

    from ...spark.keyed.runner import SparkRunner

    root = workdir or tempfile.mkdtemp(prefix="zeitgeist-")
    sr = SparkRunner(topo, root)
    inj = sr.injector("searches")
    clock = 0
    for clock, recs in batches(path, batch_ms):
        inj.publish(recs, clock)
    inj.publish([], clock + batch_ms, end=True)
    sr.run_until_quiescent()
    return periods(sr.output("anomalies")), sr.stats()


def live(stream: str, home: str | None, params: ModelParams | None, lateness_ms: int, duration_s: float,
         emit: Callable[[dict], None], batch_ms: int = defaults.REPLAY_BATCH_MS,
         time_field: str = "ts", idle_timeout_ms: int = 10_000) -> dict:
    """Run on an embedded stream (records ``{"id", "query", "dc"?, "ts"?}``; each shard is a
    watermark partition, idle after ``idle_timeout_ms`` without records; event time from
    ``time_field``, else the arrival stamp) with the wall
    clock, one batch per ``batch_ms``, for ``duration_s`` seconds; ``emit`` each anomaly line
    (``open`` lines have ``end: null``, then the closed period)."""
    from ...streams import Stream

    s = Stream(home, stream)
    shards = sorted(s.meta().shards)
    topo = topology(lateness_ms, params)
    topo.injectors["searches"] = type(topo.injectors["searches"])(
        "searches", ("queries",), tuple(shards), lateness_ms, idle_timeout_ms, True)
    r = ReferenceRunner(topo)
    pos = {sh: 0 for sh in shards}
    seen = 0
    t_end = time.time() + duration_s
    while time.time() < t_end:
        t0 = time.time()
        recs = []
        for sh in list(s.meta().shards):
            pos.setdefault(sh, 0)
            for rec in s.read(sh, pos[sh], s.count(sh)):
                pos[sh] = rec.seq + 1
                try:
                    d = json.loads(rec.data)
                    ts = parse_iso(d[time_field]) if time_field in d else rec.arrival_us // 1000
                    recs.append((sh, None, str(d["query"]), {"id": str(d.get("id", f"{sh}:{rec.seq}"))}, ts))
                except (ValueError, KeyError, TypeError):
                    continue
        r.inject("searches", recs, int(time.time() * 1000))
        r.run()
        out = r.output("anomalies")
        for x in out[seen:]:
            v = x.value
            emit({"query": x.key, "kind": v["kind"], "start": iso(v["start"]),
                  "end": iso(v["end"]) if v["event"] == "close" else None, "reportedAt": iso(v["reportedAt"])})
        seen = len(out)
        time.sleep(max(0.0, batch_ms / 1000 - (time.time() - t0)))
    s.close()
    return r.stats()
