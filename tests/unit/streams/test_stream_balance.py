"""Lease balance with real worker processes (``headrace stream read --follow --events``).

The test waits on the workers' lease events (stderr JSON lines), never on timers:
4 shards over 2 workers -> 2 and 2; split one -> 5 shards -> 3 and 2; kill -9 one worker ->
its leases expire and the other takes them over from the checkpoints.
"""
from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import threading
import time

from headrace.streams import LeaseTable, create_stream

from stream_helpers import PY, ROOT, child_env

LEASE = "1.0"


def _worker(home, wid, children, q):
    p = subprocess.Popen([PY, "-m", "headrace.cli", "stream", "read", "s", "--home", str(home), "--group", "g",
                          "--worker", wid, "--follow", "--events", "--lease-duration", LEASE, "--idle-wait", "0.05",
                          "--batch", "50"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=child_env(), cwd=str(ROOT))
    children.append(p)
    out: list[dict] = []
    threading.Thread(target=lambda: [q.put(json.loads(ln)) for ln in p.stderr if ln.startswith("{")],
                     daemon=True).start()

    def records() -> None:
        for ln in p.stdout:
            out.append(json.loads(ln))
            q.put(None)  # wake the waiter

    threading.Thread(target=records, daemon=True).start()
    return p, out


def _held(s):
    now = time.time()
    out: dict[str, int] = {}
    for l in LeaseTable(s, "g").load().values():
        if l.owner and not l.finished and l.expires > now:
            out[l.owner] = out.get(l.owner, 0) + 1
    return out


def _await(q, s, pred, what, timeout=30.0, state=None):
    """Consume events (lease events, delivered records) until ``pred(state())`` holds."""
    state = state or (lambda: _held(s))
    deadline = time.monotonic() + timeout
    while not pred(state()):
        left = deadline - time.monotonic()
        assert left > 0, f"timed out waiting for {what}; leases: {_held(s)}"
        try:
            q.get(timeout=left)
        except queue.Empty:
            pass
    return state()


def test_balance_split_and_takeover(home, children):
    s = create_stream(home, "s", 4)
    s.put_many([(f"k{i % 16}", {"i": i}) for i in range(400)])
    q: queue.Queue = queue.Queue()
    a, a_out = _worker(home, "A", children, q)
    _await(q, s, lambda h: h == {"A": 4}, "A to hold all 4 shards")
    b, b_out = _worker(home, "B", children, q)
    assert _await(q, s, lambda h: sorted(h.values()) == [2, 2] and len(h) == 2, "2 and 2") == {"A": 2, "B": 2}

    victim = sorted(l.shard for l in LeaseTable(s, "g").load().values() if l.owner == "A")[0]
    s.split(victim)
    s.put_many([(f"k{i % 16}", {"i": i}) for i in range(400, 800)])
    held = _await(q, s, lambda h: sorted(h.values()) == [2, 3], "3 and 2 after the split")
    assert sum(held.values()) == 5

    # kill -9 A: its leases expire and B takes them over from their checkpoints
    os.kill(a.pid, signal.SIGKILL)
    a.wait(timeout=10)
    _await(q, s, lambda h: h == {"B": 5}, "B to take over A's leases")
    s.put_many([(f"k{i % 16}", {"i": i}) for i in range(800, 1000)])
    _await(q, s, lambda n: n == 1000, "all 1000 records delivered",
           state=lambda: len({(d["shard"], d["seq"]) for d in a_out + b_out}))
    b.send_signal(signal.SIGTERM)  # graceful: B releases its leases
    assert b.wait(timeout=10) == 0
    meta = s.meta()
    for l in LeaseTable(s, "g").load().values():
        assert l.owner is None
        assert l.finished or l.checkpoint == s.count(l.shard)
        assert not l.finished or l.checkpoint == meta.shards[l.shard].end_seq
    got = {(d["shard"], d["seq"]) for d in a_out + b_out}
    assert len(got) == 1000
    # A was killed without warning: only what it delivered after its last checkpoints repeats
    assert len(a_out) + len(b_out) - 1000 <= 3 * 50
