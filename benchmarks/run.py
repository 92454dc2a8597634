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
3. Peak memory: the largest sum of RSS over the runner's process tree (JVMs and Python workers
   included), sampled every 0.2 s from /proc.

headrace and bytewax read a single JSON-lines file that the feed appends to; PySpark's and
Flink's file sources pick up new files, so for them each feed group becomes a new file in the
input directory (written under a hidden name, then renamed). Results: ``benchmarks/RESULTS.md``
(and every run's numbers in ``benchmarks/results/runs.json``); ``--quick`` writes
``benchmarks/.work/RESULTS-quick.md``.
"""
from __future__ import annotations

import argparse
import array
import bisect
import datetime as _dt
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

import gen  # noqa: E402
import report  # noqa: E402

WORK = HERE / ".work"
PEERS = HERE / ".venv-peers"
REQS = HERE / "requirements-peers.txt"
RUNS_JSON = HERE / "results" / "runs.json"
PRODUCT_PY = ROOT / ".venv" / "bin" / "python"

DATASET_OF = {"solar": "solar", "passthrough": "solar", "q5": "nexmark", "q7": "nexmark"}
FEED_MODE = {"headrace": "append", "bytewax": "append", "pyspark": "chunks", "pyflink": "chunks"}
TICK_S = 0.05

# Full and quick settings. backlog: lines drained for throughput; rate: lines/s fed for latency.
PROFILES = {
    "full": {"runs": 3, "latency_runs": 1, "warmup_s": 5.0, "measure_s": 25.0, "tail_s": 25.0,
             "backlog": {"solar": 40_000, "nexmark": 40_000},
             "rate": {"solar": 500, "q5": 500, "q7": 500, "passthrough": 500},
             "headrace_batch": 100_000, "backlog_timeout_s": 900},
    "quick": {"runs": 1, "latency_runs": 1, "warmup_s": 2.0, "measure_s": 6.0, "tail_s": 15.0,
              "backlog": {"solar": 4_000, "nexmark": 4_000},
              "rate": {"solar": 500, "q5": 500, "q7": 500, "passthrough": 500},
              "headrace_batch": 100_000, "backlog_timeout_s": 300},
}


def log(msg: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", flush=True)


# ---------------------------------------------------------------------------------- machine
def machine_info() -> dict:
    mem_kb = 0
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal:"):
                mem_kb = int(line.split()[1])
    cpu = "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {"cores": os.cpu_count(), "memory_gb": round(mem_kb / 1024 / 1024, 1), "cpu": cpu,
            "os": f"{platform.system()} {platform.release()}", "load": " ".join(f"{x:.2f}" for x in os.getloadavg())}


def java_home() -> str | None:
    if os.environ.get("JAVA_HOME"):
        return os.environ["JAVA_HOME"]
    java = shutil.which("java")
    if java:
        return os.path.dirname(os.path.dirname(os.path.realpath(java)))
    return None


def software_versions(peers_ok: dict) -> str:
    parts = [f"Python {platform.python_version()}"]
    try:
        import pyspark
        parts.append(f"PySpark {pyspark.__version__}")
    except ImportError:
        pass
    for pkg in ("apache-flink", "bytewax"):
        v = peers_ok.get("versions", {}).get(pkg)
        if v:
            parts.append(f"{pkg} {v}")
    try:
        out = subprocess.run(["java", "-version"], capture_output=True, text=True, timeout=30).stderr.splitlines()
        parts.append(out[0].strip() if out else "java ?")
    except OSError:
        pass
    return ", ".join(parts)


def wait_quiet(threshold: float, max_wait_s: float) -> str:
    """Wait (polling every 30 s, at most ``max_wait_s``) for the 1-minute load to drop below
    ``threshold``; return the load average seen at the end."""
    deadline = time.monotonic() + max_wait_s
    while True:
        la = os.getloadavg()
        if la[0] < threshold or time.monotonic() >= deadline:
            return " ".join(f"{x:.2f}" for x in la)
        log(f"load average {la[0]:.2f} >= {threshold}: waiting for a quiet machine")
        time.sleep(30)


# ---------------------------------------------------------------------------------- peers env
def ensure_peers() -> dict:
    """Create ``benchmarks/.venv-peers`` from requirements-peers.txt (once; redone when the file
    changes). Returns {"python": path, "errors": {pkg: text}, "versions": {pkg: v}}."""
    py = PEERS / "bin" / "python"
    stamp = PEERS / ".installed"
    want = REQS.read_text()
    errors: dict[str, str] = {}
    if not (stamp.exists() and stamp.read_text() == want and py.exists()):
        log(f"creating the peers environment {PEERS} (apache-flink, bytewax, ...)")
        if not py.exists():
            r = subprocess.run([sys.executable, "-m", "venv", str(PEERS)], capture_output=True, text=True)
            if r.returncode:
                return {"python": None, "errors": {"*": r.stderr.strip()}, "versions": {}}
            subprocess.run([str(py), "-m", "pip", "install", "-q", "--upgrade", "pip"], capture_output=True)
        r = subprocess.run([str(py), "-m", "pip", "install", "-q", "-r", str(REQS)], capture_output=True, text=True)
        if r.returncode:
            # install one by one to know which peer cannot be installed here
            for line in want.splitlines():
                req = line.split("#")[0].strip()
                if not req:
                    continue
                rr = subprocess.run([str(py), "-m", "pip", "install", "-q", req], capture_output=True, text=True)
                if rr.returncode:
                    errors[req.split("=")[0].split(">")[0]] = (rr.stderr.strip().splitlines() or ["?"])[-1]
        else:
            stamp.write_text(want)
    versions = {}
    code = ("import importlib.metadata as m, json\nout = {}\n"
            "for p in ('apache-flink', 'bytewax', 'psutil', 'py-spy'):\n"
            "    try:\n        out[p] = m.version(p)\n    except m.PackageNotFoundError:\n        pass\n"
            "print(json.dumps(out))")
    r = subprocess.run([str(py), "-c", code], capture_output=True, text=True)
    if r.returncode == 0:
        versions = json.loads(r.stdout)
    return {"python": str(py), "errors": errors, "versions": versions}


def system_python(system: str, peers: dict) -> tuple[str | None, str | None]:
    """(python, why-not) for a system's runner."""
    if system in ("headrace", "pyspark"):
        return str(PRODUCT_PY if PRODUCT_PY.exists() else sys.executable), None
    pkg, mod = {"pyflink": ("apache-flink", "pyflink.table"), "bytewax": ("bytewax", "bytewax.dataflow")}[system]
    if not peers.get("python"):
        return None, f"peers environment could not be created: {peers['errors'].get('*')}"
    if pkg in peers["errors"]:
        return None, f"pip install {pkg} failed: {peers['errors'][pkg]}"
    r = subprocess.run([peers["python"], "-c", f"import {mod}"], capture_output=True, text=True)
    if r.returncode:
        return None, f"import {mod} failed: {(r.stderr.strip().splitlines() or ['?'])[-1]}"
    return peers["python"], None


# ---------------------------------------------------------------------------------- memory
def _children_map() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        ppid = int(stat[stat.rindex(")") + 2:].split()[1])
        kids.setdefault(ppid, []).append(int(name))
    return kids


def tree_rss_bytes(pid: int) -> int:
    kids = _children_map()
    page = os.sysconf("SC_PAGE_SIZE")
    total, stack, seen = 0, [pid], set()
    while stack:
        p = stack.pop()
        if p in seen:
            continue
        seen.add(p)
        try:
            with open(f"/proc/{p}/statm") as f:
                total += int(f.read().split()[1]) * page
        except OSError:
            pass
        stack.extend(kids.get(p, []))
    return total


class MemSampler(threading.Thread):
    def __init__(self, pid: int, every: float = 0.2):
        super().__init__(daemon=True)
        self.pid, self.every = pid, every
        self.peak = 0
        self.samples: list[tuple[float, int]] = []
        self._stop = threading.Event()

    def run(self) -> None:
        while not self._stop.is_set():
            rss = tree_rss_bytes(self.pid)
            self.peak = max(self.peak, rss)
            self.samples.append((time.time(), rss))
            self._stop.wait(self.every)

    def stop(self) -> None:
        self._stop.set()


# ---------------------------------------------------------------------------------- events
class EventTail:
    """Incrementally reads a runner's events file."""

    def __init__(self, path: Path):
        self.path = path
        self.pos = 0
        self.buf = b""
        self.ready: float | None = None
        self.end: dict | None = None
        self.win_first: dict[Any, float] = {}     # result key -> first written time
        self.windows_done: set[int] = set()       # window starts with at least one result
        self.rows: list[dict] = []
        self.pt_backlog = 0
        self.pt_backlog_done: float | None = None
        self.pt_lat: list[tuple[float, float]] = []   # (written, latency)
        self.last_out: float | None = None

    def poll(self, workload: str, pt_expected: int | None = None) -> None:
        try:
            with open(self.path, "rb") as f:
                f.seek(self.pos)
                data = f.read()
        except FileNotFoundError:
            return
        self.pos += len(data)
        data = self.buf + data
        lines = data.split(b"\n")
        self.buf = lines.pop()
        for line in lines:
            if not line.strip():
                continue
            e = json.loads(line)
            if e["ev"] == "ready":
                self.ready = e["t"]
            elif e["ev"] == "end":
                self.end = e
            elif e["ev"] == "out":
                self.last_out = e["t"]
                if workload == "passthrough":
                    self.pt_backlog += e.get("backlog", 0)
                    if pt_expected is not None and self.pt_backlog_done is None and self.pt_backlog >= pt_expected:
                        self.pt_backlog_done = e["t"]
                    self.pt_lat.extend((e["t"], x) for x in e.get("lat", []))
                else:
                    for r in e.get("rows", []):
                        self.rows.append(r)
                        k = (r["ws"], r.get("k")) if workload == "solar" else r["ws"]
                        self.win_first.setdefault(k, e["t"])
                        self.windows_done.add(r["ws"])


# ---------------------------------------------------------------------------------- one run
class Dataset:
    def __init__(self, name: str, prof: dict, workloads: list[str]):
        self.name = name
        rates = [prof["rate"][w] for w in workloads if DATASET_OF[w] == name]
        live = int(max(rates) * (prof["warmup_s"] + prof["measure_s"] + 2)) + 1000
        self.params = gen.dataset_params(name, prof["backlog"][name], live)
        self.dir = WORK / name
        t = time.time()
        self.meta = gen.generate(self.params, self.dir)
        log(f"data set {name}: {self.params['backlog']:,} backlog + {live:,} live lines "
            f"({time.time() - t:.1f} s) in {self.dir}")
        self.ets, self.offs = gen.load_arrays(self.dir)
        self.backlog = self.params["backlog"]
        with open(self.dir / "data.jsonl", "rb") as f:
            f.seek(self.offs[self.backlog])
            blob = f.read(self.offs[len(self.offs) - 1] - self.offs[self.backlog])
        base = self.offs[self.backlog]
        self.live_lines = [blob[self.offs[i] - base:self.offs[i + 1] - base]
                           for i in range(self.backlog, len(self.offs) - 1)]
        self.passes = (self.dir / "passthrough.bin").read_bytes()
        live_ets = self.ets[self.backlog:]
        self.prefix_max = array.array("q")
        m = self.meta["backlog_max_et"]
        for x in live_ets:
            m = max(m, x)
            self.prefix_max.append(m)

    def trigger_index(self, close_at: int) -> int | None:
        """Index (in the live lines) of the first line whose arrival makes max event time >= close_at."""
        i = bisect.bisect_left(self.prefix_max, close_at)
        return i if i < len(self.prefix_max) else None


def stamp(line: bytes, ms: float) -> bytes:
    return b'{"arr":' + f"{ms:.3f}".encode() + b"," + line[1:]


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
            res["rss_mb"] = round(mem.peak / 2**20)     # peak while draining the backlog
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
    res["rss_run_mb"] = round(mem.peak / 2**20)     # peak over the whole run
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


def feed_live(ds: Dataset, prof: dict, wl: str, mode: str, input_file: Path | None, input_dir: Path | None,
              tail: EventTail, alive) -> dict:
    """Feed live lines at the workload's rate; returns the visible time of each fed line group."""
    rate = prof["rate"][wl]
    per_tick = rate * TICK_S
    total_s = prof["warmup_s"] + prof["measure_s"]
    n_total = min(len(ds.live_lines), int(rate * total_s))
    starts: list[int] = []      # first live line index of each group
    times: list[float] = []     # when the group became visible (epoch s)
    t0 = time.time()
    fed = 0
    k = 0
    f = open(input_file, "ab") if mode == "append" else None
    while fed < n_total and alive():
        due = t0 + k * TICK_S
        now = time.time()
        if due > now:
            time.sleep(due - now)
        target = min(n_total, int(round((k + 1) * per_tick)))
        if target > fed:
            now = time.time()
            ms = now * 1000.0
            blob = b"".join(stamp(x, ms) for x in ds.live_lines[fed:target])
            if f is not None:
                f.write(blob)
                f.flush()
            else:
                tmp = input_dir / f".chunk-{k:06d}.tmp"
                with open(tmp, "wb") as g:
                    g.write(blob)
                os.rename(tmp, input_dir / f"part-{k + 1:06d}.jsonl")
            starts.append(fed)
            times.append(ms / 1000.0)
            fed = target
        k += 1
        if k % 20 == 0:
            tail.poll(wl)
    if f is not None:
        f.close()
    t_end = time.time()
    feed = {"t0": t0, "t_measure": t0 + prof["warmup_s"], "t_end": t_end, "starts": starts, "times": times,
            "fed": fed, "rate": rate}
    # wait (at most tail_s) for the results of everything fed
    deadline = t_end + prof["tail_s"]
    if wl == "passthrough":
        want = sum(ds.passes[ds.backlog:ds.backlog + fed])
        done = lambda: len(tail.pt_lat) >= want  # noqa: E731
    else:
        wins = [ws for ws, _ in measured_windows(ds, wl, feed)]
        done = lambda: all(ws in tail.windows_done for ws in wins)  # noqa: E731
    while time.time() < deadline and alive():
        tail.poll(wl)
        if done():
            break
        time.sleep(0.05)
    time.sleep(0.3)
    tail.poll(wl)
    return feed


def measured_windows(ds: Dataset, wl: str, feed: dict) -> list[tuple[int, float]]:
    """(window start, visible time of the line that lets it close) of the windows the live lines
    fed during the measured period close."""
    size, hop = gen.WINDOW_MS, (gen.HOP_MS if wl == "q5" else gen.WINDOW_MS)
    bmax = ds.meta["backlog_max_et"]
    ws = ((bmax - gen.LATENESS_MS - size) // hop) * hop
    out = []
    while True:
        close_at = ws + size + gen.LATENESS_MS
        if close_at > bmax:
            j = ds.trigger_index(close_at)
            if j is None or j >= feed["fed"]:
                break
            g = bisect.bisect_right(feed["starts"], j) - 1
            visible = feed["times"][g]
            if feed["t_measure"] <= visible <= feed["t_end"]:
                out.append((ws, visible))
        ws += hop
    return out


def latency(ds: Dataset, prof: dict, wl: str, tail: EventTail, feed: dict) -> dict:
    out: dict[str, Any] = {"fed": feed["fed"], "rate": feed["rate"]}
    out["feed_rate_actual"] = round(feed["fed"] / max(1e-6, feed["t_end"] - feed["t0"]))
    lat: list[float] = []
    missing = 0
    if wl == "passthrough":
        lat = [x for (t, x) in tail.pt_lat if t - x >= feed["t_measure"]]
        expected_rows = None
    else:
        by_window: dict[int, float] = {}
        for k, t in tail.win_first.items():
            w = k[0] if isinstance(k, tuple) else k
            by_window[w] = max(by_window.get(w, 0.0), t)
        for ws, visible in measured_windows(ds, wl, feed):
            if ws in by_window:
                lat.append(by_window[ws] - visible)
            else:
                missing += 1
    out["latency_samples"] = len(lat)
    out["latency_missing"] = missing
    if lat:
        out["p50_ms"] = round(report.percentile(lat, 50) * 1000, 1)
        out["p99_ms"] = round(report.percentile(lat, 99) * 1000, 1)
        out["max_ms"] = round(max(lat) * 1000, 1)
    return out


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
    "Peak RSS: largest sum of resident set sizes over the runner's whole process tree (Python driver, JVM, "
    "Python workers), sampled every 0.2 s from /proc, over the whole run (backlog and live phases). Shared "
    "pages are counted once per process, as RSS does.",
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
    "headrace (local[*], 2 GB driver, 4 shuffle partitions, AQE off); default state store.",
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
    load_start = load or " ".join(f"{x:.2f}" for x in os.getloadavg())
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
                la = " ".join(f"{x:.2f}" for x in os.getloadavg())
                log(f"{wl} run {idx}/{prof['runs']}: {s} (load {la})")
                r = run_once(s, wl, idx, ds, prof, pythons[s], args.quick)
                r["load_before"] = la
                cell.append(r)
                if r.get("p50_ms") is not None:
                    log(f"  {s} {wl} #{idx}: latency p50 {r['p50_ms']} ms p99 {r['p99_ms']} ms "
                        f"({r['latency_samples']} samples, {r['latency_missing']} missing), peak RSS {r['rss_run_mb']} MB")
    elapsed = time.time() - t_start
    load_end = " ".join(f"{x:.2f}" for x in os.getloadavg())
    log(f"all runs done in {elapsed / 60:.1f} min; load average now {load_end}")

    machine = machine_info()
    machine["load"] = f"{load_start} (1/5/15 min) at start, {load_end} at the end"
    machine["software"] = software_versions(peers)
    date = _dt.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")
    settings = {
        "Runs per system and workload": prof["runs"],
        "Backlog (throughput)": ", ".join(f"{k} {v:,} lines" for k, v in prof["backlog"].items()),
        "Event-time rate of the data": f"solar {gen.DATASETS['solar']['rate']:,.0f} events/s "
                                       f"({gen.DATASETS['solar']['devices']} devices), nexmark "
                                       f"{gen.DATASETS['nexmark']['rate']:,.0f} events/s",
        "Latency feed": ", ".join(f"{k} {v:,} lines/s" for k, v in prof["rate"].items())
        + f"; {prof['warmup_s']:.0f} s warm-up + {prof['measure_s']:.0f} s measured",
        "headrace maxRecordsPerBatch": f"{prof['headrace_batch']:,}",
        "Wall time of these runs": f"{elapsed / 60:.1f} min",
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
