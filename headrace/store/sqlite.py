"""SQLite backend: one file per database, one table per collection, WAL mode for concurrent use.

As a sink (and DLQ) it is exactly-once by idempotence: the engine's documents carry
deterministic ``_id``s, so a micro-batch replayed after a crash ``$merge``s the same documents
onto themselves (``merge_many`` is one transaction per batch; WAL commits survive a process
crash)."""
from __future__ import annotations

import os
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence

from .. import ejson
from .base import Collection, MergeSpec, WriteResult, apply_merge, id_key, on_key

_TABLE = "c_"


def _table(coll: str) -> str:
    return '"' + _TABLE + coll.replace('"', '""') + '"'


_TIMEOUT_S = 60


def _wal(c: sqlite3.Connection) -> None:
    """Put the database in WAL mode. SQLite does not wait (busy timeout) for the lock that
    switches a new database's journal mode: two sink tasks creating the same database at once
    got "database is locked" (about 1 in 60 in a three-process test), so the switch is retried."""
    deadline = time.monotonic() + _TIMEOUT_S
    while True:
        try:
            c.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as e:
            if "locked" not in str(e) or time.monotonic() > deadline:
                raise
            time.sleep(0.02)


class SQLiteStore:
    """A directory of SQLite databases."""

    def __init__(self, path: "str | os.PathLike[str]"):
        self.path = Path(path)
        self.path.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()

    def _conn(self, db: str) -> sqlite3.Connection:
        conns = getattr(self._local, "conns", None)
        if conns is None:
            conns = self._local.conns = {}
        if db not in conns:
            if not db or "/" in db or db.startswith("."):
                raise ValueError(f"invalid database name {db!r}")
            c = sqlite3.connect(self.path / f"{db}.sqlite", timeout=_TIMEOUT_S, isolation_level=None)
            _wal(c)
            c.execute("PRAGMA synchronous=NORMAL")
            conns[db] = c
        return conns[db]

    def collection(self, db: str, coll: str) -> "SQLiteCollection":
        return SQLiteCollection(self, db, coll)

    def databases(self) -> list[str]:
        return sorted(p.stem for p in self.path.glob("*.sqlite"))

    def collections(self, db: str) -> list[str]:
        rows = self._conn(db).execute(
            "SELECT name FROM sqlite_master WHERE type='table' AND name LIKE 'c\\_%' ESCAPE '\\'").fetchall()
        return sorted(r[0][len(_TABLE):] for r in rows)

    def close(self) -> None:
        for c in getattr(self._local, "conns", {}).values():
            c.close()
        self._local.conns = {}


def open_store(path: "str | os.PathLike[str]") -> SQLiteStore:
    return SQLiteStore(path)


class SQLiteCollection(Collection):
    def __init__(self, store: SQLiteStore, db: str, coll: str):
        self.store, self.db, self.name = store, db, coll
        self._ensure()

    @property
    def _c(self) -> sqlite3.Connection:
        return self.store._conn(self.db)

    def _ensure(self) -> None:
        self._c.execute(
            f"CREATE TABLE IF NOT EXISTS {_table(self.name)} ("
            "seq INTEGER PRIMARY KEY AUTOINCREMENT, id_key TEXT UNIQUE NOT NULL, doc TEXT NOT NULL)")

    def _ensure_id(self, doc: dict) -> dict:
        if "_id" not in doc:
            doc = {"_id": ejson.ObjectId(), **doc}
        return doc

    def insert_many(self, docs: Iterable[dict]) -> WriteResult:
        res = WriteResult()
        c = self._c
        c.execute("BEGIN IMMEDIATE")
        try:
            for i, doc in enumerate(docs):
                doc = self._ensure_id(doc)
                try:
                    c.execute(f"INSERT INTO {_table(self.name)} (id_key, doc) VALUES (?, ?)",
                              (id_key(doc["_id"]), ejson.dumps(doc, relaxed=False)))
                    res.inserted += 1
                except sqlite3.IntegrityError:
                    res.errors.append((i, f"duplicate key: _id {ejson.dumps(doc['_id'])}"))
            c.execute("COMMIT")
        except BaseException:
            c.execute("ROLLBACK")
            raise
        return res

    def upsert_many(self, docs: Sequence[dict]) -> WriteResult:
        """Insert or replace by ``_id`` (idempotent writes with deterministic ids)."""
        return self.merge_many(docs, MergeSpec(on=("_id",), when_matched="replace"))

    def merge_many(self, docs: Sequence[dict], spec: MergeSpec) -> WriteResult:
        res = WriteResult()
        c = self._c
        t = _table(self.name)
        by_id = tuple(spec.on) == ("_id",)
        c.execute("BEGIN IMMEDIATE")
        try:
            for i, doc in enumerate(docs):
                existing_row = None
                if by_id:
                    if "_id" in doc:
                        existing_row = c.execute(f"SELECT seq, doc FROM {t} WHERE id_key=?",
                                                 (id_key(doc["_id"]),)).fetchone()
                else:
                    key = on_key(doc, spec.on)
                    if key is None:
                        res.errors.append((i, f"$merge: document is missing an 'on' field {list(spec.on)}"))
                        continue
                    for seq, text in c.execute(f"SELECT seq, doc FROM {t}"):
                        if on_key(ejson.loads(text), spec.on) == key:
                            existing_row = (seq, text)
                            break
                existing = ejson.loads(existing_row[1]) if existing_row else None
                action, out, err = apply_merge(existing, doc, spec)
                if err:
                    res.errors.append((i, err))
                    continue
                if action == "deleted":
                    c.execute(f"DELETE FROM {t} WHERE seq=?", (existing_row[0],))
                if out is None:
                    setattr(res, action, getattr(res, action) + 1)
                    continue
                if existing_row:
                    c.execute(f"UPDATE {t} SET doc=? WHERE seq=?",
                              (ejson.dumps(out, relaxed=False), existing_row[0]))
                else:
                    out = self._ensure_id(out)
                    c.execute(f"INSERT INTO {t} (id_key, doc) VALUES (?, ?)",
                              (id_key(out["_id"]), ejson.dumps(out, relaxed=False)))
                setattr(res, action, getattr(res, action) + 1)
            c.execute("COMMIT")
        except BaseException:
            c.execute("ROLLBACK")
            raise
        return res

    def find(self, predicate: Callable[[dict], bool] | None = None) -> Iterator[dict]:
        for (text,) in self._c.execute(f"SELECT doc FROM {_table(self.name)} ORDER BY seq").fetchall():
            doc = ejson.loads(text)
            if predicate is None or predicate(doc):
                yield doc

    def count(self) -> int:
        return self._c.execute(f"SELECT COUNT(*) FROM {_table(self.name)}").fetchone()[0]

    def delete_ids(self, ids: Iterable[Any]) -> int:
        n = 0
        for i in ids:
            n += self._c.execute(f"DELETE FROM {_table(self.name)} WHERE id_key=?", (id_key(i),)).rowcount
        return n

    def drop(self) -> None:
        self._c.execute(f"DROP TABLE IF EXISTS {_table(self.name)}")
