"""Where the benchmarks run (``benchmarks/run.py``): the machine (cores, memory, CPU, load,
software versions, ``JAVA_HOME``), waiting for a quiet machine, and the peers' virtual
environment (``benchmarks/.venv-peers``) with the Python each system's runner uses.
"""
from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import sys
import time

from run_config import PEERS, PRODUCT_PY, REQS, log


# ---------------------------------------------------------------------------------- machine
def load_now() -> str:
    """The 1/5/15-minute load averages, as printed in every results table."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


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
            "os": f"{platform.system()} {platform.release()}", "load": load_now()}


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

