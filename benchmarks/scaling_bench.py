"""Scaling: the same solar backlog drained by headrace on 1 core, on 2 cores, and on a Spark
standalone cluster with 1 and with 2 workers (one core each).

Run: ``.venv/bin/python benchmarks/scaling_bench.py [--backlog N] [--runs R] [--no-wait]``.
Writes ``benchmarks/results/scaling.md`` (machine, load, date, every run) and prints it.

Each run is ``benchmarks/run.py``'s headrace solar run (``run_system.run_once``: the runner
subprocess, the same pipeline, ``maxRecordsPerBatch`` and ``parallelism: 2`` file source, the
backlog's windows checked against the reference), without the live latency phase, with
``HEADRACE_SPARK_MASTER`` set to ``local[1]``, ``local[2]`` or the cluster's URL. The cluster
(:class:`headrace.spark.cluster.StandaloneCluster`: a master and N workers on loopback, 1 core and
1.5 GB each) is started before and stopped after its runs; its start-up is not counted.
Throughput = backlog lines / (last backlog window written - engine up). Peak memory (PSS, as in
``run_watch.MemSampler``) is the runner's
process tree (driver, and on ``local[n]`` the executors); a cluster's executors are the workers'
children and are not in it.
"""
from __future__ import annotations

import argparse
import datetime as _dt
import os
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from run_config import PROFILES, log  # noqa: E402
from run_dataset import Dataset  # noqa: E402
from run_env import load_now, machine_info, wait_quiet  # noqa: E402
from run_system import run_once  # noqa: E402

OUT = HERE / "results" / "scaling.md"
CONFIGS = [("local[1] (1 core)", "local[1]", 0), ("local[2] (2 cores)", "local[2]", 0),
           ("standalone, 1 worker x 1 core", None, 1), ("standalone, 2 workers x 1 core", None, 2)]


def _runs(label: str, master: str | None, workers: int, ds: Dataset, prof: dict, runs: int) -> list[dict]:
    from headrace.spark.cluster import StandaloneCluster

    cluster = StandaloneCluster(workers=workers, cores=1).start() if workers else None
    try:
        os.environ["HEADRACE_SPARK_MASTER"] = cluster.url if cluster else master
        out = []
        for i in range(1, runs + 1):
            la = load_now()
            log(f"{label} run {i}/{runs} (load {la})")
            r = run_once("headrace", "solar", i, ds, prof, sys.executable, False)
            r["load_before"] = la
            out.append(r)
        return out
    finally:
        os.environ.pop("HEADRACE_SPARK_MASTER", None)
        if cluster:
            cluster.stop()


def render(rows: list[tuple[str, list[dict]]], machine: dict, date: str, backlog: int, batch: int) -> str:
    lines = ["# Scaling: headrace on solar, 1 and 2 cores, standalone cluster with 1 and 2 workers", "",
             f"Date: {date}. Machine: {machine.get('cpu', '?')}, {machine.get('cores', '?')} cores, "
             f"{machine.get('memory_gb', '?')} GB. Load: {machine['load']}.", "",
             f"Backlog: {backlog:,} solar lines; `maxRecordsPerBatch` {batch:,}; the file source's "
             "`parallelism: 2`. Command: `.venv/bin/python benchmarks/scaling_bench.py` (see its docstring).", "",
             "| configuration | events/s (median) | runs: events/s | drain s | start-up s | peak memory "
             "MB, PSS (runner tree) | results vs reference | load before |",
             "|---|---:|---|---:|---:|---:|---|---|"]
    for label, runs in rows:
        ok = [r for r in runs if r.get("throughput")]
        med = f"{statistics.median(r['throughput'] for r in ok):,.0f}" if ok else "—"
        each = ", ".join(f"{r['throughput']:,.0f}" if r.get("throughput") else f"failed: {r.get('error', '?')[:80]}"
                         for r in runs)
        chk = []
        for r in runs:
            c = r.get("check") or {}
            chk.append("✓" if c and not c.get("missing") and not c.get("wrong") else
                       f"missing {c.get('missing')}, wrong {c.get('wrong')}")
        lines.append(f"| {label} | {med} | {each} | {', '.join(str(r.get('drain_s', '—')) for r in runs)} | "
                     f"{', '.join(str(r.get('startup_s', '—')) for r in runs)} | "
                     f"{', '.join(str(r.get('mem_mb', r.get('rss_mb', '—'))) for r in runs)} | {', '.join(chk)} | "
                     f"{'; '.join(r.get('load_before', '') for r in runs)} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--backlog", type=int, default=PROFILES["full"]["backlog"]["solar"],
                    help="solar backlog lines (default: make bench's, 1,000,000)")
    ap.add_argument("--runs", type=int, default=1, help="runs per configuration")
    ap.add_argument("--no-wait", action="store_true", help="do not wait for a quiet machine")
    args = ap.parse_args(argv)

    prof = dict(PROFILES["full"])
    prof["backlog"] = {name: args.backlog for name in prof["backlog"]}
    prof["latency_runs"] = 0         # throughput only
    ds = Dataset("solar", prof, ["solar"])
    load = None if args.no_wait else wait_quiet(1.5, 1200.0)
    load_start = load or load_now()
    rows = [(label, _runs(label, master, workers, ds, prof, args.runs)) for label, master, workers in CONFIGS]
    machine = machine_info()
    machine["load"] = f"{load_start} (1/5/15 min) at start, {load_now()} at the end"
    date = _dt.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")
    md = render(rows, machine, date, args.backlog, prof["headrace_batch"])
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(md)
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
