"""The live phase of a run (``benchmarks/run.py``): feeding the live lines at the workload's rate,
each stamped with the instant it became visible, and the latency of the results that phase
produces (per window, or per row for the pass-through).
"""
from __future__ import annotations

import bisect
import os
import time
from pathlib import Path
from typing import Any

import gen
import report
from run_config import TICK_S
from run_dataset import Dataset
from run_watch import EventTail


def stamp(line: bytes, ms: float) -> bytes:
    return b'{"arr":' + f"{ms:.3f}".encode() + b"," + line[1:]


def feed_live(ds: Dataset, prof: dict, wl: str, mode: str, input_file: Path | None, input_dir: Path | None,
              tail: EventTail, alive) -> dict:
    """Feed live lines at the workload's rate; returns the visible time of each fed line group."""
    rate = prof["rate"][wl]
    per_tick = rate * TICK_S
    total_s = prof["warmup_s"] + prof["measure_s"]
    n_total = min(len(ds.live_lines), int(rate * total_s))
    starts: list[int] = []      # first live line index of each group
    times: list[float] = []     # when the group became visible (epoch s)
    t0 = time.time()
    fed = 0
    k = 0
    f = open(input_file, "ab") if mode == "append" else None
    while fed < n_total and alive():
        due = t0 + k * TICK_S
        now = time.time()
        if due > now:
            time.sleep(due - now)
        target = min(n_total, int(round((k + 1) * per_tick)))
        if target > fed:
            now = time.time()
            ms = now * 1000.0
            blob = b"".join(stamp(x, ms) for x in ds.live_lines[fed:target])
            if f is not None:
                f.write(blob)
                f.flush()
            else:
                tmp = input_dir / f".chunk-{k:06d}.tmp"
                with open(tmp, "wb") as g:
                    g.write(blob)
                os.rename(tmp, input_dir / f"part-{k + 1:06d}.jsonl")
            starts.append(fed)
            times.append(ms / 1000.0)
            fed = target
        k += 1
        if k % 20 == 0:
            tail.poll(wl)
    if f is not None:
        f.close()
    t_end = time.time()
    feed = {"t0": t0, "t_measure": t0 + prof["warmup_s"], "t_end": t_end, "starts": starts, "times": times,
            "fed": fed, "rate": rate}
    # wait (at most tail_s) for the results of everything fed
    deadline = t_end + prof["tail_s"]
    if wl == "passthrough":
        want = sum(ds.passes[ds.backlog:ds.backlog + fed])
        done = lambda: len(tail.pt_lat) >= want  # noqa: E731
    else:
        wins = [ws for ws, _ in measured_windows(ds, wl, feed)]
        done = lambda: all(ws in tail.windows_done for ws in wins)  # noqa: E731
    while time.time() < deadline and alive():
        tail.poll(wl)
        if done():
            break
        time.sleep(0.05)
    time.sleep(0.3)
    tail.poll(wl)
    return feed


def measured_windows(ds: Dataset, wl: str, feed: dict) -> list[tuple[int, float]]:
    """(window start, visible time of the line that lets it close) of the windows the live lines
    fed during the measured period close."""
    size, hop = gen.WINDOW_MS, (gen.HOP_MS if wl == "q5" else gen.WINDOW_MS)
    bmax = ds.meta["backlog_max_et"]
    ws = ((bmax - gen.LATENESS_MS - size) // hop) * hop
    out = []
    while True:
        close_at = ws + size + gen.LATENESS_MS
        if close_at > bmax:
            j = ds.trigger_index(close_at)
            if j is None or j >= feed["fed"]:
                break
            g = bisect.bisect_right(feed["starts"], j) - 1
            visible = feed["times"][g]
            if feed["t_measure"] <= visible <= feed["t_end"]:
                out.append((ws, visible))
        ws += hop
    return out


def latency(ds: Dataset, prof: dict, wl: str, tail: EventTail, feed: dict) -> dict:
    out: dict[str, Any] = {"fed": feed["fed"], "rate": feed["rate"]}
    out["feed_rate_actual"] = round(feed["fed"] / max(1e-6, feed["t_end"] - feed["t0"]))
    lat: list[float] = []
    missing = 0
    if wl == "passthrough":
        lat = [x for (t, x) in tail.pt_lat if t - x >= feed["t_measure"]]
        expected_rows = None
    else:
        by_window: dict[int, float] = {}
        for k, t in tail.win_first.items():
            w = k[0] if isinstance(k, tuple) else k
            by_window[w] = max(by_window.get(w, 0.0), t)
        for ws, visible in measured_windows(ds, wl, feed):
            if ws in by_window:
                lat.append(by_window[ws] - visible)
            else:
                missing += 1
    out["latency_samples"] = len(lat)
    out["latency_missing"] = missing
    if lat:
        out["p50_ms"] = round(report.percentile(lat, 50) * 1000, 1)
        out["p99_ms"] = round(report.percentile(lat, 99) * 1000, 1)
        out["max_ms"] = round(max(lat) * 1000, 1)
    return out

