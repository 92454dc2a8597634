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

The code lives in :mod:`.health` (failure classes, per-zone state), :mod:`.backend` (a zone's
store and writer thread) and :mod:`.routing` (:class:`ZoneRouter`); this module keeps the
process-wide routers (:func:`get_router`) and re-exports the parts' names.
"""
from __future__ import annotations

import json
import threading

from .. import ejson
from ..connections import Connection, Registry
from .backend import ZoneBackend
from .config import parse
from .health import ZoneState, ZonesDownError, ZoneWriteTimeout, is_zone_failure
from .routing import ZoneRouter

__all__ = ["ZonesDownError", "ZoneWriteTimeout", "is_zone_failure", "ZoneBackend", "ZoneState", "ZoneRouter",
           "get_router", "forget_routers"]


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
