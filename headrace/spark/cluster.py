"""A private Spark standalone cluster for tests and benchmarks: one master and N workers started
from the installed pyspark (``bin/spark-class``) on free loopback ports, in a temp directory, never
the machine's shared ones. :meth:`StandaloneCluster.stop` kills every process it started. Used by
``tests/integration/test_standalone_cluster.py`` and ``benchmarks/scaling_bench.py``; a processor
runs on it with ``HEADRACE_SPARK_MASTER=<cluster.url>``.

Readiness is read from the master's JSON status page (``/json/``: alive workers), polled with a
deadline: that is waiting for a server to come up, not a test's sleep-and-poll.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class StandaloneCluster:
    def __init__(self, workers: int = 2, cores: int = 1, memory: str = "1536m"):
        self.n, self.cores, self.memory = workers, cores, memory
        self.dir = Path(tempfile.mkdtemp(prefix="headrace-spark-cluster-"))
        self.procs: list[subprocess.Popen] = []
        self.port, self.ui = free_port(), free_port()

    @property
    def url(self) -> str:
        return f"spark://127.0.0.1:{self.port}"

    def _spawn(self, name: str, args: list[str]) -> None:
        from .session import ensure_java
        from .spark_home import pyspark_dir

        home = pyspark_dir()
        env = {**os.environ, "SPARK_HOME": str(home), "JAVA_HOME": ensure_java(), "SPARK_LOCAL_IP": "127.0.0.1",
               "SPARK_LOG_DIR": str(self.dir / "logs"), "SPARK_WORKER_DIR": str(self.dir / name),
               "SPARK_DAEMON_MEMORY": "256m"}
        log = open(self.dir / f"{name}.log", "wb")
        self.procs.append(subprocess.Popen([str(home / "bin" / "spark-class"), *args], env=env, stdout=log,
                                           stderr=subprocess.STDOUT, start_new_session=True))

    def start(self, timeout: float = 120) -> "StandaloneCluster":
        self._spawn("master", ["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                               "--port", str(self.port), "--webui-port", str(self.ui)])
        for i in range(self.n):
            self._spawn(f"worker{i}", ["org.apache.spark.deploy.worker.Worker", self.url, "--host", "127.0.0.1",
                                       "--cores", str(self.cores), "--memory", self.memory,
                                       "--webui-port", str(free_port()), "--work-dir", str(self.dir / f"work{i}")])
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if any(p.poll() is not None for p in self.procs):
                break
            self.ui = self._ui_port()
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.ui}/json/", timeout=2) as r:
                    state = json.load(r)
                if sum(w.get("state") == "ALIVE" for w in state.get("workers", [])) >= self.n:
                    return self
            except (OSError, ValueError):     # not up yet, or another server's page on that port
                pass
            time.sleep(0.5)
        logs = "\n".join(f.read_text(errors="replace")[-2000:] for f in self.dir.glob("*.log"))
        self.stop()
        raise RuntimeError(f"the standalone cluster did not come up:\n{logs}")

    def _ui_port(self) -> int:
        """The master's web UI port: the one asked for, or the next one Spark bound when another
        process took it in the meantime (its log says which)."""
        try:
            found = re.findall(r"'MasterUI' on port (\d+)", (self.dir / "master.log").read_text(errors="replace"))
        except OSError:
            return self.ui
        return int(found[-1]) if found else self.ui

    def stop(self) -> None:
        for p in self.procs:
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            p.wait()
        self.procs.clear()
        shutil.rmtree(self.dir, ignore_errors=True)
