"""What a small ephemeral run costs: ``headrace process`` of three inline documents through a
``$project``, beside a bare PySpark session doing a trivial job (issue 17's row).

Run: ``.venv/bin/python benchmarks/ephemeral_bench.py [--runs R]``. Writes
``benchmarks/results/ephemeral.md`` and prints it.

Each run is a fresh process, timed from spawn to exit (wall clock), the systems interleaved:

- headrace: ``.venv/bin/headrace process pipeline.json`` (``$source.documents`` with three
  documents, ``$project``), outputs printed to stdout; the run checks the three lines.
- PySpark: ``python -c`` that builds a ``local[*]`` SparkSession (Spark's defaults, UI off),
  creates a three-row DataFrame, filters it and collects it, then stops the session.

The headrace column also gives the time until its first output line (after the SparkSession
starts, parsing and planning), read from the child's stdout as it comes.

With ``--serve`` (the default), a third system: ``headrace sp process pipeline.json`` against a
``headrace serve --warm --tier SP30`` instance (2 cores, like ``local[*]`` here) started once in a
temp home, so the run reuses the instance's warm session. It is timed from spawn to exit of the
CLI (Python start, HTTP request, the run, printing). The runs start once the instance's process
worker reports ``warm`` (``serve --warm`` has started its session and run its own small
pipeline on it); the time from the server's start to that is reported too, and the first
user run apart from the others.
"""
from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
OUT_MD = HERE / "results" / "ephemeral.md"

PIPELINE = [{"$source": {"documents": [{"a": 1, "b": "x"}, {"a": 2, "b": "y"}, {"a": 3, "b": "z"}]}},
            {"$project": {"_id": 0, "a": 1, "twice": {"$multiply": ["$a", 2]}}}]

PYSPARK = """
from pyspark.sql import SparkSession
s = (SparkSession.builder.master("local[*]").appName("bare").config("spark.ui.enabled", "false")
     .config("spark.ui.showConsoleProgress", "false").getOrCreate())
rows = s.createDataFrame([(1, "x"), (2, "y"), (3, "z")], "a int, b string").filter("a > 0").collect()
assert len(rows) == 3, rows
print("rows", len(rows), flush=True)
s.stop()
"""


def _python() -> str:
    py = ROOT / ".venv" / "bin" / "python"
    return str(py if py.exists() else sys.executable)


def run_headrace(tmp: Path) -> dict:
    pipe = tmp / "three.json"
    pipe.write_text(json.dumps(PIPELINE))
    env = {**os.environ, "HEADRACE_HOME": str(tmp / "home")}
    t0 = time.monotonic()
    p = subprocess.Popen([_python(), "-m", "headrace.cli", "process", str(pipe)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=env, cwd=tmp)
    first = None
    lines = []
    for line in p.stdout:
        if first is None:
            first = time.monotonic() - t0
        lines.append(line)
    err = p.stderr.read()
    rc = p.wait()
    wall = time.monotonic() - t0
    if rc or len(lines) != 3:
        return {"error": f"rc={rc} lines={len(lines)} {err.strip().splitlines()[-1:] }"}
    return {"wall": wall, "first": first}


class Serve:
    """A ``headrace serve --warm`` instance in a temp home, on a free loopback port."""

    def __init__(self, tmp: Path):
        import socket
        import urllib.request

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = {**os.environ, "HEADRACE_ADMIN_TOKEN": "bench-admin-token", "HEADRACE_READER_TOKEN": "bench-rd",
                    "HEADRACE_URL": self.url, "HEADRACE_TOKEN": "bench-admin-token"}
        self.proc = subprocess.Popen([_python(), "-m", "headrace.cli", "serve", "--home", str(tmp / "home"),
                                      "--port", str(self.port), "--tier", "SP30", "--warm"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=self.env, cwd=tmp)
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(self.url + "/healthz", timeout=2)
                break
            except OSError:
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    raise RuntimeError("headrace serve did not start")
                time.sleep(0.2)

    def wait_warm(self, timeout: float = 300) -> float:
        """Seconds until the process worker reports ``warm`` (``serve --warm``'s own runs done)."""
        import urllib.request

        t0 = time.monotonic()
        req = urllib.request.Request(self.url + "/api/workers",
                                     headers={"Authorization": "Bearer " + self.env["HEADRACE_TOKEN"]})
        while time.monotonic() - t0 < timeout:
            with urllib.request.urlopen(req, timeout=5) as r:
                if any(w.get("role") == "process" and w.get("warm") for w in json.loads(r.read())):
                    return time.monotonic() - t0
            time.sleep(0.5)
        raise RuntimeError("the process worker did not report warm")

    def run(self, tmp: Path) -> dict:
        pipe = tmp / "three.json"
        pipe.write_text(json.dumps(PIPELINE))
        t0 = time.monotonic()
        r = subprocess.run([_python(), "-m", "headrace.cli", "sp", "process", str(pipe)], capture_output=True,
                           text=True, env=self.env, cwd=tmp)
        wall = time.monotonic() - t0
        if r.returncode or len(r.stdout.splitlines()) != 3:
            return {"error": f"rc={r.returncode} {(r.stderr.strip().splitlines() or ['?'])[-1]}"}
        return {"wall": wall}

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def run_pyspark(tmp: Path) -> dict:
    t0 = time.monotonic()
    r = subprocess.run([_python(), "-c", PYSPARK], capture_output=True, text=True, cwd=tmp,
                       env={**os.environ, "JAVA_HOME": _java_home()})
    wall = time.monotonic() - t0
    if r.returncode or "rows 3" not in r.stdout:
        return {"error": (r.stderr.strip().splitlines() or ["?"])[-1]}
    return {"wall": wall}


def _java_home() -> str:
    sys.path.insert(0, str(ROOT))
    from headrace.spark.session import ensure_java

    return ensure_java()


def _fmt(xs: list[float]) -> str:
    return f"{statistics.median(xs):.1f} [{min(xs):.1f}–{max(xs):.1f}]" if xs else "-"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--no-serve", dest="serve", action="store_false", help="skip the sp process rows")
    a = ap.parse_args(argv)
    load0 = " ".join(f"{x:.2f}" for x in os.getloadavg())
    res: dict[str, list[dict]] = {"headrace": [], "pyspark": [], "sp": [], "sp_first": []}
    warm_s = None
    for i in range(a.runs):
        for name, fn in (("headrace", run_headrace), ("pyspark", run_pyspark)):
            with tempfile.TemporaryDirectory(prefix=f"ephemeral-{name}-") as tmp:
                r = fn(Path(tmp))
            res[name].append(r)
            print(f"run {i + 1} {name}: {r}", flush=True)
    if a.serve:
        with tempfile.TemporaryDirectory(prefix="ephemeral-serve-") as tmp:
            srv = Serve(Path(tmp))
            try:
                warm_s = srv.wait_warm()
                res["sp_first"].append(srv.run(Path(tmp)))
                for i in range(max(3, a.runs)):
                    res["sp"].append(srv.run(Path(tmp)))
                    print(f"run {i + 1} sp process: {res['sp'][-1]}", flush=True)
            finally:
                srv.stop()
    load1 = " ".join(f"{x:.2f}" for x in os.getloadavg())
    hw = [r["wall"] for r in res["headrace"] if "wall" in r]
    pw = [r["wall"] for r in res["pyspark"] if "wall" in r]
    first = [r["first"] for r in res["headrace"] if r.get("first") is not None]
    sw = [r["wall"] for r in res["sp"] if "wall" in r]
    sf = [r["wall"] for r in res["sp_first"] if "wall" in r]
    sp_rows = [f"| `headrace sp process` on a warm `serve` (same pipeline; {len(sw)} runs) | {_fmt(sw)} | "
               f"{statistics.median(hw) / statistics.median(sw):.2f}x | |",
               f"| the same, first run once the instance is warm ({warm_s:.1f} s after `serve --warm` "
               f"answered) | {_fmt(sf)} | | |"] if sw and hw and warm_s is not None else []
    ratio = f"{statistics.median(hw) / statistics.median(pw):.2f}x" if hw and pw else "-"
    errors = [r["error"] for rs in res.values() for r in rs if "error" in r]
    md = "\n".join([
        "# What an ephemeral run costs: three documents through `$project`",
        "",
        "Generated by `benchmarks/ephemeral_bench.py`; see its docstring for the method.",
        "",
        f"- Date: {_dt.datetime.now(_dt.timezone.utc):%Y-%m-%d %H:%M} UTC; Python {platform.python_version()}; "
        f"{os.cpu_count()} cores",
        f"- Load average (1/5/15 min) before: {load0}; after: {load1}",
        f"- Runs per system: {a.runs}, each a fresh process, interleaved; median [range], seconds",
        "",
        "| system | wall time, s (spawn to exit) | `headrace process` ÷ it | first output, s |",
        "|---|---:|---:|---:|",
        f"| `headrace process` (3 inline documents, `$project`) | {_fmt(hw)} |  | {_fmt(first)} |",
        f"| bare PySpark (session, 3-row filter, collect, stop) | {_fmt(pw)} | {ratio} | |",
        *sp_rows,
        "",
        *([f"Errors: {errors}", ""] if errors else []),
    ])
    OUT_MD.parent.mkdir(parents=True, exist_ok=True)
    OUT_MD.write_text(md)
    print(md)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
