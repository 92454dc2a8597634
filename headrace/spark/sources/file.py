"""A JSON-lines file as a source (connection ``{type: file, path: ...}``).

Offsets are line numbers (``{"line": n}``); each micro-batch admits at most
``maxRecordsPerBatch`` lines, read as ``parallelism`` input partitions by byte ranges found at
planning. With option ``tickMs`` set, an idle file yields one clock-tick row per ``tickMs`` so
idle timeouts and processing-time windows advance without data. Arrival is the instant the
micro-batch was planned, one for all its input partitions (so the batch's lines arrive in file
order, whichever task reads first); event time without ``timeField`` is the arrival. The
file may grow while the processor runs (lines are picked up at the next planning); a line that
is not a JSON object goes to the DLQ with its raw text. One watermark partition, "0". Lines
reach Spark as Arrow RecordBatches (:mod:`.arrow_rows`).
"""
from __future__ import annotations

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
                          int(o.get("parallelism", 2)), int(o.get("tickMs", 0)))


class FileReader(DataSourceStreamReader):
    def __init__(self, path: str, max_rows: int, parallelism: int, tick_ms: int = 0):
        self.path, self.max_rows, self.parallelism, self.tick_ms = path, max_rows, max(1, parallelism), tick_ms
        self._index: list[int] = [0]   # byte offset of each line start seen so far

    def _scan(self) -> None:
        size = os.path.getsize(self.path)
        pos = self._index[-1]
        if pos >= size:
            return
        with open(self.path, "rb") as f:
            f.seek(pos)
            for line in f:
                if not line.endswith(b"\n"):
                    break  # a line still being written
                pos += len(line)
                self._index.append(pos)

    def initialOffset(self) -> dict:
        return {"line": 0}

    def latestOffset(self, start: dict | None = None, limit: Any = None) -> dict:
        self._scan()
        start = start or {"line": 0}
        lo = start["line"]
        hi = min(len(self._index) - 1, lo + self.max_rows)
        tick = start.get("tick", 0)
        if hi == lo and self.tick_ms:
            import time

            tick = max(tick, int(time.time() * 1000) // self.tick_ms)
        return {"line": hi, "tick": tick} if self.tick_ms else {"line": hi}

    def partitions(self, start: dict, end: dict) -> list[InputPartition]:
        self._scan()
        lo, hi = start["line"], end["line"]
        if hi == lo:
            return [InputPartition((self.path, lo, hi, self._index[lo], None))]  # a clock tick
        n = max(1, min(self.parallelism, (hi - lo) // 10_000 or 1))
        step = (hi - lo + n - 1) // n or 1
        now = _dt.datetime.now(_dt.timezone.utc)     # the batch's one arrival instant
        return [InputPartition((self.path, a, min(a + step, hi), self._index[a], now))
                for a in range(lo, hi, step)] or [InputPartition((self.path, lo, hi, self._index[lo], now))]

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
