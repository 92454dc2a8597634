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
import time
from pathlib import Path

_MARK = b"pyspark.sql.worker."
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


def planner_pids() -> list[int]:
    """The planner workers among this process's descendants: ``pyspark.daemon
    pyspark.sql.worker.*`` processes whose parent is such a daemon (a daemon's forked workers
    share its command line). None where ``/proc`` cannot be read."""
    parent: dict[int, int] = {}
    planners: set[int] = set()
    try:
        entries = [int(e) for e in os.listdir("/proc") if e.isdigit()]
    except OSError:
        return []
    for pid in entries:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
            parent[pid] = int(stat.rsplit(")", 1)[1].split()[1])
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except (OSError, ValueError, IndexError):
            continue
        if b"pyspark.daemon" in cmd and any(a.startswith(_MARK) for a in cmd):
            planners.add(pid)
    children: dict[int, list[int]] = {}
    for pid, ppid in parent.items():
        children.setdefault(ppid, []).append(pid)
    below, todo = set(), [os.getpid()]
    while todo:
        for kid in children.get(todo.pop(), ()):
            if kid not in below:
                below.add(kid)
                todo.append(kid)
    return sorted(p for p in planners & below if parent[p] in planners)


def stop_planners(wait_s: float = 2.0) -> int:
    """SIGTERM the planner workers below this process and wait (at most ``wait_s``) until they
    are gone; how many were signalled.

    The wait closes a race: Spark hands a query the next idle worker whose process is alive, so
    a worker signalled but not yet exited (a busy machine may not schedule it for a while) would
    be handed out and crash the next query's planning (``Python worker exited unexpectedly``).
    The daemons ignore ``SIGCHLD``, so an exited worker leaves no zombie behind."""
    gone: list[int] = []
    for pid in planner_pids():
        try:
            os.kill(pid, signal.SIGTERM)
            gone.append(pid)
        except OSError:
            pass
    n, deadline = len(gone), time.monotonic() + wait_s
    while gone and time.monotonic() < deadline:
        gone = [p for p in gone if os.path.exists(f"/proc/{p}")]
        if gone:
            time.sleep(0.005)
    return n
