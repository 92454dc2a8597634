"""What every system runner shares (standard library only: runs in both environments).

A runner is started as ``python <system>_runner.py <config.json>``. It reports through an
events file (JSON lines, flushed after each line):
``{"ev": "ready", "t": ...}`` when its engine is up and the query is about to start;
``{"ev": "out", "t": ..., "rows": [...]}`` after it has written window results (``t`` = when the
write finished), or for the pass-through ``{"ev": "out", "t": ..., "n": N, "backlog": B,
"lat": [...]}`` (``lat``: arrival-to-written seconds of the rows stamped with ``arr``);
``{"ev": "end", "t": ..., "info": {...}}`` when it stops. It stops when the ``stop`` file appears.
"""
from __future__ import annotations

import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any


class Events:
    def __init__(self, path: str | Path):
        self._f = open(path, "a", buffering=1)
        self._lock = threading.Lock()

    def emit(self, ev: str, **kw: Any) -> None:
        rec = {"ev": ev, "t": kw.pop("t", None) or time.time(), **kw}
        line = json.dumps(rec, separators=(",", ":"), default=str)
        with self._lock:
            self._f.write(line + "\n")
            self._f.flush()

    def close(self) -> None:
        self._f.close()


def load_config() -> dict:
    return json.loads(Path(sys.argv[1]).read_text())


def wait_for_stop(cfg: dict, poll: float = 0.05) -> None:
    stop = Path(cfg["stop_file"])
    while not stop.exists():
        time.sleep(poll)


def stop_requested(cfg: dict) -> bool:
    return Path(cfg["stop_file"]).exists()


def hard_exit_after(seconds: float) -> None:
    """Make sure the process ends even if an engine hangs while stopping."""
    def _kill() -> None:
        time.sleep(seconds)
        os._exit(0)
    threading.Thread(target=_kill, daemon=True).start()


def passthrough_latencies(arrs: list, t: float) -> list[float]:
    return [round(t - a / 1000.0, 5) for a in arrs if a is not None]
