"""Zeitgeist input generator: search queries from two datacenters, with injected truth.

Seeded (numpy ``default_rng(seed)``), so a seed and the parameters give the same file. Per query:
a base rate (log-uniform in ``[rate_min, rate_max]`` per second), split between ``dc1`` and
``dc2`` by a per-query share; a seasonality ``rate * (1 + amplitude * sin(2 pi t / period +
phase))``; injected anomalies after ``quiet_minutes`` and before the last ``tail_minutes``:
spikes (rate times ``k`` in ``[spike_min, spike_max]``) and dips (rate times ``dip_factor``), each
lasting ``[dur_min_s, dur_max_s]``, at most one at a time per query. Counts per second are Poisson;
event times uniform within the second. Arrival = event time + the datacenter's delay (a base, an
exponential jitter, and for ``dc2`` lag episodes in the ``high`` profile), so records come out of
order between and within datacenters. A record is retried (the same ``id`` again, later) with
probability ``dup_rate``. Records are written in arrival order, one JSON line each:
``{"id", "query", "dc", "ts", "arrival"}`` (ISO-8601 UTC, milliseconds). The truth goes to
``FILE.truth.json``: the parameters and ``anomalies: [{query, kind, start, end, factor}]``.
"""
from __future__ import annotations

import datetime as dt
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .. import defaults

START = dt.datetime(2026, 1, 5, tzinfo=dt.timezone.utc)
START_MS = int(START.timestamp() * 1000)

#: delay profiles: dc -> (base ms, mean exponential jitter ms, lag episodes (every s, length s, extra ms))
PROFILES = {
    "low": {"dc1": (100, 300, None), "dc2": (400, 700, None)},
    "high": {"dc1": (200, 800, None), "dc2": (1500, 1500, (240, 40, 12_000))},
}


@dataclass
class GenParams:
    seed: int = defaults.ZG_SEED
    minutes: float = defaults.ZG_MINUTES
    queries: int = defaults.ZG_QUERIES
    season_minutes: float = 0.0          # 0: minutes / 1.5
    amplitude: float = 0.4
    rate_min: float = 1.0
    rate_max: float = 10.0
    anomalies: int = 0                   # 0: one per query on average
    quiet_minutes: float = 6.0
    tail_minutes: float = 3.0
    dur_min_s: int = 30
    dur_max_s: int = 150
    spike_min: float = 3.0
    spike_max: float = 6.0
    dip_factor: float = 0.03
    delay_profile: str = "low"
    dup_rate: float = 0.01
    extra: dict = field(default_factory=dict)


def iso(ms: int) -> str:
    return dt.datetime.fromtimestamp(ms / 1000, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def parse_iso(text: str) -> int:
    return int(dt.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() * 1000)


def _plan_anomalies(rng, p: GenParams, names: list[str], seconds: int) -> list[dict]:
    n = p.anomalies or p.queries
    lo, hi = int(p.quiet_minutes * 60), seconds - int(p.tail_minutes * 60)
    busy: dict[str, list[tuple[int, int]]] = {q: [] for q in names}
    out = []
    for _ in range(n * 20):
        if len(out) >= n:
            break
        q = names[int(rng.integers(len(names)))]
        d = int(rng.integers(p.dur_min_s, p.dur_max_s + 1))
        if hi - d <= lo:
            break
        s = int(rng.integers(lo, hi - d))
        if any(not (s + d + 60 <= a or b + 60 <= s) for a, b in busy[q]):
            continue
        busy[q].append((s, s + d))
        kind = "spike" if rng.random() < 0.5 else "dip"
        factor = float(rng.uniform(p.spike_min, p.spike_max)) if kind == "spike" else p.dip_factor
        out.append({"query": q, "kind": kind, "s": s, "e": s + d, "factor": round(factor, 3)})
    return sorted(out, key=lambda a: (a["s"], a["query"]))


def generate(out: "str | Path", params: GenParams | None = None) -> dict:
    """Write the records file and its truth file; return the truth (also with ``records``)."""
    import numpy as np

    p = params or GenParams()
    if p.delay_profile not in PROFILES:
        raise ValueError(f"delay profile must be one of {sorted(PROFILES)}, found {p.delay_profile!r}")
    rng = np.random.default_rng(p.seed)
    seconds = int(p.minutes * 60)
    period = (p.season_minutes or p.minutes / 1.5) * 60
    names = [f"query-{i:03d}" for i in range(p.queries)]
    rates = np.exp(rng.uniform(np.log(p.rate_min), np.log(p.rate_max), p.queries))
    share = rng.uniform(0.3, 0.7, p.queries)
    phase = rng.uniform(0, 2 * np.pi, p.queries)
    anomalies = _plan_anomalies(rng, p, names, seconds)
    t = np.arange(seconds)
    ts_all, q_all, dc_all = [], [], []
    for qi, q in enumerate(names):
        lam = rates[qi] * (1 + p.amplitude * np.sin(2 * np.pi * t / period + phase[qi]))
        for a in anomalies:
            if a["query"] == q:
                lam[a["s"]:a["e"]] *= a["factor"]
        for di, dc in enumerate(("dc1", "dc2")):
            frac = share[qi] if di == 0 else 1 - share[qi]
            counts = rng.poisson(lam * frac)
            sec = np.repeat(t, counts)
            ms = START_MS + sec * 1000 + rng.integers(0, 1000, sec.size)
            ts_all.append(ms)
            q_all.append(np.full(sec.size, qi))
            dc_all.append(np.full(sec.size, di))
    ts = np.concatenate(ts_all)
    qs = np.concatenate(q_all)
    dcs = np.concatenate(dc_all)
    delay = np.zeros(ts.size)
    for di, dc in enumerate(("dc1", "dc2")):
        base, jitter, lag = PROFILES[p.delay_profile][dc]
        m = dcs == di
        delay[m] = base + rng.exponential(jitter, int(m.sum()))
        if lag:
            every, length, extra = lag
            rel = (ts[m] - START_MS) / 1000 % every
            delay[m] += np.where(rel < length, extra, 0)
    arrival = ts + delay.astype(np.int64)
    ids = np.arange(ts.size)
    rng.shuffle(ids)
    dup = rng.random(ts.size) < p.dup_rate
    d_idx = np.nonzero(dup)[0]
    d_arr = arrival[d_idx] + rng.integers(500, 5000, d_idx.size)
    all_idx = np.concatenate([np.arange(ts.size), d_idx])
    all_arr = np.concatenate([arrival, d_arr])
    order = np.lexsort((all_idx, all_arr))
    dc_names = ("dc1", "dc2")
    path = Path(out)
    with open(path, "w") as f:
        for j in order:
            i = all_idx[j]
            f.write(json.dumps({"id": f"{p.seed:x}-{ids[i]:x}", "query": names[qs[i]], "dc": dc_names[dcs[i]],
                                "ts": iso(int(ts[i])), "arrival": iso(int(all_arr[j]))}) + "\n")
    truth = {"params": asdict(p), "start": iso(START_MS), "end": iso(START_MS + seconds * 1000),
             "records": int(order.size), "duplicates": int(d_idx.size),
             "anomalies": [{"query": a["query"], "kind": a["kind"], "start": iso(START_MS + a["s"] * 1000),
                            "end": iso(START_MS + a["e"] * 1000), "factor": a["factor"]} for a in anomalies]}
    Path(str(path) + ".truth.json").write_text(json.dumps(truth, indent=1))
    return truth
