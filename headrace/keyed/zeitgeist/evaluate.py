"""Precision, recall and detection latency of Zeitgeist reports against the injected truth.

A report matches a truth anomaly of the same query and kind when their ``[start, end]`` intervals
overlap (an open report without ``end`` counts as ending at its start plus one second), widened by
``slack_ms`` on each side. Precision = matching reports / reports; recall = matched truth
anomalies / truth anomalies. Latency of a matched truth anomaly = the earliest ``reportedAt`` of
its matching reports minus its true ``start``; p50 and p99 over matched anomalies (nearest rank).
"""
from __future__ import annotations

import json
import math
from pathlib import Path

from .generate import parse_iso


def _pct(xs: list[float], q: float) -> float | None:
    if not xs:
        return None
    xs = sorted(xs)
    return xs[max(0, math.ceil(q * len(xs)) - 1)]


def evaluate(reports: list[dict], truth: dict, slack_ms: int = 5_000) -> dict:
    tr = [(a["query"], a["kind"], parse_iso(a["start"]), parse_iso(a["end"])) for a in truth["anomalies"]]
    rep = []
    for r in reports:
        s = parse_iso(r["start"])
        e = parse_iso(r["end"]) if r.get("end") else s + 1000
        rep.append((r["query"], r["kind"], s, e, parse_iso(r["reportedAt"])))
    good = 0
    first: dict[int, int] = {}
    for q, k, s, e, at in rep:
        hit = False
        for i, (tq, tk, ts, te) in enumerate(tr):
            if q == tq and k == tk and s <= te + slack_ms and ts - slack_ms <= e:
                hit = True
                first[i] = min(first.get(i, at), at)
        good += hit
    lat = [(first[i] - tr[i][2]) / 1000 for i in sorted(first)]
    by_kind = {}
    for kind in ("spike", "dip"):
        n = sum(1 for t in tr if t[1] == kind)
        m = sum(1 for i in first if tr[i][1] == kind)
        by_kind[kind] = {"truth": n, "detected": m, "recall": (m / n) if n else None}
    return {"reports": len(rep), "truth": len(tr), "truePositives": good, "matchedTruth": len(first),
            "precision": good / len(rep) if rep else (1.0 if not tr else 0.0),
            "recall": len(first) / len(tr) if tr else 1.0,
            "latencyP50s": _pct(lat, 0.50), "latencyP99s": _pct(lat, 0.99), "byKind": by_kind}


def load_reports(path: "str | Path") -> list[dict]:
    return [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]


def table(res: dict) -> str:
    def f(v):
        return "-" if v is None else (f"{v:.3f}" if isinstance(v, float) else str(v))

    rows = [("reports", res["reports"]), ("truth anomalies", res["truth"]), ("precision", res["precision"]),
            ("recall", res["recall"]), ("latency p50 (s)", res["latencyP50s"]),
            ("latency p99 (s)", res["latencyP99s"])]
    rows += [(f"recall {k} ({v['detected']}/{v['truth']})", v["recall"]) for k, v in res["byKind"].items()]
    w = max(len(r[0]) for r in rows)
    return "\n".join(f"{name:<{w}}  {f(val)}" for name, val in rows)
