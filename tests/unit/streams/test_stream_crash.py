"""kill -9 of writers and readers at random points.

Promises tested:
- writer: every acknowledged record is stored at the shard and sequence number of its ack; a
  restarted producer that retries the unacknowledged tail may store those records twice
  (they were in flight at the kill), never anything else twice; per key, put order holds.
- reader (``headrace stream read``, at-least-once): every record is delivered; a restarted
  reader resumes at the checkpoint, so per shard each run delivers exactly the contiguous
  range that starts at the checkpoint it found; what it re-delivers is at most one batch per
  shard (what the killed run delivered after its last checkpoint).
"""
from __future__ import annotations

import json
import os
import random
import signal
import subprocess

from headrace.streams import LeaseTable, Stream, create_stream

from stream_helpers import PY, ROOT, child_env, drain_order, spawn


def _kill_after(p: subprocess.Popen, n: int) -> list[str]:
    """Read ``n`` lines, kill -9, then return every complete line the process had written."""
    lines = []
    for line in p.stdout:
        lines.append(line)
        if len(lines) == n:
            os.kill(p.pid, signal.SIGKILL)
            break
    rest = p.stdout.read()
    p.wait(timeout=30)
    lines.extend(rest.splitlines(keepends=True))
    return [ln for ln in lines if ln.endswith("\n")]


def test_writer_kill9_loses_nothing_acknowledged(home, children):
    N, KEYS = 3000, 10
    s = create_stream(home, "s", 2)
    rng = random.Random(11)
    acked: dict[int, tuple[str, int]] = {}
    in_flight: set[int] = set()
    start, kills = 0, 0
    while start < N:
        p = spawn("writer", home, "s", "W", start, N - start, KEYS, 40, children=children)
        if kills < 6:
            lines = _kill_after(p, rng.randint(20, 300))
            kills += 1
        else:
            lines = p.stdout.readlines()
            assert p.wait(timeout=60) == 0
        for ln in lines:
            _, i, shard, seq = ln.split()
            acked[int(i)] = (shard, int(seq))
        nxt = max(acked) + 1 if acked else 0
        if nxt < N and kills <= 6:
            in_flight.update(range(nxt, min(nxt + 40, N)))  # could have been stored unacknowledged
        start = nxt
        if kills == 3:
            s.split("shard-000000")  # closes a shard a killed writer used: recovery runs first
    assert kills == 6 and len(acked) == N

    recs = drain_order(Stream(home, "s"))
    at = {(r.shard, r.seq): json.loads(r.data)["i"] for r in recs}
    for i, pos in acked.items():
        assert at[pos] == i
    per_key: dict[str, list[int]] = {}
    counts: dict[int, int] = {}
    for r in recs:
        i = json.loads(r.data)["i"]
        per_key.setdefault(r.key, []).append(i)
        counts[i] = counts.get(i, 0) + 1
    assert set(counts) == set(range(N))
    dups = {i for i, c in counts.items() if c > 1}
    assert all(counts[i] == 2 for i in dups) and dups <= in_flight
    for k, seq in per_key.items():
        # a retry re-puts what was in flight after the stored (unacknowledged) copies: per key,
        # the first copies and the last copies are each in put order
        firsts = [i for n, i in enumerate(seq) if i not in seq[:n]]
        lasts = [i for n, i in enumerate(seq) if i not in seq[n + 1:]]
        assert firsts == sorted(firsts) and lasts == sorted(lasts), k


def _reader(home, worker, *extra):
    return subprocess.Popen([PY, "-m", "headrace.cli", "stream", "read", "s", "--home", str(home), "--group", "g",
                             "--worker", worker, "--batch", "25", "--lease-duration", "1.5", "--idle-wait", "0.05",
                             *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=child_env(),
                            cwd=str(ROOT))


def test_reader_kill9_redelivers_only_from_checkpoint(home, children):
    s = create_stream(home, "s", 3)
    s.put_many([(f"k{i % 20}", {"i": i}) for i in range(1500)])
    s.split("shard-000001")
    s.put_many([(f"k{i % 20}", {"i": i}) for i in range(1500, 3000)])
    opn = s.meta().open_shards()
    s.merge(opn[0].id, opn[1].id)
    s.put_many([(f"k{i % 20}", {"i": i}) for i in range(3000, 4000)])
    total = 4000
    rng = random.Random(5)
    runs = []
    table = LeaseTable(s, "g")
    for run in range(7):
        before = {k: v.checkpoint for k, v in table.load().items()}
        worker = "R" if run % 3 else f"R{run}"  # sometimes a new id: waits for the dead one's leases to expire
        last = run == 6
        p = _reader(home, worker, *([] if last else ["--follow"]))
        children.append(p)
        if last:
            out, err = p.communicate(timeout=60)
            assert p.returncode == 0, err
            lines = out.splitlines(keepends=True)
        else:
            lines = _kill_after(p, rng.randint(10, 700))
        runs.append((before, [json.loads(ln) for ln in lines]))

    delivered = [(d["shard"], d["seq"]) for _, recs in runs for d in recs]
    assert set(delivered) == {(r.shard, r.seq) for r in drain_order(s)} and len(set(delivered)) == total
    prev_end: dict[str, int] = {}
    for before, recs in runs:
        per_shard: dict[str, list[int]] = {}
        for d in recs:
            per_shard.setdefault(d["shard"], []).append(d["seq"])
        for shard, seqs in per_shard.items():
            start = before.get(shard, 0)
            assert seqs == list(range(start, start + len(seqs))), shard  # contiguous from the checkpoint
            assert prev_end.get(shard, 0) - start <= 25  # re-delivery: at most one batch
            prev_end[shard] = start + len(seqs)
        per_key: dict[str, list[int]] = {}
        for d in recs:
            per_key.setdefault(d["key"], []).append(d["data"]["i"])
        for k, seq in per_key.items():
            assert seq == sorted(seq)
    # first deliveries, across runs, keep per-key put order
    seen, per_key = set(), {}
    for _, recs in runs:
        for d in recs:
            if (d["shard"], d["seq"]) not in seen:
                seen.add((d["shard"], d["seq"]))
                per_key.setdefault(d["key"], []).append(d["data"]["i"])
    assert all(v == sorted(v) for v in per_key.values())
    assert len(delivered) - total <= 6 * 25 * 3
