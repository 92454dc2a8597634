"""Exactly-once costs: throughput and p50/p99 micro-batch latency of one pipeline under
``exactlyOnce`` + ``$source.dedup``, ``exactlyOnce`` without dedup and ``atLeastOnce``; and the
de-duplication catalog's memory and Bloom false-positive rate with many ids in the horizon.

Run::

    .venv/bin/python benchmarks/exactlyonce_bench.py                 # both parts
    .venv/bin/python benchmarks/exactlyonce_bench.py --part catalog --ids 10000000
    .venv/bin/python benchmarks/exactlyonce_bench.py --part pipeline --docs 200000 [--dsn postgresql://...]

Writes ``benchmarks/results/exactlyonce.md`` (machine, load average before and after, every
figure) and prints it. Figures only count on a quiet machine (load average < 2).

Part ``pipeline``: N JSON lines (``msgId``, event time ``t``, ``v``; 5% of the messages sent
twice, the copy 1-50 lines later) read through a ``file`` connection (``maxRecordsPerBatch`` B)
-> ``$addFields`` -> ``$merge`` into the store (SQLite; or PostgreSQL with ``--dsn``). Each mode
runs in a fresh subprocess; throughput = input records / (end - first micro-batch start), so
Spark's start-up is excluded; latency is ``stats()["latency"]`` (seconds per micro-batch).

Part ``catalog``: the catalog alone (:class:`headrace.dedup.Shard`, no Spark): ``--ids`` distinct
random 64-bit ids in batches of 100,000 over 4 shards, all inside one horizon; then 1,000,000
ids never seen: the share the Bloom filters let through to the exact ids is the false-positive
rate. Memory = the catalog's ids (8 bytes each) + Bloom filters, as the shards report it
(``catalogBytes``) and as files on disk.
"""
from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
OUT_MD = HERE / "results" / "exactlyonce.md"
sys.path.insert(0, str(ROOT))

BASE_MS = 1_714_564_800_000
MODES = {"exactlyOnce+dedup": ("exactlyOnce", True), "exactlyOnce": ("exactlyOnce", False),
         "atLeastOnce": ("atLeastOnce", False)}


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


# ---------------------------------------------------------------- part: pipeline

def generate(path: Path, n: int, seed: int = 7) -> int:
    rng = random.Random(seed)
    lines, pending = [], []
    m = 0
    while len(lines) < n:
        rec = json.dumps({"msgId": f"m{m}", "t": {"$date": BASE_MS + m}, "v": m % 1000})
        lines.append(rec)
        if rng.random() < 0.05:
            pending.append((len(lines) + rng.randint(1, 50), rec))
        due = [p for p in pending if p[0] <= len(lines)]
        pending = [p for p in pending if p[0] > len(lines)]
        lines.extend(r for _, r in due)
        m += 1
    path.write_text("\n".join(lines[:n]) + "\n")
    return n


def child(args: argparse.Namespace) -> None:
    """One mode in this process; prints a JSON line with the figures."""
    import yaml

    from headrace.connections import load_registry
    from headrace.spark.engine import Processor, RunOptions
    from headrace.spec import parse_pipeline

    guarantee, dedup = MODES[args.mode]
    work = Path(args.work)
    conns = {"in": {"type": "file", "path": str(work / "in.jsonl")},
             "store": {"type": "store", "path": str(work / f"store-{args.mode}")}}
    sink = {"connectionName": "store", "db": "bench", "coll": "out"}
    if args.dsn:
        conns["pg"] = {"type": "postgres", "dsn": args.dsn}
        sink = {"connectionName": "pg", "db": "bench_" + args.mode.replace("+", "_").lower(), "coll": "out"}
    (work / f"{args.mode}.yaml").write_text(yaml.safe_dump({"connections": conns}))
    src = {"connectionName": "in", "timeField": "$t", "config": {"maxRecordsPerBatch": args.batch}}
    if dedup:
        src["dedup"] = {"idField": "$msgId", "horizon": {"size": 1, "unit": "day"}}
    pipe = {"pipeline": [{"$source": src}, {"$addFields": {"w": {"$multiply": ["$v", 2]}}}, {"$merge": {"into": sink}}],
            "options": {"guarantee": guarantee}}
    reg = load_registry(work / f"{args.mode}.yaml", work / "hr")
    marks: dict = {}

    def on_batch(bid, clock, w):
        marks.setdefault("first_end", time.monotonic())

    p = Processor(parse_pipeline(pipe), RunOptions(name="bench", checkpoint=work / f"ckpt-{args.mode}",
                                                   registry=reg, on_batch=on_batch))
    t0 = time.monotonic()
    st = p.run(max_input=args.docs)
    t1 = time.monotonic()
    lat = st["latency"]
    first = marks.get("first_end", t0)
    # the first batch includes warm-up of the Python workers: measured from its end, its records excluded
    n_after_first = st["inputMessageCount"] - min(args.batch, st["inputMessageCount"])
    print(json.dumps({"mode": args.mode, "input": st["inputMessageCount"], "output": st["outputMessageCount"],
                      "seconds": round(t1 - first, 2), "throughput": round(n_after_first / max(1e-9, t1 - first)),
                      "p50": lat["p50"], "p99": lat["p99"], "batches": st["batches"], "dedup": st.get("dedup")}))


def pipeline_part(args: argparse.Namespace, out: list[str]) -> None:
    with tempfile.TemporaryDirectory(prefix="eo-bench-") as tmp:
        work = Path(tmp)
        generate(work / "in.jsonl", args.docs)
        out.append(f"\n## Pipeline ({args.docs} records, maxRecordsPerBatch {args.batch}, sink "
                   f"{'PostgreSQL' if args.dsn else 'store (SQLite)'})\n")
        out.append("| mode | records/s | p50 s/batch | p99 s/batch | batches | output | dedup dropped | load before |")
        out.append("|---|---|---|---|---|---|---|---|")
        for mode in MODES:
            before = load()
            cmd = [sys.executable, __file__, "--child", "--mode", mode, "--work", str(work), "--docs",
                   str(args.docs), "--batch", str(args.batch)] + (["--dsn", args.dsn] if args.dsn else [])
            r = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
            line = [x for x in r.stdout.splitlines() if x.startswith("{")]
            if r.returncode or not line:
                out.append(f"| {mode} | failed: {r.stderr.strip()[-300:]} | | | | | | {before} |")
                continue
            d = json.loads(line[-1])
            dd = (d.get("dedup") or {}).get("dropped", "-")
            out.append(f"| {mode} | {d['throughput']} | {d['p50']} | {d['p99']} | {d['batches']} | {d['output']} "
                       f"| {dd} | {before} |")
            print(out[-1], flush=True)


# ---------------------------------------------------------------- part: catalog

def catalog_part(args: argparse.Namespace, out: list[str]) -> None:
    import numpy as np

    from headrace.dedup import Shard
    from headrace.spec import defaults

    shards = defaults.DEDUP_SHARDS
    horizon = 86_400_000
    rng = np.random.default_rng(11)
    with tempfile.TemporaryDirectory(prefix="eo-catalog-") as tmp:
        ss = [Shard(tmp, s, horizon, defaults.DEDUP_BUCKETS, defaults.DEDUP_BLOOM_FPR) for s in range(shards)]
        per = 100_000
        t0 = time.monotonic()
        n = 0
        batch = 0
        stats = {}
        while n < args.ids:
            k = min(per, args.ids - n)
            ids = rng.integers(-2**63, 2**63 - 1, k, dtype=np.int64)
            et = BASE_MS + (np.arange(k) + n) * (horizon // 2) // args.ids    # spread over half the horizon
            part = (ids.view(np.uint64) % np.uint64(shards)).astype(int)
            for s in range(shards):
                d = ss[s].decide(batch, ids[part == s], et[part == s], BASE_MS)
                stats[s] = d.stats
            n += k
            batch += 1
        t_fill = time.monotonic() - t0
        size = sum(s["catalogSize"] for s in stats.values())
        mem = sum(s["catalogBytes"] for s in stats.values())
        disk = sum(f.stat().st_size for f in Path(tmp).rglob("*.npy") if f.is_file())
        fresh = rng.integers(-2**63, 2**63 - 1, 1_000_000, dtype=np.int64)
        et = np.full(len(fresh), BASE_MS + horizon // 2)
        part = (fresh.view(np.uint64) % np.uint64(shards)).astype(int)
        fp = checked = dropped = 0
        t1 = time.monotonic()
        for s in range(shards):
            d = ss[s].decide(batch, fresh[part == s], et[part == s], BASE_MS)
            fp += d.stats["falsePositiveLookups"]
            checked += d.stats["checked"]
            dropped += d.stats["dropped"]
        t_probe = time.monotonic() - t1
    out.append(f"\n## Catalog ({args.ids} ids in the horizon, {shards} shards, {defaults.DEDUP_BUCKETS} buckets, "
               f"target false-positive rate {defaults.DEDUP_BLOOM_FPR})\n")
    out.append(f"- ids held: {size}; catalog memory (ids + Bloom filters): {mem / 2**20:.1f} MiB; "
               f"files on disk (the kept versions): {disk / 2**20:.1f} MiB")
    out.append(f"- Bloom false-positive rate on 1,000,000 new ids: {fp / checked:.4%} ({fp} look-ups of exact ids); "
               f"wrongly dropped: {dropped}")
    out.append(f"- filling: {t_fill:.1f} s ({args.ids / t_fill:,.0f} ids/s, batches of {per} over {shards} shards); "
               f"probing 1,000,000 new ids: {t_probe:.2f} s")
    out.append(f"- load average after: {load()}")
    for line in out[-5:]:
        print(line, flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--part", choices=["pipeline", "catalog", "both"], default="both")
    ap.add_argument("--docs", type=int, default=200_000)
    ap.add_argument("--batch", type=int, default=20_000)
    ap.add_argument("--ids", type=int, default=10_000_000)
    ap.add_argument("--dsn", default=None)
    ap.add_argument("--child", action="store_true")
    ap.add_argument("--mode", default=None)
    ap.add_argument("--work", default=None)
    args = ap.parse_args()
    if args.child:
        return child(args)
    out = [f"# Exactly-once benchmark\n\n{_dt.datetime.now(_dt.timezone.utc):%Y-%m-%d %H:%M} UTC, "
           f"{platform.node()}, {os.cpu_count()} cores, Python {platform.python_version()}; "
           f"load average before: {load()}. Figures count only at load average < 2."]
    if args.part in ("catalog", "both"):
        catalog_part(args, out)
    if args.part in ("pipeline", "both"):
        pipeline_part(args, out)
    OUT_MD.parent.mkdir(parents=True, exist_ok=True)
    OUT_MD.write_text("\n".join(out) + "\n")
    print(f"\nwritten to {OUT_MD}")


if __name__ == "__main__":
    main()
