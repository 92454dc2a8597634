"""Helpers for zoned-connection unit tests: SQLite zones in temp directories, no servers."""
from __future__ import annotations

import sqlite3
from pathlib import Path

import yaml

from headrace.connections import load_registry


def ranges_by_datacenter(*zones: str) -> list[dict]:
    return [{"zone": z, "min": {"datacenter": z, "userid": "$minKey"}, "max": {"datacenter": z, "userid": "$maxKey"}}
            for z in zones]


def zoned_options(tmp_path: Path, names=("alfa", "bravo"), **over) -> dict:
    """A two-zone (default) SQLite configuration; ``over`` replaces keys (merges writer/reads/balancer)."""
    opts = {
        "type": "zoned",
        "shardKey": {"datacenter": 1, "userid": 1},
        "zones": {z: {"store": str(tmp_path / z)} for z in names},
        "ranges": ranges_by_datacenter(*names),
        "writer": {"homeZone": names[0], "writeTimeoutMs": 300, "probeIntervalMs": 200},
        "reads": {"dedupeField": "message_id"},
    }
    for k, v in over.items():
        if v is None:
            opts.pop(k, None)
        elif isinstance(v, dict) and isinstance(opts.get(k), dict) and k in ("writer", "reads", "balancer"):
            opts[k] = {**opts[k], **v}
        else:
            opts[k] = v
    return opts


def registry_with(tmp_path: Path, connections: dict):
    tmp_path.mkdir(parents=True, exist_ok=True)
    f = tmp_path / "connections.yaml"
    f.write_text(yaml.safe_dump({"connections": connections}, sort_keys=False))
    return load_registry(f, home=tmp_path / ".headrace")


class ZoneLock:
    """Hold a zone's SQLite database write lock (like a zone that stops answering writes)."""

    def __init__(self, path: Path, db: str = "app"):
        self.c = sqlite3.connect(path / f"{db}.sqlite", isolation_level=None, timeout=5)
        self.c.execute("BEGIN EXCLUSIVE")

    def release(self) -> None:
        self.c.execute("ROLLBACK")
        self.c.close()
