"""Watching a runner subprocess (``benchmarks/run.py``): the peak memory (PSS) of its whole process tree,
sampled from /proc in a thread (``MemSampler``), and its events file, read as it grows
(``EventTail``: engine up, results written, end).
"""
from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import Any


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


def _pss_bytes(pid: int) -> int:
    """Proportional set size: resident pages, each shared page divided among its sharers."""
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            if line.startswith("Pss:"):
                return int(line.split()[1]) * 1024
    return 0


def tree_memory_bytes(pid: int) -> tuple[int, int]:
    """(RSS, PSS) summed over ``pid`` and its descendants. The RSS sum counts a page shared by
    several processes once per process: the Python workers a daemon forks, and a JVM's child in
    the instant between fork and exec (its whole heap again); the PSS sum counts it once."""
    kids = _children_map()
    page = os.sysconf("SC_PAGE_SIZE")
    rss = pss = 0
    stack, seen = [pid], set()
    while stack:
        p = stack.pop()
        if p in seen:
            continue
        seen.add(p)
        try:
            with open(f"/proc/{p}/statm") as f:
                rss += int(f.read().split()[1]) * page
            pss += _pss_bytes(p)
        except OSError:
            pass
        stack.extend(kids.get(p, []))
    return rss, pss


def tree_rss_bytes(pid: int) -> int:
    return tree_memory_bytes(pid)[0]


class MemSampler(threading.Thread):
    """Peak memory of a process tree, sampled every ``every`` s: ``peak`` (PSS sum, the figure
    reported) and ``peak_rss`` (RSS sum, which counts shared pages once per sharer)."""

    def __init__(self, pid: int, every: float = 0.2):
        super().__init__(daemon=True)
        self.pid, self.every = pid, every
        self.peak = 0
        self.peak_rss = 0
        self.samples: list[tuple[float, int]] = []
        self._stop = threading.Event()

    def run(self) -> None:
        while not self._stop.is_set():
            rss, pss = tree_memory_bytes(self.pid)
            self.peak = max(self.peak, pss)
            self.peak_rss = max(self.peak_rss, rss)
            self.samples.append((time.time(), pss))
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

