"""Zone-aware local writes (seed 003): the ``zoned`` connection type.

A zoned connection spreads one logical collection over zones (datacenters), each backed by its
own store (a PostgreSQL server or a SQLite directory). Documents are routed by a compound shard
key and zone ranges; writers have a home zone and fail over to the next zone on an error or a
timeout; reads broadcast to every zone and de-duplicate; a balancer moves documents after the
ranges change. See :mod:`.config` (YAML), :mod:`.router` (writes), :mod:`.collection` (reads,
trim, status) and :mod:`.balancer`.

``open_collection(registry, connection, db, coll)`` is the backend entry point used by
:func:`headrace.collections.open_collection`.
"""
from __future__ import annotations

from ..connections import Connection, Registry
from .collection import ZonedCollection, ZoneReadError
from .config import ZonedConfig, parse
from .router import ZoneRouter, ZonesDownError, forget_routers, get_router

__all__ = ["open_collection", "ZonedCollection", "ZoneRouter", "ZonedConfig", "ZonesDownError", "ZoneReadError",
           "get_router", "forget_routers", "parse"]


def open_collection(registry: Registry, conn: Connection, db: str, coll: str, *,
                    check: bool | None = None) -> ZonedCollection:
    """``db.coll`` on a zoned connection. The first open in a process validates the configuration
    and (``checkZonesAtStart``) probes every zone: errors are ``ConfigError`` with stable codes."""
    return ZonedCollection(get_router(registry, conn, check), db, coll)
