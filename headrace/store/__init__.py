"""The embedded document store: collections of Extended JSON documents in SQLite files.

``open_store(path)`` gives a :class:`~headrace.store.sqlite.SQLiteStore`; a database is one
SQLite file ``<path>/<db>.sqlite`` and a collection one table in it. Other backends (PostgreSQL
JSONB, zoned) implement :class:`~headrace.store.base.Collection` too.
"""
from .base import Collection, MergeSpec, WriteResult, id_key
from .sqlite import SQLiteStore, open_store

__all__ = ["Collection", "MergeSpec", "WriteResult", "SQLiteStore", "open_store", "id_key"]
