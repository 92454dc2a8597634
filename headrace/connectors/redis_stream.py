"""Redis Streams: positions, reading a range of entries, and streams as sinks (``redis-py``).

A connection ``{type: redis, url: "redis://[:password@]host:port/db", retry: {...}}``.

**Positions** are entry ids (``"<ms>-<seq>"``): a stream's position is the id of the last entry
read (``"0-0"`` before the first). Planning asks the server, with a small script, for the id of
the n-th entry after a position (the entries stay on the server); executors read the entries
with ``XRANGE``. An entry id also gives the row's ``offset`` (``ms * 2**20 + seq``) and its
arrival time (the id's milliseconds), so a replayed range yields the same rows.

**Documents.** The entry field ``doc`` (or the one ``field`` names) holds the document as
(Extended) JSON text; an entry without it is the document of its fields (all strings).

**Sink.** :class:`RedisStream` appends each document as an entry ``{doc: <relaxed Extended
JSON>}``. Writes are idempotent on replay: one server-side script per chunk appends a document
only if its ``_id`` (canonical Extended JSON) is not in the stream's fence, a sorted set
``<stream>:headrace:ids`` written in the same script (atomically), which keeps the last
:data:`FENCE_SIZE` ids. ``$merge`` is refused before anything runs
(:mod:`headrace.validate`): a stream is append-only.
"""
from __future__ import annotations

import json
from typing import Any, Iterator, Mapping, Sequence

from .. import ejson
from ..connections import Connection
from ..store.base import Collection, MergeSpec, WriteResult, id_key
from .retry import ConnectorUnavailable, RetryPolicy, call

FIELD = "doc"
FENCE_SIZE = 1_000_000
CHUNK = 1000
SEQ_BITS = 20

_NTH = """
local r = redis.call('XRANGE', KEYS[1], ARGV[1], '+', 'COUNT', ARGV[2])
if #r == 0 then return false end
return {r[#r][1], #r}
"""

_APPEND = """
local n = 0
local t = redis.call('TIME')
local score = tonumber(t[1]) * 1000000 + tonumber(t[2])
for i = 2, #ARGV, 2 do
  if redis.call('ZSCORE', KEYS[2], ARGV[i]) == false then
    redis.call('XADD', KEYS[1], '*', ARGV[1], ARGV[i + 1])
    redis.call('ZADD', KEYS[2], score, ARGV[i])
    n = n + 1
  end
end
redis.call('ZREMRANGEBYRANK', KEYS[2], 0, -%d)
return n
""" % (FENCE_SIZE + 1)


def parse_id(entry_id: str) -> tuple[int, int]:
    ms, _, seq = entry_id.partition("-")
    return int(ms), int(seq or 0)


def offset_of(entry_id: str) -> int:
    """The BIGINT ``offset`` of an entry id (``ms * 2**20 + seq``; ids order as offsets do)."""
    ms, seq = parse_id(entry_id)
    return (ms << SEQ_BITS) | min(seq, (1 << SEQ_BITS) - 1)


def before(entry_id: str) -> str:
    """The id just before ``entry_id`` (a position from which ``entry_id`` is read first)."""
    ms, seq = parse_id(entry_id)
    if seq > 0:
        return f"{ms}-{seq - 1}"
    return "0-0" if ms == 0 else f"{ms - 1}-18446744073709551615"


def _retryable(exc: BaseException) -> bool:
    import redis

    return isinstance(exc, (redis.ConnectionError, redis.TimeoutError, OSError))


class RedisClient:
    """One connection's client, with every call retried (:mod:`.retry`)."""

    def __init__(self, conn_name: str, options: Mapping[str, Any]):
        import redis

        self.name, self.options = conn_name, dict(options)
        self.policy = RetryPolicy.of(options)
        t = self.policy.timeout_ms / 1000
        self.r = redis.Redis.from_url(options["url"], socket_timeout=t, socket_connect_timeout=t,
                                      decode_responses=True)
        self._nth = self.r.register_script(_NTH)
        self._append = self.r.register_script(_APPEND)

    def _call(self, what: str, fn):
        return call(self.name, what, fn, self.policy, retryable=_retryable)

    def last_id(self, stream: str) -> str:
        got = self._call(f"reading the end of stream {stream!r}", lambda: self.r.xrevrange(stream, count=1))
        return got[0][0] if got else "0-0"

    def advance(self, stream: str, pos: str, n: int) -> tuple[str, int]:
        """The id of the ``n``-th entry after ``pos`` (or the last one, if fewer) and how many."""
        got = self._call(f"planning a read of stream {stream!r}", lambda: self._nth(keys=[stream], args=[f"({pos}", n]))
        if not got:
            return pos, 0
        return str(got[0]), int(got[1])

    def read(self, stream: str, after: str, upto: str, chunk: int = 1000) -> Iterator[tuple[str, dict]]:
        """Entries ``after < id <= upto`` in id order."""
        pos = after
        while True:
            got = self._call(f"reading stream {stream!r}",
                             lambda: self.r.xrange(stream, f"({pos}", upto, count=chunk))
            yield from got
            if len(got) < chunk:
                return
            pos = got[-1][0]

    def append(self, stream: str, pairs: Sequence[tuple[str, str]], field: str = FIELD) -> int:
        """Append ``(id key, text)`` pairs whose id key is not in the fence; returns how many."""
        fence = f"{stream}:headrace:ids"
        n = 0
        for i in range(0, len(pairs), CHUNK):
            args: list[str] = [field]
            for k, text in pairs[i:i + CHUNK]:
                args += [k, text]
            n += int(self._call(f"writing to stream {stream!r}",
                                lambda: self._append(keys=[stream, fence], args=args)))
        return n

    def close(self) -> None:
        self.r.close()


def entry_text(fields: Mapping[str, str], field: str = FIELD) -> str:
    """The document text of an entry: its ``field``, else its fields as a JSON object."""
    if field in fields:
        return fields[field]
    return json.dumps(dict(fields), ensure_ascii=False)


def open_collection(registry, conn: Connection, db: str, coll: str) -> "RedisStream":
    """A stream as a collection (``db`` is ignored; the connection URL names the database)."""
    return RedisStream(conn, coll)


class RedisStream(Collection):
    """A stream written by ``$emit`` or the DLQ (see the module docstring)."""

    def __init__(self, conn: Connection, stream: str):
        self.conn, self.stream = conn, stream

    def merge_many(self, docs: Sequence[dict], spec: MergeSpec) -> WriteResult:
        res = WriteResult()
        if not docs:
            return res
        c = RedisClient(self.conn.name, self.conn.options)
        try:
            pairs = [(id_key(d.get("_id")), ejson.dumps(d)) for d in docs]
            res.inserted = c.append(self.stream, pairs)
        finally:
            c.close()
        return res

    def insert_many(self, docs):
        return self.merge_many(list(docs), MergeSpec(on=("_id",), when_matched="replace"))

    def find(self, predicate=None):
        c = RedisClient(self.conn.name, self.conn.options)
        try:
            for _id, fields in c.read(self.stream, "0-0", "+"):
                d = ejson.loads(entry_text(fields))
                if predicate is None or predicate(d):
                    yield d
        finally:
            c.close()

    def count(self) -> int:
        return sum(1 for _ in self.find())

    def delete_ids(self, ids) -> int:
        raise NotImplementedError("Redis streams written by headrace are append-only")

    def drop(self) -> None:
        c = RedisClient(self.conn.name, self.conn.options)
        try:
            c.r.delete(self.stream, f"{self.stream}:headrace:ids")
        finally:
            c.close()


__all__ = ["RedisClient", "RedisStream", "ConnectorUnavailable", "offset_of", "before", "entry_text"]
