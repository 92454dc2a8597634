"""The engine's state between micro-batches, versioned by batch id inside the checkpoint.

``<checkpoint>/headrace/meta/<N>.json`` is the state after batch ``N`` (:class:`EngineState`);
``<checkpoint>/headrace/state/<N>.parquet`` holds what batch ``N`` added to open windows
(:class:`StateFile`): the documents, or for a window kept as partial aggregates
(:mod:`headrace.spark.windows.partial`) one row per (window, group); ``<N>-c.parquet`` is a
compaction of the live files written by batch ``N``. A re-run of batch ``N`` after a crash reads version ``N-1`` and rewrites
``N``, so its output is that of an uninterrupted run: versions move in step with Spark's own
offset and commit logs. The last few versions are kept, and every state file a kept version
references.
"""
from __future__ import annotations

import datetime as _dt
import json
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from ...timing import TimeState

KEEP_VERSIONS = 5


def new_counters() -> dict[str, int]:
    return {"input": 0, "output": 0, "dlq": 0, "late": 0, "batches": 0, "inputBytes": 0}


@dataclass
class StateFile:
    """What one batch added to open windows (documents, or partial rows per window and group;
    or a compaction of earlier files), and the bounds that say when all its windows are closed."""

    batch: int
    max_t: int          # largest window time (event time, or arrival for processing-time windows)
    max_arrival: int
    path: str
    # the lowest and highest start of the tumbling/hopping windows its rows belong to (None:
    # not known, as for session windows and files written before it was kept)
    starts: tuple[int, int] | None = None
    # whether a partial row may need the full finalisation (PartialPlan.flags: a decimal total);
    # files written before it was kept: True
    flagged: bool = True

    def holds_any(self, starts: list[int]) -> bool:
        """Whether the file may hold rows of a window starting at one of ``starts``."""
        return self.starts is None or any(self.starts[0] <= s <= self.starts[1] for s in starts)

    def to_json(self) -> list:
        v = [self.batch, self.max_t, self.max_arrival, self.path]
        if self.starts is not None or not self.flagged:
            v.append(list(self.starts) if self.starts is not None else None)
        return v if self.flagged else v + [False]

    @classmethod
    def from_json(cls, v: list) -> "StateFile":
        return cls(*v[:4], starts=tuple(v[4]) if len(v) > 4 and v[4] is not None else None,
                   flagged=bool(v[5]) if len(v) > 5 else True)


def start_bounds(observed_starts) -> tuple[int, int] | None:
    """``StateFile.starts`` from the window starts observed while a file was written."""
    return (min(observed_starts), max(observed_starts)) if observed_starts else None


@dataclass
class EngineState:
    """What a micro-batch reads from the previous one and leaves to the next."""

    time: TimeState = field(default_factory=TimeState)
    # open windows: "start|end|key" -> the micro-batches that added documents to it
    windows: dict[str, int] = field(default_factory=dict)
    sessions: dict[str, list[list[int]]] = field(default_factory=dict)  # key -> [[first, last], ...]
    files: list[StateFile] = field(default_factory=list)
    counters: dict[str, int] = field(default_factory=new_counters)
    jsonl_size: int | None = None          # the JSON-lines sink's size after the batch
    positions: dict[str, int] = field(default_factory=dict)   # next position per source partition
    holding_back: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"time": self.time.to_json(), "windows": self.windows, "sessions": self.sessions,
                "files": [f.to_json() for f in self.files], "counters": self.counters,
                "jsonl_size": self.jsonl_size, "positions": self.positions, "holdingBack": self.holding_back}

    @classmethod
    def from_json(cls, d: dict) -> "EngineState":
        return cls(time=TimeState.from_json(d["time"]), windows=dict(d.get("windows", {})),
                   sessions={k: [list(x) for x in v] for k, v in d.get("sessions", {}).items()},
                   files=[StateFile.from_json(f) for f in d.get("files", [])],
                   counters={**new_counters(), **d.get("counters", {})}, jsonl_size=d.get("jsonl_size"),
                   positions=dict(d.get("positions", {})), holding_back=list(d.get("holdingBack", [])))


class Checkpoint:
    """The versions of :class:`EngineState` under ``<checkpoint>/headrace``."""

    def __init__(self, root: Path):
        self.dir = Path(root) / "headrace"
        self.meta = self.dir / "meta"
        self.state = self.dir / "state"
        self.meta.mkdir(parents=True, exist_ok=True)
        self.state.mkdir(parents=True, exist_ok=True)
        self.last_saved: str | None = None      # wall-clock instant of the last save (ISO)
        ident = self.dir / "run_id"
        if not ident.exists():    # this checkpoint's identity: transactional sinks fence on it
            import uuid

            tmp = self.dir / ".run_id.tmp"
            tmp.write_text(uuid.uuid4().hex)
            tmp.replace(ident)
        self.run_id = ident.read_text().strip()
        self._schema = None     # the window state files' schema, read once (see read_state)

    def _latest(self, below: int | None) -> Path | None:
        best = None
        for f in self.meta.glob("*.json"):
            n = int(f.stem)
            if below is not None and n >= below:
                continue
            if best is None or n > int(best.stem):
                best = f
        return best

    def load(self, before: int | None = None) -> EngineState | None:
        """The latest version below batch ``before`` (any version when None); None if there is none."""
        f = self._latest(before)
        return None if f is None else EngineState.from_json(json.loads(f.read_text()))

    def state_path(self, batch_id: int, suffix: str = "") -> Path:
        """Where batch ``batch_id`` writes window state (``suffix``: a second file of the batch)."""
        return self.state / f"{batch_id}{'-' + suffix if suffix else ''}.parquet"

    def read_state(self, spark, paths: list[str]):
        """The window state files ``paths`` as one DataFrame. Every state file of a processor has
        the same schema (the window's partial rows, or its documents), so it is read from the
        files' footers once and given to Spark after that: no per-batch schema inference."""
        if self._schema is None:
            df = spark.read.parquet(*paths)
            self._schema = df.schema
            return df
        return spark.read.schema(self._schema).parquet(*paths)

    def save(self, batch_id: int, st: EngineState, previous: EngineState) -> None:
        tmp = self.meta / f".{batch_id}.tmp"
        tmp.write_text(json.dumps(st.to_json()))
        tmp.replace(self.meta / f"{batch_id}.json")
        # A re-run of this batch reads the previous version: keep what either version references.
        referenced = {Path(f.path).name for f in st.files + previous.files}
        for d in self.state.glob("*.parquet"):
            if d.name not in referenced and int(d.stem.split("-")[0]) <= batch_id:
                shutil.rmtree(d, ignore_errors=True)
        for f in self.meta.glob("*.json"):
            if int(f.stem) < batch_id - KEEP_VERSIONS:
                f.unlink(missing_ok=True)
        self.last_saved = _dt.datetime.now(_dt.timezone.utc).isoformat()

    def size(self) -> int:
        """Bytes of window state on disk. Read while the batch writes (the stats of a running
        processor): a file or directory that vanishes meanwhile (a Parquet write's
        ``_temporary``) is skipped."""
        total = 0
        for root, _dirs, files in os.walk(self.state):     # os.walk skips directories that vanish
            for name in files:
                try:
                    total += os.stat(os.path.join(root, name)).st_size
                except FileNotFoundError:
                    pass
        return total
