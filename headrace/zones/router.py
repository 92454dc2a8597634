"""Routing, writes with failover, probing and statistics for one ``zoned`` connection.

One :class:`ZoneRouter` per connection per process (see :func:`get_router`) holds the zones'
up/down state, so every collection opened on the connection, in any thread, shares it.

Writing a batch (:meth:`ZoneRouter.write`):

1. Each document gets its zone field per ``writer.setZoneField`` (``ifMissing``: set to the home
   zone's value when absent; ``always``: always the home zone; ``never``). Its shard key is read
   (a missing field, or an array value, is a per-document error naming the field) and routed: the
   zone whose range holds the key (min inclusive, max exclusive, MongoDB comparison order), else
   the default zone.
2. Documents are grouped per zone and each group is written with ``merge_many`` on that zone's
   own worker thread; groups for different zones run in parallel. A document without ``_id``
   gets a fresh ObjectId for every attempt, made by the writer before it sends the write (as a
   driver does), so the time in ``_id`` orders attempts: the first attempt is the "first inserted".
3. A group that fails with a connection/server error, or is not acknowledged within
   ``writer.writeTimeoutMs``, marks its zone down; each of its documents gets the next zone's
   value in the zone field (zones in configuration order, cyclic, skipping down zones and zones
   already tried for it) and is written there. A timed-out write is not cancelled once it has
   started: it may still commit, so a document can end up in two zones; reads de-duplicate.
   Other errors are retried one document at a time in the same zone, so only the documents the
   zone refuses become per-document errors.
4. When no zone is left for a document (after probing every down zone once more), it is kept:
   ``onAllZonesDown: dlq`` reports it as a per-document error (the caller sends it to the dead
   letter queue), ``fail`` raises :class:`ZonesDownError` (the processor fails) after the rest
   of the batch is written. Nothing is dropped.

Down zones are probed (a fresh connection and a trivial statement, within the write timeout)
when a write starts and ``writer.probeIntervalMs`` has passed since the last probe; a zone that
answers is up again, so documents whose zone field names it (the home zone's, by default) go
back there. Every transition is logged on the ``headrace.zones`` logger; :meth:`stats` shows per
zone: up/down, documents written, batches, failovers out/in, timeouts, errors, last error.

Across zones a batch is not atomic: each zone's group commits on its own.
"""
from __future__ import annotations

import bisect
import datetime as _dt
import json
import logging
import queue
import sqlite3
import threading
import time
from concurrent.futures import Future, TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

from .. import ejson
from ..connections import Connection, Registry
from ..errors import ConfigError, HeadraceError
from ..store.base import Collection, MergeSpec, WriteResult
from .config import RangeSpec, ZonedConfig, ZoneSpec, parse
from .order import ShardKeyError, has_path, key_of, set_path, shard_key

log = logging.getLogger("headrace.zones")


class ZonesDownError(HeadraceError):
    """Every zone of a zoned connection is down and the policy is ``onAllZonesDown: fail``."""

    code = "ZONES_ALL_DOWN"
    exit_code = 1


class ZoneWriteTimeout(TimeoutError):
    """A zone did not acknowledge a write in time (the write may still complete)."""


def is_zone_failure(exc: BaseException) -> bool:
    """Errors that mean "this zone cannot take writes now" (as opposed to "this document is bad")."""
    try:
        import psycopg
    except ImportError:  # pragma: no cover
        psycopg = None
    if psycopg is not None:
        if isinstance(exc, psycopg.errors.TransactionRollback):   # deadlock, serialization: retry here
            return False
        if isinstance(exc, (psycopg.OperationalError, psycopg.InterfaceError)):
            return True
    return isinstance(exc, (TimeoutError, OSError, sqlite3.OperationalError, ConnectionError))


def _now_iso() -> str:
    return ejson.format_date(_dt.datetime.now(ejson.UTC))


class _Worker:
    """A daemon thread running one zone's writes in order. Abandoned (replaced) after a timeout."""

    def __init__(self, name: str):
        self.q: "queue.SimpleQueue[tuple[Future, Callable[[], Any]] | None]" = queue.SimpleQueue()
        self.t = threading.Thread(target=self._loop, name=f"headrace-zone-{name}", daemon=True)
        self.t.start()

    def submit(self, fn: Callable[[], Any]) -> Future:
        f: Future = Future()
        self.q.put((f, fn))
        return f

    def retire(self) -> None:
        self.q.put(None)

    def _loop(self) -> None:
        while True:
            item = self.q.get()
            if item is None:
                return
            f, fn = item
            if not f.set_running_or_notify_cancel():
                continue
            try:
                f.set_result(fn())
            except BaseException as exc:  # noqa: BLE001 - handed to the caller
                f.set_exception(exc)


class ZoneBackend:
    """A zone's store: PostgreSQL server or SQLite directory. Collections open lazily."""

    def __init__(self, spec: ZoneSpec):
        self.spec = spec
        self._colls: dict[tuple[str, str], Collection] = {}
        self._lock = threading.Lock()
        self._sqlite = None
        self.dbs: set[str] = set()
        if spec.kind == "postgres":
            from ..store.postgres import store_for

            self.pg = store_for(spec.target, **dict(spec.options))
        else:
            self.pg = None

    @property
    def positional(self) -> bool:
        """Whether positions from :meth:`scan` follow commit order (SQLite: one writer at a time)."""
        return self.pg is None

    def collection(self, db: str, coll: str) -> Collection:
        key = (db, coll)
        c = self._colls.get(key)
        if c is None:
            if self.pg is not None:
                c = self.pg.collection(db, coll)
            else:
                from ..store.sqlite import SQLiteStore

                with self._lock:
                    if self._sqlite is None:
                        self._sqlite = SQLiteStore(self.spec.target)
                c = self._sqlite.collection(db, coll)
            with self._lock:
                self._colls[key] = c
                self.dbs.add(db)
        return c

    def reset(self) -> None:
        """Forget pooled connections (after the zone went down or came back)."""
        if self.pg is not None:
            self.pg.close()

    def ping(self, timeout_s: float) -> None:
        if self.pg is not None:
            self.pg.ping(timeout_s)
            return
        p = Path(self.spec.target)
        p.mkdir(parents=True, exist_ok=True)
        for db in sorted(self.dbs) or [None]:
            if db is None:
                probe = p / ".headrace-probe"
                probe.write_text("ok")
                probe.unlink()
                continue
            c = sqlite3.connect(p / f"{db}.sqlite", timeout=timeout_s, isolation_level=None)
            try:
                c.execute("BEGIN IMMEDIATE")
                c.execute("ROLLBACK")
            finally:
                c.close()

    def scan(self, db: str, coll: str, after: int = 0) -> Iterator[tuple[int, dict]]:
        """``(position, document)`` in insertion order, positions above ``after`` only."""
        c = self.collection(db, coll)
        if self.pg is not None:
            yield from c.scan(after)  # type: ignore[attr-defined]
            return
        try:
            from ..store import sqlite as sq

            rows = c._c.execute(f"SELECT seq, doc FROM {sq._table(c.name)} WHERE seq > ? ORDER BY seq",  # type: ignore[attr-defined]
                                (after,)).fetchall()
        except AttributeError:  # a backend without positions: every document, numbered
            for i, d in enumerate(c.find(), 1):
                if i > after:
                    yield i, d
            return
        for seq, text in rows:
            yield seq, ejson.loads(text)


@dataclass
class ZoneState:
    name: str
    up: bool = True
    down_since: float | None = None
    down_since_iso: str | None = None
    next_probe: float = 0.0
    writes: int = 0
    batches: int = 0
    failovers_out: int = 0
    failovers_in: int = 0
    timeouts: int = 0
    errors: int = 0
    probes: int = 0
    last_error: str | None = None
    last_error_at: str | None = None
    probing: bool = False

    def to_dict(self) -> dict:
        return {"up": self.up, "downSince": self.down_since_iso, "writes": self.writes, "batches": self.batches,
                "failoversOut": self.failovers_out, "failoversIn": self.failovers_in, "timeouts": self.timeouts,
                "errors": self.errors, "probes": self.probes, "lastError": self.last_error,
                "lastErrorAt": self.last_error_at}


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
        """Write a batch with failover (see the module docstring). Per-document errors in the result."""
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
        for k in ("inserted", "replaced", "merged", "kept", "discarded"):
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


_ROUTERS: dict[tuple, ZoneRouter] = {}
_ROUTERS_LOCK = threading.Lock()


def get_router(registry: Registry, conn: Connection, check: bool | None = None) -> ZoneRouter:
    """The process-wide router of a ``zoned`` connection (same name and options: same router).

    The first time, the configuration is validated and, when ``checkZonesAtStart`` (default) and
    ``check`` is not False, every zone is probed: an unreachable zone is a ``ConfigError``."""
    key = (conn.name, json.dumps(ejson.to_plain(dict(conn.options)), sort_keys=True, default=str), registry.source)
    with _ROUTERS_LOCK:
        r = _ROUTERS.get(key)
    if r is not None:
        return r
    cfg = parse(conn, registry)
    r = ZoneRouter(cfg)
    if check is not False and (check or cfg.check_at_start):
        r.check_reachable()
    with _ROUTERS_LOCK:
        return _ROUTERS.setdefault(key, r)


def forget_routers() -> None:
    """Drop cached routers (tests, or after the connections file changed)."""
    with _ROUTERS_LOCK:
        routers = list(_ROUTERS.values())
        _ROUTERS.clear()
    for r in routers:
        r.close()
