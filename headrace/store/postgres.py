"""PostgreSQL backend: collections are JSONB tables on a real server.

Connection (in the registry)::

    pg: {type: postgres, dsn: "postgresql://user:secret@127.0.0.1:5432/app",
         statementTimeoutMs: 5000,   # optional: server-side limit per statement
         connectTimeoutS: 5}         # optional: libpq connect_timeout (default 5)

Layout: database ``db`` is the schema ``db``; collection ``coll`` is the table ``db.coll``::

    seq    bigserial PRIMARY KEY          -- insertion order
    id_key text NOT NULL UNIQUE           -- canonical Extended JSON of _id (unique _id)
    body   text NOT NULL                  -- the document as canonical Extended JSON, field order kept
    doc    jsonb GENERATED ALWAYS AS (body::jsonb) STORED   -- the same, queryable in SQL

Writes: ``merge_many`` applies ``$merge`` (via :func:`~headrace.store.base.apply_merge`) to a
batch in one transaction; ``merge_fenced`` does the same and, in that transaction, records the
micro-batch in the fence table (exactly once, see :class:`Fence`); matching uses ``_id`` or the ``on`` fields (compared as canonical
Extended JSON). Documents PostgreSQL cannot store (text with NUL characters) or that cannot be
represented in Extended JSON are per-document errors; nothing else in the batch is affected.
Server and connection failures raise ``psycopg.OperationalError`` (the batch is rolled back,
unless the failure hid a commit that already happened). Connections come from a small
per-store pool; a broken connection is discarded, so the next call reconnects.

The classes are in :mod:`.postgres_store`, the stored text (documents, fence rows) in
:mod:`.postgres_rows`; this module keeps the process-wide stores and the backend's entry point
(:func:`open_collection`), and the names of both stay importable from here.
"""
from __future__ import annotations

import threading
from typing import Any

import psycopg

from ..connections import Connection, Registry, redact
from ..errors import ConfigError
from .postgres_rows import FENCE_KEEP, FENCE_SCHEMA, Fence
from .postgres_store import PAGE, STALE_AFTER_S, PostgresCollection, PostgresStore

__all__ = ["PAGE", "FENCE_SCHEMA", "FENCE_KEEP", "STALE_AFTER_S", "PostgresStore", "store_for", "store_options",
           "open_collection", "Fence", "PostgresCollection"]


_STORES: dict[tuple, PostgresStore] = {}
_STORES_LOCK = threading.Lock()


def store_for(dsn: str, *, statement_timeout_ms: int | None = None, connect_timeout_s: int = 5) -> PostgresStore:
    """The process-wide store (connection pool) for these settings."""
    key = (dsn, statement_timeout_ms, connect_timeout_s)
    with _STORES_LOCK:
        s = _STORES.get(key)
        if s is None:
            s = _STORES[key] = PostgresStore(dsn, statement_timeout_ms=statement_timeout_ms,
                                             connect_timeout_s=connect_timeout_s)
        return s


def store_options(conn_name: str, options: dict, field_prefix: str = "") -> dict:
    """Validate ``dsn``/``statementTimeoutMs``/``connectTimeoutS``; keyword arguments for :func:`store_for`."""
    where = f"connection {conn_name!r}: {field_prefix}"
    dsn = options.get("dsn")
    if not isinstance(dsn, str) or not dsn.strip():
        raise ConfigError(f"{where}dsn: expected a PostgreSQL connection string, found {redact(dsn)!r}",
                          code="POSTGRES_INVALID")
    out: dict[str, Any] = {"dsn": dsn}
    for key, arg in (("statementTimeoutMs", "statement_timeout_ms"), ("connectTimeoutS", "connect_timeout_s")):
        if key in options and options[key] is not None:
            v = options[key]
            if isinstance(v, bool) or not isinstance(v, (int, float)) or v <= 0:
                raise ConfigError(f"{where}{key}: expected a positive number, found {v!r}", code="POSTGRES_INVALID")
            out[arg] = int(v)
    return out


def open_collection(registry: Registry, conn: Connection, db: str, coll: str) -> "PostgresCollection":
    """A collection on a ``postgres`` connection; the table is created when missing.

    An unreachable server is a :class:`~headrace.errors.ConfigError` (``POSTGRES_UNREACHABLE``)."""
    opts = store_options(conn.name, dict(conn.options))
    store = store_for(**opts)
    c = store.collection(db, coll)
    try:
        c.ensure()
    except psycopg.OperationalError as exc:
        raise ConfigError(f"connection {conn.name!r}: dsn: cannot reach PostgreSQL at {store.describe()}: "
                          f"{str(exc).strip()}", code="POSTGRES_UNREACHABLE") from exc
    return c

