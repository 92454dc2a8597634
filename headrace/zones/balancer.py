"""The balancer: moves documents that violate the zone ranges to their zone.

After the ranges change, a stored document whose shard key falls in another zone's range is a
violation (documents in no range may stay anywhere). The balancer finds them (reading every
zone that is up), then moves them in batches per (from, to) zone pair: it copies a batch into
the target zone (``$merge`` on ``_id`` with ``keepExisting``, so a repeated copy is harmless),
then deletes it from the source. Reads stay correct meanwhile: a copy exists before the
original is deleted, and broadcast reads resolve same-``_id`` copies (see
:mod:`headrace.zones.collection`).

Throttle: at most ``docsPerSecond`` documents moved per second on average. Schedule: with a
window (``"01:00-05:00"``, UTC, may wrap midnight) batches start only inside it; outside, the
balancer waits for the window to open. A zone that fails is marked down on the router and its
moves are skipped (counted) this run. ``start()`` runs in a daemon thread; ``stop()`` ends it
after the current batch; ``run()`` runs in the calling thread.
"""
from __future__ import annotations

import datetime as _dt
import logging
import threading
import time
from typing import Any, Callable, Protocol

from .. import ejson
from ..store.base import MergeSpec
from .config import Window, parse_window
from .router import ZoneRouter, is_zone_failure


class Zoned(Protocol):
    """What the balancer needs of a zoned collection (:class:`headrace.zones.collection.ZonedCollection`)."""

    router: ZoneRouter
    db: str
    name: str

    def copies(self, *, consistent: bool = ..., zones: Any = ...) -> Any: ...

log = logging.getLogger("headrace.zones")
_UNSET: Any = object()


def _utcnow() -> _dt.datetime:
    return _dt.datetime.now(ejson.UTC)


class Balancer:
    def __init__(self, coll: Zoned, *, docs_per_second: float | None = _UNSET,
                 window: "Window | str | None" = _UNSET, batch_size: int | None = None,
                 now: Callable[[], _dt.datetime] = _utcnow,
                 progress: Callable[[dict], None] | None = None):
        spec = coll.router.cfg.balancer
        self.coll = coll
        self.router = coll.router
        self.rate = spec.docs_per_second if docs_per_second is _UNSET else docs_per_second
        w = spec.window if window is _UNSET else window
        self.window = parse_window(w) if isinstance(w, str) else w
        self.batch_size = max(1, int(batch_size or spec.batch_size))
        if self.rate:
            self.batch_size = max(1, min(self.batch_size, int(self.rate)))
        self.now = now
        self.progress = progress
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.report: dict = {"state": "idle", "scanned": 0, "violations": 0, "moved": 0, "skipped": 0,
                             "errors": [], "waitedForWindowS": 0.0}

    # -- control ------------------------------------------------------------------------------
    def start(self) -> "Balancer":
        self._thread = threading.Thread(target=self._run_logged, name=f"headrace-balancer-{self.coll.name}", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()

    def _run_logged(self) -> None:
        try:
            self.run()
        except Exception as exc:  # noqa: BLE001 - a background thread reports, it cannot raise
            self.report.update(state="failed", error=f"{type(exc).__name__}: {exc}")
            log.exception("balancer for %s.%s failed", self.coll.db, self.coll.name)

    def join(self, timeout: float | None = None) -> dict:
        if self._thread is not None:
            self._thread.join(timeout)
        return self.report

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    # -- work ---------------------------------------------------------------------------------
    def plan(self) -> list[tuple[str, str, dict]]:
        """Every violation as ``(from zone, to zone, document)``, reading the zones that are up."""
        moves = []
        scanned = 0
        for z in self.router.order:
            if not self.router.is_up(z):
                continue
            try:
                copies = self.coll.copies(consistent=False, zones=[z])
            except Exception as exc:  # ZoneReadError: the zone is marked down already
                self.report["errors"].append(f"{z}: {exc}")
                continue
            scanned += len(copies)
            for c in copies:
                t = self.router.range_zone(c.doc)
                if t is not None and t != z:
                    moves.append((z, t, c.doc))
        self.report["scanned"] = scanned
        self.report["violations"] = len(moves)
        return moves

    def _wait_for_window(self) -> bool:
        """Block until inside the window (True) or stopped (False)."""
        if self.window is None:
            return True
        waited = False
        while not self._stop.is_set():
            n = self.now()
            wait = self.window.seconds_until_open(n.hour * 60 + n.minute, n.second + n.microsecond / 1e6)
            if wait <= 0:
                return True
            if not waited:
                log.info("balancer for %s.%s: waiting %.0fs for the window %s UTC", self.coll.db, self.coll.name,
                         wait, self.window.text)
                self.report["state"] = "waiting for window"
                self._emit()
                waited = True
            step = min(wait, 1.0)
            self._stop.wait(step)
            self.report["waitedForWindowS"] += step
        return False

    def _emit(self) -> None:
        if self.progress:
            self.progress(dict(self.report))

    def run(self) -> dict:
        """Find and move every violation (honouring throttle and window). Returns the report."""
        r = self.report
        r.update(state="planning", startedAt=ejson.format_date(_utcnow()))
        moves = self.plan()
        pairs: dict[tuple[str, str], list[dict]] = {}
        for a, b, d in moves:
            pairs.setdefault((a, b), []).append(d)
        log.info("balancer for %s.%s: %d document(s) violate the zone ranges", self.coll.db, self.coll.name, len(moves))
        r["state"] = "moving"
        self._emit()
        t0 = time.monotonic()
        budget_moved = 0
        for (src, dst), docs in pairs.items():
            for i in range(0, len(docs), self.batch_size):
                chunk = docs[i:i + self.batch_size]
                if self._stop.is_set():
                    break
                before = time.monotonic()
                if not self._wait_for_window():
                    break
                if time.monotonic() - before > 0.5:   # waited for the window: the throttle starts over
                    t0, budget_moved = time.monotonic(), 0
                r["state"] = "moving"
                if not (self.router.is_up(src) and self.router.is_up(dst)):
                    r["skipped"] += len(chunk)
                    continue
                if self.rate:
                    ahead = (budget_moved + len(chunk)) / self.rate - (time.monotonic() - t0)
                    if ahead > 0 and self._stop.wait(ahead):
                        break
                if self._move(src, dst, chunk):
                    r["moved"] += len(chunk)
                    budget_moved += len(chunk)
                else:
                    r["skipped"] += len(chunk)
                self._emit()
        r["state"] = "stopped" if self._stop.is_set() else "done"
        r["finishedAt"] = ejson.format_date(_utcnow())
        self._emit()
        log.info("balancer for %s.%s: %s; moved %d, skipped %d", self.coll.db, self.coll.name, r["state"],
                 r["moved"], r["skipped"])
        return r

    def _move(self, src: str, dst: str, docs: list[dict]) -> bool:
        """Copy to ``dst``, then delete from ``src``. False (zone marked down) on a zone failure."""
        b = self.router.backends
        step = dst
        try:
            b[dst].collection(self.coll.db, self.coll.name).merge_many(
                docs, MergeSpec(on=("_id",), when_matched="keepExisting"))
            step = src
            b[src].collection(self.coll.db, self.coll.name).delete_ids([d["_id"] for d in docs])
            return True
        except Exception as exc:
            if not is_zone_failure(exc):
                raise
            self.router.mark_down(step, exc)
            self.report["errors"].append(f"{step}: {type(exc).__name__}: {exc}")
            return False
