"""A JSON-lines file as a source (connection ``{type: file, path: ...}``).

Offsets are line numbers and where they start (``{"line": n, "byte": b}``); each micro-batch
admits at most ``maxRecordsPerBatch`` lines and at most ``maxBytesPerBatch`` bytes of them (but
always one line), read as ``parallelism`` input partitions by byte ranges found at planning.
With option ``tickMs`` set, an idle file yields one clock-tick row per ``tickMs`` so idle
timeouts and processing-time windows advance without data. Arrival is the instant the
micro-batch was planned, one for all its input partitions (so the batch's lines arrive in file
order, whichever task reads first); event time without ``timeField`` is the arrival. The
file may grow while the processor runs (lines are picked up at the next planning); a line that
is not a JSON object goes to the DLQ with its raw text. One watermark partition, "0". Lines
reach Spark as Arrow RecordBatches (:mod:`.arrow_rows`).
"""
from __future__ import annotations

import array
import bisect
import datetime as _dt
import itertools
import os
from typing import Any, Iterator

from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition

from ...spec import defaults
from . import SOURCE_SCHEMA
from .arrow_rows import BATCH_ROWS, data_batch, tick_batch


class FileDataSource(DataSource):
    @classmethod
    def name(cls) -> str:
        return "headrace_file"

    def schema(self) -> str:
        return SOURCE_SCHEMA

    def streamReader(self, schema: Any) -> "FileReader":
        o = self.options
        return FileReader(o["path"], int(o.get("maxRecordsPerBatch", defaults.MAX_RECORDS_PER_BATCH)),
                          int(o.get("parallelism", 2)), int(o.get("tickMs", 0)),
                          int(o.get("maxBytesPerBatch", defaults.MAX_BYTES_PER_BATCH)))


class LineIndex:
    """Where lines start in a growing file, for a window of consecutive lines only.

    ``base`` is the first line of the window and ``starts[i]`` the byte where line ``base + i``
    starts; the last entry is the byte after the last complete line scanned, so the window
    holds ``len(starts) - 1`` lines. A reader keeps lines from its batch's start to
    ``maxRecordsPerBatch`` past it: the memory of a planner stays bounded however long the
    file grows (it kept every line's start: 36 MB per million lines, PROFILE.md)."""

    def __init__(self, path: str):
        self.path = path
        self.base = 0
        self.starts = array.array("q", [0])

    @property
    def end(self) -> int:
        """The line after the last complete line scanned."""
        return self.base + len(self.starts) - 1

    def byte(self, line: int) -> int:
        return self.starts[line - self.base]

    def within(self, lo: int, hi: int, max_bytes: int) -> int:
        """The last line ``e`` in ``(lo, hi]`` with lines ``[lo, e)`` at most ``max_bytes`` long,
        or ``lo + 1`` when line ``lo`` alone is longer (``lo < hi``, both in the window)."""
        i = lo - self.base
        j = bisect.bisect_right(self.starts, self.starts[i] + max_bytes, i + 1, hi - self.base + 1) - 1
        return self.base + max(j, i + 1)

    def seek(self, line: int, byte: int | None = None) -> None:
        """Make ``line`` the window's first line (``byte``: where it starts, when known)."""
        if self.base <= line <= self.end:
            del self.starts[:line - self.base]
        elif byte is not None:
            self.starts = array.array("q", [byte])
        else:   # before the window or past its end: count lines up to it
            skip_from = (self.end, self.starts[-1]) if line > self.end else (0, 0)
            self.starts = array.array("q", [self._skip(*skip_from, line)])
        self.base = line

    def _skip(self, line: int, byte: int, to: int) -> int:
        with open(self.path, "rb") as f:
            f.seek(byte)
            for text in itertools.islice(f, to - line):
                if not text.endswith(b"\n"):
                    raise ValueError(f"file source {self.path!r}: line {to} is not in the file")
                byte += len(text)
        return byte

    def scan(self, upto: int) -> None:
        """Extend the window with the complete lines before line ``upto`` the file has now."""
        if self.end >= upto or self.starts[-1] >= os.path.getsize(self.path):
            return
        with open(self.path, "rb") as f:
            f.seek(self.starts[-1])
            pos = self.starts[-1]
            for text in itertools.islice(f, upto - self.end):
                if not text.endswith(b"\n"):
                    break  # a line still being written
                pos += len(text)
                self.starts.append(pos)


class FileReader(DataSourceStreamReader):
    """Offsets are ``{"line": n, "byte": b}``: the next line and where it starts (an offset of
    an earlier version, without ``byte``, is found by counting lines)."""

    def __init__(self, path: str, max_rows: int, parallelism: int, tick_ms: int = 0,
                 max_bytes: int = defaults.MAX_BYTES_PER_BATCH):
        self.path, self.max_rows, self.parallelism, self.tick_ms = path, max_rows, max(1, parallelism), tick_ms
        self.max_bytes = max_bytes
        self._lines = LineIndex(path)

    def _offset(self, line: int, tick: int | None) -> dict:
        out = {"line": line, "byte": self._lines.byte(line)}
        return {**out, "tick": tick} if self.tick_ms else out

    def initialOffset(self) -> dict:
        return {"line": 0, "byte": 0, "tick": 0} if self.tick_ms else {"line": 0, "byte": 0}

    def latestOffset(self, start: dict | None = None, limit: Any = None) -> dict:
        start = start or self.initialOffset()
        lo = start["line"]
        self._lines.seek(lo, start.get("byte"))
        self._lines.scan(lo + self.max_rows)
        hi = min(self._lines.end, lo + self.max_rows)
        if hi > lo:
            hi = self._lines.within(lo, hi, self.max_bytes)
        tick = start.get("tick", 0)
        if hi == lo and self.tick_ms:
            import time

            tick = max(tick, int(time.time() * 1000) // self.tick_ms)
        if hi == lo and tick == start.get("tick", 0):
            return start    # nothing new: the same offset (an earlier version's too)
        return self._offset(hi, tick)

    def partitions(self, start: dict, end: dict) -> list[InputPartition]:
        lo, hi = start["line"], end["line"]
        if not self._lines.base <= lo <= self._lines.end:
            self._lines.seek(lo, start.get("byte"))
        self._lines.scan(hi)
        at = self._lines.byte
        if hi == lo:
            return [InputPartition((self.path, lo, hi, at(lo), None))]  # a clock tick
        n = max(1, min(self.parallelism, (hi - lo) // 10_000 or 1))
        step = (hi - lo + n - 1) // n or 1
        now = _dt.datetime.now(_dt.timezone.utc)     # the batch's one arrival instant
        return [InputPartition((self.path, a, min(a + step, hi), at(a), now))
                for a in range(lo, hi, step)] or [InputPartition((self.path, lo, hi, at(lo), now))]

    def commit(self, end: dict) -> None:
        """Lines before ``end`` are never planned again."""
        if self._lines.base <= end["line"] <= self._lines.end:
            self._lines.seek(end["line"])

    def read(self, partition: InputPartition) -> Iterator[Any]:
        """The lines ``[lo, hi)`` as RecordBatches of :data:`BATCH_ROWS` (one vectorised pass
        picks the lines Python must parse: :mod:`.arrow_rows`)."""
        path, lo, hi, byte, now = partition.value
        if hi == lo:
            yield tick_batch("0")
            return
        with open(path, "rb") as f:
            f.seek(byte)
            for start in range(lo, hi, BATCH_ROWS):
                end = min(hi, start + BATCH_ROWS)
                chunk = b"".join(itertools.islice(f, end - start))
                raws = chunk.decode("utf-8", errors="replace").split("\n")[:end - start]
                yield data_batch("0", range(start, end), now, raws)
