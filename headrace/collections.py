"""Open a writable/readable collection on any connection that can hold documents.

``open_collection(registry, connection_name, db, coll)`` dispatches on the connection's type:
``store`` (SQLite), ``postgres`` (JSONB tables), ``zoned`` (zone-aware writes). Sinks and the
DLQ write only through this, so every backend gets ``$merge`` semantics from one place.
"""
from __future__ import annotations

import importlib
from typing import Callable

from .connections import Connection, Registry
from .errors import ConfigError
from .store.base import Collection

#: connection type -> "module:function" taking (registry, connection, db, coll) -> Collection
BACKENDS: dict[str, str] = {
    "store": "headrace.collections:_open_store",
    "postgres": "headrace.store.postgres:open_collection",
    "zoned": "headrace.zones:open_collection",
    "kafka": "headrace.connectors.kafka:open_collection",         # $emit and DLQ: a topic (``coll``)
    "redis": "headrace.connectors.redis_stream:open_collection",  # $emit and DLQ: a stream (``coll``)
    "mongodb": "headrace.connectors.mongodb:open_collection",
}


def _open_store(registry: Registry, conn: Connection, db: str, coll: str) -> Collection:
    from .store.sqlite import SQLiteStore

    return SQLiteStore(registry.store_path(conn.name)).collection(db, coll)


def backend(ctype: str) -> Callable[..., Collection]:
    target = BACKENDS.get(ctype)
    if target is None:
        raise ConfigError(f"connections of type {ctype!r} cannot hold collections", code="CONNECTION_TYPE")
    mod, func = target.split(":")
    return getattr(importlib.import_module(mod), func)


def open_collection(registry: Registry, connection_name: str, db: str, coll: str) -> Collection:
    conn = registry.get(connection_name)
    return backend(conn.type)(registry, conn, db, coll)
