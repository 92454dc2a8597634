"""``make demo``: the main job on embedded defaults.

A processor reads ``sample_stream_solar``, keeps ``event_type: 0``, and averages and maxes watts
per device in 10-second tumbling event-time windows, writing into the embedded store
(``<home>/store/demo.sqlite``, collection ``solar_10s``; DLQ ``dlq``). The stream already holds
``--backlog`` seconds of readings at start (:data:`headrace.spec.defaults.DEMO_BACKLOG_S`), as a
stream one attaches to would, so the first micro-batch closes windows. It shows a live progress
line, ends by itself after ``--duration`` seconds and prints a summary table.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from importlib import resources
from pathlib import Path

from .. import ejson


def demo_spec(rate: float, backlog_s: float) -> dict:
    """The demo's pipeline (``solar.json``): the sample stream at ``rate`` documents per second,
    holding ``backlog_s`` seconds of readings at start."""
    spec = json.loads(resources.files(__package__).joinpath("solar.json").read_text())
    backlog = int(backlog_s * rate)     # the source's backlog counts records
    spec["pipeline"][0]["$source"]["config"] = {"rate": rate, **({"backlog": backlog} if backlog else {})}
    return spec


def run_demo(args: argparse.Namespace) -> int:
    from ..launch import prepare, start
    from ..spark.engine import Processor
    from ..store.sqlite import SQLiteStore

    run = prepare(demo_spec(args.rate, args.backlog), home=args.home)
    registry = run.registry
    store_path = registry.store_path("store")
    ckpt = registry.home / "checkpoints" / f"demo-{int(time.time())}"
    print(f"headrace demo: sample_stream_solar ({args.rate:g} docs/s) -> 10 s tumbling windows -> "
          f"store demo.solar_10s, for {args.duration:g} s (starting {args.backlog:g} s of readings back)", flush=True)
    print("starting Spark (local[*]) ...", flush=True)
    started = time.monotonic()
    # a short run at a low rate: C2's compiler CPU would not pay back (spark.session.jit_options)
    proc = start(run, name="demo", checkpoint=ckpt, trigger_ms=5000, jit="quick")

    def progress(p: Processor) -> None:
        s = p.stats()
        line = (f"\r[{time.monotonic() - started:5.1f}s] in={s['inputMessageCount']} out={s['outputMessageCount']} "
                f"dlq={s['dlqMessageCount']} late={s['lateMessageCount']} batches={s['batches']} "
                f"watermark={s['watermark'] or '-'}")
        sys.stdout.write(line.ljust(110))
        sys.stdout.flush()

    stats = proc.run(duration_s=args.duration, progress=progress)
    progress(proc)
    print()
    coll = SQLiteStore(store_path).collection("demo", "solar_10s")
    docs = list(coll.find())
    print(f"\n{len(docs)} window results in {store_path / 'demo.sqlite'} (collection solar_10s); latest windows:")
    print(f"{'window start':<26}{'device':<12}{'avg_watts':>10}{'max_watts':>10}{'readings':>9}")
    key = lambda d: d.get("_id") if isinstance(d.get("_id"), dict) else {}  # noqa: E731
    docs.sort(key=lambda d: (key(d).get("window_start") or ejson.EPOCH, str(key(d).get("device_id"))))
    for d in docs[-12:]:
        ws = key(d).get("window_start")
        print(f"{ejson.format_date(ws) if ws else '-':<26}{str(key(d).get('device_id')):<12}"
              f"{d.get('avg_watts', 0):>10.1f}{d.get('max_watts', 0):>10}{d.get('readings', 0):>9}")
    print(f"\nsummary: input={stats['inputMessageCount']} windows written={len(docs)} "
          f"dlq={stats['dlqMessageCount']} watermark={stats['watermark']}")
    print(f"results: {store_path / 'demo.sqlite'}  (read them with: .venv/bin/headrace store find demo solar_10s)")
    return 0
