"""The :class:`ZoneRouter` of one ``zoned`` connection: routing by shard key and zone ranges,
zones' up/down state and probing, batch writes with failover (described in
:mod:`headrace.zones.router`), and statistics.
"""
from __future__ import annotations

import bisect
import datetime as _dt
import logging
import threading
import time
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from typing import Callable, Sequence

from .. import ejson
from ..errors import ConfigError
from ..store.base import MergeSpec, WriteResult
from .backend import ZoneBackend, _Worker
from .config import RangeSpec, ZonedConfig
from .health import ZoneState, ZonesDownError, ZoneWriteTimeout, is_zone_failure
from .order import ShardKeyError, has_path, key_of, set_path, shard_key

log = logging.getLogger("headrace.zones")


def _now_iso() -> str:
    return ejson.format_date(_dt.datetime.now(ejson.UTC))


@dataclass
class _Item:
    index: int
    doc: dict
    zone: str
    own_id: bool
    tried: set = field(default_factory=set)


class ZoneRouter:
    """The zones of one connection: routing, failover writes, probing, stats."""

    def __init__(self, cfg: ZonedConfig, clock: Callable[[], float] = time.monotonic):
        self.cfg = cfg
        self.name = cfg.name
        self.clock = clock
        self.order = cfg.zone_names
        self.backends = {z.name: ZoneBackend(z) for z in cfg.zones}
        self.state = {z.name: ZoneState(z.name) for z in cfg.zones}
        self._workers: dict[str, _Worker] = {}
        self._lock = threading.RLock()
        self.failovers = 0
        self.docs_kept = 0
        self._set_ranges(cfg.ranges)

    # -- routing ------------------------------------------------------------------------------
    def _set_ranges(self, ranges: tuple[RangeSpec, ...]) -> None:
        rs = sorted(ranges, key=lambda r: r.min_key)
        self._ranges = rs
        self._mins = [r.min_key for r in rs]
        self._maxs = [r.max_key for r in rs]

    def set_ranges(self, ranges: list[dict]) -> None:
        """Replace the zone ranges (validated like the YAML; ``ConfigError`` on bad ranges)."""
        cfg = self.cfg.with_ranges(ranges)
        with self._lock:
            self.cfg = cfg
            self._set_ranges(cfg.ranges)
        log.info("zoned connection %r: zone ranges changed (%d range(s)); run the balancer to move documents",
                 self.name, len(cfg.ranges))

    def zone_for_key(self, k: tuple) -> str | None:
        """The zone whose range holds this comparable shard key (:func:`~.order.shard_key`), or None."""
        mins, maxs, ranges = self._mins, self._maxs, self._ranges
        i = bisect.bisect_right(mins, k) - 1
        if i >= 0 and k < maxs[i]:
            return ranges[i].zone
        return None

    def zone_for_values(self, values: tuple) -> str | None:
        """The zone whose range holds these shard-key values, or None."""
        return self.zone_for_key(key_of(values))

    def range_zone(self, doc: dict) -> str | None:
        """The zone a stored document belongs in by the ranges; None when no range holds it."""
        try:
            return self.zone_for_key(shard_key(doc, self.cfg.shard_key)[1])
        except ShardKeyError:
            return None

    def place(self, doc: dict) -> tuple[dict, str]:
        """The document to write (zone field set per policy) and its zone. Raises :class:`ShardKeyError`."""
        w = self.cfg.writer
        zf = self.cfg.zone_field
        if w.home_zone is not None and (w.set_zone_field == "always"
                                        or (w.set_zone_field == "ifMissing" and not has_path(doc, zf))):
            doc = set_path(doc, zf, self.cfg.zone(w.home_zone).value)
        return doc, self.zone_for_key(shard_key(doc, self.cfg.shard_key)[1]) or self.cfg.default_zone

    # -- state --------------------------------------------------------------------------------
    def is_up(self, zone: str) -> bool:
        return self.state[zone].up

    def _worker(self, zone: str) -> _Worker:
        with self._lock:
            w = self._workers.get(zone)
            if w is None:
                w = self._workers[zone] = _Worker(zone)
            return w

    def _abandon_worker(self, zone: str, w: _Worker) -> None:
        with self._lock:
            if self._workers.get(zone) is w:
                del self._workers[zone]
        w.retire()

    def mark_down(self, zone: str, exc: BaseException | str) -> None:
        reason = exc if isinstance(exc, str) else f"{type(exc).__name__}: {str(exc).strip()}"
        with self._lock:
            s = self.state[zone]
            s.last_error, s.last_error_at = reason, _now_iso()
            s.next_probe = self.clock() + self.cfg.writer.probe_interval_s
            was_up, s.up = s.up, False
            if was_up:
                s.down_since, s.down_since_iso = self.clock(), s.last_error_at
        self.backends[zone].reset()
        if was_up:
            log.warning("zoned connection %r: zone %r is down: %s", self.name, zone, reason)

    def mark_up(self, zone: str) -> None:
        with self._lock:
            s = self.state[zone]
            was_down, s.up = not s.up, True
            since = s.down_since
            s.down_since = s.down_since_iso = None
        if was_down:
            self.backends[zone].reset()
            home = " (the home zone: writes return home)" if zone == self.cfg.writer.home_zone else ""
            log.info("zoned connection %r: zone %r answers again and is up after %.1fs%s",
                     self.name, zone, self.clock() - (since or self.clock()), home)

    def probe(self, zones: Sequence[str] | None = None, *, only_due: bool = False, timeout_s: float | None = None) -> dict[str, bool]:
        """Ping zones (default: every down zone) in parallel; update up/down. Returns zone -> answered."""
        now = self.clock()
        timeout = timeout_s if timeout_s is not None else max(self.cfg.writer.write_timeout_s, 0.5)
        with self._lock:
            if zones is None:
                zones = [z for z in self.order if not self.state[z].up]
            if only_due:
                zones = [z for z in zones if self.state[z].next_probe <= now]
            zones = [z for z in zones if not self.state[z].probing]
            for z in zones:
                self.state[z].probing = True
                self.state[z].probes += 1
        if not zones:
            return {}
        results: dict[str, BaseException | None] = {}

        def ping(z: str) -> None:
            try:
                self.backends[z].ping(timeout)
                results[z] = None
            except BaseException as exc:  # noqa: BLE001
                results[z] = exc

        threads = {z: threading.Thread(target=ping, args=(z,), daemon=True, name=f"headrace-probe-{z}") for z in zones}
        for t in threads.values():
            t.start()
        deadline = time.monotonic() + timeout
        out: dict[str, bool] = {}
        for z, t in threads.items():
            t.join(max(0.0, deadline - time.monotonic()))
            err = results.get(z, ZoneWriteTimeout(f"no answer to a probe within {timeout * 1000:.0f} ms"))
            with self._lock:
                self.state[z].probing = False
            if err is None:
                self.mark_up(z)
                out[z] = True
            else:
                if self.state[z].up:
                    self.mark_down(z, err)
                else:
                    with self._lock:
                        s = self.state[z]
                        s.last_error = f"{type(err).__name__}: {str(err).strip()}"
                        s.last_error_at = _now_iso()
                        s.next_probe = self.clock() + self.cfg.writer.probe_interval_s
                    log.debug("zoned connection %r: zone %r still down: %s", self.name, z, err)
                out[z] = False
        return out

    def check_reachable(self) -> None:
        """Probe every zone; :class:`ConfigError` ``ZONES_UNREACHABLE`` names each zone that does not answer."""
        res = self.probe(self.order, timeout_s=max(self.cfg.writer.write_timeout_s, 2.0))
        bad = [z for z in self.order if not res.get(z, True)]
        if bad:
            parts = [f"{self.cfg.zone(z).field}: cannot reach {self.cfg.zone(z).describe()}: {self.state[z].last_error}"
                     for z in bad]
            raise ConfigError(f"connection {self.name!r}: " + "; ".join(parts), code="ZONES_UNREACHABLE")

    def _next_zone(self, after: str, tried: set) -> str | None:
        i = self.order.index(after)
        n = len(self.order)
        for k in range(1, n + 1):
            z = self.order[(i + k) % n]
            if z not in tried and self.state[z].up:
                return z
        return None

    # -- writes -------------------------------------------------------------------------------
    def write(self, db: str, coll: str, docs: Sequence[dict], spec: MergeSpec) -> WriteResult:
        """Write a batch with failover (see :mod:`headrace.zones.router`). Per-document errors in the result."""
        res = WriteResult()
        if any(not s.up for s in self.state.values()):
            self.probe(only_due=True)
        items: list[_Item] = []
        for i, doc in enumerate(docs):
            try:
                d, zone = self.place(doc)
            except ShardKeyError as exc:
                res.errors.append((i, f"zoned connection {self.name!r}: {exc}"))
                continue
            items.append(_Item(i, d, zone, "_id" in doc))
        pending = items
        kept: list[_Item] = []
        forced_probe = False
        timeout = self.cfg.writer.write_timeout_s
        while pending:
            groups: dict[str, list[_Item]] = {}
            moves: dict[tuple[str, str], int] = {}
            for it in pending:
                z = it.zone
                if z in it.tried or not self.state[z].up:
                    nz = self._next_zone(z, it.tried)
                    if nz is None and not forced_probe:
                        forced_probe = True
                        self.probe()
                        nz = self._next_zone(z, it.tried)
                    if nz is None:
                        kept.append(it)
                        continue
                    it.doc = set_path(it.doc, self.cfg.zone_field, self.cfg.zone(nz).value)
                    it.zone = nz
                    moves[(z, nz)] = moves.get((z, nz), 0) + 1
                groups.setdefault(it.zone, []).append(it)
            for (a, b), n in moves.items():
                with self._lock:
                    self.state[a].failovers_out += n
                    self.state[b].failovers_in += n
                    self.failovers += n
                log.warning("zoned connection %r: failing over %d document(s) from zone %r to zone %r (%s = %s)",
                            self.name, n, a, b, self.cfg.zone_field, ejson.dumps(self.cfg.zone(b).value))
            pending = []
            submitted = {}
            for z, its in groups.items():
                batch = [it.doc if it.own_id else {"_id": ejson.ObjectId(), **it.doc} for it in its]
                w = self._worker(z)
                submitted[z] = (w, w.submit(self._task(z, db, coll, batch, spec)))
            deadline = time.monotonic() + timeout
            for z, (w, fut) in submitted.items():
                its = groups[z]
                try:
                    out = fut.result(timeout=max(0.0, deadline - time.monotonic()))
                except FutureTimeout:
                    started = not fut.cancel()
                    if started:
                        self._abandon_worker(z, w)
                    with self._lock:
                        self.state[z].timeouts += 1
                    self.mark_down(z, ZoneWriteTimeout(
                        f"no acknowledgement within {timeout * 1000:.0f} ms"
                        + (" (the write may still complete; reads de-duplicate)" if started else "")))
                    self._retry_elsewhere(z, its, pending)
                    continue
                except BaseException as exc:  # noqa: BLE001 - zone failures (others are handled in the task)
                    if not is_zone_failure(exc):
                        raise
                    with self._lock:
                        self.state[z].errors += 1
                    self.mark_down(z, exc)
                    self._retry_elsewhere(z, its, pending)
                    continue
                kind = out[0]
                if kind == "batch":
                    self._account(z, res, its, out[1])
                else:
                    results = out[1]
                    for it, r in zip(its, results):
                        if isinstance(r, WriteResult):
                            self._account(z, res, [it], r)
                        else:
                            res.errors.append((it.index, f"zone {z!r}: {type(r).__name__}: {r}"))
                    if kind == "partial":
                        with self._lock:
                            self.state[z].errors += 1
                        self.mark_down(z, out[2])
                        self._retry_elsewhere(z, its[len(results):], pending)
        if kept:
            self._keep(kept, res)
        res.errors.sort(key=lambda e: e[0])
        return res

    def _retry_elsewhere(self, zone: str, its: list[_Item], pending: list[_Item]) -> None:
        for it in its:
            it.tried.add(zone)
        pending.extend(its)

    def _task(self, zone: str, db: str, coll: str, batch: list[dict], spec: MergeSpec) -> Callable[[], tuple]:
        backend = self.backends[zone]

        def run() -> tuple:
            c = backend.collection(db, coll)
            try:
                return ("batch", c.merge_many(batch, spec))
            except Exception as exc:
                if is_zone_failure(exc):
                    raise
                if len(batch) == 1:
                    return ("single", [exc])
            # the zone refused the batch as a whole: find the documents it refuses, one at a time
            results: list = []
            for d in batch:
                try:
                    results.append(c.merge_many([d], spec))
                except Exception as exc:
                    if is_zone_failure(exc):
                        return ("partial", results, exc)
                    results.append(exc)
            return ("single", results)

        return run

    def _account(self, zone: str, res: WriteResult, its: list[_Item], r: WriteResult) -> None:
        for k in ("inserted", "replaced", "merged", "kept", "discarded", "deleted"):
            setattr(res, k, getattr(res, k) + getattr(r, k))
        for j, reason in r.errors:
            res.errors.append((its[j].index, reason))
        with self._lock:
            s = self.state[zone]
            s.batches += 1
            s.writes += len(its) - len(r.errors)

    def _keep(self, kept: list[_Item], res: WriteResult) -> None:
        reasons = "; ".join(f"{z}: {self.state[z].last_error}" for z in self.order)
        msg = f"all zones of connection {self.name!r} are down ({reasons}); the document was not written"
        with self._lock:
            self.docs_kept += len(kept)
        policy = self.cfg.writer.on_all_zones_down
        log.error("zoned connection %r: every zone is down; %d document(s) not written, %s", self.name, len(kept),
                  "reported for the dead letter queue" if policy == "dlq" else "failing the processor")
        if policy == "fail":
            raise ZonesDownError(f"{msg}; {len(kept)} document(s) of the batch not written (onAllZonesDown: fail)")
        for it in kept:
            res.errors.append((it.index, msg + " (kept for the dead letter queue)"))

    def close(self) -> None:
        """Retire the worker threads (after their current write) and close pooled connections."""
        with self._lock:
            workers, self._workers = list(self._workers.values()), {}
        for w in workers:
            w.retire()
        for b in self.backends.values():
            b.reset()

    # -- stats --------------------------------------------------------------------------------
    def stats(self) -> dict:
        with self._lock:
            return {
                "connection": self.name,
                "homeZone": self.cfg.writer.home_zone,
                "zoneField": self.cfg.zone_field,
                "failovers": self.failovers,
                "docsKept": self.docs_kept,
                "onAllZonesDown": self.cfg.writer.on_all_zones_down,
                "zones": {z: {"store": self.cfg.zone(z).describe(), **self.state[z].to_dict()} for z in self.order},
            }
