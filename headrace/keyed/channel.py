"""The on-disk streams between the computations of the Spark runner (pure Python + pyarrow).

Layout under a topology directory ``root``::

    producers/<producer>/producer.json          {"kind": "injector" | "spark", "checkpoint": path}
    producers/<producer>/<n>.<stream>.arrow     batch n's records into <stream> (Arrow IPC file:
                                                key, value (JSON text), ts (ms), seq), if any
    producers/<producer>/<n>.json               batch n's manifest: lw, clock, record counts ...
    producers/<producer>/head                   the last n whose manifest is written
    injectors/<name>/state.json                 an injector's position and watermark state

Every file is written to a temporary name and renamed, data before manifest before head. A batch
of an injector is committed once its ``head`` names it; a batch of a Spark computation once, in
addition, the computation's Spark checkpoint has committed it (``commits/<n>`` or a later one).
A Spark batch re-run after a crash rewrites the same files before its commit; consumers never see
an uncommitted batch, so each produced record is delivered once ("strong productions").
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Iterable


def write_atomic(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


class Channel:
    def __init__(self, root: "str | os.PathLike[str]"):
        self.root = Path(root)

    def pdir(self, producer: str) -> Path:
        return self.root / "producers" / producer

    def register(self, producer: str, kind: str, checkpoint: str | None = None) -> None:
        d = self.pdir(producer)
        d.mkdir(parents=True, exist_ok=True)
        write_atomic(d / "producer.json", json.dumps({"kind": kind, "checkpoint": checkpoint}).encode())

    def info(self, producer: str) -> dict | None:
        try:
            return json.loads((self.pdir(producer) / "producer.json").read_text())
        except FileNotFoundError:
            return None

    def write_batch(self, producer: str, n: int, records: Iterable[tuple[str, str, str, int]], manifest: dict) -> None:
        """Write batch ``n``: ``records`` are ``(stream, key, value JSON, ts)`` in order."""
        import pyarrow as pa

        d = self.pdir(producer)
        by_stream: dict[str, list] = {}
        for rec in records:
            by_stream.setdefault(rec[0], []).append(rec)
        counts = {}
        for stream, recs in by_stream.items():
            table = pa.table({"key": [r[1] for r in recs], "value": [r[2] for r in recs],
                              "ts": pa.array([r[3] for r in recs], pa.int64()),
                              "seq": pa.array(range(len(recs)), pa.int64())})
            sink = pa.BufferOutputStream()
            with pa.ipc.new_file(sink, table.schema) as w:
                w.write_table(table)
            write_atomic(d / f"{n}.{stream}.arrow", sink.getvalue().to_pybytes())
            counts[stream] = len(recs)
        write_atomic(d / f"{n}.json", json.dumps({**manifest, "n": n, "records": counts}).encode())
        write_atomic(d / "head", str(n).encode())

    def head(self, producer: str) -> int:
        try:
            return int((self.pdir(producer) / "head").read_text())
        except (FileNotFoundError, ValueError):
            return -1

    def committed(self, producer: str) -> int:
        """The last committed batch of ``producer`` (-1: none)."""
        head = self.head(producer)
        info = self.info(producer)
        if head < 0 or info is None or info.get("kind") != "spark":
            return head
        commits = Path(info["checkpoint"]) / "commits"
        try:
            done = max((int(x) for x in os.listdir(commits) if x.isdigit()), default=-1)
        except FileNotFoundError:
            done = -1
        return min(head, done)

    def manifest(self, producer: str, n: int) -> dict | None:
        if n < 0:
            return None
        try:
            return json.loads((self.pdir(producer) / f"{n}.json").read_text())
        except FileNotFoundError:
            return None

    def read(self, producer: str, n: int, stream: str) -> Any:
        """Batch ``n``'s records into ``stream`` as a pyarrow Table, or None."""
        import pyarrow as pa

        path = self.pdir(producer) / f"{n}.{stream}.arrow"
        if not path.exists():
            return None
        with pa.memory_map(str(path)) as src:
            return pa.ipc.open_file(src).read_all()

    def records(self, producers: list[str], stream: str) -> list[tuple[str, Any, int]]:
        """Every committed record of ``stream`` from ``producers``: ``(key, value, ts)``."""
        out = []
        for p in producers:
            for n in range(self.committed(p) + 1):
                t = self.read(p, n, stream)
                if t is not None:
                    for k, v, ts in zip(t.column("key").to_pylist(), t.column("value").to_pylist(),
                                        t.column("ts").to_pylist()):
                        out.append((k, json.loads(v), ts))
        return out


def input_watermark(ch: Channel, upstream: list[str], positions: dict[str, int], neg: int) -> tuple[int, int]:
    """``(IW, clock)`` of a consumer that has consumed ``positions`` (producer -> last n): IW the
    min of the low watermarks the producers published with those batches (``neg`` for a producer
    not consumed yet), clock the largest of their processing instants (0 when none)."""
    iw, clock = None, 0
    for p in upstream:
        m = ch.manifest(p, positions.get(p, -1))
        lw = neg if m is None else int(m["lw"])
        iw = lw if iw is None else min(iw, lw)
        if m is not None:
            clock = max(clock, int(m["clock"]))
    return (neg if iw is None else iw), clock
