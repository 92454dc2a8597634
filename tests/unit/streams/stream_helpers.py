"""Helpers for the stream tests: child processes, the CLI, lineage-ordered reads."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from headrace.streams import Record, Stream, readable

HERE = Path(__file__).parent
PROCS = str(HERE / "_procs.py")
PY = sys.executable
ROOT = HERE.parents[2]


def child_env() -> dict:
    env = dict(os.environ)
    env.pop("HEADRACE_HOME", None)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def spawn(role: str, *args: object, children: list | None = None, **kw) -> subprocess.Popen:
    kw.setdefault("stdout", subprocess.PIPE)
    kw.setdefault("stderr", subprocess.PIPE)
    p = subprocess.Popen([PY, PROCS, role, *map(str, args)], text=True, env=child_env(), **kw)
    if children is not None:
        children.append(p)
    return p


def cli(*args: object, input: str | None = None, check: bool = False) -> subprocess.CompletedProcess:
    p = subprocess.run([PY, "-m", "headrace.cli", *map(str, args)], input=input, capture_output=True, text=True,
                       env=child_env(), cwd=str(ROOT), timeout=60)
    if check and p.returncode != 0:
        raise AssertionError(f"{args} -> {p.returncode}\n{p.stdout}\n{p.stderr}")
    return p


def cli_json(*args: object, input: str | None = None):
    return json.loads(cli(*args, input=input, check=True).stdout)


def drain_order(stream: Stream) -> list[Record]:
    """Every record, in an order that respects lineage (parents drained before children)."""
    pos: dict[str, int] = {}
    out: list[Record] = []
    progress = True
    while progress:
        progress = False
        meta = stream.meta()
        for s in readable(meta, pos):
            end = s.end_seq if not s.open else stream.count(s.id)
            if end > pos.get(s.id, 0):
                out.extend(stream.read(s.id, pos.get(s.id, 0), end))
                pos[s.id] = end
                progress = True
    return out
