"""MongoDB: change streams as a source, collections as ``$merge`` sinks (``pymongo``).

A connection ``{type: mongodb, uri: "mongodb://[user:password@]host:port/...", retry: {...}}``.

**Source positions** are resume tokens: a batch is the change events after one token up to and
including another. Planning opens the change stream after the batch's start token with every
field but ``_id`` (the token) projected away, so only tokens reach the driver; executors open it
again after the same token and read the events up to the end token. The change event (relaxed
Extended JSON) is the document; ``clusterTime`` (``t * 1000`` ms) is its arrival and default
event time, and ``offset`` is ``t * 2**32 + i``.

**Sink.** :class:`MongoCollection` writes a batch with one unordered ``bulk_write``:
``whenMatched`` ``replace`` -> ``ReplaceOne``, ``merge`` -> ``UpdateOne($set)``,
``keepExisting`` -> ``UpdateOne($setOnInsert)``, ``fail`` -> ``InsertOne``, ``delete`` (Atlas Stream
Processing's) -> ``DeleteOne`` of the match (then, in batch order, ``whenNotMatched`` for a document
that matches nothing, as the batch's earlier writes left it: one ordered ``bulk_write``); ``whenNotMatched``
``insert`` upserts, ``discard`` does not, ``fail`` sends the documents that match no stored
document (read first, by their ``on`` values) to the DLQ. Writes are by the ``on`` fields (``_id`` by default)
and deterministic ``_id``s make a replayed batch write the same documents again: idempotent. A
document the server refuses (duplicate key with ``fail``...) goes to the DLQ with the server's
reason. Writes are journaled (write concern ``j: true``, unless the URI sets ``journal``): a
batch the server acknowledged survives the server's crash before the batch is committed, so
exactly-once holds across a kill -9 of the server (an unjournaled write acknowledged just before
the crash was lost in ``test_mongodb``'s restart).
"""
from __future__ import annotations

from typing import Any, Iterator, Mapping, Sequence

from .. import ejson
from ..connections import Connection
from ..store.base import Collection, MergeSpec, WriteResult
from .retry import RetryPolicy, call


def _retryable(exc: BaseException) -> bool:
    from pymongo.errors import AutoReconnect, ConnectionFailure, NetworkTimeout, ServerSelectionTimeoutError

    return isinstance(exc, (AutoReconnect, ConnectionFailure, NetworkTimeout, ServerSelectionTimeoutError,
                            TimeoutError))


def client(options: Mapping[str, Any]):
    from pymongo import MongoClient

    t = RetryPolicy.of(options).timeout_ms
    kw = {} if "journal=" in options["uri"].lower() else {"journal": True}
    return MongoClient(options["uri"], serverSelectionTimeoutMS=t, connectTimeoutMS=t, socketTimeoutMS=max(t, 10_000),
                       **kw)


def to_bson(doc: Any) -> Any:
    """A headrace (Extended JSON) value as BSON values."""
    from bson import json_util

    return json_util.loads(ejson.dumps(doc, relaxed=False))


def from_bson(doc: Any) -> str:
    """A BSON document as relaxed Extended JSON text."""
    from bson import json_util

    return json_util.dumps(doc, json_options=json_util.RELAXED_JSON_OPTIONS)


def ts_offset(ts) -> int:
    return (int(ts.time) << 32) | int(ts.inc)


class ChangeStreams:
    """Planning and reading one change stream (a collection, a database or the deployment)."""

    def __init__(self, conn_name: str, options: Mapping[str, Any], db: str | None, coll: str | None,
                 pipeline: Sequence[dict] = (), full_document: str | None = None, start_at: Any = None):
        self.name, self.options = conn_name, dict(options)
        self.db, self.coll = db, coll
        self.pipeline = list(pipeline)
        self.full_document = full_document
        self.start_at = start_at
        self.policy = RetryPolicy.of(options)
        self._client = None

    def _c(self):
        if self._client is None:
            self._client = client(self.options)
        return self._client

    def _target(self):
        c = self._c()
        if self.db is None:
            return c
        return c[self.db] if self.coll is None else c[self.db][self.coll]

    @property
    def partition(self) -> str:
        return ".".join(x for x in (self.db, self.coll) if x) or "*"

    def _call(self, what, fn):
        return call(self.name, what, fn, self.policy, retryable=_retryable)

    def _watch(self, pipeline, token: str | None, **kw):
        args: dict[str, Any] = dict(kw)
        if token:
            args["resume_after"] = {"_data": token}
        elif self.start_at is not None:
            args["start_at_operation_time"] = self.start_at
        return self._target().watch(pipeline, max_await_time_ms=50, **args)

    def initial_token(self) -> str:
        def go():
            with self._watch(self.pipeline + [{"$project": {"_id": 1}}], None) as cs:
                if self.start_at is not None:
                    ev = cs.try_next()   # events since startAtOperationTime: start before the first
                    if ev is not None:
                        return "<start>"
                return cs.resume_token["_data"]
        return self._call(f"opening the change stream of {self.partition}", go)

    def advance(self, token: str, n: int) -> tuple[str, int]:
        """The token of the ``n``-th event after ``token`` (or the last available) and how many."""
        def go():
            last, k = token, 0
            with self._watch(self.pipeline + [{"$project": {"_id": 1}}], None if token == "<start>" else token) as cs:
                while k < n:
                    ev = cs.try_next()
                    if ev is None:
                        break
                    last, k = ev["_id"]["_data"], k + 1
            return last, k
        return self._call(f"planning a read of the change stream of {self.partition}", go)

    def read(self, after: str, upto: str) -> Iterator[dict]:
        """The change events after ``after`` up to and including ``upto``."""
        import time

        def go():
            out = []
            kw = {"full_document": self.full_document} if self.full_document else {}
            deadline = time.monotonic() + self.policy.timeout_ms / 1000
            with self._watch(self.pipeline, None if after == "<start>" else after, **kw) as cs:
                while True:
                    ev = cs.try_next()
                    if ev is None:
                        if cs.alive and time.monotonic() < deadline:
                            continue
                        raise TimeoutError(f"change stream gave no event up to token {upto}")
                    out.append(ev)
                    if ev["_id"]["_data"] == upto:
                        return out
        return self._call(f"reading the change stream of {self.partition}", go)

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None


def _match_key(filt: Mapping[str, Any], on: Sequence[str]) -> str:
    """``on`` values as a comparable key (numbers by value, as the server matches them)."""
    from bson import Decimal128, Int64, json_util

    def norm(v: Any) -> Any:
        if isinstance(v, (int, float, Int64, Decimal128)) and not isinstance(v, bool):
            x = float(v.to_decimal()) if isinstance(v, Decimal128) else float(v)
            return {"$n": x}
        if isinstance(v, dict):
            return {k: norm(x) for k, x in v.items()}
        if isinstance(v, list):
            return [norm(x) for x in v]
        return v
    return json_util.dumps([norm(filt.get(f)) for f in on])


def open_collection(registry, conn: Connection, db: str, coll: str) -> "MongoCollection":
    return MongoCollection(conn, db, coll)


class MongoCollection(Collection):
    """A MongoDB collection as a headrace sink (see the module docstring)."""

    def __init__(self, conn: Connection, db: str, coll: str):
        self.conn, self.db, self.coll = conn, db, coll
        self.policy = RetryPolicy.of(conn.options)

    def _with(self, what, fn):
        def go():
            c = client(self.conn.options)
            try:
                return fn(c[self.db][self.coll])
            finally:
                c.close()
        return call(self.conn.name, what, go, self.policy, retryable=_retryable)

    def merge_many(self, docs: Sequence[dict], spec: MergeSpec) -> WriteResult:
        from pymongo import DeleteOne, InsertOne, ReplaceOne, UpdateOne
        from pymongo.errors import BulkWriteError

        res = WriteResult()
        if not docs:
            return res
        wm, upsert = spec.when_matched, spec.when_not_matched == "insert"
        if callable(wm):
            res.errors = [(i, "a MongoDB sink takes whenMatched replace/merge/keepExisting/delete/fail, not a pipeline")
                          for i in range(len(docs))]
            return res
        ops, index, bad, todo = [], [], [], []
        for i, d in enumerate(docs):
            b = to_bson(d)
            filt = {}
            for f in spec.on:
                cur: Any = b
                for part in f.split("."):
                    cur = cur.get(part) if isinstance(cur, dict) else None
                filt[f] = cur
            if any(v is None for v in filt.values()):
                bad.append((i, f"the document lacks a value for 'on' field(s) {list(spec.on)}"))
                continue
            todo.append((i, b, filt))
        delete = wm == "delete"
        matched = self._matched([f for _, _, f in todo], spec.on) \
            if spec.when_not_matched == "fail" or delete else None
        discarded = 0
        for i, b, filt in todo:
            key = _match_key(filt, spec.on)
            if delete:      # matches as the batch's earlier writes leave them
                if key in matched:
                    ops.append(DeleteOne(filt))
                    index.append(i)
                    matched.discard(key)
                elif upsert:
                    ops.append(InsertOne(b))
                    index.append(i)
                    matched.add(key)
                elif spec.when_not_matched == "discard":
                    discarded += 1
                else:
                    bad.append((i, "whenNotMatched: fail: no document matches the 'on' fields"))
                continue
            if matched is not None and key not in matched:
                bad.append((i, "whenNotMatched: fail: no document matches the 'on' fields"))
                continue
            if wm == "replace":
                ops.append(ReplaceOne(filt, b, upsert=upsert))
            elif wm == "merge":
                rest = {k: v for k, v in b.items() if k != "_id"}
                upd: dict = {"$set": rest} if rest else {}
                if "_id" in b and "_id" not in spec.on:
                    upd["$setOnInsert"] = {"_id": b["_id"]}
                ops.append(UpdateOne(filt, upd or {"$setOnInsert": {"_id": b.get("_id")}}, upsert=upsert))
            elif wm == "keepExisting":
                ops.append(UpdateOne(filt, {"$setOnInsert": b}, upsert=upsert))
            else:   # fail: the insert fails on a duplicate key
                ops.append(InsertOne(b))
            index.append(i)
        errors = list(bad)
        res.discarded = discarded
        if ops:
            def write(coll):
                try:
                    return coll.bulk_write(ops, ordered=delete).bulk_api_result, []
                except BulkWriteError as exc:
                    errs = [(index[e["index"]], f"MongoDB refused the write: {e.get('errmsg')}")
                            for e in exc.details.get("writeErrors", [])]
                    if delete and errs:       # ordered: the batch's writes after the refused one did not run
                        last = exc.details["writeErrors"][-1]["index"]
                        errs += [(index[j], "not written: an earlier write of the batch was refused")
                                 for j in range(last + 1, len(ops))]
                    return exc.details, errs
            result, refused = self._with(f"writing to {self.db}.{self.coll}", write)
            errors += refused
            res.inserted = int(result.get("nInserted", 0)) + int(result.get("nUpserted", 0))
            res.replaced = int(result.get("nModified", 0))
            res.deleted = int(result.get("nRemoved", 0))
        res.errors = sorted(errors)
        return res

    def _matched(self, filters: list[dict], on: Sequence[str], chunk: int = 500) -> set:
        """The ``on`` values (:func:`_match_key`) among ``filters`` that some document has."""
        found: set = set()
        for k in range(0, len(filters), chunk):
            part = filters[k:k + chunk]
            got = self._with(f"reading {self.db}.{self.coll}", lambda coll: list(coll.find(
                {"$or": part}, {f: 1 for f in on})))
            for d in got:
                filt = {}
                for f in on:
                    cur: Any = d
                    for p in f.split("."):
                        cur = cur.get(p) if isinstance(cur, dict) else None
                    filt[f] = cur
                found.add(_match_key(filt, on))
        return found

    def insert_many(self, docs):
        return self.merge_many(list(docs), MergeSpec(on=("_id",), when_matched="replace"))

    def find(self, predicate=None):
        from bson import json_util

        docs = self._with(f"reading {self.db}.{self.coll}", lambda c: list(c.find()))
        for b in docs:
            d = ejson.loads(json_util.dumps(b, json_options=json_util.CANONICAL_JSON_OPTIONS))
            if predicate is None or predicate(d):
                yield d

    def count(self) -> int:
        return self._with(f"counting {self.db}.{self.coll}", lambda c: c.count_documents({}))

    def delete_ids(self, ids) -> int:
        ids = [to_bson(i) for i in ids]
        return self._with(f"deleting from {self.db}.{self.coll}",
                          lambda c: c.delete_many({"_id": {"$in": ids}}).deleted_count)

    def drop(self) -> None:
        self._with(f"dropping {self.db}.{self.coll}", lambda c: c.drop())
