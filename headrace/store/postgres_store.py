"""The PostgreSQL backend's classes (:mod:`headrace.store.postgres`): :class:`PostgresStore`, one
server's connection pool (and the fence table on it), and :class:`PostgresCollection`, one
collection as a JSONB table, with its ``$merge`` writes (plain and fenced) and paged reads. They
share a module because each names the other (a store opens collections, a collection borrows
its store's connections).
"""
from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from typing import Any, Callable, Iterable, Iterator, Sequence

import psycopg
from psycopg import sql

from .. import ejson
from ..connections import redact
from .base import Collection, MergeSpec, WriteResult, apply_merge, id_key, on_key
from .postgres_rows import FENCE_KEEP, FENCE_SCHEMA, Fence, _result_from_json, _result_json, _serialize

PAGE = 1000
STALE_AFTER_S = 5.0


class PostgresStore:
    """One server (a DSN): a pool of connections and the collections on it. Thread-safe."""

    def __init__(self, dsn: str, *, statement_timeout_ms: int | None = None, connect_timeout_s: int = 5,
                 max_idle: int = 4, application_name: str = "headrace"):
        self.dsn = dsn
        self.statement_timeout_ms = statement_timeout_ms
        self.connect_timeout_s = max(1, int(connect_timeout_s))
        self.max_idle = max_idle
        self.application_name = application_name
        self._idle: list[tuple[psycopg.Connection, float]] = []
        self._lock = threading.Lock()
        self._ensured: set[tuple[str, str]] = set()

    def describe(self) -> str:
        """The DSN with any password masked."""
        return redact(self.dsn)

    def connect(self, connect_timeout_s: int | None = None) -> psycopg.Connection:
        kw: dict[str, Any] = {"autocommit": True, "connect_timeout": connect_timeout_s or self.connect_timeout_s,
                              "application_name": self.application_name}
        if self.statement_timeout_ms:
            kw["options"] = f"-c statement_timeout={int(self.statement_timeout_ms)}"
        return psycopg.connect(self.dsn, **kw)

    def _take_idle(self) -> psycopg.Connection | None:
        while True:
            with self._lock:
                if not self._idle:
                    return None
                conn, since = self._idle.pop()
            if conn.closed or conn.broken:
                continue
            if time.monotonic() - since > STALE_AFTER_S:   # the server may have restarted meanwhile
                try:
                    conn.execute("SELECT 1")
                except psycopg.Error:
                    conn.close()
                    continue
            return conn

    @contextmanager
    def connection(self) -> Iterator[psycopg.Connection]:
        """Borrow a connection; it goes back to the pool unless it broke. Connections idle for
        more than a few seconds are checked (``SELECT 1``) before use."""
        conn = self._take_idle() or self.connect()
        ok = False
        try:
            yield conn
            ok = True
        finally:
            reuse = not conn.closed and not conn.broken
            if reuse and not ok:
                try:
                    if conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
                        conn.rollback()
                except psycopg.Error:
                    reuse = False
            if reuse:
                with self._lock:
                    if len(self._idle) < self.max_idle:
                        self._idle.append((conn, time.monotonic()))
                        conn = None
            if conn is not None:
                try:
                    conn.close()
                except Exception:
                    pass

    def ping(self, timeout_s: float = 5) -> None:
        """Connect afresh and run ``SELECT 1``; raises ``psycopg.OperationalError`` when unreachable."""
        with self.connect(max(1, int(timeout_s + 0.999))) as c:
            c.execute("SELECT 1")

    def ensure_fence(self, conn: psycopg.Connection) -> None:
        """Create the fence table (``_headrace.fence``) once per store."""
        if (FENCE_SCHEMA, "fence") in self._ensured:
            return
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(hashtext('headrace:_headrace.fence'))")
            conn.execute(f"CREATE SCHEMA IF NOT EXISTS {FENCE_SCHEMA}")
            conn.execute(f"CREATE TABLE IF NOT EXISTS {FENCE_SCHEMA}.fence (processor text NOT NULL, "
                         "run_id text NOT NULL, target text NOT NULL, batch_id bigint NOT NULL, part int NOT NULL, "
                         "result text, committed_at timestamptz NOT NULL DEFAULT now(), "
                         "PRIMARY KEY (processor, run_id, target, batch_id, part))")
        self._ensured.add((FENCE_SCHEMA, "fence"))

    def collection(self, db: str, coll: str) -> "PostgresCollection":
        return PostgresCollection(self, db, coll)

    def databases(self) -> list[str]:
        with self.connection() as c:
            rows = c.execute(
                "SELECT nspname FROM pg_namespace WHERE nspname NOT LIKE 'pg\\_%%' "
                "AND nspname NOT IN ('information_schema', 'public', %s) ORDER BY 1", (FENCE_SCHEMA,)).fetchall()
        return [r[0] for r in rows]

    def collections(self, db: str) -> list[str]:
        with self.connection() as c:
            rows = c.execute("SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                             "JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = 'id_key' "
                             "WHERE n.nspname = %s AND c.relkind = 'r' ORDER BY 1", (db,)).fetchall()
        return [r[0] for r in rows]

    def close(self) -> None:
        """Close the idle connections (borrowed ones close when returned broken, or stay usable)."""
        with self._lock:
            idle, self._idle = self._idle, []
        for c, _ in idle:
            try:
                c.close()
            except Exception:
                pass


class PostgresCollection(Collection):
    """A JSONB table. The table is created on first use (``ensure``)."""

    def __init__(self, store: PostgresStore, db: str, coll: str):
        if not db or not coll:
            raise ValueError("database and collection names must not be empty")
        self.store, self.db, self.name = store, db, coll
        self.table = sql.Identifier(db, coll)

    # -- schema -----------------------------------------------------------------------------
    def ensure(self, conn: psycopg.Connection | None = None) -> None:
        if (self.db, self.name) in self.store._ensured:
            return
        if conn is None:
            with self.store.connection() as c:
                return self.ensure(c)
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"headrace:{self.db}.{self.name}",))
            conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(self.db)))
            conn.execute(sql.SQL(
                "CREATE TABLE IF NOT EXISTS {} (seq bigserial PRIMARY KEY, id_key text NOT NULL UNIQUE, "
                "body text NOT NULL, doc jsonb GENERATED ALWAYS AS (body::jsonb) STORED)").format(self.table))
        self.store._ensured.add((self.db, self.name))

    def _run(self, fn: Callable[[psycopg.Connection], Any]) -> Any:
        """Run ``fn(conn)`` on a pooled connection, creating the table once if it went missing."""
        with self.store.connection() as c:
            self.ensure(c)
            try:
                return fn(c)
            except psycopg.errors.UndefinedTable:
                self.store._ensured.discard((self.db, self.name))
        with self.store.connection() as c:
            self.ensure(c)
            return fn(c)

    # -- writes -----------------------------------------------------------------------------
    def insert_many(self, docs: Iterable[dict]) -> WriteResult:
        res = WriteResult()
        rows: list[tuple[int, str, str]] = []
        for i, doc in enumerate(docs):
            if "_id" not in doc:
                doc = {"_id": ejson.ObjectId(), **doc}
            try:
                rows.append((i, id_key(doc["_id"]), _serialize(doc)))
            except ValueError as exc:
                res.errors.append((i, str(exc)))
        if not rows:
            return res

        def go(c: psycopg.Connection) -> set[str]:
            with c.transaction():
                cur = c.execute(sql.SQL(
                    "INSERT INTO {} (id_key, body) SELECT k, b FROM unnest(%b::text[], %b::text[]) "
                    "WITH ORDINALITY AS v(k, b, o) ORDER BY o ON CONFLICT (id_key) DO NOTHING RETURNING id_key"
                ).format(self.table), ([r[1] for r in rows], [r[2] for r in rows]))
                return {r[0] for r in cur.fetchall()}

        done = self._run(go)
        for i, key, _ in rows:
            if key in done:
                done.discard(key)
                res.inserted += 1
            else:
                res.errors.append((i, f"duplicate key: _id {key}"))
        res.errors.sort()
        return res

    def upsert_many(self, docs: Sequence[dict]) -> WriteResult:
        """Insert or replace by ``_id`` (idempotent writes with deterministic ids)."""
        return self.merge_many(docs, MergeSpec(on=("_id",), when_matched="replace"))

    def merge_many(self, docs: Sequence[dict], spec: MergeSpec) -> WriteResult:
        """Apply ``$merge`` to each document in order, in one transaction."""
        return self._run(lambda c: self._merge(c, list(docs), spec))

    def merge_fenced(self, docs: Sequence[dict], spec: MergeSpec, fence: Fence) -> tuple[WriteResult, bool]:
        """``$merge`` the batch's documents and record the batch in the fence table, in ONE
        transaction; returns ``(result, replayed)``.

        The fence row ``(processor, run_id, target, batch_id, part)`` is inserted first; if it is
        already there, the batch was committed before (a replay after a crash between this
        commit and the checkpoint's): nothing is written and the result stored with the row is
        returned, so the replay reports the same refused documents (which go to the DLQ again,
        idempotently). A crash before the commit rolls everything back, fence row included. Two
        attempts running at once serialize on the fence row's key. Fence rows older than
        :data:`FENCE_KEEP` batches of the same run and target are removed in the same
        transaction."""
        docs = list(docs)
        target = f"{self.db}.{self.name}"
        key = (fence.processor, fence.run_id, target, fence.batch_id, fence.part)

        def go(c: psycopg.Connection) -> tuple[WriteResult, bool]:
            self.store.ensure_fence(c)
            with c.transaction():
                got = c.execute(f"INSERT INTO {FENCE_SCHEMA}.fence (processor, run_id, target, batch_id, part) "
                                "VALUES (%s, %s, %s, %s, %s) ON CONFLICT DO NOTHING RETURNING 1", key).fetchone()
                if got is None:
                    row = c.execute(f"SELECT result FROM {FENCE_SCHEMA}.fence WHERE processor = %s AND run_id = %s "
                                    "AND target = %s AND batch_id = %s AND part = %s", key).fetchone()
                    return _result_from_json(row[0] if row else None), True
                res = self._merge(c, docs, spec)
                from ..faults import maybe_crash

                maybe_crash("pg_in_txn", fence.batch_id)
                c.execute(f"UPDATE {FENCE_SCHEMA}.fence SET result = %s WHERE processor = %s AND run_id = %s "
                          "AND target = %s AND batch_id = %s AND part = %s", (_result_json(res), *key))
                c.execute(f"DELETE FROM {FENCE_SCHEMA}.fence WHERE processor = %s AND run_id = %s AND target = %s "
                          "AND batch_id < %s", (*key[:3], fence.batch_id - FENCE_KEEP))
                return res, False

        return self._run(go)

    def _merge(self, c: psycopg.Connection, docs: list[dict], spec: MergeSpec) -> WriteResult:
        res = WriteResult()
        on = tuple(spec.on)
        by_id = on == ("_id",)
        keys: list[str | None] = []
        for doc in docs:
            if by_id:
                keys.append(id_key(doc["_id"]) if "_id" in doc else None)
            else:
                keys.append(on_key(doc, on))
        wanted = sorted({k for k in keys if k is not None})
        with c.transaction():
            # key -> [seq or None, pending insert position or None, current document]
            state: dict[str, list] = {}
            if wanted:
                if by_id:
                    q = sql.SQL("SELECT seq, id_key, body FROM {} WHERE id_key = ANY(%b::text[]) FOR UPDATE").format(self.table)
                    params: tuple = (wanted,)
                else:
                    expr = sql.SQL("jsonb_build_array({})").format(
                        sql.SQL(", ").join(sql.SQL("doc #> %s") for _ in on))
                    q = sql.SQL("SELECT seq, NULL, body FROM {} WHERE {} = ANY(%b::text[]::jsonb[]) ORDER BY seq FOR UPDATE"
                                ).format(self.table, expr)
                    params = (*[p.split(".") for p in on], wanted)
                for seq, key, body in c.execute(q, params).fetchall():
                    d = ejson.loads(body)
                    k = key if by_id else on_key(d, on)
                    if k is not None and k not in state:
                        state[k] = [seq, None, d]
            inserts: list[list | None] = []   # [id_key, canonical text]; None: deleted again
            updates: dict[int, str] = {}      # seq -> canonical text
            deletes: list[int] = []           # seqs
            for i, doc in enumerate(docs):
                k = keys[i]
                if k is None and not by_id:
                    res.errors.append((i, f"$merge: document is missing an 'on' field {list(on)}"))
                    continue
                cur = state.get(k) if k is not None else None
                action, out, err = apply_merge(cur[2] if cur else None, doc, spec)
                if err:
                    res.errors.append((i, err))
                    continue
                if action == "deleted":       # cur is the match: a stored row or one this batch inserts
                    if cur[0] is not None:
                        deletes.append(cur[0])
                        updates.pop(cur[0], None)
                    else:
                        inserts[cur[1]] = None
                    del state[k]
                if out is not None:
                    if cur is None:
                        out = out if "_id" in out else {"_id": ejson.ObjectId(), **out}
                    try:
                        text = _serialize(out)
                    except ValueError as exc:
                        res.errors.append((i, str(exc)))
                        continue
                    if cur is None:
                        ik = id_key(out["_id"])
                        inserts.append([ik, text])
                        state[ik if by_id else k] = [None, len(inserts) - 1, out]
                    elif cur[0] is not None:
                        updates[cur[0]] = text
                        cur[2] = out
                    else:
                        inserts[cur[1]][1] = text
                        cur[2] = out
                setattr(res, action, getattr(res, action) + 1)
            inserts = [x for x in inserts if x is not None]
            if deletes:
                c.execute(sql.SQL("DELETE FROM {} WHERE seq = ANY(%b::bigint[])").format(self.table), (deletes,))
            if updates:
                seqs = list(updates)
                c.execute(sql.SQL("UPDATE {} AS t SET body = v.b FROM unnest(%b::bigint[], %b::text[]) AS v(s, b) "
                                  "WHERE t.seq = v.s").format(self.table),
                          (seqs, [updates[s] for s in seqs]))
            if inserts:
                c.execute(sql.SQL("INSERT INTO {} (id_key, body) SELECT k, b FROM unnest(%b::text[], %b::text[]) "
                                  "WITH ORDINALITY AS v(k, b, o) ORDER BY o").format(self.table),
                          ([k for k, _ in inserts], [t for _, t in inserts]))
        return res

    # -- reads ------------------------------------------------------------------------------
    def scan(self, after_seq: int = 0) -> Iterator[tuple[int, dict]]:
        """``(seq, document)`` in insertion order, from just after ``after_seq``; pages of 1000."""
        last = after_seq
        q = sql.SQL("SELECT seq, body FROM {} WHERE seq > %s ORDER BY seq LIMIT %s").format(self.table)
        while True:
            rows = self._run(lambda c: c.execute(q, (last, PAGE)).fetchall())
            for seq, body in rows:
                yield seq, ejson.loads(body)
            if len(rows) < PAGE:
                return
            last = rows[-1][0]

    def find(self, predicate: Callable[[dict], bool] | None = None) -> Iterator[dict]:
        for _, doc in self.scan():
            if predicate is None or predicate(doc):
                yield doc

    def count(self) -> int:
        return self._run(lambda c: c.execute(sql.SQL("SELECT count(*) FROM {}").format(self.table)).fetchone()[0])

    def delete_ids(self, ids: Iterable[Any]) -> int:
        keys = [id_key(i) for i in ids]
        if not keys:
            return 0
        return self._run(lambda c: c.execute(
            sql.SQL("DELETE FROM {} WHERE id_key = ANY(%b::text[])").format(self.table), (keys,)).rowcount)

    def drop(self) -> None:
        with self.store.connection() as c:
            c.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(self.table))
        self.store._ensured.discard((self.db, self.name))
