"""The instance's catalog: processors and their history in SQLite (pure Python, no Spark).

``<home>/instance/catalog.sqlite``. A processor row holds its name, pipeline and options (JSON),
state (``CREATED``, ``STARTED``, ``STOPPED``, ``FAILED``), worker and slot while running, last
error, checkpoint location and the last stats seen; ``history`` keeps every change
(create, start, stop, modify, fail, drop) with the pipeline at that point. A restart of
``headrace serve`` reads it back and restarts the processors that were ``STARTED``.
"""
from __future__ import annotations

import datetime as _dt
import json
import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

STATES = ("CREATED", "STARTED", "STOPPED", "FAILED")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS processors (
  name TEXT PRIMARY KEY, pipeline TEXT NOT NULL, options TEXT NOT NULL, state TEXT NOT NULL,
  worker INTEGER, slot INTEGER, last_error TEXT, checkpoint TEXT NOT NULL,
  created_at TEXT NOT NULL, updated_at TEXT NOT NULL, last_stats TEXT);
CREATE TABLE IF NOT EXISTS history (
  id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL, at TEXT NOT NULL, action TEXT NOT NULL,
  pipeline TEXT, detail TEXT);
"""


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="milliseconds")


@dataclass
class ProcessorRow:
    name: str
    pipeline: list
    options: dict
    state: str
    worker: int | None
    slot: int | None
    last_error: str | None
    checkpoint: str
    created_at: str
    updated_at: str
    last_stats: dict | None

    def summary(self) -> dict:
        return {"name": self.name, "state": self.state, "worker": self.worker, "slot": self.slot,
                "lastError": self.last_error, "createdAt": self.created_at, "updatedAt": self.updated_at}


class Catalog:
    """Thread-safe access to the catalog database."""

    def __init__(self, path: "str | Path"):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(str(self.path), check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.executescript(_SCHEMA)
        self._lock = threading.Lock()

    def close(self) -> None:
        with self._lock:
            self._db.close()

    @staticmethod
    def _row(r: tuple) -> ProcessorRow:
        return ProcessorRow(r[0], json.loads(r[1]), json.loads(r[2]), r[3], r[4], r[5], r[6], r[7], r[8], r[9],
                            json.loads(r[10]) if r[10] else None)

    def get(self, name: str) -> ProcessorRow | None:
        with self._lock:
            r = self._db.execute("SELECT * FROM processors WHERE name=?", (name,)).fetchone()
        return self._row(r) if r else None

    def list(self) -> list[ProcessorRow]:
        with self._lock:
            rows = self._db.execute("SELECT * FROM processors ORDER BY name").fetchall()
        return [self._row(r) for r in rows]

    def create(self, name: str, pipeline: list, options: dict, checkpoint: str) -> ProcessorRow:
        """Insert a ``CREATED`` processor; raises KeyError when the name exists."""
        now = _now()
        with self._lock:
            try:
                self._db.execute("INSERT INTO processors VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                                 (name, json.dumps(pipeline), json.dumps(options), "CREATED", None, None, None,
                                  checkpoint, now, now, None))
            except sqlite3.IntegrityError:
                raise KeyError(name) from None
            self._history(name, "create", pipeline, options)
        return self.get(name)  # type: ignore[return-value]

    def update(self, name: str, action: str | None = None, detail: Any = None, **fields: Any) -> None:
        """Set columns (``state``, ``worker``, ``slot``, ``last_error``, ``pipeline``, ``options``,
        ``last_stats``); with ``action`` a history entry is written."""
        cols = {"pipeline", "options", "state", "worker", "slot", "last_error", "last_stats"}
        bad = set(fields) - cols
        if bad:
            raise ValueError(f"unknown catalog columns {sorted(bad)}")
        if "state" in fields and fields["state"] not in STATES:
            raise ValueError(f"unknown state {fields['state']!r}")
        vals = {k: json.dumps(v) if k in ("pipeline", "options", "last_stats") and v is not None else v
                for k, v in fields.items()}
        vals["updated_at"] = _now()
        with self._lock:
            self._db.execute(f"UPDATE processors SET {', '.join(f'{k}=?' for k in vals)} WHERE name=?",
                             (*vals.values(), name))
            if action:
                self._history(name, action, fields.get("pipeline"), detail)

    def delete(self, name: str) -> None:
        with self._lock:
            self._db.execute("DELETE FROM processors WHERE name=?", (name,))
            self._history(name, "drop", None, None)

    def history(self, name: str) -> list[dict]:
        with self._lock:
            rows = self._db.execute("SELECT at, action, pipeline, detail FROM history WHERE name=? ORDER BY id",
                                    (name,)).fetchall()
        return [{"at": a, "action": act, "pipeline": json.loads(p) if p else None,
                 "detail": json.loads(d) if d else None} for a, act, p, d in rows]

    def _history(self, name: str, action: str, pipeline: Any, detail: Any) -> None:
        self._db.execute("INSERT INTO history (name, at, action, pipeline, detail) VALUES (?,?,?,?,?)",
                         (name, _now(), action, json.dumps(pipeline) if pipeline is not None else None,
                          json.dumps(detail, default=str) if detail is not None else None))
