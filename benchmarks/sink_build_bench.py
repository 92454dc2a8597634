"""The JSON-lines sink's Python per output document, in one process (no Spark session).

Run: ``.venv/bin/python benchmarks/sink_build_bench.py [--docs N]``. Prints microseconds per
output document for the two ways :func:`headrace.spark.runtime.records.build` can build a batch:

- ``documents``: decode each VARIANT to Python values, put the fields in order, ``ejson.dumps``
  (what the store, PostgreSQL and printed runs still use);
- ``text``: each document's text written straight from its VARIANT bytes in template order
  (``headrace/spark/docs_text.py``; the JSON-lines sink), the template shared by records of one
  shape.

Input: N ``sample_stream_solar`` lines (``benchmarks/gen.py``, seed 7), each turned into the
record row the engine would hand the sink after ``$addFields {watts_kw, hot}`` (the stateless
benchmark's query): the document as VARIANT, its raw text and shape, partition and offset, from a
one-partition file source (so ``_stream_meta`` holds the source's type alone, as in that benchmark).
Both ways must give the same lines, or the run fails.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))


def rows(n: int) -> tuple[list[dict], object]:
    import gen

    from headrace import ejson
    from headrace.mql.field_order import OrderPlan, shape
    from headrace.spark.docs import to_variant
    from headrace.spec.parse import parse_pipeline

    pipeline = [{"$source": {"connectionName": "in", "timeField": {"$dateFromString": {"dateString": "$timestamp"}}}},
                {"$addFields": {"watts_kw": {"$divide": ["$obs.watts", 1000]}, "hot": {"$gt": ["$obs.temp", 30]}}},
                {"$emit": {"path": "/dev/null"}}]
    order = OrderPlan.of(parse_pipeline(pipeline))
    out = []
    for i, d in enumerate(gen.solar_records(n, 7, 100, 250.0)):
        raw = json.dumps(d)
        doc = ejson.loads(raw)
        doc["_ts"] = ejson.parse_iso(doc["timestamp"])
        obs = doc.get("obs") or {}
        doc["watts_kw"] = (obs.get("watts") or 0) / 1000
        doc["hot"] = (obs.get("temp") or 0) > 30
        out.append({"partition": str(i % 2), "offset": i // 2, "_arr": 1_700_000_000_000 + i, "doc": to_variant(doc),
                    "raw": raw, "_err": None, "_op": None, "_ws": None, "_we": None, "_wk": None, "_seq": None,
                    "_missed": None, "_shape": shape(raw)})
    return out, order


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=int, default=20_000)
    a = ap.parse_args(argv)

    from headrace import ejson
    from headrace.spark.runtime.records import BatchInfo, build

    batch, order = rows(a.docs)
    info = BatchInfo("bench", "file", False, 1_700_000_100_000, True, True, 0, "run", order=order)
    ways = {"documents": lambda: [ejson.dumps(d) for d in build(batch, info).outputs],
            "text": lambda: build(batch, info, text=True).outputs}
    results = {}
    for name, f in ways.items():
        f()                                      # warm: caches, imports
        best = None
        for _ in range(3):
            t = time.perf_counter()
            lines = f()
            el = time.perf_counter() - t
            best = el if best is None else min(best, el)
        results[name] = lines
        print(f"{name:>9}: {best / a.docs * 1e6:6.1f} us per document (best of 3, {a.docs:,} documents)")
    if results["documents"] != results["text"]:
        print("the two ways wrote different lines", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
