"""``make bench``: headrace against the engines users would pick instead, side by side.

    .venv/bin/python benchmarks/run.py [--quick] [--only SYSTEM[,SYSTEM]] [--workload W[,W]]
                                       [--runs N] [--backlog LINES] [--profile]

For every workload (solar, q5, q7, passthrough) and every system (headrace, pyspark, pyflink,
bytewax), each run is one fresh subprocess (``benchmarks/systems/<system>_runner.py``) on the
same generated input (``benchmarks/.work/<dataset>/data.jsonl``, seeded, generated once):

1. Throughput: the input starts with a backlog of ``backlog`` lines; the system drains it.
   Throughput = backlog lines / (time the last backlog result was written - time the runner
   said its engine was up). For windowed queries "the last result" is the last of the windows
   the backlog certainly closes (the reference results); the pass-through waits for every
   backlog row. Start-up (process start to engine up) is reported on its own.
2. Latency: the feed then appends the next lines at a fixed rate (every 50 ms a group of lines,
   each stamped ``"arr": <epoch ms>`` when it becomes visible), for a warm-up and a measured
   period. A window's latency = when its result was written - when the first line whose event
   time reaches window end + 3 s (the lateness every system uses) became visible: the earliest
   instant any of the systems could have emitted it. Pass-through latency is per row (written -
   ``arr``).
3. Peak memory: the largest sum of PSS (proportional set size) over the runner's process tree
   (JVMs and Python workers included), sampled every 0.2 s from /proc while the backlog drains;
   the RSS sum is kept beside it in runs.json.

headrace and bytewax read a single JSON-lines file that the feed appends to; PySpark's and
Flink's file sources pick up new files, so for them each feed group becomes a new file in the
input directory (written under a hidden name, then renamed). Results: ``benchmarks/RESULTS.md``
(and every run's numbers in ``benchmarks/results/runs.json``); ``--quick`` writes
``benchmarks/.work/RESULTS-quick.md``.
"""
from __future__ import annotations

import argparse
import datetime as _dt
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

import gen  # noqa: E402
import report  # noqa: E402
from run_config import (DATASET_OF, FEED_MODE, PEERS, PRODUCT_PY, PROFILES, REQS, RUNS_JSON, TICK_S,  # noqa: E402
                        WORK, log)
from run_dataset import Dataset  # noqa: E402
from run_env import ensure_peers, java_home, load_now, machine_info, software_versions, system_python, wait_quiet  # noqa: E402
from run_live import feed_live, latency, measured_windows, stamp  # noqa: E402
from run_system import run_once  # noqa: E402
from run_watch import EventTail, MemSampler, tree_rss_bytes  # noqa: E402

# the driver's parts live in run_config, run_env, run_watch, run_dataset, run_live and run_system;
# their names stay importable from here (``import run``: profile_headrace, stateless_bench)
__all__ = [
    "HERE", "ROOT", "WORK", "PEERS", "REQS", "RUNS_JSON", "PRODUCT_PY", "DATASET_OF", "FEED_MODE", "TICK_S",
    "PROFILES", "log", "machine_info", "java_home", "software_versions", "wait_quiet", "ensure_peers",
    "system_python", "tree_rss_bytes", "MemSampler", "EventTail", "Dataset", "stamp", "run_once", "feed_live",
    "measured_windows", "latency", "NOTES", "main",
]


# ---------------------------------------------------------------------------------- main
NOTES = [
    "Each run is a fresh subprocess per system; systems run one after another, never at the same time; "
    "runs of the different systems are interleaved (run 1 of every system, then run 2, ...).",
    "Throughput = backlog lines / (when the last backlog window result was written - when the engine was up, "
    "i.e. SparkSession / Flink TableEnvironment / Bytewax dataflow built). JVM and session start-up is the "
    "separate start-up column. For the windowed queries, \"the last result\" is the last window the backlog "
    "certainly closes (end + 3 s lateness + 1 s margin <= the backlog's largest event time).",
    "Latency: after the backlog, lines are fed at a fixed rate in 50 ms groups, each line stamped with the "
    "instant it became visible. A window result's latency = written - visible time of the first line whose "
    "event time reaches window end + 3 s (when the watermark, max event time - 3 s, passes the window end: "
    "the earliest any of these engines can emit it). The first seconds of the feed are a warm-up and not "
    "counted. Pass-through latency is per row. p50/p99 are per run; the table gives the median run and range.",
    "Peak memory: largest sum of proportional set sizes (PSS, /proc/<pid>/smaps_rollup) over the runner's "
    "whole process tree (Python driver, JVM, Python workers), sampled every 0.2 s while the backlog drains. "
    "PSS divides a shared page among the processes sharing it; a sum of RSS counts it once per process, so "
    "it counted forked Python workers' shared pages several times and, in the instant between a JVM's fork "
    "and exec of a helper command, the JVM's whole heap twice (seen: two 'java' processes, 4.2 GB, at "
    "headrace's peak). Until 2026-11-27 this table gave that RSS sum; runs.json keeps it (rss_mb).",
    "Every system uses the same event-time rules: watermark = largest event time seen - 3 s, windows aligned "
    "to the epoch, [start, end). Results of the windows the backlog closes are compared with a reference "
    "computed in Python while generating the data (\"results vs reference\": ✓ and the number of results).",
    "headrace: the pipelines below, through `headrace.spec.parse_pipeline` and `headrace.spark.engine.Processor` "
    "on `get_spark()` (local[*]); `file` connection with `maxRecordsPerBatch` as in the settings and "
    "`parallelism: 2`; windowed results `$merge`d into the embedded store; the pass-through `$emit`s JSON lines "
    "to a file. \"Written\" = when `on_output` is called, after the sink write of the micro-batch.",
    "PySpark (hand-written): Structured Streaming, native DataFrame API, Spark's JSON file stream source over "
    "a directory (backlog file, then one file per 50 ms feed group) with an explicit schema; `window()` + "
    "`withWatermark('ts', '3 seconds')`, append mode, results collected in `foreachBatch` and appended to a "
    "JSON-lines file (the pass-through uses Spark's JSON writer); default trigger; same session settings as "
    "headrace (local[*], 1 GB driver, one shuffle partition per core, AQE off); default state store.",
    "PyFlink: Table API/SQL in streaming mode on the local mini-cluster (parallelism 2, JVM -Xmx2g), "
    "`filesystem` connector + `json` format monitoring the input directory every 100 ms, "
    "`WATERMARK FOR ts AS ts - INTERVAL '3' SECOND`, window TVFs (TUMBLE/HOP) and window Top-N for q5/q7; "
    "results come back through `TableResult.collect()` into the Python process and are appended to a file.",
    "Bytewax: one worker (`run_main`), a source tailing the appended input file, `json.loads`, "
    "`fold_window` with `EventClock(wait_for_system_duration=3 s)`; solar keyed by device; q5/q7 under one "
    "key (a global per-window top needs it); results appended to a JSON-lines file by a `DynamicSink`.",
    "PySpark and PyFlink see the live feed as new files in a directory (their file sources do not tail a "
    "growing file); headrace and Bytewax tail one appended file. The group interval (50 ms) is the same.",
]


def _now_label() -> str:
    """The local date and minute, as RESULTS.md and each run record give them."""
    return _dt.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")


def _sigterm(_sig, _frame) -> None:
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    signal.signal(signal.SIGTERM, _sigterm)
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="smoke run on tiny inputs, one run")
    ap.add_argument("--only", default=None, help="systems, comma-separated: " + ",".join(report.SYSTEMS))
    ap.add_argument("--workload", default=None, help="workloads, comma-separated: solar,nexmark(=q5,q7),q5,q7,"
                    "passthrough")
    ap.add_argument("--runs", type=int, default=None)
    ap.add_argument("--backlog", type=int, default=None, help="backlog lines of every data set (throughput)")
    ap.add_argument("--no-wait", action="store_true", help="do not wait for a quiet machine")
    ap.add_argument("--load-threshold", type=float, default=1.5)
    ap.add_argument("--max-wait", type=float, default=1200.0, help="seconds to wait for a quiet machine")
    ap.add_argument("--max-run-wait", type=float, default=300.0,
                    help="seconds to wait before each run for the previous run's load to fade")
    ap.add_argument("--profile", action="store_true", help="profile headrace on solar (see PROFILE.md) and exit")
    args = ap.parse_args(argv)

    prof = dict(PROFILES["quick" if args.quick else "full"])
    if args.runs:
        prof["runs"] = args.runs
    if args.backlog:
        prof["backlog"] = {name: args.backlog for name in prof["backlog"]}
    systems = args.only.split(",") if args.only else list(report.SYSTEMS)
    for s in systems:
        if s not in report.SYSTEMS:
            ap.error(f"unknown system {s!r}; known: {', '.join(report.SYSTEMS)}")
    workloads: list[str] = []
    for w in (args.workload.split(",") if args.workload else list(report.WORKLOADS)):
        ws = ["q5", "q7"] if w == "nexmark" else [w]
        for x in ws:
            if x not in report.WORKLOADS:
                ap.error(f"unknown workload {w!r}; known: solar, nexmark, q5, q7, passthrough")
            if x not in workloads:
                workloads.append(x)
    WORK.mkdir(exist_ok=True)

    if args.profile:  # profile_headrace imports this module: run it as its own program
        return subprocess.call([sys.executable, str(HERE / "profile_headrace.py"), "--prof", json.dumps(prof)])

    peers = ensure_peers() if any(s in ("pyflink", "bytewax") for s in systems) else {"errors": {}, "versions": {}}
    pythons: dict[str, str] = {}
    not_run: dict[str, str] = {}
    for s in systems:
        py, why = system_python(s, peers)
        if py:
            pythons[s] = py
        else:
            not_run[s] = why
            log(f"{s} cannot run here: {why}")
    datasets = {name: Dataset(name, prof, workloads) for name in sorted({DATASET_OF[w] for w in workloads})}

    load = None if args.no_wait else wait_quiet(args.load_threshold, args.max_wait)
    load_start = load or load_now()
    log(f"load average at start: {load_start}")
    t_start = time.time()
    new_cells: dict[str, dict[str, list]] = {}
    for wl in workloads:
        ds = datasets[DATASET_OF[wl]]
        for idx in range(1, prof["runs"] + 1):
            for s in systems:
                cell = new_cells.setdefault(wl, {}).setdefault(s, [])
                if s in not_run:
                    if idx == 1:
                        cell.append({"error": not_run[s]})
                    continue
                # every run starts on a quiet machine: the 1-minute load a run leaves behind
                # takes about a minute to fall below the threshold
                la = load_now() if args.no_wait else wait_quiet(args.load_threshold, args.max_run_wait)
                log(f"{wl} run {idx}/{prof['runs']}: {s} (load {la})")
                r = run_once(s, wl, idx, ds, prof, pythons[s], args.quick)
                r["load_before"] = la
                r["date"] = _now_label()
                cell.append(r)
                if r.get("p50_ms") is not None:
                    log(f"  {s} {wl} #{idx}: latency p50 {r['p50_ms']} ms p99 {r['p99_ms']} ms "
                        f"({r['latency_samples']} samples, {r['latency_missing']} missing), peak memory {r['mem_run_mb']} MB PSS "
                        f"({r['rss_run_mb']} MB RSS summed)")
    elapsed = time.time() - t_start
    load_end = load_now()
    log(f"all runs done in {elapsed / 60:.1f} min; load average now {load_end}")

    machine = machine_info()
    machine["load"] = f"{load_start} (1/5/15 min) at start, {load_end} at the end"
    machine["software"] = software_versions(peers)
    date = _now_label()
    settings = {
        "Runs per system and workload": prof["runs"],
        "Backlog (throughput)": ", ".join(f"{k} {v:,} lines" for k, v in prof["backlog"].items()),
        "Event-time rate of the data": f"solar {gen.DATASETS['solar']['rate']:,.0f} events/s "
                                       f"({gen.DATASETS['solar']['devices']} devices), nexmark "
                                       f"{gen.DATASETS['nexmark']['rate']:,.0f} events/s",
        "Latency feed": ", ".join(f"{k} {v:,} lines/s" for k, v in prof["rate"].items())
        + f"; {prof['warmup_s']:.0f} s warm-up + {prof['measure_s']:.0f} s measured",
        "headrace maxRecordsPerBatch": f"{prof['headrace_batch']:,}",
        "Wall time of this invocation": f"{elapsed / 60:.1f} min ({', '.join(workloads)}; "
                                        f"{', '.join(systems)})",
    }
    wl_notes = {}
    if "headrace" in systems:
        sys.path.insert(0, str(HERE / "systems"))
        from headrace_runner import pipelines
        for wl in workloads:
            pl = pipelines({"workload": wl, "out_dir": "out", "max_records_per_batch": prof["headrace_batch"]})
            wl_notes[wl] = "headrace pipeline: `" + json.dumps(pl, separators=(",", ":")) + "`"
    doc = {"machine": machine, "date": date, "settings": settings, "cells": new_cells, "notes": NOTES,
           "workload_notes": wl_notes,
           "not_run": [f"{report.LABELS[s]}: {why}" for s, why in not_run.items()]}
    if args.quick:
        out = WORK / "RESULTS-quick.md"
        out.write_text(report.render(doc))
        (WORK / "runs-quick.json").write_text(json.dumps(doc, indent=1, default=str))
    else:
        # merge into earlier full results so --only/--workload runs update their cells only
        if RUNS_JSON.exists():
            old = json.loads(RUNS_JSON.read_text())
            cells = old.get("cells", {})
            for wl, by_sys in new_cells.items():
                for s, runs in by_sys.items():
                    cells.setdefault(wl, {})[s] = runs
            doc["cells"] = cells
            dates = sorted({r["date"] for by_sys in cells.values() for runs in by_sys.values()
                            for r in runs if r.get("date")})
            if len(dates) > 1:
                doc["date"] = f"{dates[0]} to {dates[-1]} (cells from several invocations; each run's date in runs.json)"
            doc["not_run"] = sorted(set(doc["not_run"]) | {x for x in old.get("not_run", [])
                                                            if x.split(":")[0] not in
                                                            {report.LABELS[s] for s in systems}})
            for k, v in old.get("workload_notes", {}).items():
                doc["workload_notes"].setdefault(k, v)
        RUNS_JSON.parent.mkdir(exist_ok=True)
        RUNS_JSON.write_text(json.dumps(doc, indent=1, default=str))
        out = HERE / "RESULTS.md"
        out.write_text(report.render(doc))
    log(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
