"""Sharded streams benchmark: put and read throughput, and the cost of a split under load.

Run: ``.venv/bin/python benchmarks/streams_bench.py [--quick]``. Prints a markdown table and
writes ``benchmarks/results/streams.md``. Records are ~200-byte JSON documents. Every put is
durable (fsync of the shard log) before it is acknowledged, so batch size matters:

- put, 1 shard: ``put`` of one record (one fsync each), and ``put_many`` batches of 100;
- put, 8 shards: one writer with ``put_many`` batches of 800 (one fsync per shard per batch),
  and 8 writer processes (one per shard's keys) with batches of 100;
- read, 1 and 8 shards: the raw log scan (``Stream.read``), and a lease-managed ``Worker``
  (lease table, checkpoint per 500 records per shard);
- split under load: 8 writer processes put batches of 10 into an 8-shard stream while one
  shard is split; reports the split's duration and writers' put latency (p50, p99, max)
  before and during the split.
"""
from __future__ import annotations

import argparse
import datetime as _dt
import json
import multiprocessing as mp
import os
import platform
import shutil
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from headrace.streams import Stream, Worker, create_stream, hash_key  # noqa: E402

PAD = "x" * 140


def record(i: int, key: str) -> tuple[str, dict]:
    return key, {"device": key, "i": i, "ts": 1_717_200_000_000 + i, "watts": i % 997, "pad": PAD}


def record_bytes() -> int:
    k, d = record(12345, "device-00042")
    return len(json.dumps(d, separators=(",", ":"))) + len(k)


def machine() -> str:
    mem = "?"
    try:
        for line in open("/proc/meminfo"):
            if line.startswith("MemTotal:"):
                mem = f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
    except OSError:
        pass
    cpu = platform.processor() or platform.machine()
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    load = f"load average {os.getloadavg()[0]:.1f}" if hasattr(os, "getloadavg") else ""
    return f"{os.cpu_count()} cores ({cpu}), {mem} memory, {load}"


def keys_for_shards(stream: Stream, per_shard: int) -> dict[str, list[str]]:
    """``per_shard`` distinct keys landing in each open shard."""
    shards = stream.meta().open_shards()
    out: dict[str, list[str]] = {s.id: [] for s in shards}
    i = 0
    while any(len(v) < per_shard for v in out.values()):
        k = f"device-{i:05d}"
        hk = hash_key(k)
        for s in shards:
            if s.start <= hk <= s.end and len(out[s.id]) < per_shard:
                out[s.id].append(k)
        i += 1
    return out


# ---- put ----------------------------------------------------------------------------------
def put_single(home: str, n: int) -> float:
    s = create_stream(home, "single", 1)
    t = time.perf_counter()
    for i in range(n):
        s.put(*record(i, f"device-{i % 100:05d}"))
    return time.perf_counter() - t


def put_batched(home: str, name: str, shards: int, n: int, batch: int) -> float:
    s = create_stream(home, name, shards)
    keys = [f"device-{i:05d}" for i in range(1000)]
    t = time.perf_counter()
    for i in range(0, n, batch):
        s.put_many([record(j, keys[j % len(keys)]) for j in range(i, min(i + batch, n))])
    return time.perf_counter() - t


def _writer(home: str, name: str, keys: list[str], n: int, batch: int, go, out_q) -> None:
    s = Stream(home, name)
    go.wait()
    t = time.perf_counter()
    for i in range(0, n, batch):
        s.put_many([record(j, keys[j % len(keys)]) for j in range(i, min(i + batch, n))])
    out_q.put(time.perf_counter() - t)


def put_processes(home: str, name: str, shards: int, n_each: int, batch: int) -> float:
    s = create_stream(home, name, shards)
    ks = keys_for_shards(s, 20)
    ctx = mp.get_context("fork")
    go, q = ctx.Event(), ctx.Queue()
    procs = [ctx.Process(target=_writer, args=(home, name, ks[sid], n_each, batch, go, q)) for sid in sorted(ks)]
    for p in procs:
        p.start()
    t = time.perf_counter()
    go.set()
    for p in procs:
        p.join()
    return time.perf_counter() - t


# ---- read ---------------------------------------------------------------------------------
def read_scan(home: str, name: str) -> tuple[int, float]:
    s = Stream(home, name)
    t = time.perf_counter()
    n = 0
    for sh in s.shards():
        for _ in s.read(sh.id):
            n += 1
    return n, time.perf_counter() - t


def read_worker(home: str, name: str) -> tuple[int, float]:
    s = Stream(home, name)
    count = [0]

    def process(rec) -> None:
        count[0] += 1

    t = time.perf_counter()
    Worker(s, "bench", "w1", batch_size=500).run(process)
    return count[0], time.perf_counter() - t


# ---- split under load ---------------------------------------------------------------------
def _lat_writer(home: str, name: str, keys: list[str], stop, out_q) -> None:
    s = Stream(home, name)
    lat = []
    i = 0
    while not stop.is_set():
        t0 = time.perf_counter()
        s.put_many([record(j, keys[j % len(keys)]) for j in range(i, i + 10)])
        lat.append((time.time(), time.perf_counter() - t0))
        i += 10
    out_q.put(lat)


def split_under_load(home: str, warmup: float = 2.0, after: float = 1.0) -> dict:
    name = "splitload"
    s = create_stream(home, name, 8)
    ks = keys_for_shards(s, 20)
    ctx = mp.get_context("fork")
    stop, q = ctx.Event(), ctx.Queue()
    procs = [ctx.Process(target=_lat_writer, args=(home, name, ks[sid], stop, q)) for sid in sorted(ks)]
    for p in procs:
        p.start()
    time.sleep(warmup)
    records_before = sum(s.count(x.id) for x in s.shards())
    t_start = time.time()
    p0 = time.perf_counter()
    s.split("shard-000000")
    split_s = time.perf_counter() - p0
    t_end = time.time()
    time.sleep(after)
    stop.set()
    lats = [q.get() for _ in procs]
    for p in procs:
        p.join()
    allv = [x for lat in lats for x in lat]
    before = sorted(v for ts, v in allv if ts < t_start - 0.1)
    during = sorted(v for ts, v in allv if t_start - 0.05 <= ts <= t_end + 0.05)
    # the writer of the split shard: its first put after the split re-routes to a child
    children = s.shard("shard-000000").children
    moved = sum(s.count(c) for c in children)

    def pct(v: list[float], p: float) -> float:
        return v[min(len(v) - 1, int(p * len(v)))] * 1000 if v else float("nan")

    return {"split_ms": split_s * 1000, "records_before": records_before,
            "p50_before": pct(before, 0.5), "p99_before": pct(before, 0.99), "max_before": pct(before, 1.0),
            "n_during": len(during), "max_during": pct(during, 1.0) if during else float("nan"),
            "children_records": moved}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="smaller sizes (a smoke run)")
    ap.add_argument("--out", default=str(HERE / "results" / "streams.md"))
    args = ap.parse_args()
    scale = 0.1 if args.quick else 1.0
    n_single = int(2000 * scale)
    n_one = int(100_000 * scale)
    n_eight = int(200_000 * scale)
    n_each = int(25_000 * scale)
    rb = record_bytes()
    work = Path(tempfile.mkdtemp(prefix="headrace-streams-bench-"))
    rows: list[tuple[str, str]] = []

    def rate(n: int, secs: float) -> str:
        return f"{n / secs:,.0f} rec/s, {n * rb / secs / 1e6:,.1f} MB/s"

    try:
        home = str(work)
        secs = put_single(home, n_single)
        rows.append((f"put, 1 shard, 1 record per put ({n_single:,})", rate(n_single, secs)
                     + f"; {secs / n_single * 1000:.2f} ms per put"))
        secs = put_batched(home, "one", 1, n_one, 100)
        rows.append((f"put, 1 shard, batches of 100 ({n_one:,})", rate(n_one, secs)))
        secs = put_batched(home, "eight", 8, n_eight, 800)
        rows.append((f"put, 8 shards, 1 writer, batches of 800 ({n_eight:,})", rate(n_eight, secs)))
        secs = put_processes(home, "eightp", 8, n_each, 100)
        rows.append((f"put, 8 shards, 8 writer processes, batches of 100 ({8 * n_each:,})", rate(8 * n_each, secs)))
        for name, label in (("one", "1 shard"), ("eight", "8 shards")):
            n, secs = read_scan(home, name)
            rows.append((f"read, {label}, log scan ({n:,})", rate(n, secs)))
            n, secs = read_worker(home, name)
            rows.append((f"read, {label}, lease-managed worker, checkpoint per 500 ({n:,})", rate(n, secs)))
        sp = split_under_load(home)
        rows.append(("split under load: duration of `split`", f"{sp['split_ms']:.1f} ms"))
        rows.append(("split under load: put latency (batch of 10) before the split",
                     f"p50 {sp['p50_before']:.1f} ms, p99 {sp['p99_before']:.1f} ms, max {sp['max_before']:.1f} ms"))
        rows.append(("split under load: slowest put overlapping the split",
                     f"{sp['max_during']:.1f} ms ({sp['n_during']} puts overlapped)"))
    finally:
        shutil.rmtree(work, ignore_errors=True)

    now = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        "# Sharded streams benchmark" + (" (quick)" if args.quick else ""),
        "",
        f"- date: {now}",
        f"- machine: {machine()}",
        f"- Python {platform.python_version()}, {platform.system()} {platform.release()}; files on {work.parent}"
        " (fsync per acknowledged put batch)",
        f"- record: ~{rb} bytes (partition key + JSON data); MB/s counts those bytes",
        "",
        "| measurement | result |",
        "|---|---|",
        *[f"| {a} | {b} |" for a, b in rows],
        "",
    ]
    text = "\n".join(lines)
    print(text)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
