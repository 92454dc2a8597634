"""Kill -9 trials of exactly-once (test helper, public API; system.md section 2).

A workload that a process crash must not disturb, and the child process that runs it:

- an embedded stream (:mod:`headrace.streams`, 2 shards) holding ``messages`` messages
  ``{m: <id>, t: <event time>, v: <value>}``; a share of them is put twice or three times
  (producer retries: the same message, same key, a few positions later); messages with
  ``v < 0`` are invalid.
- processor ``eo_pg``: ``$source`` with ``dedup: {idField: "$m", horizon: 1 hour}``,
  ``$validate`` (``v >= 0``, invalid ones to the DLQ), ``$merge`` into PostgreSQL
  ``<schema>.out``; its DLQ in the store (``eo.dlq_pg``).
- processor ``eo_store``: the same into the store (``eo.out``), its DLQ in PostgreSQL
  (``<schema>.dlq_store``).

:func:`child_main` (``python -m headrace.killtrials``) runs both until each has read the whole
stream; the parent kills it (``SIGKILL`` of its whole process group: driver, JVM and Python
workers) at random instants or at named points (:mod:`headrace.faults`) and starts it again,
until a run completes. :func:`check` then says whether every valid message id is exactly once
in each sink and every invalid one exactly once in each DLQ.
"""
from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import yaml

HORIZON = {"size": 1, "unit": "hour"}
BASE_MS = 1_714_564_800_000


@dataclass
class Workload:
    root: Path                 # holds home/, checkpoints/, headrace.yaml
    dsn: str
    schema: str
    messages: int = 400
    per_batch: int = 40        # the stream source's maxRecordsPerBatch
    seed: int = 7

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def connections(self) -> Path:
        return self.root / "headrace.yaml"

    def checkpoint(self, name: str) -> Path:
        return self.root / "checkpoints" / name

    def expected(self) -> tuple[list[int], list[int]]:
        """(valid ids, invalid ids)."""
        valid = [m for m in range(self.messages) if not self._invalid(m)]
        return valid, [m for m in range(self.messages) if self._invalid(m)]

    @staticmethod
    def _invalid(m: int) -> bool:
        return m % 17 == 5

    def prepare(self) -> int:
        """Write the connections and fill the stream; returns the number of records put."""
        from .streams import create_stream

        self.root.mkdir(parents=True, exist_ok=True)
        self.connections.write_text(yaml.safe_dump({"connections": {
            "events": {"type": "stream", "home": str(self.home)},
            "pg": {"type": "postgres", "dsn": self.dsn},
            "store": {"type": "store", "path": str(self.root / "store")}}}))
        rng = random.Random(self.seed)
        records: list[tuple[str, dict]] = []
        pending: list[tuple[int, tuple[str, dict]]] = []
        for m in range(self.messages):
            rec = (f"k{m % 13}", {"m": m, "t": {"$date": BASE_MS + m * 100}, "v": -1 if self._invalid(m) else m})
            records.append(rec)
            for _ in range(rng.choice([0, 0, 0, 0, 1, 1, 2])):        # producer retries
                pending.append((len(records) + rng.randint(1, 60), rec))
            due = [p for p in pending if p[0] <= len(records)]
            pending = [p for p in pending if p[0] > len(records)]
            records.extend(r for _, r in due)
        records.extend(r for _, r in pending)
        s = create_stream(self.home, "events", 2)
        for i in range(0, len(records), 100):
            s.put_many(records[i:i + 100])
        return len(records)

    def pipelines(self) -> dict[str, dict]:
        src = {"$source": {"connectionName": "events", "stream": "events", "timeField": "$t",
                           "dedup": {"idField": "$m", "horizon": HORIZON},
                           "config": {"maxRecordsPerBatch": self.per_batch}}}
        val = {"$validate": {"validator": {"v": {"$gte": 0}}, "validationAction": "dlq"}}
        return {
            "eo_pg": {"pipeline": [src, val, {"$merge": {"into": {"connectionName": "pg", "db": self.schema,
                                                                   "coll": "out"}}}],
                      "options": {"dlq": {"connectionName": "store", "db": "eo", "coll": "dlq_pg"}}},
            "eo_store": {"pipeline": [src, val, {"$merge": {"into": {"connectionName": "store", "db": "eo",
                                                                      "coll": "out"}}}],
                         "options": {"dlq": {"connectionName": "pg", "db": self.schema, "coll": "dlq_store"}}},
        }

    def to_json(self) -> str:
        return json.dumps({"root": str(self.root), "dsn": self.dsn, "schema": self.schema,
                           "messages": self.messages, "per_batch": self.per_batch, "seed": self.seed})

    @classmethod
    def from_json(cls, text: str) -> "Workload":
        d = json.loads(text)
        return cls(Path(d["root"]), d["dsn"], d["schema"], d["messages"], d["per_batch"], d["seed"])

    def committed(self) -> int:
        """The largest batch id Spark committed, over both processors (-1 before any)."""
        best = -1
        for name in self.pipelines():
            d = self.checkpoint(name) / "spark" / "commits"
            if d.is_dir():
                best = max([best] + [int(f.name) for f in d.iterdir() if f.name.isdigit()])
        return best


def child_main(argv: list[str]) -> int:
    """Run both processors of the workload (``argv``: the workload's JSON, the record count)."""
    from .collections import open_collection  # noqa: F401 - backends import before Spark starts
    from .connections import load_registry
    from .spark.engine import Processor, RunOptions
    from .spec import parse_pipeline

    w = Workload.from_json(argv[0])
    total = int(argv[1])
    os.environ["HEADRACE_CRASH_PGID"] = str(os.getpgid(0))    # before Spark starts: its workers inherit it
    reg = load_registry(w.connections, w.root / "hr")
    procs = [Processor(parse_pipeline(p), RunOptions(name=name, checkpoint=w.checkpoint(name), registry=reg))
             for name, p in w.pipelines().items()]
    for p in procs:
        p.start()
    print("STARTED", flush=True)
    for p in procs:
        p.run(max_input=total)
    print("DONE", json.dumps([p.stats() for p in procs], default=str), flush=True)
    return 0


@dataclass
class TrialReport:
    kills: list[str] = field(default_factory=list)      # what each kill was ("random 3.2s", "after_sink:4")
    runs: int = 0
    seconds: float = 0.0


def run_trials(w: Workload, total: int, kills: int, seed: int = 1, max_runs: int | None = None,
               timeout_s: float = 600) -> TrialReport:
    """Start the child, kill it ``kills`` times (alternating random instants and named points,
    :mod:`headrace.faults`), then let it finish. Each child runs in its own process group."""
    rng = random.Random(seed)
    rep = TrialReport()
    t0 = time.monotonic()
    points = ["after_dedup", "pg_in_txn", "after_sink", "after_state"]
    marker = w.root / "crash-marker"
    while True:
        rep.runs += 1
        if max_runs is not None and rep.runs > max_runs:
            raise RuntimeError(f"no complete run after {max_runs} runs")
        env = {**os.environ}
        env.pop("HEADRACE_CRASH_AT", None)
        plan = None
        if len(rep.kills) < kills:
            if rng.random() < 0.5:
                plan = ("point", f"{rng.choice(points)}:{w.committed() + 1 + rng.randint(0, 2)}")
                env["HEADRACE_CRASH_AT"] = plan[1]
                env["HEADRACE_CRASH_MARKER"] = str(marker)
            else:
                plan = ("random", rng.uniform(1.0, 12.0))
        err_path = w.root / f"child-{rep.runs}.err"      # kept: a failed child's reason is in it
        with open(err_path, "wb") as err_file:
            proc = subprocess.Popen([sys.executable, "-m", "headrace.killtrials", w.to_json(), str(total)],
                                    env=env, stdout=subprocess.PIPE, stderr=err_file, text=True,
                                    start_new_session=True)
        try:
            if plan and plan[0] == "random":
                line = proc.stdout.readline()           # the processors are up: now the clock runs
                if line.startswith("STARTED"):
                    try:
                        proc.wait(timeout=plan[1])
                    except subprocess.TimeoutExpired:
                        os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=max(1.0, timeout_s - (time.monotonic() - t0)))
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            raise
        finally:
            _reap_group(proc.pid)
        out = proc.stdout.read() if proc.stdout else ""
        if proc.returncode == 0 and "DONE" in out:
            break                   # complete (a named point not reached leaves fewer kills than asked)
        if proc.returncode == -signal.SIGKILL:
            rep.kills.append(f"random {plan[1]:.1f}s" if plan and plan[0] == "random" else
                             f"{plan[1] if plan else 'unplanned'}")
            continue
        tail = err_path.read_text(errors="replace")[-3000:]
        raise RuntimeError(f"child failed with exit code {proc.returncode}: {out[-2000:]}\n"
                           f"its standard error ({err_path}) ends:\n{tail}")
    rep.seconds = time.monotonic() - t0
    return rep


def _reap_group(pgid: int) -> None:
    """Kill what is left of a child's process group (Spark JVM), and the Python daemons whose
    group leader's parent was in it (Spark's Python workers live in a group of their own)."""
    daemons = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            env = (d / "environ").read_bytes()
        except OSError:
            continue
        if f"HEADRACE_CRASH_PGID={pgid}".encode() in env.split(b"\0"):
            daemons.append(int(d.name))
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    for pid in daemons:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def check(w: Workload) -> dict:
    """Message ids in each sink and DLQ: ``{target: (ids in order found, expected ids)}``; exactly
    once means each list equals the expected one once sorted."""
    from .collections import open_collection
    from .connections import load_registry

    reg = load_registry(w.connections, w.root / "hr")
    valid, invalid = w.expected()
    got = {}
    for target, (conn, db, coll), want in (
            ("pg out", ("pg", w.schema, "out"), valid), ("store out", ("store", "eo", "out"), valid),
            ("store dlq (eo_pg)", ("store", "eo", "dlq_pg"), invalid),
            ("pg dlq (eo_store)", ("pg", w.schema, "dlq_store"), invalid)):
        docs = list(open_collection(reg, conn, db, coll).find())
        ids = [d["doc"]["m"] if "doc" in d else d["m"] for d in docs]
        got[target] = (sorted(ids), want)
    return got


if __name__ == "__main__":
    sys.exit(child_main(sys.argv[1:]))
