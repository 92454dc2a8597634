"""Child processes for the stream tests (run as ``python _procs.py <role> ...``).

writer HOME STREAM WID START COUNT NKEYS BATCH
    puts records ``{"w": WID, "i": i}`` with key ``WID-k{i % NKEYS}`` for i in [START, START+COUNT),
    in put_many batches of 1..BATCH records (seeded by WID and START); after each batch returns
    prints ``ack <i> <shard> <seq>`` per record and flushes.
reader HOME STREAM GROUP WID OUT DONE LEASE BATCH
    a Worker that appends ``<wid> <shard> <seq> <key> <data>`` lines to OUT (O_APPEND, one write
    per batch, before the checkpoint); stops once DONE exists, holding the total record count,
    and the group's checkpoints add up to it.
"""
from __future__ import annotations

import json
import os
import random
import sys

from headrace.streams import LeaseTable, Stream, Worker


def writer(home: str, stream: str, wid: str, start: int, count: int, nkeys: int, batch: int) -> None:
    rng = random.Random(f"{wid}-{start}")
    s = Stream(home, stream)
    i = start
    end = start + count
    while i < end:
        n = min(rng.randint(1, batch), end - i)
        recs = [(f"{wid}-k{j % nkeys}", {"w": wid, "i": j}) for j in range(i, i + n)]
        res = s.put_many(recs)
        sys.stdout.write("".join(f"ack {j} {r.shard} {r.seq}\n" for j, r in zip(range(i, i + n), res)))
        sys.stdout.flush()
        i += n


def reader(home: str, stream: str, group: str, wid: str, out: str, done: str, lease: float, batch: int) -> None:
    s = Stream(home, stream)
    fd = os.open(out, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    buf: list[str] = []

    def process(rec) -> None:
        buf.append(f"{wid} {rec.shard} {rec.seq} {rec.key} {rec.data}\n")

    def flush() -> None:
        if buf:
            os.write(fd, "".join(buf).encode())
            buf.clear()

    table = LeaseTable(s, group)

    def should_stop() -> bool:
        if not os.path.exists(done):
            return False
        total = int(open(done).read())
        return sum(l.checkpoint for l in table.load().values()) >= total

    w = Worker(s, group, wid, lease_duration=lease, batch_size=batch, before_checkpoint=flush,
               on_event=lambda ev: print(json.dumps(ev), flush=True))
    w.run(process, follow=True, idle_wait=0.02, should_stop=should_stop)


if __name__ == "__main__":
    role, *a = sys.argv[1:]
    if role == "writer":
        writer(a[0], a[1], a[2], int(a[3]), int(a[4]), int(a[5]), int(a[6]))
    elif role == "reader":
        reader(a[0], a[1], a[2], a[3], a[4], a[5], float(a[6]), int(a[7]))
    else:
        raise SystemExit(f"unknown role {role}")
