"""Real processes: two writers and two lease-balanced readers while the test splits and merges.

Per partition key, the readers' combined output (one shared O_APPEND file, written before
each checkpoint) must hold every acknowledged record exactly once, in put order.
"""
from __future__ import annotations

import json
import os
import random
import threading

from headrace.streams import Stream, create_stream

from stream_helpers import drain_order, spawn

COUNT = 1500
KEYS = 6


def test_order_and_completeness_under_resharding(home, tmp_path, children):
    create_stream(home, "s", 2)
    s = Stream(home, "s")
    out, done = tmp_path / "out.txt", tmp_path / "done"
    logs = [open(tmp_path / f"reader{i}.events", "w") for i in range(2)]
    readers = [spawn("reader", home, "s", "g", f"R{i}", out, done, 3.0, 40, stdout=logs[i], children=children)
               for i in range(2)]
    writers = [spawn("writer", home, "s", f"W{i}", 0, COUNT, KEYS, 20, children=children) for i in range(2)]
    acks: dict[int, list[str]] = {0: [], 1: []}
    t = threading.Thread(target=lambda: acks[1].extend(writers[1].stdout))
    t.start()
    rng = random.Random(7)
    ops = []
    for n, line in enumerate(writers[0].stdout, 1):
        acks[0].append(line)
        if n % 150 == 0:  # reshard while both writers and both readers run
            opn = s.meta().open_shards()
            pairs = [(a, b) for a, b in zip(opn, opn[1:])]
            if len(opn) > 2 and rng.random() < 0.4:
                a, b = rng.choice(pairs)
                ops.append(("merge", a.id, b.id, s.merge(a.id, b.id)))
            else:
                x = rng.choice(opn)
                ops.append(("split", x.id, s.split(x.id)))
    t.join()
    for w in writers:
        assert w.wait(timeout=60) == 0, w.stderr.read()
    assert len(acks[0]) == len(acks[1]) == COUNT
    assert sum(1 for o in ops if o[0] == "merge") >= 1 and sum(1 for o in ops if o[0] == "split") >= 3
    total = sum(s.count(x.id) for x in s.shards())
    assert total == 2 * COUNT
    tmp = tmp_path / "done.tmp"
    tmp.write_text(str(total))
    os.replace(tmp, done)
    for r in readers:
        assert r.wait(timeout=60) == 0, r.stderr.read()

    # every acknowledged record is stored where its ack says
    stored = {(r.shard, r.seq): json.loads(r.data) for r in drain_order(s)}
    for wid in (0, 1):
        for line in acks[wid]:
            _, i, shard, seq = line.split()
            assert stored[(shard, int(seq))] == {"w": f"W{wid}", "i": int(i)}

    lines = out.read_text().splitlines()
    delivered = [(ln.split(" ", 4)) for ln in lines]
    ids = [(d[1], int(d[2])) for d in delivered]
    assert len(ids) == len(set(ids)) == total  # exactly once: no crash, graceful hand-offs
    by_reader = {d[0] for d in delivered}
    assert by_reader == {"R0", "R1"}  # both readers took part
    per_key: dict[str, list[int]] = {}
    for d in delivered:
        per_key.setdefault(d[3], []).append(json.loads(d[4])["i"])
    assert len(per_key) == 2 * KEYS
    for k, seq in per_key.items():
        assert seq == sorted(seq), f"key {k} out of order"
