"""Summaries of runs and the RESULTS.md rendering (pure Python, testable on fake numbers).

A *cell* is one (workload, system) pair: a list of runs, each a dict with ``throughput``
(events/s), ``p50_ms``/``p99_ms`` (latency), ``mem_mb`` (peak PSS of the process tree; older runs: ``rss_mb``, its RSS sum),
``startup_s``, ``check`` (result comparison) and ``error`` (why it could not run).
"""
from __future__ import annotations

import statistics
from typing import Any, Iterable

SYSTEMS = ("headrace", "pyspark", "pyflink", "bytewax")
WORKLOADS = ("solar", "q5", "q7", "passthrough")
TITLES = {
    "solar": "1. Solar: `$match event_type: 0`, 10 s tumbling windows, per device `$avg`/`$max` watts and `$count`",
    "q5": "2a. Nexmark q5-like hot items: 10 s windows hopping every 2 s, the auction with the most bids",
    "q7": "2b. Nexmark q7-like highest bid per 10 s tumbling window",
    "passthrough": "3. Stateless pass-through: `$match` + `$project` of every reading",
}
LABELS = {
    "headrace": "headrace",
    "pyspark": "PySpark (hand-written, Structured Streaming)",
    "pyflink": "PyFlink SQL",
    "bytewax": "Bytewax",
}


def percentile(values: list[float], p: float) -> float | None:
    """Nearest-rank percentile (``p`` in 0..100)."""
    if not values:
        return None
    v = sorted(values)
    k = max(0, min(len(v) - 1, int(round(p / 100.0 * len(v) + 0.5)) - 1))
    return v[k]


def summarize(values: Iterable[float | None]) -> dict | None:
    vals = [v for v in values if v is not None]
    if not vals:
        return None
    return {"median": statistics.median(vals), "min": min(vals), "max": max(vals), "n": len(vals)}


def cell_summary(runs: list[dict]) -> dict:
    ok = [r for r in runs if not r.get("error")]
    return {
        "throughput": summarize(r.get("throughput") for r in ok),
        "p50_ms": summarize(r.get("p50_ms") for r in ok),
        "p99_ms": summarize(r.get("p99_ms") for r in ok),
        "mem_mb": summarize(r.get("mem_mb", r.get("rss_mb")) for r in runs if r.get("mem_mb", r.get("rss_mb"))),
        "startup_s": summarize(r.get("startup_s") for r in ok),
        "errors": [r["error"] for r in runs if r.get("error")],
        "checks": [r.get("check") for r in ok if r.get("check")],
        "samples": sum(r.get("latency_samples") or 0 for r in ok),
        "runs": len(runs),
    }


def _fmt_num(v: float | None, digits: int = 0) -> str:
    if v is None:
        return "-"
    if digits == 0:
        return f"{v:,.0f}"
    return f"{v:,.{digits}f}"


def _fmt_s(s: dict | None, digits: int = 0) -> str:
    if not s:
        return "-"
    if s["n"] == 1:
        return _fmt_num(s["median"], digits)
    return f"{_fmt_num(s['median'], digits)} ({_fmt_num(s['min'], digits)}–{_fmt_num(s['max'], digits)})"


def _ratio(a: dict | None, b: dict | None) -> str:
    if not a or not b or not b["median"]:
        return "-"
    r = a["median"] / b["median"]
    return f"{r:.2f}x" if r < 100 else f"{r:.0f}x"


def _check(checks: list[dict]) -> str:
    if not checks:
        return "-"
    bad = [c for c in checks if c.get("missing") or c.get("wrong")]
    if not bad:
        return f"✓ {checks[0].get('expected')}"
    c = bad[0]
    return f"✗ {c.get('missing', 0)} missing, {c.get('wrong', 0)} wrong of {c.get('expected')}"


def render_table(workload: str, cells: dict[str, list[dict]]) -> str:
    sums = {s: cell_summary(cells[s]) for s in SYSTEMS if s in cells}
    hr = sums.get("headrace")
    other = _incomparable(cells)
    lines = [
        "| system | throughput, events/s | headrace ÷ it | latency p50, ms | latency p99, ms | samples "
        "| headrace ÷ it (p50) | peak memory (PSS), MB | headrace ÷ it | start-up, s | results vs reference |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for s in SYSTEMS:
        if s not in sums:
            continue
        c = sums[s]
        if c["errors"] and not c["throughput"]:
            err = c["errors"][0].splitlines()[0][:160] if c["errors"][0] else "?"
            lines.append(f"| {LABELS[s]} | not run: {err} | | | | | | | | | |")
            continue
        is_hr = s == "headrace"
        hr_cmp = None if s in other else hr     # another backlog, feed or memory measure: no ratio
        lines.append("| " + " | ".join([
            LABELS[s],
            _fmt_s(c["throughput"]),
            "" if is_hr else _ratio(hr_cmp and hr_cmp["throughput"], c["throughput"]),
            _fmt_s(c["p50_ms"]),
            _fmt_s(c["p99_ms"]),
            f"{c['samples']:,}" if c["samples"] else "-",
            "" if is_hr else _ratio(hr_cmp and hr_cmp["p50_ms"], c["p50_ms"]),
            _fmt_s(c["mem_mb"]),
            "" if is_hr else _ratio(hr_cmp and hr_cmp["mem_mb"], c["mem_mb"]),
            _fmt_s(c["startup_s"], 1),
            _check(c["checks"]),
        ]) + " |")
    notes = [f"- {LABELS[s]}: not comparable, from an earlier run ({d or 'date not recorded'}) with a "
             f"{_fmt_num(b)}-line backlog, a {_fmt_num(r)} lines/s feed and memory as {m}."
             for s, (b, r, m, d) in other.items()]
    return "\n".join(lines + ([""] + notes if notes else []))


def _settings_of(runs: list[dict]) -> tuple:
    return tuple(sorted({(r.get("backlog"), r.get("rate"), "PSS" if "mem_mb" in r else "RSS sum", r.get("date"))
                         for r in runs if not r.get("error")}, key=repr))


def _incomparable(cells: dict[str, list[dict]]) -> dict[str, tuple]:
    """The peers whose rows were measured with another backlog, feed rate or memory measure than
    headrace's row (cells kept from an earlier ``make bench`` when a later one ran only some
    systems), each with its first run's ``(backlog, rate, measure, date)``."""
    ref = {x[:3] for x in _settings_of(cells.get("headrace", []))}
    out = {}
    for s in SYSTEMS:
        if s == "headrace" or s not in cells:
            continue
        mine = _settings_of(cells[s])
        if mine and {x[:3] for x in mine} != ref:
            out[s] = mine[0]
    return out


def render(doc: dict) -> str:
    """``doc``: {"machine": {...}, "date": str, "settings": {...}, "notes": [...],
    "cells": {workload: {system: [run, ...]}}, "workload_notes": {workload: str},
    "not_run": [str]}."""
    m = doc.get("machine", {})
    out = [
        "# headrace benchmarks",
        "",
        "Generated by `make bench` (`benchmarks/run.py`); do not edit by hand. "
        "Method, systems and caveats below the tables.",
        "",
        f"- Date: {doc.get('date', '?')}",
        f"- Machine: {m.get('cores', '?')} cores ({m.get('cpu', '?')}), {m.get('memory_gb', '?')} GB memory, "
        f"{m.get('os', '?')}; load average before the runs: {m.get('load', '?')}",
        f"- Software: {m.get('software', '?')}",
    ]
    for k, v in (doc.get("settings") or {}).items():
        out.append(f"- {k}: {v}")
    out.append("")
    out.append("Figures are the median of the runs with the range (min–max) in brackets. "
               "\"headrace ÷ it\" is headrace's median divided by the peer's: above 1 means headrace is faster "
               "(throughput) or slower/bigger (latency, memory).")
    for wl in WORKLOADS:
        cells = (doc.get("cells") or {}).get(wl)
        if not cells:
            continue
        out += ["", f"## {TITLES[wl]}", ""]
        note = (doc.get("workload_notes") or {}).get(wl)
        if note:
            out += [note, ""]
        out.append(render_table(wl, cells))
    if doc.get("not_run"):
        out += ["", "## What could not be run", ""]
        out += [f"- {x}" for x in doc["not_run"]]
    if doc.get("notes"):
        out += ["", "## Method", ""]
        out += [f"- {x}" for x in doc["notes"]]
    return "\n".join(out) + "\n"


def fake_doc() -> dict[str, Any]:
    """A document with made-up numbers (for the smoke test)."""
    run = lambda tp, p50, rss: {"throughput": tp, "p50_ms": p50, "p99_ms": p50 * 3, "rss_mb": rss,  # noqa: E731
                                 "startup_s": 5.0, "check": {"expected": 10, "missing": 0, "wrong": 0},
                                 "latency_samples": 10}
    return {
        "machine": {"cores": 2, "memory_gb": 24, "cpu": "fake", "os": "Linux", "load": "0.1 0.2 0.3",
                    "software": "fake"},
        "date": "2024-01-01",
        "settings": {"runs": 3},
        "cells": {"solar": {"headrace": [run(1000, 500, 900), run(1100, 400, 950), run(900, 600, 1000)],
                            "pyspark": [run(4000, 200, 800)] * 3,
                            "bytewax": [{"error": "ImportError: no module named bytewax"}]}},
        "not_run": ["bytewax: ImportError: no module named bytewax"],
        "notes": ["fake"],
    }
