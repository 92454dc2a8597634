"""One shard's durable record log: ``<id>.log`` (frames) and ``<id>.idx`` (offsets).

Frame (little endian)::

    magic  2 bytes  b"HR"
    length u32      payload length
    crc    u32      CRC-32 of the payload
    payload:
      seq      u64  sequence number (0, 1, 2 ... per shard)
      arrival  i64  arrival time, microseconds since the Unix epoch (UTC); never decreases
      key_len  u32
      key      key_len bytes (UTF-8 partition key)
      data     the rest (UTF-8 text, JSON for records put as values)

``<id>.idx`` holds one u64 byte offset per record, in sequence order. Writers append frames,
``fsync`` the log, then append the index entries; a put is acknowledged only after that. So
the index covers only durable records, and readers (who take no lock) read only indexed
records: a reader never sees a record that a power loss could take back.

Writers serialize on an exclusive ``flock`` of ``<id>.lock``. Under the lock a writer checks
that the files have the sizes it left them with; if not (another process wrote, or one
crashed mid-append) it runs :meth:`ShardLog.recover_locked`, which keeps every complete,
CRC-valid frame that follows the last indexed one (an unacknowledged put may therefore
survive a crash), cuts the first torn or invalid frame and everything after it, and indexes
what it kept.
"""
from __future__ import annotations

import fcntl
import os
import struct
import time
import zlib
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator, Sequence

from .errors import CorruptLog

MAGIC = b"HR"
HEADER = struct.Struct("<2sII")
PHEAD = struct.Struct("<QqI")
IDX = struct.Struct("<Q")
MAX_PAYLOAD = 64 * 1024 * 1024
_READ_CHUNK = 1 << 20


def now_us() -> int:
    return time.time_ns() // 1000


@dataclass(frozen=True, slots=True)
class Record:
    """One record as stored: shard id, sequence number, arrival (µs, UTC), key, data (text)."""

    shard: str
    seq: int
    arrival_us: int
    key: str
    data: str


def encode(seq: int, arrival_us: int, key: bytes, data: bytes) -> bytes:
    payload = PHEAD.pack(seq, arrival_us, len(key)) + key + data
    return HEADER.pack(MAGIC, len(payload), zlib.crc32(payload)) + payload


def decode_at(buf: "bytes | memoryview", pos: int) -> "tuple[int, int, int, bytes, bytes] | None":
    """``(end, seq, arrival_us, key, data)`` of the frame at ``pos``, or None if torn/invalid."""
    if len(buf) - pos < HEADER.size:
        return None
    magic, length, crc = HEADER.unpack_from(buf, pos)
    if magic != MAGIC or length < PHEAD.size or length > MAX_PAYLOAD:
        return None
    start = pos + HEADER.size
    end = start + length
    if end > len(buf):
        return None
    payload = bytes(buf[start:end])
    if zlib.crc32(payload) != crc:
        return None
    seq, arrival, klen = PHEAD.unpack_from(payload, 0)
    if PHEAD.size + klen > length:
        return None
    return end, seq, arrival, payload[PHEAD.size:PHEAD.size + klen], payload[PHEAD.size + klen:]


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def _pread_exact(fd: int, n: int, off: int) -> bytes:
    out = b""
    while len(out) < n:
        chunk = os.pread(fd, n - len(out), off + len(out))
        if not chunk:
            break
        out += chunk
    return out


class ShardLog:
    """Append and read one shard's records. An instance may be used by one thread at a time."""

    def __init__(self, directory: Path, shard: str, *, clock_us: Callable[[], int] = now_us):
        self.dir = Path(directory)
        self.shard = shard
        self.log_path = self.dir / f"{shard}.log"
        self.idx_path = self.dir / f"{shard}.idx"
        self.lock_path = self.dir / f"{shard}.lock"
        self.clock_us = clock_us
        self._wfd: int | None = None      # log, O_APPEND
        self._ifd: int | None = None      # idx, O_APPEND
        self._lfd: int | None = None      # lock file
        self._sizes: tuple[int, int] | None = None  # (log, idx) as this writer left them
        self._last_arrival = 0

    # ---- files ---------------------------------------------------------------------------
    @staticmethod
    def create_files(directory: Path, shard: str) -> None:
        """Create (or empty) the files of a new shard; fsyncs them."""
        for suffix in (".log", ".idx", ".lock"):
            fd = os.open(directory / f"{shard}{suffix}", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            os.fsync(fd)
            os.close(fd)

    def close(self) -> None:
        for name in ("_wfd", "_ifd", "_lfd"):
            fd = getattr(self, name)
            if fd is not None:
                os.close(fd)
                setattr(self, name, None)
        self._sizes = None

    def __del__(self) -> None:  # pragma: no cover - best effort
        try:
            self.close()
        except Exception:
            pass

    @contextmanager
    def locked(self) -> Iterator["ShardLog"]:
        """Hold the shard's exclusive write lock."""
        if self._lfd is None:
            self._lfd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        fcntl.flock(self._lfd, fcntl.LOCK_EX)
        try:
            yield self
        finally:
            fcntl.flock(self._lfd, fcntl.LOCK_UN)

    def _open_write(self) -> None:
        if self._wfd is None:
            self._wfd = os.open(self.log_path, os.O_RDWR | os.O_APPEND)
            self._ifd = os.open(self.idx_path, os.O_RDWR | os.O_APPEND)

    # ---- writer side (call with the lock held) ---------------------------------------------
    def _current_sizes(self) -> tuple[int, int]:
        return os.fstat(self._wfd).st_size, os.fstat(self._ifd).st_size

    def recover_locked(self) -> int:
        """Make log and index consistent (see the module docstring); returns the record count."""
        self._open_write()
        wfd, ifd = self._wfd, self._ifd
        log_size, idx_size = self._current_sizes()
        n = idx_size // IDX.size
        pos = 0
        last_arrival = 0
        if n:
            (off,) = IDX.unpack(_pread_exact(ifd, IDX.size, (n - 1) * IDX.size))
            head = _pread_exact(wfd, HEADER.size, off)
            frame = None
            if len(head) == HEADER.size:
                _, length, _ = HEADER.unpack(head)
                frame = decode_at(_pread_exact(wfd, HEADER.size + min(length, MAX_PAYLOAD), off), 0)
            if frame is None or frame[1] != n - 1:
                n = 0  # the index does not match the log: rebuild it from the start
            else:
                pos = off + frame[0]
                last_arrival = frame[2]
        # scan what follows the last indexed frame
        tail = _pread_exact(wfd, log_size - pos, pos) if log_size > pos else b""
        new_offsets = []
        p = 0
        seq = n
        while True:
            frame = decode_at(tail, p)
            if frame is None or frame[1] != seq:
                break
            new_offsets.append(pos + p)
            last_arrival = max(last_arrival, frame[2])
            p = frame[0]
            seq += 1
        good_end = pos + p
        if log_size > good_end:
            os.ftruncate(wfd, good_end)
        if idx_size != n * IDX.size:
            os.ftruncate(ifd, n * IDX.size)
        os.fsync(wfd)  # what gets indexed below must be durable
        if new_offsets:
            _write_all(ifd, b"".join(IDX.pack(o) for o in new_offsets))
        self._sizes = (good_end, (n + len(new_offsets)) * IDX.size)
        self._last_arrival = last_arrival
        return n + len(new_offsets)

    def count_locked(self) -> int:
        """Number of records (with the lock held; recovers if another process left it dirty)."""
        self._open_write()
        if self._sizes is None or self._current_sizes() != self._sizes:
            return self.recover_locked()
        return self._sizes[1] // IDX.size

    def append_locked(self, items: Sequence[tuple[bytes, bytes]]) -> list[tuple[int, int]]:
        """Append ``(key, data)`` items durably; returns ``(seq, arrival_us)`` for each."""
        seq = self.count_locked()
        log_size = self._sizes[0]
        arrival = max(self.clock_us(), self._last_arrival)
        parts = []
        offsets = []
        out = []
        pos = log_size
        for key, data in items:
            frame = encode(seq, arrival, key, data)
            parts.append(frame)
            offsets.append(IDX.pack(pos))
            out.append((seq, arrival))
            pos += len(frame)
            seq += 1
        _write_all(self._wfd, b"".join(parts))
        os.fdatasync(self._wfd)
        _write_all(self._ifd, b"".join(offsets))
        self._sizes = (pos, seq * IDX.size)
        self._last_arrival = arrival
        return out

    # ---- reader side (no lock) ---------------------------------------------------------------
    def count(self) -> int:
        """Durable records readable now."""
        try:
            return os.stat(self.idx_path).st_size // IDX.size
        except FileNotFoundError:
            return 0

    def offset_of(self, seq: int) -> int:
        with open(self.idx_path, "rb") as f:
            f.seek(seq * IDX.size)
            raw = f.read(IDX.size)
        if len(raw) != IDX.size:
            raise CorruptLog(f"shard {self.shard}: no index entry for sequence number {seq}")
        return IDX.unpack(raw)[0]

    def read(self, start: int = 0, stop: int | None = None) -> Iterator[Record]:
        """Records with ``start <= seq < stop`` (``stop`` defaults to :meth:`count` now)."""
        n = self.count()
        stop = n if stop is None else min(stop, n)
        if start >= stop:
            return
        base = self.offset_of(start)
        seq = start
        shard = self.shard
        with open(self.log_path, "rb", buffering=0) as f:
            f.seek(base)
            buf = b""
            p = 0
            while seq < stop:
                frame = decode_at(buf, p)
                if frame is None:
                    more = f.read(_READ_CHUNK)
                    if not more:
                        raise CorruptLog(f"shard {shard}: record {seq} at byte {base + p} is unreadable")
                    base += p
                    buf = buf[p:] + more
                    p = 0
                    continue
                end, s, arrival, key, data = frame
                if s != seq:
                    raise CorruptLog(f"shard {shard}: expected sequence number {seq} at byte {base + p}, found {s}")
                yield Record(shard, s, arrival, key.decode("utf-8"), data.decode("utf-8"))
                p = end
                seq += 1

    def arrival_of(self, seq: int) -> int:
        off = self.offset_of(seq)
        with open(self.log_path, "rb") as f:
            f.seek(off)
            head = f.read(HEADER.size + PHEAD.size)
        if len(head) < HEADER.size + PHEAD.size:
            raise CorruptLog(f"shard {self.shard}: record {seq} is unreadable")
        return PHEAD.unpack_from(head, HEADER.size)[1]

    def first_at_or_after(self, arrival_us: int) -> int:
        """The smallest sequence number whose arrival is ``>= arrival_us`` (count if none)."""
        lo, hi = 0, self.count()
        while lo < hi:
            mid = (lo + hi) // 2
            if self.arrival_of(mid) < arrival_us:
                lo = mid + 1
            else:
                hi = mid
        return lo
