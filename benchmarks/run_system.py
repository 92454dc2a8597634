"""One run of one system on one workload (``benchmarks/run.py``): ``run_once`` starts the system's
runner subprocess on a copy of the backlog, measures start-up, throughput and peak RSS while it
drains the backlog, runs the live phase (``run_live``) for latency, stops the runner and checks
its results against the reference.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import gen
from run_config import FEED_MODE, HERE, WORK, log
from run_dataset import Dataset
from run_env import java_home
from run_live import feed_live, latency
from run_watch import EventTail, MemSampler


def run_once(system: str, wl: str, idx: int, ds: Dataset, prof: dict, py: str, quick: bool) -> dict:
    if wl != "passthrough" and not ds.meta["reference"].get(wl):
        raise SystemExit(f"the {wl} backlog closes no window: make the backlog longer")
    run_dir = WORK / "runs" / wl / f"{system}-{idx}"
    shutil.rmtree(run_dir, ignore_errors=True)
    run_dir.mkdir(parents=True)
    mode = FEED_MODE[system]
    backlog_bytes = ds.meta["backlog_bytes"]
    src = ds.dir / "data.jsonl"

    def copy_backlog(dst: Path) -> None:
        with open(src, "rb") as fi, open(dst, "wb") as fo:
            left = backlog_bytes
            while left:
                chunk = fi.read(min(left, 1 << 22))
                fo.write(chunk)
                left -= len(chunk)

    if mode == "append":
        input_file = run_dir / "in.jsonl"
        copy_backlog(input_file)
        input_dir = None
    else:
        input_dir = run_dir / "in"
        input_dir.mkdir()
        copy_backlog(input_dir / "part-000000.jsonl")
        input_file = None
    cfg = {"workload": wl, "events_file": str(run_dir / "events.jsonl"), "stop_file": str(run_dir / "STOP"),
           "out_dir": str(run_dir / "out"), "checkpoint": str(run_dir / "checkpoint"), "home": str(run_dir / "home"),
           "input_file": str(input_file) if input_file else None, "input_dir": str(input_dir) if input_dir else None,
           "max_records_per_batch": prof["headrace_batch"], "parallelism": 2,
           "max_seconds": prof["backlog_timeout_s"] + 300}
    (run_dir / "config.json").write_text(json.dumps(cfg, indent=1))
    env = dict(os.environ)
    jh = java_home()
    if jh:
        env["JAVA_HOME"] = jh
    env["PYTHONUNBUFFERED"] = "1"
    env.pop("PYTHONPATH", None)
    if system == "pyflink":
        env["JVM_ARGS"] = "-Xmx2g"
    script = HERE / "systems" / f"{system}_runner.py"
    logf = open(run_dir / "log.txt", "wb")
    t_spawn = time.time()
    p = subprocess.Popen([py, str(script), str(run_dir / "config.json")], stdout=logf, stderr=subprocess.STDOUT,
                         cwd=str(run_dir), env=env, start_new_session=True)
    mem = MemSampler(p.pid)
    mem.start()
    tail = EventTail(run_dir / "events.jsonl")
    ref = ds.meta["reference"].get(wl) if wl != "passthrough" else None
    pt_expected = ds.meta["passthrough_backlog_outputs"] if wl == "passthrough" else None
    ref_keys = {((r["ws"], r["k"]) if wl == "solar" else r["ws"]) for r in ref} if ref is not None else set()
    res: dict[str, Any] = {"system": system, "workload": wl, "run": idx, "backlog": ds.backlog}
    error = None

    def alive() -> bool:
        return p.poll() is None

    try:
        deadline = time.time() + prof["backlog_timeout_s"]
        drained = None
        while True:
            tail.poll(wl, pt_expected)
            if wl == "passthrough":
                drained = tail.pt_backlog_done
            elif tail.ready is not None and ref_keys and all(k in tail.win_first for k in ref_keys):
                drained = max(tail.win_first[k] for k in ref_keys)
            if drained is not None:
                break
            if not alive():
                error = f"runner exited with code {p.returncode} before draining the backlog"
                break
            if time.time() > deadline:
                got = len([k for k in ref_keys if k in tail.win_first]) if ref_keys else tail.pt_backlog
                error = (f"backlog not drained within {prof['backlog_timeout_s']} s "
                         f"({got} of {len(ref_keys) or pt_expected} results)")
                break
            time.sleep(0.02)
        if tail.ready is not None:
            res["startup_s"] = round(tail.ready - t_spawn, 2)
        if drained is not None:
            res["drain_s"] = round(drained - tail.ready, 3)
            res["throughput"] = ds.backlog / max(1e-6, drained - tail.ready)
            res["mem_mb"] = round(mem.peak / 2**20)     # peak PSS while draining the backlog
            res["rss_mb"] = round(mem.peak_rss / 2**20)     # peak RSS sum while draining
            log(f"  {system} {wl} #{idx}: backlog drained in {res['drain_s']:.1f} s "
                f"({res['throughput']:,.0f} events/s), start-up {res.get('startup_s')} s")
        if error is None and idx <= prof["latency_runs"]:
            feed = feed_live(ds, prof, wl, mode, input_file, input_dir, tail, alive)
            res.update(latency(ds, prof, wl, tail, feed))
            if not alive():
                error = f"runner exited with code {p.returncode} during the live phase"
    finally:
        (run_dir / "STOP").touch()
        try:
            p.wait(timeout=40)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGTERM)
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
        try:
            os.killpg(p.pid, signal.SIGKILL)  # leftovers (JVM children) of this run's process group only
        except ProcessLookupError:
            pass
        mem.stop()
        logf.close()
    tail.poll(wl, pt_expected)
    res["mem_run_mb"] = round(mem.peak / 2**20)     # peak PSS over the whole run
    res["rss_run_mb"] = round(mem.peak_rss / 2**20)
    res.setdefault("mem_mb", res["mem_run_mb"])
    res.setdefault("rss_mb", res["rss_run_mb"])
    if ref is not None:
        res["check"] = gen.compare(wl, ref, tail.rows)
    elif pt_expected is not None:
        res["check"] = {"expected": pt_expected, "missing": max(0, pt_expected - tail.pt_backlog), "wrong": 0}
    if tail.end:
        info = tail.end.get("info") or {}
        (run_dir / "end_info.json").write_text(json.dumps(info, indent=1, default=str))
        if info.get("error") and error is None and "throughput" not in res:
            error = info["error"]
    if error:
        lt = (run_dir / "log.txt").read_text(errors="replace").strip().splitlines()
        detail = next((x for x in reversed(lt) if "Error" in x or "Exception" in x), lt[-1] if lt else "")
        res["error"] = f"{error}: {detail.strip()[:300]}" if detail else error
        log(f"  {system} {wl} #{idx}: FAILED: {res['error']}")
    # inputs are large; keep events, logs, results
    for big in (run_dir / "in.jsonl", run_dir / "in"):
        if big.is_dir():
            shutil.rmtree(big, ignore_errors=True)
        elif big.exists():
            big.unlink()
    return res

