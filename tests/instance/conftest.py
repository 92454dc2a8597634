"""``headrace serve`` with real worker processes, for the instance tests.

:class:`Instance` starts the control plane as its own process on a free loopback port with a
temp home and known admin/reader tokens (from the environment), and ends it (and, should it
fail to, every worker it started) in the fixture finalizer. Workers use the SP2 tier
(``local[1]``, 1 GB). Waiting uses the server's blocking ``/wait`` route, not polling.
"""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from headrace.instance.client import Client

ADMIN = "adm-7f3c2a9e41b8d6c5"
READER = "rdr-0a1b2c3d4e5f6a7b"
PG_PASSWORD = "pg-s3cret-Zq8w"
ARTIFACTS = Path(os.environ.get("HEADRACE_TEST_ARTIFACTS", Path(__file__).resolve().parents[2] / "test-artifacts"))

pytestmark = pytest.mark.instance


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Instance:
    def __init__(self, base: Path, *, trigger_ms: int | None = None, connections: str | None = None,
                 env_tokens: bool = True):
        self.env_tokens = env_tokens
        self.home = base / "home"
        self.base = base
        self.trigger_ms = trigger_ms
        self.connections = connections
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen | None = None
        self.worker_pids: set[int] = set()
        self.out = base / "serve.out"

    def start(self) -> "Instance":
        cmd = [sys.executable, "-m", "headrace.cli", "serve", "--home", str(self.home), "--port", str(self.port),
               "--tier", "SP2"]
        if self.trigger_ms:
            cmd += ["--trigger-ms", str(self.trigger_ms)]
        if self.connections:
            cmd += ["--connections", self.connections]
        env = {k: v for k, v in os.environ.items() if k not in ("HEADRACE_ADMIN_TOKEN", "HEADRACE_READER_TOKEN")}
        if self.env_tokens:
            env.update({"HEADRACE_ADMIN_TOKEN": ADMIN, "HEADRACE_READER_TOKEN": READER})
        with open(self.out, "ab") as f:
            self.proc = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT, env=env, cwd=self.base)
        deadline = time.monotonic() + 60
        while True:  # the server's own start-up: connect until it listens
            try:
                if httpx.get(self.url + "/healthz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"headrace serve did not start:\n{self.out.read_text()[-3000:]}")
            time.sleep(0.2)
        self.admin = Client(self.url, ADMIN)
        self.reader = Client(self.url, READER)
        return self

    @property
    def sp(self):
        return self.admin.sp

    def workers(self) -> list[dict]:
        ws = self.sp.workers()
        self.worker_pids |= {w["pid"] for w in ws}
        return ws

    def stop(self) -> None:
        """SIGTERM the control plane (it deprovisions its workers); kill whatever remains."""
        try:
            self.workers()
        except Exception:  # noqa: BLE001 - the server may be gone already
            pass
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=90)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        for pid in self.worker_pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def logs(self) -> str:
        text = self.out.read_text() if self.out.exists() else ""
        for f in sorted((self.home / "instance" / "logs").glob("*.log")):
            text += f.read_text(errors="replace")
        return text


@pytest.fixture
def make_instance(tmp_path):
    made: list[Instance] = []

    def make(**kw) -> Instance:
        inst = Instance(tmp_path, **kw)
        made.append(inst)
        return inst.start()

    yield make
    for inst in made:
        inst.stop()


def put(home: Path, stream: str, rows: list[tuple[str, int]]) -> None:
    """Put ``(key, t_seconds)`` records: data ``{"k": key, "t": <epoch ms>, "v": t}``."""
    from headrace.streams import Stream

    with Stream(home, stream) as s:
        s.put_many([(k, {"k": k, "t": 1_700_000_000_000 + t * 1000, "v": t}) for k, t in rows])


def window_pipeline(stream: str, out: Path, add: dict | None = None) -> list[dict]:
    """10 s tumbling count/sum per key, no allowed lateness, emitted to a JSON-lines file."""
    stages: list[dict] = [{"$source": {"connectionName": "stream", "stream": stream, "timeField": {"$toDate": "$t"}}}]
    if add:
        stages.append({"$addFields": add})
    stages += [{"$tumblingWindow": {"interval": {"size": 10, "unit": "second"},
                                    "allowedLateness": {"size": 0, "unit": "second"},
                                    "pipeline": [{"$group": {"_id": "$k", "n": {"$sum": 1}, "s": {"$sum": "$v"}}}]}},
               {"$emit": {"path": str(out)}}]
    return stages


def read_windows(path: Path) -> list[tuple]:
    """The emitted windows as sorted ``(window start, key, count, sum)``; duplicates stay."""
    from headrace import ejson

    if not path.exists():
        return []
    out = []
    for line in path.read_text().splitlines():
        d = ejson.loads(line)
        out.append((d["_stream_meta"]["window"]["start"].isoformat(), d["_id"], d["n"], d["s"]))
    return sorted(out)


def expected_windows(rows: list[tuple[str, int]], closed_before: int) -> list[tuple]:
    """The reference: windows ending at or before ``closed_before`` seconds."""
    import datetime as dt

    acc: dict = {}
    for k, t in rows:
        start = t - t % 10
        if start + 10 <= closed_before:
            n, s = acc.get((start, k), (0, 0))
            acc[(start, k)] = (n + 1, s + t)
    base = dt.datetime.fromtimestamp(1_700_000_000, dt.timezone.utc)
    return sorted(((base + dt.timedelta(seconds=st)).isoformat(), k, n, s) for (st, k), (n, s) in acc.items())
