"""Streams of shards: create, put, split, merge, describe, read (see the package docstring).

A :class:`Stream` object is a handle on ``<home>/streams/<name>``; any number of handles in
any number of processes may use one stream at once. A handle may be used by one thread at a
time.

The shard table is in :mod:`.shards`, the file helpers (atomic JSON, flock, the streams
directory) in :mod:`.files`; their names stay importable from here.
"""
from __future__ import annotations

import hashlib
import json
import os
import time
from bisect import bisect_right
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

from ..connections import headrace_home
from .errors import (InvalidArgument, MergeNotAdjacent, ShardClosed, ShardUnknown, SplitKeyOutOfRange,
                     StreamExists, StreamUnknown)
from .files import _fsync_dir, file_lock, list_streams, streams_dir, write_json_atomic
from .log import Record, ShardLog, now_us
from .shards import (FORMAT, MAX_HASH, MAX_SHARDS, Meta, Shard, check_name, hash_key, parse_hash_key, readable,
                     shard_name)

__all__ = [
    "FORMAT", "MAX_HASH", "MAX_SHARDS", "hash_key", "check_name", "shard_name", "Shard", "Meta",
    "write_json_atomic", "file_lock", "streams_dir", "list_streams", "parse_hash_key", "create_stream",
    "PutResult", "Stream", "readable", "watermark_partitions",
]


def create_stream(home: "str | os.PathLike[str] | None", name: str, shards: int = 1, *,
                  clock_us: Callable[[], int] = now_us) -> "Stream":
    """Create stream ``name`` with ``shards`` shards splitting the hash key space evenly."""
    check_name("stream", name)
    if isinstance(shards, bool) or not isinstance(shards, int) or not 1 <= shards <= MAX_SHARDS:
        raise InvalidArgument(f"--shards must be an integer from 1 to {MAX_SHARDS}, found {shards!r}",
                              code="SHARDS_INVALID")
    root = streams_dir(home)
    root.mkdir(parents=True, exist_ok=True)
    final = root / name
    if final.exists():
        raise StreamExists(f"stream {name!r} already exists in {root}")
    tmp = root / f".{name}.{os.getpid()}.{time.time_ns()}.creating"
    tmp.mkdir()
    (tmp / "shards").mkdir()
    (tmp / "groups").mkdir()
    t = clock_us()
    table: dict[str, Shard] = {}
    space = MAX_HASH + 1
    for i in range(shards):
        sid = shard_name(i)
        table[sid] = Shard(sid, i * space // shards, (i + 1) * space // shards - 1, created_us=t)
        ShardLog.create_files(tmp / "shards", sid)
    meta = Meta(name, table, shards, 1, t)
    write_json_atomic(tmp / "stream.json", meta.to_json())
    (tmp / "stream.lock").touch()
    try:
        os.rename(tmp, final)  # atomic; fails if another process created it first
    except OSError:
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)
        raise StreamExists(f"stream {name!r} already exists in {root}") from None
    _fsync_dir(root)
    return Stream(home, name, clock_us=clock_us)


@dataclass(frozen=True)
class PutResult:
    shard: str
    seq: int
    arrival_us: int


class Stream:
    """A handle on an existing stream (raises :class:`StreamUnknown` if there is none)."""

    def __init__(self, home: "str | os.PathLike[str] | None", name: str, *,
                 clock_us: Callable[[], int] = now_us):
        check_name("stream", name)
        self.home = headrace_home(home).resolve()
        self.name = name
        self.dir = self.home / "streams" / name
        self.meta_path = self.dir / "stream.json"
        self.shards_dir = self.dir / "shards"
        self.clock_us = clock_us
        if not self.meta_path.is_file():
            raise StreamUnknown(f"unknown stream {name!r} in {self.home / 'streams'}; known: {list_streams(self.home)}")
        self._meta: Meta | None = None
        self._meta_stamp: tuple[int, int, int] | None = None
        self._logs: dict[str, ShardLog] = {}

    # ---- metadata --------------------------------------------------------------------------
    def _stamp(self) -> tuple[int, int, int]:
        # every commit adds shards, so the file grows: (inode, size) never repeats
        st = os.stat(self.meta_path)
        return st.st_ino, st.st_size, st.st_mtime_ns

    def meta(self, refresh: bool = True) -> Meta:
        """The shard table; re-read when the file changed (``refresh``) or never read."""
        if self._meta is None or (refresh and self._stamp() != self._meta_stamp):
            while True:
                stamp = self._stamp()
                with open(self.meta_path, encoding="utf-8") as f:
                    data = json.load(f)
                if self._stamp() == stamp:
                    break
            self._meta, self._meta_stamp = Meta.from_json(data), stamp
        return self._meta

    def shards(self) -> list[Shard]:
        return list(self.meta().shards.values())

    def shard(self, shard_id: str) -> Shard:
        m = self.meta()
        if shard_id not in m.shards:
            raise ShardUnknown(f"stream {self.name!r} has no shard {shard_id!r}; shards: {sorted(m.shards)}")
        return m.shards[shard_id]

    def log(self, shard_id: str) -> ShardLog:
        if shard_id not in self._logs:
            self.shard(shard_id)
            self._logs[shard_id] = ShardLog(self.shards_dir, shard_id, clock_us=self.clock_us)
        return self._logs[shard_id]

    def close(self) -> None:
        for lg in self._logs.values():
            lg.close()
        self._logs.clear()

    def __enter__(self) -> "Stream":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ---- writes ----------------------------------------------------------------------------
    def _router(self, meta: Meta) -> Callable[[bytes], str]:
        """Partition key (UTF-8) -> id of the open shard owning its hash key."""
        shards = meta.open_shards()
        starts = [s.start for s in shards]
        ids = [s.id for s in shards]
        md5 = hashlib.md5

        def route(kb: bytes) -> str:
            return ids[bisect_right(starts, int.from_bytes(md5(kb).digest(), "big")) - 1]

        return route

    def put(self, key: str, data: Any = None, *, raw: str | None = None) -> PutResult:
        """Put one record (``data`` as JSON, or ``raw`` text as is); durable when it returns."""
        return self.put_many([(key, data)] if raw is None else [(key, None, raw)])[0]

    def put_many(self, records: Sequence[tuple]) -> list[PutResult]:
        """Put ``(key, data)`` or ``(key, None, raw_text)`` records; durable when it returns.

        Records with the same key keep their order. One fsync per shard touched.
        """
        items: list[tuple[int, bytes, bytes]] = []
        for i, rec in enumerate(records):
            key = rec[0]
            if not isinstance(key, str) or not key:
                raise InvalidArgument(f"record {i}: partition key must be a non-empty string, found {key!r}",
                                      code="KEY_INVALID")
            if len(rec) > 2 and rec[2] is not None:
                if not isinstance(rec[2], str):
                    raise InvalidArgument(f"record {i}: raw data must be text", code="DATA_INVALID")
                text = rec[2]
            else:
                try:
                    text = json.dumps(rec[1], separators=(",", ":"), ensure_ascii=False, allow_nan=False)
                except (TypeError, ValueError) as exc:
                    raise InvalidArgument(f"record {i}: data is not JSON-serializable: {exc}",
                                          code="DATA_INVALID") from None
            kb = key.encode("utf-8")
            if len(kb) > 256:
                raise InvalidArgument(f"record {i}: partition key longer than 256 bytes", code="KEY_INVALID")
            items.append((i, kb, text.encode("utf-8")))
        results: list[PutResult | None] = [None] * len(items)
        pending = items
        while pending:
            route = self._router(self.meta())
            groups: dict[str, list[tuple[int, bytes, bytes]]] = {}
            for it in pending:
                groups.setdefault(route(it[1]), []).append(it)
            pending = []
            for sid, group in groups.items():
                lg = self.log(sid)
                with lg.locked():
                    # a reshard replaces stream.json while holding this lock: re-check under it
                    if not self.meta().shards[sid].open:
                        pending.extend(group)
                        continue
                    out = lg.append_locked([(kb, data) for _, kb, data in group])
                for (i, _, _), (seq, arr) in zip(group, out):
                    results[i] = PutResult(sid, seq, arr)
            pending.sort(key=lambda it: it[0])
        return results  # type: ignore[return-value]

    # ---- resharding --------------------------------------------------------------------------
    @contextmanager
    def _resharding(self, shard_ids: Iterable[str]) -> Iterator[Meta]:
        """Stream lock, then the shards' write locks in id order; yields a fresh meta."""
        with file_lock(self.dir / "stream.lock"), ExitStack() as stack:
            meta = self.meta()
            for sid in sorted(set(shard_ids)):
                if sid not in meta.shards:
                    raise ShardUnknown(f"stream {self.name!r} has no shard {sid!r}; shards: {sorted(meta.shards)}")
                stack.enter_context(self.log(sid).locked())
            yield meta

    def _commit(self, meta: Meta) -> None:
        meta.version += 1
        write_json_atomic(self.meta_path, meta.to_json())
        self._meta = None
        self.meta()

    def split(self, shard_id: str, at: "int | str | None" = None) -> list[str]:
        """Split an open shard at hash key ``at`` (default: the middle of its range).

        Children ``[start, at-1]`` and ``[at, end]``; returns their ids.
        """
        with self._resharding([shard_id]) as meta:
            s = meta.shards[shard_id]
            if not s.open:
                raise ShardClosed(f"shard {shard_id!r} of stream {self.name!r} is closed (children {s.children});"
                                  " only open shards can be split")
            if s.start == s.end:
                raise SplitKeyOutOfRange(f"shard {shard_id!r} owns a single hash key and cannot be split")
            key = (s.start + s.end + 1) // 2 if at is None else parse_hash_key(at)
            if not s.start < key <= s.end:
                raise SplitKeyOutOfRange(
                    f"split key {key} is outside shard {shard_id!r}: it must be in [{s.start + 1}, {s.end}]"
                    f" (the shard owns [{s.start}, {s.end}])")
            end_seq = self.log(shard_id).count_locked()
            t = self.clock_us()
            a = Shard(shard_name(meta.next_shard), s.start, key - 1, [shard_id], created_us=t)
            b = Shard(shard_name(meta.next_shard + 1), key, s.end, [shard_id], created_us=t)
            meta.next_shard += 2
            for c in (a, b):
                ShardLog.create_files(self.shards_dir, c.id)
                meta.shards[c.id] = c
            s.children, s.closed_us, s.end_seq = [a.id, b.id], t, end_seq
            self._commit(meta)
            return [a.id, b.id]

    def merge(self, shard_a: str, shard_b: str) -> str:
        """Merge two open shards with adjacent ranges into one; returns the child's id."""
        if shard_a == shard_b:
            raise MergeNotAdjacent(f"cannot merge shard {shard_a!r} with itself")
        with self._resharding([shard_a, shard_b]) as meta:
            a, b = meta.shards[shard_a], meta.shards[shard_b]
            for s in (a, b):
                if not s.open:
                    raise ShardClosed(f"shard {s.id!r} of stream {self.name!r} is closed (children {s.children});"
                                      " only open shards can be merged")
            lo, hi = (a, b) if a.start < b.start else (b, a)
            if lo.end + 1 != hi.start:
                raise MergeNotAdjacent(
                    f"shards {shard_a!r} [{a.start}, {a.end}] and {shard_b!r} [{b.start}, {b.end}] are not adjacent")
            t = self.clock_us()
            c = Shard(shard_name(meta.next_shard), lo.start, hi.end, [lo.id, hi.id], created_us=t)
            meta.next_shard += 1
            ShardLog.create_files(self.shards_dir, c.id)
            for s in (lo, hi):
                s.end_seq = self.log(s.id).count_locked()
                s.children, s.closed_us = [c.id], t
            meta.shards[c.id] = c
            self._commit(meta)
            return c.id

    # ---- reads -------------------------------------------------------------------------------
    def count(self, shard_id: str) -> int:
        """Durable records in a shard now (its next sequence number)."""
        return self.log(shard_id).count()

    def read(self, shard_id: str, start: int = 0, stop: int | None = None) -> Iterator[Record]:
        """Records of a shard with ``start <= seq < stop``."""
        return self.log(shard_id).read(start, stop)

    def describe(self) -> dict:
        meta = self.meta()
        shards = []
        for s in sorted(meta.shards.values(), key=lambda s: s.id):
            shards.append({"id": s.id, "state": "open" if s.open else "closed",
                           "range": {"start": str(s.start), "end": str(s.end)},
                           "parents": s.parents, "children": s.children,
                           "records": self.count(s.id) if s.open else s.end_seq,
                           "created_us": s.created_us, "closed_us": s.closed_us})
        return {"name": self.name, "version": meta.version, "home": str(self.home),
                "open_shards": sum(1 for s in meta.shards.values() if s.open), "shards": shards}


def watermark_partitions(home: "str | os.PathLike[str] | None", stream: str,
                         offsets: Mapping[str, int] | None = None) -> list[str]:
    """Shard ids that are watermark partitions now: open shards, and closed shards that hold
    data not yet drained.

    ``offsets`` are a consumer's positions (per-shard next sequence numbers, as in the Spark
    source's offsets); a closed shard whose position reached its end is drained. Without
    ``offsets`` nothing counts as drained, so every closed shard holding records is listed.
    """
    meta = Stream(home, stream).meta()
    pos = offsets or {}
    return sorted(s.id for s in meta.shards.values()
                  if s.open or pos.get(s.id, 0) < (s.end_seq or 0))
