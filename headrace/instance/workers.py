"""The control plane's handle on one worker process (pure Python: the worker imports Spark).

:class:`WorkerHandle` spawns ``python -m headrace.instance.worker`` with one end of a socket
pair, waits for its ``ready`` event, and sends requests (:meth:`call`) matched to replies by id.
A reader thread notices the worker's death at once (end of file on the socket, the process
gone after ``kill -9``) and calls ``on_gone(worker_id)``; calls in flight fail with
:class:`WorkerGone`.
"""
from __future__ import annotations

import itertools
import logging
import os
import socket
import subprocess
import sys
import threading
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, Callable

from ..errors import HeadraceError

log = logging.getLogger("headrace.instance")

#: environment variables a worker never receives (secrets of the control plane)
_SECRET_ENV = ("HEADRACE_ADMIN_TOKEN", "HEADRACE_READER_TOKEN")


class WorkerGone(HeadraceError):
    code = "WORKER_GONE"


class WorkerCallError(HeadraceError):
    def __init__(self, err: dict):
        super().__init__(err.get("message", "worker error"), code=err.get("code", "WORKER_ERROR"))
        self.detail = err

    def to_dict(self) -> dict:
        return dict(self.detail)


class WorkerHandle:
    def __init__(self, wid: int, *, home: Path, tier: str, connections: str | None, master: str | None,
                 trigger_ms: int | None, on_gone: Callable[[int], None], on_event: Callable[[int, dict], None]):
        self.id = wid
        self.tier = tier
        self.on_gone = on_gone
        self.on_event = on_event
        self._ids = itertools.count(1)
        self._pending: dict[int, list] = {}
        self._lock = threading.Lock()
        self._send_lock = threading.Lock()
        self.ready = threading.Event()
        self.alive = True
        self.closing = False
        self.startup_error: str | None = None
        parent, child = socket.socketpair()
        logdir = home / "instance" / "logs"
        logdir.mkdir(parents=True, exist_ok=True)
        self.log_path = logdir / f"worker-{wid}.log"
        cmd = [sys.executable, "-m", "headrace.instance.worker", "--fd", str(child.fileno()), "--id", str(wid),
               "--tier", tier, "--home", str(home)]
        if connections:
            cmd += ["--connections", str(connections)]
        if master:
            cmd += ["--master", master]
        if trigger_ms:
            cmd += ["--trigger-ms", str(trigger_ms)]
        env = {k: v for k, v in os.environ.items() if k not in _SECRET_ENV}
        with open(self.log_path, "ab") as out:
            self.proc = subprocess.Popen(cmd, pass_fds=(child.fileno(),), stdout=out, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, env=env)
        child.close()
        self.pid = self.proc.pid
        self.conn = Connection(parent.detach())
        threading.Thread(target=self._read, daemon=True, name=f"worker-{wid}-reader").start()
        log.info("worker %d provisioned (pid %d, tier %s)", wid, self.pid, tier)

    def wait_ready(self, timeout: float = 240) -> None:
        if not self.ready.wait(timeout) or not self.alive:
            reason = self.startup_error or f"worker {self.id} did not start (see {self.log_path})"
            self.kill()
            raise WorkerGone(reason)

    def _read(self) -> None:
        while True:
            try:
                msg = self.conn.recv()
            except (EOFError, OSError):
                break
            if "event" in msg:
                if msg["event"] == "ready":
                    self.ready.set()
                elif msg["event"] == "startup_failed":
                    self.startup_error = msg.get("reason")
                else:
                    self.on_event(self.id, msg)
                continue
            with self._lock:
                slot = self._pending.get(msg.get("id"))
            if slot is not None:
                slot[1] = msg
                slot[0].set()
        self.alive = False
        self.ready.set()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        with self._lock:
            for slot in self._pending.values():
                slot[0].set()
        if not self.closing:
            log.warning("worker %d (pid %d) is gone", self.id, self.pid)
            self.on_gone(self.id)

    def call(self, op: str, timeout: float = 120, **args: Any) -> Any:
        if not self.alive:
            raise WorkerGone(f"worker {self.id} is gone")
        rid = next(self._ids)
        slot: list = [threading.Event(), None]
        with self._lock:
            self._pending[rid] = slot
        try:
            with self._send_lock:
                self.conn.send({"id": rid, "op": op, **args})
            if not slot[0].wait(timeout):
                raise HeadraceError(f"worker {self.id} did not answer {op!r} in {timeout} s", code="WORKER_TIMEOUT")
        except (OSError, EOFError) as exc:
            raise WorkerGone(f"worker {self.id} is gone") from exc
        finally:
            with self._lock:
                self._pending.pop(rid, None)
        msg = slot[1]
        if msg is None:
            raise WorkerGone(f"worker {self.id} is gone")
        if not msg["ok"]:
            raise WorkerCallError(msg["error"])
        return msg["result"]

    def shutdown(self, timeout: float = 60) -> None:
        """Deprovision: stop its processors, end the process (killed if it does not end in time)."""
        self.closing = True
        try:
            self.call("shutdown", timeout=timeout)
        except HeadraceError:
            pass
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
        self.conn.close()
        log.info("worker %d deprovisioned", self.id)

    def kill(self) -> None:
        self.closing = True
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=30)
