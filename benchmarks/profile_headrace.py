"""``benchmarks/run.py --profile``: where headrace's time goes on the solar workload.

Runs headrace draining the solar backlog (no live phase) twice under py-spy (from the peers
environment): once sampling the driver with idle time included (``--idle``: a driver waiting on a
Spark job shows as its Python frame blocked in py4j, so the driver profile is a wall-clock
breakdown of each micro-batch), once sampling every Python process of the tree without idle time
(``--subprocesses``: CPU spent in the Python workers that run the file source's ``read()``).
Spark's own ``StreamingQueryProgress.durationMs`` per batch gives the JVM side. Writes
``benchmarks/profile/summary.md`` (numbers) and the raw stacks next to it; PROFILE.md is the
written analysis.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "profile"


def _stacks(path: Path) -> list[tuple[list[str], int]]:
    out = []
    if not path.exists():
        return out
    for line in path.read_text(errors="replace").splitlines():
        if not line.strip():
            continue
        stack, _, n = line.rpartition(" ")
        try:
            out.append((stack.split(";"), int(n)))
        except ValueError:
            continue
    return out


def _fn(frame: str, line: bool = False) -> str:
    """'Class.func (path/file.py:123)' -> 'Class.func (file.py)' (or 'file.py:123')"""
    name, _, rest = frame.partition(" (")
    loc = rest.rstrip(")")
    f = loc.rsplit(":", 1)[0] if not line else loc
    return f"{name} ({f.split('/')[-1] if f else '?'})"


def _is(frame: str, func: str) -> bool:
    name = frame.partition(" (")[0]
    return name == func or name.endswith("." + func)


IDLE_LEAVES = ("readinto", "read_int", "select", "poll", "wait", "accept", "manager", "sleep", "recv")


def driver_breakdown(stacks: list[tuple[list[str], int]]) -> tuple[int, list[tuple[str, int]], list[tuple[str, int]]]:
    """Samples inside ``_on_batch``: by the engine step (the headrace frames below ``_batch_body``,
    with the line that called them) and by what the driver was doing at the leaf (a py4j call =
    waiting for the JVM)."""
    steps: Counter = Counter()
    leaves: Counter = Counter()
    total = 0
    for frames, n in stacks:
        idx = next((i for i, f in enumerate(frames) if _is(f, "_on_batch")), None)
        if idx is None:
            continue
        total += n
        below = frames[idx + 1:]
        hr = [f for f in below if "headrace/" in f]
        # the call path inside headrace, from _batch_body (or _batch) down, at most 3 levels
        j = next((i for i, f in enumerate(hr) if _is(f, "_batch_body")), None)
        path = hr[j:j + 3] if j is not None else hr[:3]
        steps[" > ".join(_fn(f, line=True) for f in path) or "?"] += n
        leaf = frames[-1]
        py4j = any("py4j/" in f for f in frames[-4:])
        if py4j:
            api = next((f for f in reversed(frames) if "pyspark/" in f and "py4j" not in f), None)
            leaves["JVM (py4j call from " + (_fn(api) if api else "?") + ")"] += n
        else:
            leaves[_fn(leaf)] += n
    return total, steps.most_common(30), leaves.most_common(20)


def worker_breakdown(stacks: list[tuple[list[str], int]], driver_pid: int) -> tuple[dict, list, list]:
    """CPU samples of the Python worker processes (not the driver), idle leaves dropped."""
    by_proc: Counter = Counter()
    self_t: Counter = Counter()
    incl: Counter = Counter()
    for frames, n in stacks:
        procs = [f for f in frames if f.startswith("process ")]
        proc = procs[-1] if procs else "?"
        if proc.startswith(f"process {driver_pid}:"):
            continue
        body = [f for f in frames if not f.startswith("process ")]
        if not body or any(k in body[-1].partition(" (")[0].rsplit(".", 1)[-1] for k in IDLE_LEAVES):
            continue
        by_proc[proc.split(":", 1)[1][:90] if ":" in proc else proc] += n
        self_t[_fn(body[-1])] += n
        for f in set(_fn(x) for x in body):
            incl[f] += n
    return dict(by_proc.most_common(8)), self_t.most_common(20), incl.most_common(25)


def main(prof: dict) -> int:
    import run as R

    pyspy = R.PEERS / "bin" / "py-spy"
    if not pyspy.exists():
        peers = R.ensure_peers()
        if not pyspy.exists():
            print(f"py-spy is not available: {peers['errors']}")
            return 1
    OUT.mkdir(exist_ok=True)
    ds = R.Dataset("solar", prof, ["solar"])
    lines_n = min(ds.backlog, prof.get("profile_lines", 100_000))
    nbytes = ds.offs[lines_n]
    max_et = max(ds.ets[:lines_n])
    ref = [r for r in ds.meta["reference"]["solar"] if r["we"] + 4_000 <= max_et]
    keys = {(r["ws"], r["k"]) for r in ref}
    results = {}
    for mode in ("driver", "workers"):
        run_dir = R.WORK / "runs" / "profile" / mode
        shutil.rmtree(run_dir, ignore_errors=True)
        run_dir.mkdir(parents=True)
        with open(ds.dir / "data.jsonl", "rb") as fi, open(run_dir / "in.jsonl", "wb") as fo:
            fo.write(fi.read(nbytes))
        cfg = {"workload": "solar", "events_file": str(run_dir / "events.jsonl"), "stop_file": str(run_dir / "STOP"),
               "out_dir": str(run_dir / "out"), "checkpoint": str(run_dir / "checkpoint"),
               "home": str(run_dir / "home"), "input_file": str(run_dir / "in.jsonl"),
               "max_records_per_batch": prof["headrace_batch"], "parallelism": 2, "max_seconds": 3600}
        (run_dir / "config.json").write_text(json.dumps(cfg))
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        jfr = OUT / "jvm.jfr"
        if mode == "workers":   # JVM side: Java Flight Recorder method sampling
            jfr.unlink(missing_ok=True)
            env["JAVA_TOOL_OPTIONS"] = f"-XX:StartFlightRecording=dumponexit=true,filename={jfr},settings=profile"
        raw = OUT / f"{mode}.raw.txt"
        runner = [str(R.PRODUCT_PY), str(HERE / "systems" / "headrace_runner.py"), str(run_dir / "config.json")]
        logf = open(run_dir / "log.txt", "wb")
        if mode == "driver":
            cmd = [str(pyspy), "record", "--idle", "--rate", "50", "--format", "raw", "-o", str(raw), "--"] + runner
            p = subprocess.Popen(cmd, stdout=logf, stderr=subprocess.STDOUT, cwd=str(run_dir), env=env,
                                 start_new_session=True)
            spy = None
        else:
            p = subprocess.Popen(runner, stdout=logf, stderr=subprocess.STDOUT, cwd=str(run_dir), env=env,
                                 start_new_session=True)
            time.sleep(0.5)
            spy = subprocess.Popen([str(pyspy), "record", "--subprocesses", "--rate", "50", "--format", "raw",
                                    "-o", str(raw), "--pid", str(p.pid)], stdout=subprocess.DEVNULL,
                                   stderr=subprocess.STDOUT)
        tail = R.EventTail(run_dir / "events.jsonl")
        t0 = time.time()
        drained = None
        while time.time() - t0 < prof["backlog_timeout_s"] and p.poll() is None:
            tail.poll("solar")
            if tail.ready and all(k in tail.win_first for k in keys):
                drained = max(tail.win_first[k] for k in keys)
                break
            time.sleep(0.05)
        (run_dir / "STOP").touch()
        try:
            p.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
        if spy is not None:
            try:
                spy.wait(timeout=60)
            except subprocess.TimeoutExpired:
                spy.send_signal(signal.SIGINT)
                spy.wait(timeout=30)
        logf.close()
        tail.poll("solar")
        info = (tail.end or {}).get("info", {})
        results[mode] = {"drain_s": (drained - tail.ready) if drained and tail.ready else None,
                         "pid": p.pid, "info": info, "raw": raw}
        R.log(f"profile {mode}: drained in {results[mode]['drain_s']} s")

    d = results["driver"]
    total, steps, leaves = driver_breakdown(_stacks(d["raw"]))
    procs, wself, wincl = worker_breakdown(_stacks(results["workers"]["raw"]),
                                           _driver_pid(results["workers"]["raw"]))
    info = results["workers"]["info"] or d["info"]
    prog = [p for p in info.get("progress", []) if p.get("numInputRows")]
    lines = [f"# headrace profile: solar backlog ({lines_n:,} lines, maxRecordsPerBatch "
             f"{prof['headrace_batch']:,})", "",
             f"Load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; drain time "
             f"{_f(d['drain_s'])} s under py-spy --idle (driver), {_f(results['workers']['drain_s'])} s under "
             f"py-spy --subprocesses.", "",
             "## Spark StreamingQueryProgress.durationMs per micro-batch (JVM side)", "",
             "| batch | input rows | triggerExecution | addBatch (= headrace's foreachBatch) | latestOffset | "
             "getBatch | queryPlanning | walCommit | commitOffsets |", "|---|---|---|---|---|---|---|---|---|"]
    for p in prog:
        dm = p["durationMs"]
        lines.append(f"| {p['batchId']} | {p['numInputRows']:,} | " + " | ".join(
            str(dm.get(k, "-")) for k in ("triggerExecution", "addBatch", "latestOffset", "getBatch",
                                          "queryPlanning", "walCommit", "commitOffsets")) + " |")
    lines += ["", f"## Driver: wall-clock samples inside foreachBatch, by engine step ({total} samples at 50 Hz)", "",
              "| step | share |", "|---|---|"]
    lines += [f"| `{s}` | {n / max(1, total):.1%} |" for s, n in steps]
    lines += ["", "## Driver: what it was doing (leaf frame)", "", "| leaf | share |", "|---|---|"]
    lines += [f"| `{s}` | {n / max(1, total):.1%} |" for s, n in leaves]
    wtot = sum(procs.values()) or 1
    lines += ["", f"## Python workers (CPU samples, {sum(procs.values())} at 50 Hz)", "", "| process | samples |",
              "|---|---|"]
    lines += [f"| `{k}` | {v} |" for k, v in procs.items()]
    lines += ["", "| function (self) | share |", "|---|---|"]
    lines += [f"| `{s}` | {n / wtot:.1%} |" for s, n in wself]
    lines += ["", "| function (inclusive) | share |", "|---|---|"]
    lines += [f"| `{s}` | {n / wtot:.1%} |" for s, n in wincl]
    cats, tops, nsamp = jfr_breakdown(OUT / "jvm.jfr")
    lines += ["", f"## JVM: Java Flight Recorder execution samples ({nsamp} samples, threads running Java code)", "",
              "| category (nearest categorised frame from the top of the stack) | share |", "|---|---|"]
    lines += [f"| {c} | {n / max(1, nsamp):.1%} |" for c, n in cats]
    lines += ["", "| top frame | share |", "|---|---|"]
    lines += [f"| `{c}` | {n / max(1, nsamp):.1%} |" for c, n in tops]
    (OUT / "summary.md").write_text("\n".join(lines) + "\n")
    (OUT / "end_info.json").write_text(json.dumps(info, indent=1, default=str))
    R.log(f"wrote {OUT / 'summary.md'}")
    return 0


JVM_CATEGORIES = [
    ("Janino / whole-stage codegen compile", ("org.codehaus.janino", "org.codehaus.commons", "CodeGenerator")),
    ("Catalyst analysis / optimisation / planning", ("catalyst.analysis", "catalyst.optimizer", "RuleExecutor",
                                                      "SparkPlanner", "QueryPlanner", "catalyst.rules")),
    ("Python runner I/O (data source read, Arrow, pickling)", ("api.python", "execution.python", "PythonRunner",
                                                               "python.PythonArrow", "PythonDataSource")),
    ("Parquet read/write", ("org.apache.parquet", "parquet.", "ParquetFile")),
    ("VARIANT expressions", ("variant", "Variant")),
    ("Shuffle / sort / aggregation", ("shuffle", "UnsafeExternalSorter", "aggregate", "HashAggregate")),
    ("JSON / string functions", ("json", "UTF8String")),
    ("Streaming bookkeeping (offsets, commit logs, checkpoints)", ("execution.streaming", "HDFSMetadataLog",
                                                                  "CheckpointFileManager")),
    ("Hadoop file system / I/O", ("org.apache.hadoop", "java.io", "sun.nio")),
]


def jfr_breakdown(path: Path) -> tuple[list, list, int]:
    """Categorise JFR ``jdk.ExecutionSample`` stacks (``jfr print``)."""
    if not path.exists():
        return [], [], 0
    jfr_bin = Path(os.environ.get("JAVA_HOME", "")) / "bin" / "jfr"
    if not jfr_bin.exists():
        jfr_bin = Path(shutil.which("jfr") or os.path.join(os.path.dirname(os.path.realpath(shutil.which("java") or
                                                                                              "java")), "jfr"))
    r = subprocess.run([str(jfr_bin), "print", "--events", "jdk.ExecutionSample", "--stack-depth", "64", str(path)],
                       capture_output=True, text=True)
    cats: Counter = Counter()
    tops: Counter = Counter()
    n = 0
    stack: list[str] | None = None
    for line in r.stdout.splitlines():
        t = line.strip()
        if t.startswith("stackTrace = ["):
            stack = []
        elif stack is not None and t.startswith("]"):
            n += 1
            if stack:
                tops[stack[0].split("(")[0]] += 1
            cat = next((c for fr in stack for c, keys in JVM_CATEGORIES if any(k in fr for k in keys)), "other")
            cats[cat] += 1
            stack = None
        elif stack is not None and t and not t.startswith("..."):
            stack.append(t)
    return cats.most_common(), tops.most_common(15), n


def _driver_pid(raw: Path) -> int:
    """The runner's pid in a --subprocesses recording: the process that ran ``_on_batch``."""
    for frames, _ in _stacks(raw):
        procs = [f for f in frames if f.startswith("process ")]
        if procs and any(_is(f, "_on_batch") for f in frames):
            return int(procs[-1].split()[1].split(":")[0])
    return -1


def _f(x) -> str:
    return "-" if x is None else f"{x:.1f}"


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    import run
    if "--prof" in sys.argv:  # from ``run.py --profile``: the profile it built
        prof = json.loads(sys.argv[sys.argv.index("--prof") + 1])
    else:
        prof = dict(run.PROFILES["quick" if "--quick" in sys.argv else "full"])
    sys.exit(main(prof))
