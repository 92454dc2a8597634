"""A zone's store and its writer thread: :class:`ZoneBackend` opens the zone's collections
(PostgreSQL server or SQLite directory) lazily, pings the zone and scans its documents in
insertion order; :class:`_Worker` is the daemon thread that runs the zone's writes in order.
"""
from __future__ import annotations

import queue
import sqlite3
import threading
from concurrent.futures import Future
from pathlib import Path
from typing import Any, Callable, Iterator

from .. import ejson
from ..store.base import Collection
from .config import ZoneSpec


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
