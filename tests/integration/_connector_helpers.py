"""Shared by the Kafka, Redis and MongoDB tests: the windowed pipeline, its input and its
expected output, and a CLI run killed with SIGKILL (or, in CI for Kafka and Redis, the same
crash in-process: :func:`crash_or_kill`)."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from headrace import ejson

#: HEADRACE_LONG_TESTS=1: the Kafka and Redis processors are also killed as CLI processes (SIGKILL);
#: CI kills the MongoDB one that way and crashes the other two in-process (a JVM start each saved)
LONG = bool(os.environ.get("HEADRACE_LONG_TESTS"))

BASE = 1_714_564_800_000   # 2024-05-01T12:00:00Z
WINDOW_MS = 10_000


def records(partitions: int = 3, per_partition: int = 30, seed: int = 5) -> list[list[str]]:
    """Per partition: JSON texts with event times increasing within the partition, then one
    record far ahead that closes every earlier window."""
    import random

    rnd = random.Random(seed)
    out = []
    for p in range(partitions):
        t, texts = BASE, []
        for i in range(per_partition):
            t += rnd.choice([500, 1000, 2000])
            texts.append(json.dumps({"t": ejson.format_date(ejson.millis_to_datetime(t)), "k": f"k{(i + p) % 4}",
                                     "v": p * 1000 + i}))
        texts.append(json.dumps({"t": ejson.format_date(ejson.millis_to_datetime(BASE + 3_600_000)), "k": "end",
                                 "v": 0}))
        out.append(texts)
    return out


def expected(parts: list[list[str]]) -> list[dict]:
    """The closed windows' groups: ``{_id: "k@start", sum, n}`` sorted by ``_id``."""
    agg: dict[tuple[str, int], list[int]] = {}
    ends = []
    for texts in parts:
        ends.append(max(ejson.datetime_to_millis(ejson.parse_iso(json.loads(x)["t"])) for x in texts))
    wm = min(ends)
    for texts in parts:
        for x in texts:
            d = json.loads(x)
            t = ejson.datetime_to_millis(ejson.parse_iso(d["t"]))
            start = t - t % WINDOW_MS
            if start + WINDOW_MS <= wm:
                a = agg.setdefault((d["k"], start), [0, 0])
                a[0] += d["v"]
                a[1] += 1
    return sorted(({"_id": f"{k}@{s}", "sum": v[0], "n": v[1]} for (k, s), v in agg.items()), key=lambda d: d["_id"])


def pipeline(source: dict, sink: dict, dlq: dict | None = None) -> dict:
    p = {"pipeline": [
        {"$source": {**source, "timeField": {"$toDate": "$t"}}},
        {"$tumblingWindow": {"interval": {"size": WINDOW_MS // 1000, "unit": "second"},
                             "pipeline": [{"$group": {"_id": "$k", "sum": {"$sum": "$v"}, "n": {"$sum": 1}}}]}},
        {"$addFields": {"_id": {"$concat": ["$_id", "@", {"$toString": {"$toLong": {"$meta": "stream.window.start"}}}]}}},
        {"$project": {"sum": 1, "n": 1}},
        sink]}
    if dlq:
        p["options"] = {"dlq": dlq}
    return p


def plain(docs) -> list[dict]:
    """Documents without ``_stream_meta``, sorted by ``_id``."""
    return sorted(({k: v for k, v in d.items() if k != "_stream_meta"} for d in docs), key=lambda d: d["_id"])


def kill_cli_after_batch(pipe: dict, tmp_path: Path, connections: Path, batch: int = 3) -> tuple[Path, Path, str]:
    """Run ``headrace process`` on ``pipe`` (written to ``p.json``) with checkpoint ``ck``, and
    SIGKILL it once micro-batch ``batch`` is checkpointed. Returns the pipeline file, the
    checkpoint and the process's standard error (asserting it had not stopped by itself)."""
    pf = tmp_path / "p.json"
    pf.write_text(json.dumps(pipe))
    ck = tmp_path / "ck"
    cmd = [sys.executable, "-m", "headrace.cli", "process", str(pf), "--checkpoint", str(ck),
           "--connections", str(connections), "--home", str(tmp_path / "home")]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    meta = ck / "headrace" / "meta"
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and proc.poll() is None:
        if meta.exists() and any(int(p.stem) >= batch for p in meta.glob("*.json")):
            break
        time.sleep(0.1)
    assert proc.poll() is None, "the processor stopped by itself"
    proc.send_signal(signal.SIGKILL)
    _out, err = proc.communicate()
    return pf, ck, err.decode(errors="replace")


class Crash(RuntimeError):
    pass


def crash_after_sink(batch: int, written=None):
    """A ``RunOptions.fault`` that stops the processor once a micro-batch from ``batch`` on has
    written its sink (and ``written()`` says the output holds something, when given), before Spark
    commits it: what a SIGKILL at that instant leaves behind."""
    def fault(batch_id: int, phase: str) -> None:
        if phase == "after_sink" and batch_id >= batch and (written is None or written()):
            raise Crash(f"crash after the sink of micro-batch {batch_id}")
    return fault


def crash_or_kill(pipe: dict, tmp_path: Path, connections: Path, run, written) -> tuple[Path, str, str]:
    """Stop the processor of ``pipe`` after a micro-batch from the third on wrote its sink: with
    HEADRACE_LONG_TESTS=1 a CLI run killed with SIGKILL (:func:`kill_cli_after_batch`), else in-process,
    ``run(checkpoint, name, fault)`` crashing once ``written()`` (the output so far) holds something.
    Returns the checkpoint, the name to resume the processor under and the CLI's standard error
    (empty in-process)."""
    if LONG:
        pf, ck, err = kill_cli_after_batch(pipe, tmp_path, connections)
        return ck, pf.stem, err         # the CLI names the processor by its file
    ck, name = tmp_path / "ck", "crashed"
    with pytest.raises(Exception, match="crash after the sink"):
        run(ck, name, crash_after_sink(2, written))
    assert written(), "nothing was written before the crash"
    return ck, name, ""


def check_merge_delete(coll) -> None:
    """``whenMatched: "delete"`` (Atlas Stream Processing's) on an empty collection of any sink
    backend: a match is removed, a document matching nothing follows ``whenNotMatched``, and a
    batch's documents see its earlier writes (an inserted document matches the next one with
    its key)."""
    from headrace.store.base import MergeSpec

    coll.merge_many([{"_id": 1, "a": 1}, {"_id": 2, "a": 2}], MergeSpec(when_matched="replace"))
    r = coll.merge_many([{"_id": 1}, {"_id": 3, "a": 3}, {"_id": 3, "a": 4}, {"_id": 4, "a": 5}],
                        MergeSpec(when_matched="delete", when_not_matched="insert"))
    assert (r.deleted, r.inserted, r.errors) == (2, 2, [])
    assert sorted((d["_id"], d["a"]) for d in coll.find()) == [(2, 2), (4, 5)]
    r = coll.merge_many([{"_id": 2}, {"_id": 9}], MergeSpec(when_matched="delete", when_not_matched="discard"))
    assert (r.deleted, r.discarded, coll.count()) == (1, 1, 1)
    r = coll.merge_many([{"_id": 4}, {"_id": 5}], MergeSpec(when_matched="delete", when_not_matched="fail"))
    assert r.deleted == 1 and [i for i, _ in r.errors] == [1] and coll.count() == 0


def run_across_outage(pipe: dict, reg, checkpoint: Path, total: int, outage) -> None:
    """Run ``pipe`` until ``total`` input records, calling ``outage()`` (the server killed,
    started again, the rest of the input written) once the first micro-batch ended; the run
    must then finish without an error, its retries carrying it across."""
    import threading

    from headrace.spark.engine import Processor, RunOptions
    from headrace.spec import parse_pipeline

    first = threading.Event()
    proc = Processor(parse_pipeline(pipe), RunOptions(
        name="restart", checkpoint=checkpoint, registry=reg, trigger_ms=0,
        on_batch=lambda bid, _clock, _w: first.set()))
    result: dict = {}

    def run() -> None:
        try:
            result["stats"] = proc.run(max_input=total, duration_s=240)
        except BaseException as exc:  # noqa: BLE001 - reported below
            result["error"] = exc

    t = threading.Thread(target=run)
    t.start()
    assert first.wait(120), "no micro-batch ran"
    outage()
    t.join(300)
    assert not t.is_alive() and "error" not in result, result.get("error")
