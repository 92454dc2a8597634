"""Inline ``documents`` and replay mode (time-semantics.md, "Replay mode").

The driver prepares the input as a list of micro-batches in a JSON-lines file (one line per
batch: ``{"arrival": ms, "rows": [[partition, offset, raw_text | null, kind], ...]}``);
the reader's offset is the number of batches delivered (``{"batch": n}``), and each
``latestOffset`` call admits exactly one more batch, so micro-batch boundaries are exactly the
groups of equal arrival instants. The last batch holds a single END row.
"""
from __future__ import annotations

import datetime as _dt
import json
from pathlib import Path
from typing import Any, Iterator

from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition

from ... import ejson
from ...spec.model import SourceSpec
from . import DATA, END, SOURCE_SCHEMA, TICK


def prepare_batches(spec: SourceSpec, start: _dt.datetime) -> tuple[list[dict], list[str]]:
    """The micro-batches of an inline/replay source and its watermark partitions.

    Without ``replay`` every document arrives at ``start`` in one micro-batch, partition "0".
    """
    docs = list(spec.documents or ())
    r = spec.replay
    batches: list[dict] = []
    offsets: dict[str, int] = {}
    if r is None:
        rows = []
        for d in docs:
            rows.append(["0", offsets.setdefault("0", 0), ejson.dumps(d, relaxed=False), DATA])
            offsets["0"] += 1
        t = ejson.datetime_to_millis(start)
        if rows:
            batches.append({"arrival": t, "rows": rows})
        batches.append({"arrival": t, "rows": [["0", -1, None, END]]})
        return batches, ["0"]
    partitions = list(r.partitions or ())
    cur: dict | None = None
    for d in docs:
        a = d[r.arrival_field]
        when = a if isinstance(a, _dt.datetime) else ejson.parse_iso(a)
        ms = ejson.datetime_to_millis(when)
        part = str(d.get(r.partition_field, partitions[0] if partitions else "0")) if r.partition_field else \
            (partitions[0] if partitions else "0")
        if part not in partitions:
            partitions.append(part)
        body = {k: v for k, v in d.items() if k not in (r.arrival_field, r.partition_field)}
        if cur is None or cur["arrival"] != ms:
            cur = {"arrival": ms, "rows": []}
            batches.append(cur)
        if body:
            cur["rows"].append([part, offsets.setdefault(part, 0), ejson.dumps(body, relaxed=False), DATA])
            offsets[part] += 1
        else:
            cur["rows"].append([part, -1, None, TICK])
    last = batches[-1]["arrival"] if batches else ejson.datetime_to_millis(start)
    batches.append({"arrival": last, "rows": [[partitions[0] if partitions else "0", -1, None, END]]})
    return batches, partitions or ["0"]


def write_batches(path: Path, batches: list[dict]) -> None:
    tmp = path.with_suffix(".tmp")
    with tmp.open("w") as f:
        for b in batches:
            f.write(json.dumps(b, separators=(",", ":")) + "\n")
    tmp.replace(path)


class DocumentsDataSource(DataSource):
    """``format("headrace_documents")``, option ``path``: the prepared batches file."""

    @classmethod
    def name(cls) -> str:
        return "headrace_documents"

    def schema(self) -> str:
        return SOURCE_SCHEMA

    def streamReader(self, schema: Any) -> "DocumentsReader":
        return DocumentsReader(self.options["path"])


def source_rows(path: str, lo: int = 0, hi: int | None = None) -> Iterator[tuple]:
    """The source rows of prepared batches ``lo`` (included) to ``hi`` (excluded; default: all)."""
    from ..docs import parse_in_reader

    with open(path) as f:
        for i, line in enumerate(f):
            if i < lo:
                continue
            if hi is not None and i >= hi:
                break
            b = json.loads(line)
            arrival = ejson.millis_to_datetime(b["arrival"])
            for part, off, raw, kind in b["rows"]:
                doc, err = parse_in_reader(raw) if kind == DATA else (None, None)
                yield (part, off, arrival, raw, doc, err, kind, arrival, None)


class DocumentsReader(DataSourceStreamReader):
    def __init__(self, path: str):
        self.path = path
        with open(path) as f:
            self.count = sum(1 for _ in f)

    def initialOffset(self) -> dict:
        return {"batch": 0}

    def latestOffset(self, start: dict | None = None, limit: Any = None) -> dict:
        n = (start or {"batch": 0})["batch"]
        return {"batch": min(n + 1, self.count)}

    def partitions(self, start: dict, end: dict) -> list[InputPartition]:
        return [InputPartition((self.path, start["batch"], end["batch"]))]

    def read(self, partition: InputPartition) -> Iterator[tuple]:
        return source_rows(*partition.value)

    def commit(self, end: dict) -> None:
        pass
