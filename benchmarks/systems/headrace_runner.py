"""headrace through its public API: a ``file`` connection over the input JSON-lines file, the
pipeline parsed by ``headrace.spec.parse_pipeline`` and run by ``headrace.spark.engine.Processor``
on ``headrace.spark.session.get_spark()``.

Windowed results go to the embedded store (``$merge`` into ``store``, under a per-run headrace
home); the pass-through writes JSON lines with ``$emit: {path}``. Windowed results come back
through ``on_output`` (called after the sink write of each micro-batch: that instant is
"written"); the pass-through's documents are not brought to the driver: after each micro-batch
the runner reads what the sink appended to the file.
"""
from __future__ import annotations

import datetime as _dt
import json
import os
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(__file__))
from runner_util import Events, hard_exit_after, load_config, passthrough_latencies, stop_requested  # noqa: E402

WINDOW = {"size": 10, "unit": "second"}
ARR = re.compile(rb'"arr":\s*(?:\{"\$numberLong":\s*")?(\d+)')


def pipelines(cfg: dict) -> list:
    """The four benchmark pipelines (also shown in RESULTS.md)."""
    wl = cfg["workload"]
    conf = {"maxRecordsPerBatch": cfg.get("max_records_per_batch", 100_000),
            "parallelism": cfg.get("parallelism", 2)}
    store = {"connectionName": "store", "db": "bench", "coll": wl}
    if wl == "solar":
        return [
            {"$source": {"connectionName": "in", "timeField": {"$dateFromString": {"dateString": "$timestamp"}},
                         "config": conf}},
            {"$match": {"event_type": 0}},
            {"$tumblingWindow": {"interval": WINDOW, "pipeline": [
                {"$group": {"_id": "$device_id", "avg": {"$avg": "$obs.watts"}, "max": {"$max": "$obs.watts"},
                            "n": {"$count": {}}}}]}},
            {"$project": {"_id": 0, "device_id": "$_id", "avg": 1, "max": 1, "n": 1}},
            {"$merge": {"into": store}}]
    nexmark_src = {"$source": {"connectionName": "in", "timeField": {"$dateFromString": {"dateString": "$dateTime"}},
                               "config": conf}}
    if wl == "q5":
        return [
            nexmark_src,
            {"$match": {"event_type": 2}},
            {"$hoppingWindow": {"interval": WINDOW, "hopSize": {"size": 2, "unit": "second"}, "pipeline": [
                {"$group": {"_id": "$bid.auction", "n": {"$count": {}}}},
                {"$sort": {"n": -1, "_id": 1}},
                {"$limit": 1}]}},
            {"$project": {"_id": 0, "auction": "$_id", "n": 1}},
            {"$merge": {"into": store}}]
    if wl == "q7":
        return [
            nexmark_src,
            {"$match": {"event_type": 2}},
            {"$tumblingWindow": {"interval": WINDOW, "pipeline": [
                {"$group": {"_id": None, "top": {"$top": {
                    "sortBy": {"bid.price": -1, "bid.auction": 1, "bid.bidder": 1},
                    "output": {"price": "$bid.price", "auction": "$bid.auction", "bidder": "$bid.bidder"}}}}}]}},
            {"$project": {"_id": 0, "price": "$top.price", "auction": "$top.auction", "bidder": "$top.bidder"}},
            {"$merge": {"into": store}}]
    return [
        {"$source": {"connectionName": "in", "config": conf}},
        {"$match": {"event_type": 0, "obs.watts": {"$gte": 100}}},
        {"$project": {"device_id": 1, "watts": "$obs.watts", "ts": "$timestamp", "arr": 1}},
        {"$emit": {"path": str(Path(cfg["out_dir"]) / "results.jsonl")}}]


def _ms(d) -> int:
    if isinstance(d, _dt.datetime):
        if d.tzinfo is None:
            d = d.replace(tzinfo=_dt.timezone.utc)
        return int(round(d.timestamp() * 1000))
    return int(d)


def _num(v):
    return v if v is None or isinstance(v, (int, float)) else (float(v) if "." in str(v) else int(v))


def main() -> None:
    cfg = load_config()
    ev = Events(cfg["events_file"])
    from headrace.launch import prepare, start
    from headrace.spark.engine import Processor
    from headrace.spark.session import get_spark

    wl = cfg["workload"]
    run = prepare({"pipeline": pipelines(cfg)}, home=cfg["home"],
                  extra_connections={"in": {"type": "file", "path": cfg["input_file"]}})
    get_spark()
    Path(cfg["out_dir"]).mkdir(parents=True, exist_ok=True)

    results = Path(cfg["out_dir"]) / "results.jsonl"
    read_at = [0]

    def on_batch(_batch_id: int, _clock, _w) -> None:
        """Pass-through: the sink writes from an executor; read what the batch appended."""
        t = time.time()
        if not results.exists():
            return
        with open(results, "rb") as f:
            f.seek(read_at[0])
            chunk = f.read()
        read_at[0] += len(chunk)
        lines = chunk.splitlines()
        arrs = [int(m.group(1)) for m in map(ARR.search, lines) if m]
        if lines:
            ev.emit("out", t=t, n=len(lines), backlog=len(lines) - len(arrs), lat=passthrough_latencies(arrs, t))

    def on_output(docs: list[dict]) -> None:
        t = time.time()
        rows = []
        for d in docs:
            w = d["_stream_meta"]["window"]
            r = {"ws": _ms(w["start"]), "we": _ms(w["end"])}
            if wl == "solar":
                r.update(k=d.get("device_id"), avg=_num(d.get("avg")), max=_num(d.get("max")), n=_num(d.get("n")))
            elif wl == "q5":
                r.update(auction=_num(d.get("auction")), n=_num(d.get("n")))
            else:
                r.update(price=_num(d.get("price")), auction=_num(d.get("auction")), bidder=_num(d.get("bidder")))
            rows.append(r)
        ev.emit("out", t=t, rows=rows)

    proc = start(run, name=f"bench_{wl}", checkpoint=Path(cfg["checkpoint"]),
                 on_output=None if wl == "passthrough" else on_output,
                 on_batch=on_batch if wl == "passthrough" else None)
    ev.emit("ready")

    def progress(p: Processor) -> None:
        if stop_requested(cfg):
            p.stop()

    info: dict = {}
    try:
        stats = proc.run(duration_s=cfg.get("max_seconds", 3600), progress=progress)
        info["stats"] = stats
    except Exception as exc:  # noqa: BLE001 - reported to the orchestrator
        info["error"] = f"{type(exc).__name__}: {exc}"
    if proc.query is not None:
        info["progress"] = [{"batchId": p["batchId"], "numInputRows": p["numInputRows"],
                             "durationMs": p["durationMs"]} for p in proc.query.recentProgress]
    info["batch_seconds"] = proc.latencies
    ev.emit("end", info=info)
    ev.close()
    hard_exit_after(20)
    get_spark().stop()


if __name__ == "__main__":
    main()
