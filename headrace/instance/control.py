"""The control plane: catalog, placement, workers and the processor lifecycle (pure Python).

Lifecycle operations are serialized by one lock; reads (list, stats of stopped processors,
history) come from the catalog and a cache the sampler fills once per ``sample_interval``.
A worker that dies is noticed by its reader thread; its processors are restarted from their
checkpoints on workers chosen by the placement rule. A processor whose query fails on its
own goes ``FAILED`` with the reason and frees its slot.
"""
from __future__ import annotations

import collections
import datetime as _dt
import logging
import re
import shutil
import threading
import time
from pathlib import Path
from typing import Any

from .. import ejson
from ..connections import load_registry, redact
from ..errors import HeadraceError
from .catalog import Catalog, ProcessorRow
from .compat import check_resume
from .ephemeral import ProcessRunner
from .placement import Placement
from .workers import WorkerGone, WorkerHandle

log = logging.getLogger("headrace.instance")
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
HISTORY_POINTS = 600


class NotFound(HeadraceError):
    code = "PROCESSOR_NOT_FOUND"


class Conflict(HeadraceError):
    code = "CONFLICT"


def _parse(pipeline: Any, options: dict | None):
    from ..spec import parse_pipeline

    if isinstance(pipeline, dict) and "pipeline" in pipeline:
        options = {**pipeline.get("options", {}), **(options or {})}
        pipeline = pipeline["pipeline"]
    return parse_pipeline({"pipeline": pipeline, "options": options or {}}), pipeline, options or {}


class ControlPlane:
    def __init__(self, home: "str | Path", *, connections: str | None = None, tier: str = "SP10",
                 master: str | None = None, trigger_ms: int | None = None, sample_interval: float = 1.0):
        self.home = Path(home).resolve()
        self.connections = str(Path(connections).resolve()) if connections else None
        self.tier, self.master, self.trigger_ms = tier, master, trigger_ms
        self.registry = load_registry(self.connections, self.home)
        self.catalog = Catalog(self.home / "instance" / "catalog.sqlite")
        self.placement = Placement()
        self.workers: dict[int, WorkerHandle] = {}
        self.lock = threading.RLock()
        self.live: dict[str, dict] = {}          # name -> last stats from its worker
        self.points: dict[str, collections.deque] = {}
        self.batch_seconds: dict[str, float] = {}
        self._stop = threading.Event()
        self.changed = threading.Condition()     # notified after every sample and lifecycle change
        self.sample_interval = sample_interval
        self._sampler = threading.Thread(target=self._sample_loop, daemon=True, name="sampler")
        self.processes = ProcessRunner(self.home, tier=tier, connections=self.connections, master=master,
                                       validate=self._validated)

    # ------------------------------------------------------------------ boot / shutdown
    def boot(self) -> None:
        """Restart the processors the catalog says were ``STARTED``; start the sampler."""
        for row in self.catalog.list():
            if row.state == "STARTED":
                self.catalog.update(row.name, worker=None, slot=None)
        for row in self.catalog.list():
            if row.state == "STARTED":
                try:
                    self._start(row.name, "restart after serve restart")
                except HeadraceError as exc:
                    log.error("cannot restart %s: %s", row.name, exc)
        self._sampler.start()

    def shutdown(self) -> None:
        """End every worker; processors keep their catalog state (``STARTED`` ones restart at boot)."""
        self._stop.set()
        self.processes.shutdown()
        with self.lock:
            for w in list(self.workers.values()):
                w.shutdown()
            self.workers.clear()
        self.catalog.close()

    # ------------------------------------------------------------------ lifecycle
    def _row(self, name: str) -> ProcessorRow:
        row = self.catalog.get(name)
        if row is None:
            raise NotFound(f"no processor named {name!r}")
        return row

    def _validated(self, pipeline: Any, options: dict | None) -> dict:
        """``{pipeline, options}`` once parsed and checked against the registry (raises otherwise)."""
        from ..validate import check_connections

        parsed, stages, options = _parse(pipeline, options)
        check_connections(parsed, self.registry)
        return {"pipeline": stages, "options": options}

    def create(self, name: str, pipeline: Any, options: dict | None = None) -> dict:
        if not isinstance(name, str) or not NAME.match(name):
            raise HeadraceError(f"invalid processor name {name!r}: letters, digits, '_', '-', '.'; at most 64",
                                code="NAME_INVALID")
        from ..validate import check_connections

        parsed, stages, options = _parse(pipeline, options)
        check_connections(parsed, self.registry)
        with self.lock:
            try:
                row = self.catalog.create(name, stages, options, str(self.home / "instance" / "checkpoints" / name))
            except KeyError:
                raise Conflict(f"a processor named {name!r} exists", code="PROCESSOR_EXISTS") from None
        log.info("processor %s created", name)
        return row.summary()

    def start(self, name: str) -> dict:
        with self.lock:
            row = self._row(name)
            if row.state == "STARTED":
                return row.summary()
            return self._start(name, "start")

    def _worker_for(self, wid: int) -> WorkerHandle:
        w = self.workers.get(wid)
        if w is None or not w.alive:
            w = WorkerHandle(wid, home=self.home, tier=self.tier, connections=self.connections, master=self.master,
                             trigger_ms=self.trigger_ms, on_gone=self._on_gone, on_event=self._on_event)
            self.workers[wid] = w
            try:
                w.wait_ready()
            except WorkerGone:
                self.workers.pop(wid, None)
                raise
        return w

    def _start(self, name: str, action: str) -> dict:
        row = self._row(name)
        placed = self.placement.place(name)
        try:
            w = self._worker_for(placed.worker)
            w.call("start", name=name, pipeline={"pipeline": row.pipeline, "options": row.options},
                   checkpoint=row.checkpoint, timeout=300)
        except HeadraceError as exc:
            self._release(name)
            self.catalog.update(name, "fail", detail=redact(exc.to_dict()), state="FAILED", worker=None,
                                slot=None, last_error=redact(str(exc)))
            log.error("processor %s failed to start: %s", name, exc)
            raise
        self.catalog.update(name, action, detail={"worker": placed.worker, "slot": placed.slot}, state="STARTED",
                            worker=placed.worker, slot=placed.slot, last_error=None)
        log.info("processor %s started on worker %d slot %d", name, placed.worker, placed.slot)
        self._notify()
        return self._row(name).summary()

    def _release(self, name: str) -> None:
        rel = self.placement.release(name)
        if rel is not None and rel.deprovisioned:
            w = self.workers.pop(rel.worker, None)
            if w is not None:
                w.shutdown()

    def stop(self, name: str) -> dict:
        with self.lock:
            row = self._row(name)
            if row.state != "STARTED":
                return row.summary()
            stats = None
            w = self.workers.get(row.worker or -1)
            if w is not None:
                try:
                    stats = w.call("stop", name=name, timeout=120)
                except WorkerGone:
                    pass
            self._release(name)
            self.live.pop(name, None)
            self.catalog.update(name, "stop", state="STOPPED", worker=None, slot=None,
                                **({"last_stats": stats} if stats else {}))
            log.info("processor %s stopped", name)
            self._notify()
            return self._row(name).summary()

    def drop(self, name: str) -> None:
        with self.lock:
            self.stop(name)
            row = self._row(name)
            shutil.rmtree(row.checkpoint, ignore_errors=True)
            self.catalog.delete(name)
            self.points.pop(name, None)
            log.info("processor %s dropped", name)

    def modify(self, name: str, pipeline: Any, resume: bool = True, options: dict | None = None) -> dict:
        with self.lock:
            row = self._row(name)
            if row.state == "STARTED":
                raise Conflict(f"processor {name!r} is running: stop it before modify", code="PROCESSOR_RUNNING")
            from ..validate import check_connections

            new, stages, opts = _parse(pipeline, row.options if options is None else options)
            check_connections(new, self.registry)
            if resume:
                old, _, _ = _parse(row.pipeline, row.options)
                check_resume(old, new)
            else:
                shutil.rmtree(row.checkpoint, ignore_errors=True)
            self.catalog.update(name, "modify", detail={"resumeFromCheckpoint": resume}, pipeline=stages,
                                options=opts)
            log.info("processor %s modified (resumeFromCheckpoint=%s)", name, resume)
            return self._row(name).summary()

    # ------------------------------------------------------------------ reads
    def list(self) -> list[dict]:
        out = []
        for row in self.catalog.list():
            s = self.live.get(row.name) if row.state == "STARTED" else row.last_stats
            d = row.summary()
            for k in ("inputMessageCount", "outputMessageCount", "dlqMessageCount", "watermark"):
                d[k] = (s or {}).get(k)
            d["watermarkLagSeconds"] = _lag((s or {}).get("watermark"))
            d["throughput"] = self._throughput(row.name)
            out.append(d)
        return out

    def get(self, name: str) -> dict:
        row = self._row(name)
        return {**row.summary(), "pipeline": row.pipeline, "options": row.options,
                "history": self.catalog.history(name)}

    def stats(self, name: str, verbose: bool = False) -> dict:
        row = self._row(name)
        s: dict = {}
        w = self.workers.get(row.worker or -1) if row.state == "STARTED" else None
        if w is not None and w.ready.is_set():
            try:
                s = w.call("stats", name=name, verbose=verbose, timeout=30)
            except HeadraceError:
                s = dict(self.live.get(name) or {})
        else:
            s = dict(row.last_stats or {})
        s.update({"name": name, "state": row.state, "status": row.state, "worker": row.worker, "slot": row.slot,
                  "lastError": row.last_error, "tier": self.tier, "checkpoint": "checkpoints/" + name})
        s["watermarkLagSeconds"] = _lag(s.get("watermark"))
        if verbose:
            s["history"] = self.catalog.history(name)
        return s

    def sample(self, name: str, limit: int = 20) -> dict:
        row = self._row(name)
        w = self.workers.get(row.worker or -1) if row.state == "STARTED" else None
        if w is None or not w.ready.is_set():
            return {"outputs": [], "dlq": [], "state": row.state}
        try:
            return {**w.call("sample", name=name, limit=limit, timeout=30), "state": row.state}
        except HeadraceError as exc:
            if exc.code not in ("NOT_RUNNING", "WORKER_GONE"):
                raise
            return {"outputs": [], "dlq": [], "state": row.state}

    def workers_list(self) -> list[dict]:
        snap = self.placement.snapshot()
        out = [{"id": wid, "pid": w.pid, "tier": w.tier, "alive": w.alive, "role": "processors",
                "slots": snap.get(wid, [None] * self.placement.slots)}
               for wid, w in sorted(self.workers.items())]
        info = self.processes.info()
        return out + ([{**info, "slots": []}] if info else [])

    def list_connections(self) -> list[dict]:
        return self.registry.list()

    def timeline(self, name: str) -> list[dict]:
        self._row(name)
        return list(self.points.get(name, ()))

    def wait(self, name: str, at_least: dict[str, int], state: str | None = None, timeout: float = 60) -> dict:
        """Block until the processor's live counters reach ``at_least`` (e.g. ``{"inputMessageCount":
        80}``) and its state is ``state`` (if given); returns its stats. Raises ``WAIT_TIMEOUT``."""
        deadline = time.monotonic() + timeout

        def ok() -> bool:
            row = self._row(name)
            if state is not None and row.state != state:
                return False
            s = self.live.get(name) if row.state == "STARTED" else row.last_stats
            return all((s or {}).get(k, -1) is not None and (s or {}).get(k, -1) >= v for k, v in at_least.items())

        with self.changed:
            while not ok():
                left = deadline - time.monotonic()
                if left <= 0:
                    raise HeadraceError(f"processor {name!r} did not reach {at_least} (state {state}) in {timeout} s",
                                        code="WAIT_TIMEOUT")
                self.changed.wait(min(left, 1.0))
        return self.stats(name)

    def _notify(self) -> None:
        with self.changed:
            self.changed.notify_all()

    def _throughput(self, name: str) -> float | None:
        pts = self.points.get(name)
        if not pts or len(pts) < 2:
            return None
        a, b = pts[max(0, len(pts) - 6)], pts[-1]
        dt = b["t"] - a["t"]
        return round((b["input"] - a["input"]) / dt, 2) if dt > 0 else None

    # ------------------------------------------------------------------ faults and sampling
    def _on_gone(self, wid: int) -> None:
        threading.Thread(target=self._recover, args=(wid,), daemon=True, name=f"recover-{wid}").start()

    def _recover(self, wid: int) -> None:
        with self.lock:
            if self.workers.get(wid) is not None and self.workers[wid].alive:
                return
            self.workers.pop(wid, None)
            names = self.placement.drop_worker(wid)
            log.warning("worker %d gone: restarting %s from their checkpoints", wid, names)
            for name in names:
                if self.catalog.get(name) is None:
                    continue
                try:
                    self._start(name, "recover")
                except HeadraceError as exc:
                    log.error("cannot restart %s after worker %d died: %s", name, wid, exc)

    def _on_event(self, wid: int, msg: dict) -> None:
        if msg.get("event") == "failed":
            threading.Thread(target=self._failed, args=(msg["name"], msg.get("reason", "")), daemon=True).start()

    def _failed(self, name: str, reason: str) -> None:
        reason = redact(reason)
        with self.lock:
            row = self.catalog.get(name)
            if row is None or row.state != "STARTED":
                return
            self._release(name)
            self.live.pop(name, None)
            self.catalog.update(name, "fail", detail={"reason": reason}, state="FAILED", worker=None, slot=None,
                                last_error=reason)
            log.error("processor %s FAILED: %s", name, reason)
            self._notify()

    def _sample_loop(self) -> None:
        while not self._stop.wait(self.sample_interval):
            for wid, w in list(self.workers.items()):
                if not w.alive or not w.ready.is_set():
                    continue
                try:
                    all_stats = w.call("all_stats", timeout=10)
                except HeadraceError:
                    continue
                now = time.time()
                for name, s in all_stats.items():
                    prev = self.live.get(name, {})
                    if s.get("batches") != prev.get("batches"):
                        lat = (s.get("latency") or {}).get("p50")
                        if lat is not None:
                            self.batch_seconds[name] = lat
                    self.live[name] = s
                    pts = self.points.setdefault(name, collections.deque(maxlen=HISTORY_POINTS))
                    pts.append({"t": round(now, 3), "input": s.get("inputMessageCount", 0),
                                "output": s.get("outputMessageCount", 0), "dlq": s.get("dlqMessageCount", 0),
                                "watermarkLagSeconds": _lag(s.get("watermark"))})
            self._notify()


def _lag(watermark: Any) -> float | None:
    if not isinstance(watermark, str) or watermark.startswith("+"):
        return None
    try:
        w = ejson.parse_iso(watermark)
    except (ValueError, ejson.EJSONError):
        return None
    return round((_dt.datetime.now(_dt.timezone.utc) - w).total_seconds(), 3)
