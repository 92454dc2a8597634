"""Ephemeral runs through the instance (``sp.process``): one warm worker kept for them (pure Python).

``headrace process`` starts a JVM and a Spark session for every run (about 5 s before the first
batch, 15-17 s for three documents on a 2-core machine). The instance keeps one more worker,
number 0, whose session stays warm between runs, so a run costs its micro-batch only (about
0.8 s from the CLI's start to its exit for a few documents on 2 cores). The worker is provisioned
by the first request (or at boot with ``serve --warm``, which also runs :data:`WARM_PIPELINE` on
it), is not one of the placement's workers (it holds no slot and runs no named
processor), and is provisioned again after it dies. Runs are validated before they reach the
worker (400 for an invalid pipeline or unknown connection) and run one at a time.

A run ends when a finite source is exhausted, after ``limit`` outputs (default
:data:`DEFAULT_LIMIT`) or after ``duration`` seconds (default :data:`DEFAULT_DURATION`, at most
:data:`MAX_DURATION`): a source that never ends (a stream, Kafka) answers with what came within
the duration.
"""
from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Any, Callable

from ..errors import ConfigError, HeadraceError
from .workers import WorkerGone, WorkerHandle

log = logging.getLogger("headrace.instance")

WORKER_ID = 0
DEFAULT_LIMIT = 1000
MAX_LIMIT = 100_000
DEFAULT_DURATION = 60.0
MAX_DURATION = 600.0
#: time for a worker to start, on top of a run's duration, before a call gives up
START_SECONDS = 300
#: what ``serve --warm`` runs on the process worker at boot (not counted as runs): inline
#: documents through the common stateless stages
WARM_PIPELINE = [
    {"$source": {"documents": [{"i": 1, "s": "a", "v": 2.5}, {"i": 2, "s": "b", "v": None}]}},
    {"$match": {"i": {"$gte": 1}}},
    {"$addFields": {"t": {"$add": ["$i", 1]}, "u": {"$concat": ["$s", "-"]}}},
    {"$project": {"_id": 0, "i": 1, "t": 1, "u": 1, "w": {"$ifNull": ["$v", 0]}}}]
WARM_RUNS = 3


class ProcessRunner:
    """Runs ephemeral pipelines on the instance's warm process worker."""

    def __init__(self, home: Path, *, tier: str, connections: str | None, master: str | None,
                 validate: Callable[[Any, dict | None], dict]):
        self.home, self.tier, self.connections, self.master = home, tier, connections, master
        self._validate = validate
        self._worker: WorkerHandle | None = None
        self._lock = threading.Lock()      # provisioning
        self.runs = 0
        self.warmed = False                # serve --warm's runs done (shown by info())

    def warm(self) -> None:
        """Provision the worker now (``serve --warm``) and run :data:`WARM_PIPELINE` on it
        :data:`WARM_RUNS` times, so that the first user run finds the JVM's planning and
        compiling paths warm (about 1 s instead of 6-7 s on 2 cores); errors are logged, the
        next run retries."""
        try:
            spec = self._validate(WARM_PIPELINE, None)
            w = self._handle()
            for _ in range(WARM_RUNS):
                w.call("process", pipeline=spec, name="warm-up", limit=10, duration=60.0,
                       timeout=60.0 + START_SECONDS)
            self.warmed = True
        except HeadraceError as exc:
            log.error("process worker did not start: %s", exc)

    def _handle(self) -> WorkerHandle:
        with self._lock:
            w = self._worker
            if w is None or not w.alive or w.proc.poll() is not None:   # poll: a death not yet noticed
                w = WorkerHandle(WORKER_ID, home=self.home, tier=self.tier, connections=self.connections,
                                 master=self.master, trigger_ms=None, on_gone=self._gone,
                                 on_event=lambda _w, _m: None)
                self._worker = w
                try:
                    w.wait_ready()
                except WorkerGone:
                    self._worker = None
                    raise
            return w

    def _gone(self, _wid: int) -> None:
        log.warning("process worker gone: the next run provisions another")
        with self._lock:
            self.warmed = False            # its successor starts cold
            if self._worker is not None and not self._worker.alive:
                self._worker = None

    def run(self, pipeline: Any, options: dict | None = None, *, limit: int | None = None,
            duration: float | None = None, name: str = "process") -> dict:
        """Validate, then run on the warm worker: ``{outputs, dlq, stats, truncated, seconds}``
        (documents as relaxed Extended JSON)."""
        limit = DEFAULT_LIMIT if limit is None else limit
        duration = DEFAULT_DURATION if duration is None else duration
        if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= MAX_LIMIT:
            raise ConfigError(f"process: 'limit' must be an integer in 1..{MAX_LIMIT}, found {limit!r}",
                              code="PROCESS_LIMIT_INVALID")
        if not isinstance(duration, (int, float)) or isinstance(duration, bool) or not 0 < duration <= MAX_DURATION:
            raise ConfigError(f"process: 'duration' must be seconds in (0, {MAX_DURATION:g}], found {duration!r}",
                              code="PROCESS_DURATION_INVALID")
        spec = self._validate(pipeline, options)   # refused here, before anything runs
        w = self._handle()
        try:
            res = w.call("process", pipeline=spec, name=name, limit=limit, duration=float(duration),
                         timeout=duration + START_SECONDS)
        except WorkerGone:
            raise WorkerGone("the process worker died during the run; the next run starts another") from None
        self.runs += 1
        return res

    def info(self) -> dict | None:
        w = self._worker
        if w is None:
            return None
        return {"id": w.id, "pid": w.pid, "tier": w.tier, "alive": w.alive, "role": "process", "runs": self.runs,
                "warm": self.warmed}

    def shutdown(self) -> None:
        with self._lock:
            w, self._worker = self._worker, None
        if w is not None:
            w.shutdown()
