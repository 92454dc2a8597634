"""Spark's Python data source planner workers, stopped once no query of this process is starting.

Spark plans a Python data source (``spark.readStream.format(...)``, :mod:`.runtime.sources`) in
Python processes of its own, kept for the life of the session: per step (looking the source up,
creating it, planning its read) a daemon (``pyspark.daemon pyspark.sql.worker.*``) and an idle
worker forked from it. A running query no longer uses them (the streaming source runner plans
each micro-batch), so once every processor of this process that is starting has completed its
first micro-batch (or stopped), the idle workers are stopped (SIGTERM; about 85 MB, PROFILE.md).
The next query that needs one finds it dead, has its daemon (still running) reap it and forks a
new one. The daemons themselves stay: Spark cannot restart a planner daemon that is gone (its
next request fails with ``IOException: Stream closed``).
``HEADRACE_KEEP_PLANNERS=1`` keeps the workers.
"""
from __future__ import annotations

import os
import signal
import threading
from pathlib import Path

_MARK = "pyspark.sql.worker."
_lock = threading.Lock()
_starting = 0


def starting() -> None:
    """A processor of this process is about to start its query."""
    global _starting
    with _lock:
        _starting += 1


def started() -> int:
    """A processor counted by :func:`starting` completed its first micro-batch or stopped; when
    none is starting any more, stop the idle planner workers. Returns how many were signalled."""
    global _starting
    with _lock:
        _starting = max(0, _starting - 1)
        if _starting or os.environ.get("HEADRACE_KEEP_PLANNERS") == "1":
            return 0
        return stop_planners()


def planner_pids(root: int | None = None, workers: bool = True) -> list[int]:
    """The planner workers (``workers``; else their daemons) among the descendants of ``root``
    (this process); none where ``/proc`` cannot be read."""
    root = os.getpid() if root is None else root
    parent: dict[int, int] = {}
    planners = []
    try:
        entries = [e for e in os.listdir("/proc") if e.isdigit()]
    except OSError:
        return []
    for e in entries:
        try:
            stat = Path(f"/proc/{e}/stat").read_text()
            parent[int(e)] = int(stat.rsplit(")", 1)[1].split()[1])
            cmd = Path(f"/proc/{e}/cmdline").read_bytes().split(b"\0")
        except (OSError, ValueError, IndexError):
            continue
        if b"pyspark.daemon" in cmd and any(a.startswith(_MARK.encode()) for a in cmd):
            planners.append(int(e))

    def below_root(pid: int) -> bool:
        seen = set()
        while pid in parent and pid not in seen:
            seen.add(pid)
            pid = parent[pid]
            if pid == root:
                return True
        return False
    # a daemon's forked workers share its command line
    return [p for p in planners if below_root(p) and (parent.get(p) in planners) == workers]


def stop_planners() -> int:
    """SIGTERM the planner workers below this process; how many were signalled."""
    n = 0
    for pid in planner_pids():
        try:
            os.kill(pid, signal.SIGTERM)
            n += 1
        except OSError:
            pass
    return n
