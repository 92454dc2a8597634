"""Stateless throughput: a ``$match``/``$addFields`` pipeline over N sample documents (default
1,000,000), headrace against the same query written by hand in PySpark.

Run: ``make bench-stateless`` (or ``.venv/bin/python benchmarks/stateless_bench.py [--docs N]
[--runs R] [--batch B]``). Writes ``benchmarks/results/stateless.md`` (machine, date, every run,
median and range) and prints it.

Input: N ``sample_stream_solar`` documents (``headrace.spark.sources.sample.sample_record``,
seed 7, 100 devices), one JSON line each, generated once into ``benchmarks/.work/stateless/``.

The query, both ways, reading that file and writing JSON lines:

- headrace: ``$source`` (a ``file`` connection, ``maxRecordsPerBatch`` B, 2 input partitions)
  -> ``$match {event_type: 0, "obs.watts": {$gte: 100}}`` -> ``$addFields {watts_kw: {$divide:
  ["$obs.watts", 1000]}, hot: {$gt: ["$obs.temp", 30]}}`` -> ``$emit`` to a JSON-lines file;
  ``headrace.spark.engine.Processor`` with the default trigger, full semantics on (DLQ, expression
  errors per document, ``_stream_meta``).
- PySpark by hand: Structured Streaming JSON file source with the explicit schema, ``filter``,
  two ``withColumn``, the JSON file sink, ``availableNow``; the same session
  (``headrace.spark.session.get_spark``) but with Spark's default code generation on.

Each run is a fresh subprocess; throughput = N / (results written - engine up). Start-up (the
SparkSession) is excluded. Both must write the same number of rows, or the run is marked.
"""
from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
WORK = HERE / ".work" / "stateless"
OUT_MD = HERE / "results" / "stateless.md"
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

MATCH = {"event_type": 0, "obs.watts": {"$gte": 100}}
ADD = {"watts_kw": {"$divide": ["$obs.watts", 1000]}, "hot": {"$gt": ["$obs.temp", 30]}}


def generate(n: int) -> Path:
    path = WORK / f"in-{n}" / "data.jsonl"
    if path.exists():
        return path
    import gen

    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w") as f:
        for d in gen.solar_records(n, 7, 100, 250.0):
            f.write(json.dumps(d, separators=(",", ":")) + "\n")
    tmp.rename(path)
    return path


def child_headrace(inp: Path, out: Path, n: int, batch: int) -> dict:
    from headrace.launch import prepare, start
    from headrace.spark.session import get_spark

    pipe = [{"$source": {"connectionName": "in", "config": {"maxRecordsPerBatch": batch, "parallelism": 2}}},
            {"$match": MATCH}, {"$addFields": ADD}, {"$emit": {"path": str(out / "results.jsonl")}}]
    run = prepare(pipe, home=out / "home", extra_connections={"in": {"type": "file", "path": str(inp)}})
    get_spark()
    proc = start(run, name="stateless", checkpoint=out / "ckpt", trigger_ms=0)
    up = time.time()
    stats = proc.run(max_input=n, duration_s=3600)
    done = time.time()
    rows = sum(1 for _ in open(out / "results.jsonl"))
    return {"up": up, "done": done, "rows": rows, "batches": stats.get("batches"), "dlq": stats.get("dlq")}


def child_pyspark(inp: Path, out: Path, n: int, batch: int) -> dict:
    from headrace.spark.session import get_spark
    from pyspark.sql import functions as F

    spark = get_spark()
    # Spark's defaults for a hand-written query: generated code (headrace's session turns it off)
    spark.conf.set("spark.sql.codegen.wholeStage", "true")
    spark.conf.set("spark.sql.codegen.factoryMode", "FALLBACK")
    schema = ("device_id string, group_id bigint, timestamp string, max_watts bigint, event_type bigint, "
              "obs struct<watts: bigint, temp: bigint>")
    up = time.time()
    df = spark.readStream.schema(schema).json(str(inp.parent))
    q = (df.filter((F.col("event_type") == 0) & (F.col("obs.watts") >= 100))
         .withColumn("watts_kw", F.col("obs.watts") / 1000)
         .withColumn("hot", F.col("obs.temp") > 30)
         .writeStream.format("json").option("checkpointLocation", str(out / "ckpt"))
         .trigger(availableNow=True).start(str(out / "results")))
    q.awaitTermination()
    done = time.time()
    rows = spark.read.text(str(out / "results")).count()
    return {"up": up, "done": done, "rows": rows}


def run_child(system: str, inp: Path, n: int, batch: int) -> dict:
    out = Path(tempfile.mkdtemp(prefix=f"stateless-{system}-", dir=WORK))
    py = ROOT / ".venv" / "bin" / "python"
    t0 = time.time()
    r = subprocess.run([str(py if py.exists() else sys.executable), __file__, "--child", system, "--input", str(inp),
                        "--out", str(out), "--docs", str(n), "--batch", str(batch)],
                       capture_output=True, text=True, env={**os.environ, "HEADRACE_HOME": str(out / "home")})
    line = [x for x in r.stdout.splitlines() if x.startswith("{")]
    shutil.rmtree(out, ignore_errors=True)
    if r.returncode or not line:
        return {"system": system, "error": (r.stderr.strip().splitlines() or ["?"])[-1]}
    res = json.loads(line[-1])
    res.update(system=system, startup_s=round(res["up"] - t0, 1), seconds=round(res["done"] - res["up"], 2),
               throughput=n / max(1e-6, res["done"] - res["up"]))
    return res


def report(n: int, batch: int, results: list[dict], mach: dict, load: tuple[str, str]) -> str:
    by: dict[str, list[dict]] = {}
    for r in results:
        by.setdefault(r["system"], []).append(r)
    med = {s: statistics.median(r["throughput"] for r in rs if "throughput" in r)
           for s, rs in by.items() if any("throughput" in r for r in rs)}
    lines = [
        "# Stateless throughput: `$match` / `$addFields` over sample documents",
        "",
        "Generated by `make bench-stateless` (`benchmarks/stateless_bench.py`); see its docstring for the method.",
        "",
        f"- Date: {_dt.datetime.now(_dt.timezone.utc):%Y-%m-%d %H:%M} UTC",
        f"- Machine: {mach['cores']} cores ({mach['cpu']}), {mach['memory_gb']} GB memory, Python {platform.python_version()}",
        f"- Load average (1/5/15 min) before: {load[0]}; after: {load[1]}",
        f"- Documents: {n:,} (`sample_stream_solar` shape, ~157 bytes each); headrace maxRecordsPerBatch {batch:,}",
        f"- Runs per system: {max(len(v) for v in by.values())}, each a fresh process; median quoted, range in brackets",
        "",
        "| system | throughput, docs/s | headrace ÷ it | seconds per run | rows written | start-up, s |",
        "|---|---:|---:|---|---:|---:|",
    ]
    names = {"headrace": "headrace", "pyspark": "PySpark by hand (Structured Streaming, availableNow)"}
    for s, rs in by.items():
        ok = [r for r in rs if "throughput" in r]
        if not ok:
            lines.append(f"| {names[s]} | failed: {rs[0].get('error')} | | | | |")
            continue
        tps = [r["throughput"] for r in ok]
        ratio = "" if s == "headrace" or "headrace" not in med else f"{med['headrace'] / med[s]:.2f}x"
        lines.append(f"| {names[s]} | {med[s]:,.0f} [{min(tps):,.0f}–{max(tps):,.0f}] | {ratio} | "
                     f"{', '.join(str(r['seconds']) for r in ok)} | {ok[0]['rows']:,} | "
                     f"{statistics.median(r['startup_s'] for r in ok):.1f} |")
    rows = {r["rows"] for r in results if "rows" in r}
    lines += ["", "Rows written agree across systems and runs." if len(rows) == 1 else
              f"**Rows written differ across runs/systems: {sorted(rows)}**", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=int, default=1_000_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--batch", type=int, default=250_000)
    ap.add_argument("--child")
    ap.add_argument("--input")
    ap.add_argument("--out")
    a = ap.parse_args(argv)
    if a.child:
        fn = {"headrace": child_headrace, "pyspark": child_pyspark}[a.child]
        print(json.dumps(fn(Path(a.input), Path(a.out), a.docs, a.batch)), flush=True)
        os._exit(0)  # do not wait for the JVM's shutdown hooks
    WORK.mkdir(parents=True, exist_ok=True)
    inp = generate(a.docs)
    load0 = " ".join(f"{x:.2f}" for x in os.getloadavg())
    results = []
    for i in range(a.runs):
        for s in ("headrace", "pyspark"):
            r = run_child(s, inp, a.docs, a.batch)
            print(f"run {i + 1} {s}: " + (f"{r['throughput']:,.0f} docs/s ({r['seconds']} s, {r['rows']:,} rows)"
                                          if "throughput" in r else f"failed: {r['error']}"), flush=True)
            results.append(r)
    load1 = " ".join(f"{x:.2f}" for x in os.getloadavg())
    from run import machine_info

    md = report(a.docs, a.batch, results, machine_info(), (load0, load1))
    OUT_MD.parent.mkdir(parents=True, exist_ok=True)
    OUT_MD.write_text(md)
    print(md)
    return 0 if all("throughput" in r for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
