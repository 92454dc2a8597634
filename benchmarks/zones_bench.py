"""Zoned writes on real PostgreSQL servers: throughput and failover times.

Starts private servers (``tests/integration/servers.py``), then measures:

- write throughput (documents/s, batches through ``merge_many`` as a processor's sink does):
  a plain ``postgres`` collection (baseline), a zoned collection writing to one zone, and a
  zoned collection spreading documents over two and three zones;
- time to fail over: the duration of the first batch after the home server crashed
  (``pg_ctl stop -m immediate``: connection error) or hung (``SIGSTOP``: only the write timeout
  tells), i.e. from the failed write to the batch being acknowledged by the next zone;
- time to return home: from the home server accepting connections again to the first batch
  written there (bounded by ``probeIntervalMs``).

Prints a markdown table (with machine cores, memory and date) and writes
``benchmarks/results/zones.md``. ``--quick`` runs a smaller workload.
"""
from __future__ import annotations

import argparse
import datetime as dt
import importlib.util
import logging
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from headrace.connections import load_registry  # noqa: E402
from headrace.store.base import MergeSpec  # noqa: E402
from headrace.store.postgres import PostgresStore  # noqa: E402
from headrace.zones import forget_routers, open_collection  # noqa: E402


def load_servers():
    spec = importlib.util.spec_from_file_location("headrace_bench_servers", ROOT / "tests/integration/servers.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def machine() -> str:
    mem = "?"
    try:
        for line in open("/proc/meminfo"):
            if line.startswith("MemTotal:"):
                mem = f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
    except OSError:
        pass
    cpu = platform.processor() or "?"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        load = "load average %.1f" % os.getloadavg()[0]
    except OSError:
        load = ""
    return f"{os.cpu_count()} cores ({cpu}), {mem} memory, {load}"


def zoned(tmp: Path, servers, name: str, **writer) -> object:
    import yaml

    zs = ["alfa", "bravo", "charlie"][:len(servers)]
    opts = {
        "type": "zoned", "shardKey": {"datacenter": 1, "userid": 1},
        "zones": {z: {"postgres": s.dsn} for z, s in zip(zs, servers)},
        "ranges": [{"zone": z, "min": {"datacenter": z, "userid": "$minKey"},
                    "max": {"datacenter": z, "userid": "$maxKey"}} for z in zs],
        "writer": {"homeZone": "alfa", "writeTimeoutMs": 2000, "probeIntervalMs": 500, **writer},
        "reads": {"dedupeField": "message_id"},
    }
    f = tmp / f"{name}.yaml"
    f.write_text(yaml.safe_dump({"connections": {"events": opts}}))
    reg = load_registry(f, home=tmp / ".headrace")
    return open_collection(reg, reg.get("events"), "bench", name)


def docs(n: int, start: int = 0, zones: list[str] | None = None):
    for i in range(start, start + n):
        d = {"message_id": i, "userid": i % 10_000, "event": "click", "payload": {"a": i * 3, "b": "x" * 64},
             "ts": 1_700_000_000_000 + i}
        if zones:
            d["datacenter"] = zones[i % len(zones)]
        yield d


def throughput(coll, n: int, batch: int, zones: list[str] | None = None) -> float:
    it = list(docs(n, zones=zones))
    t0 = time.perf_counter()
    for i in range(0, n, batch):
        r = coll.merge_many(it[i:i + batch], MergeSpec())
        assert not r.errors, r.errors[:3]
    return n / (time.perf_counter() - t0)


def failover_times(tmp: Path, servers, mode: str, rounds: int, batch: int) -> tuple[list[float], list[float]]:
    """(time of the first batch after the home zone failed, time from restart to a batch written home)."""
    home = servers[0]
    over, back = [], []
    for k in range(rounds):
        forget_routers()
        c = zoned(tmp, servers, f"fo_{mode}_{k}", writeTimeoutMs=500, probeIntervalMs=500)
        c.merge_many(list(docs(batch, 0)), MergeSpec())
        if mode == "crash":
            home.stop("immediate")
        else:
            home.pause()
        t0 = time.perf_counter()
        r = c.merge_many(list(docs(batch, 10_000)), MergeSpec())
        over.append(time.perf_counter() - t0)
        assert not r.errors and c.stats()["zones"]["alfa"]["up"] is False
        if mode == "crash":
            home.start()
        else:
            home.resume()
        home.wait_ready()
        t0 = time.perf_counter()
        j = 20_000
        while c.stats()["zones"]["alfa"]["writes"] <= batch:
            c.merge_many(list(docs(10, j)), MergeSpec())
            j += 10
            time.sleep(0.01)
        back.append(time.perf_counter() - t0)
    return over, back


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out", default=str(ROOT / "benchmarks/results/zones.md"))
    a = ap.parse_args(argv)
    logging.getLogger("headrace.zones").setLevel(logging.ERROR)    # failover warnings are expected here
    n, batch, rounds = (5_000, 500, 2) if a.quick else (30_000, 500, 3)
    servers_mod = load_servers()
    factory = servers_mod.PostgresFactory()
    rows: list[tuple[str, str]] = []
    try:
        srv = factory.create_many(["a", "b", "c"])
        version = subprocess.run([str(factory.bin / "postgres"), "--version"], capture_output=True, text=True).stdout.strip()
        tmp = Path(tempfile.mkdtemp(prefix="zones-bench-"))
        base = PostgresStore(srv[0].dsn).collection("bench", "plain")
        base.ensure()
        tp = throughput(base, n, batch)
        rows.append(("plain postgres collection (baseline), 1 server", f"{tp:,.0f} docs/s"))
        forget_routers()
        one = zoned(tmp, srv[:2], "one")
        rows.append(("zoned, all documents to the home zone (1 of 2 servers)", f"{throughput(one, n, batch):,.0f} docs/s"))
        forget_routers()
        two = zoned(tmp, srv[:2], "two")
        rows.append(("zoned, spread over 2 zones (2 servers, groups in parallel)",
                     f"{throughput(two, n, batch, ['alfa', 'bravo']):,.0f} docs/s"))
        forget_routers()
        three = zoned(tmp, srv, "three")
        rows.append(("zoned, spread over 3 zones (3 servers)",
                     f"{throughput(three, n, batch, ['alfa', 'bravo', 'charlie']):,.0f} docs/s"))
        over_c, back_c = failover_times(tmp, srv[:2], "crash", rounds, batch)
        over_h, back_h = failover_times(tmp, srv[:2], "hang", rounds, batch)
        ms = lambda xs: f"{statistics.median(xs) * 1000:,.0f} ms (median of {len(xs)}; min {min(xs) * 1000:,.0f}, max {max(xs) * 1000:,.0f})"  # noqa: E731
        rows.append((f"fail over, home server crashed: first batch of {batch} written to the next zone", ms(over_c)))
        rows.append((f"fail over, home server hung (writeTimeoutMs 500): first batch of {batch}", ms(over_h)))
        rows.append(("return home after restart (probeIntervalMs 500)", ms(back_c)))
        rows.append(("return home after a hang ends (probeIntervalMs 500)", ms(back_h)))
    finally:
        forget_routers()
        factory.cleanup()
    head = [f"# Zoned writes benchmark ({'quick' if a.quick else 'full'})", "",
            f"- date: {dt.datetime.now(dt.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}",
            f"- machine: {machine()}",
            f"- {version}; private servers (fsync=off) on this machine; Python {platform.python_version()}",
            f"- workload: {n:,} documents of ~200 bytes in batches of {batch} through `merge_many` "
            "(insert, generated ObjectId `_id`)"]
    if os.getloadavg()[0] > (os.cpu_count() or 1):
        head.append("- note: the machine was busy (load average above its core count), so throughput is noisy")
    head += ["",
             "| measurement | result |", "|---|---|"]
    table = "\n".join(head + [f"| {k} | {v} |" for k, v in rows]) + "\n"
    print(table)
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
