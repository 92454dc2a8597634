"""Seeded input generators and the reference results every system is checked against.

Pure Python (no Spark session). Two data sets, each one JSON-lines file generated once into
``benchmarks/.work/<dataset>/``:

- ``solar``: ``sample_stream_solar``-shaped documents from
  ``headrace.spark.sources.sample.sample_record(i, seed, devices, t_ms)``, with
  ``t_ms = T0 + i * 1000 / rate`` (``rate`` events per second of event time); event time is the
  ``timestamp`` field (a little before ``t_ms``, so slightly out of order, never by more than
  1.5 s). Used by the ``solar`` and ``passthrough`` workloads.
- ``nexmark``: Nexmark-style events in the standard generator's person:auction:bid proportions
  1:3:46 (event ``i`` is a person when ``i % 50 == 0``, an auction when ``i % 50 in 1..3``, else a
  bid), in event-time order, ``E`` events per second of event time. Half the bids go to the
  current hot auction, the rest to one of the 1,000 most recent auctions. Each line:
  ``{"event_type": 0|1|2, "dateTime": "<ISO-8601 Z>", "person"|"auction"|"bid": {...}}`` (the
  top-level ``dateTime`` is Nexmark's computed ``dateTime`` column, the event time).

The first ``backlog`` lines are the backlog every system drains (throughput); the next
``live`` lines are fed at a fixed rate afterwards (latency). ``meta.json`` holds the parameters,
the per-line event times (``et.bin``, int64 ms) and the reference results of every workload.
"""
from __future__ import annotations

import array
import datetime as _dt
import hashlib
import json
import os
import random
import sys
from pathlib import Path
from typing import Any, Iterator

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

T0_MS = 1_717_200_000_000            # 2024-06-01T00:00:00Z
LATENESS_MS = 3_000                  # every system: watermark = max event time - 3 s
WINDOW_MS = 10_000
HOP_MS = 2_000
PASSTHROUGH_MIN_WATTS = 100

CHANNELS = ("Google", "Facebook", "Baidu", "Apple")
CITIES = ("Phoenix", "Los Angeles", "San Francisco", "Boise", "Portland", "Bend", "Redmond", "Seattle", "Kent")
STATES = ("AZ", "CA", "ID", "OR", "WA", "WY")
FIRST_NAMES = ("Peter", "Paul", "Luke", "John", "Saul", "Vicky", "Kate", "Julie", "Sarah", "Deiter", "Walter")
LAST_NAMES = ("Shultz", "Abrams", "Spencer", "White", "Bartels", "Walton", "Smith", "Jones", "Noris")


def iso_ms(ms: int) -> str:
    d = _dt.datetime.fromtimestamp(ms / 1000, _dt.timezone.utc)
    return d.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def parse_iso_ms(text: str) -> int:
    d = _dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    if d.tzinfo is None:
        d = d.replace(tzinfo=_dt.timezone.utc)
    return int(round(d.timestamp() * 1000))


# ---------------------------------------------------------------------------------- solar
def solar_records(n: int, seed: int, devices: int, rate: float, start: int = 0) -> Iterator[dict]:
    from headrace.spark.sources.sample import sample_record

    for i in range(start, start + n):
        yield sample_record(i, seed, devices, T0_MS + int(i * 1000 / rate))


# ---------------------------------------------------------------------------------- nexmark
class Nexmark:
    """A small seeded Nexmark-style generator (sequential: event ``i`` depends on 0..i-1)."""

    PERSON, AUCTION, BID = 0, 1, 2
    FIRST_ID = 1000
    ACTIVE_AUCTIONS = 1000
    HOT_RATIO = 2          # 1 bid in HOT_RATIO goes to a random recent auction, the rest to the hot one
    HOT_EVERY = 10         # the hot auction is the latest multiple of 10 (as the standard's /ratio*ratio)

    def __init__(self, seed: int, rate: float):
        self.rnd = random.Random(seed)
        self.rate = rate
        self.i = 0
        self.persons = 0
        self.auctions = 0

    def next(self) -> dict:
        i, rnd = self.i, self.rnd
        self.i += 1
        t = T0_MS + int(i * 1000 / self.rate)
        when = iso_ms(t)
        rem = i % 50
        if rem < 1:
            pid = self.FIRST_ID + self.persons
            self.persons += 1
            return {"event_type": self.PERSON, "dateTime": when, "person": {
                "id": pid, "name": f"{rnd.choice(FIRST_NAMES)} {rnd.choice(LAST_NAMES)}",
                "emailAddress": f"u{pid}@example.com", "creditCard": f"{rnd.randrange(10**15, 10**16)}",
                "city": rnd.choice(CITIES), "state": rnd.choice(STATES), "dateTime": when, "extra": ""}}
        if rem < 4:
            aid = self.FIRST_ID + self.auctions
            self.auctions += 1
            initial = int(10 ** (rnd.random() * 6) * 100)
            return {"event_type": self.AUCTION, "dateTime": when, "auction": {
                "id": aid, "itemName": f"item{rnd.randrange(10**6)}", "description": "",
                "initialBid": initial, "reserve": initial + rnd.randrange(1, 10_000),
                "dateTime": when, "expires": iso_ms(t + rnd.randrange(10_000, 600_000)),
                "seller": self.FIRST_ID + rnd.randrange(max(1, self.persons)), "category": 10 + rnd.randrange(5),
                "extra": ""}}
        last = max(0, self.auctions - 1)
        if rnd.randrange(self.HOT_RATIO) > 0:
            auction = self.FIRST_ID + (last // self.HOT_EVERY) * self.HOT_EVERY
        else:
            auction = self.FIRST_ID + max(0, last - rnd.randrange(self.ACTIVE_AUCTIONS))
        bidder = self.FIRST_ID + rnd.randrange(max(1, self.persons))
        return {"event_type": self.BID, "dateTime": when, "bid": {
            "auction": auction, "bidder": bidder, "price": int(10 ** (rnd.random() * 6) * 100),
            "channel": rnd.choice(CHANNELS),
            "url": f"https://www.nexmark.com/{rnd.choice(CHANNELS).lower()}/item.htm?query=1&id={auction}",
            "dateTime": when, "extra": ""}}


def nexmark_records(n: int, seed: int, rate: float) -> Iterator[dict]:
    g = Nexmark(seed, rate)
    for _ in range(n):
        yield g.next()


# ---------------------------------------------------------------------------------- references
def _win_starts(t: int, size: int, hop: int) -> list[int]:
    last = (t // hop) * hop
    return [s for s in range(last - size + hop, last + 1, hop) if s <= t < s + size]


class Reference:
    """Per-workload reference results, built while generating (over the backlog only)."""

    def __init__(self) -> None:
        self.solar: dict[tuple[int, str], list] = {}      # (ws, device) -> [sum, max, n]
        self.q5: dict[int, dict[int, int]] = {}            # ws -> auction -> bids
        self.q7: dict[int, tuple] = {}                     # ws -> (price, -auction, -bidder)
        self.passthrough = 0

    def add_solar(self, doc: dict, et: int) -> None:
        if doc.get("event_type") == 0:
            ws = (et // WINDOW_MS) * WINDOW_MS
            w = doc["obs"]["watts"]
            acc = self.solar.setdefault((ws, doc["device_id"]), [0, None, 0])
            acc[0] += w
            acc[1] = w if acc[1] is None else max(acc[1], w)
            acc[2] += 1
            if w >= PASSTHROUGH_MIN_WATTS:
                self.passthrough += 1

    def add_nexmark(self, doc: dict, et: int) -> None:
        if doc["event_type"] != Nexmark.BID:
            return
        b = doc["bid"]
        for ws in _win_starts(et, WINDOW_MS, HOP_MS):
            c = self.q5.setdefault(ws, {})
            c[b["auction"]] = c.get(b["auction"], 0) + 1
        ws = (et // WINDOW_MS) * WINDOW_MS
        key = (b["price"], -b["auction"], -b["bidder"])
        if ws not in self.q7 or key > self.q7[ws]:
            self.q7[ws] = key

    def results(self, max_et: int) -> dict[str, list[dict]]:
        """Window results of the windows certainly closed by the backlog (end + lateness + 1 s
        margin <= its largest event time), normalised as the runners report them."""
        closed = lambda ws, size: ws + size + LATENESS_MS + 1_000 <= max_et  # noqa: E731
        solar = [{"ws": ws, "we": ws + WINDOW_MS, "k": dev, "avg": s / n, "max": mx, "n": n}
                 for (ws, dev), (s, mx, n) in sorted(self.solar.items()) if closed(ws, WINDOW_MS)]
        q5 = []
        for ws, counts in sorted(self.q5.items()):
            if closed(ws, WINDOW_MS):
                auction, n = min(counts.items(), key=lambda kv: (-kv[1], kv[0]))
                q5.append({"ws": ws, "we": ws + WINDOW_MS, "auction": auction, "n": n})
        q7 = [{"ws": ws, "we": ws + WINDOW_MS, "price": p, "auction": -a, "bidder": -b}
              for ws, (p, a, b) in sorted(self.q7.items()) if closed(ws, WINDOW_MS)]
        return {"solar": solar, "q5": q5, "q7": q7}


# ---------------------------------------------------------------------------------- data sets
DATASETS = {
    # rate: events per second of event time
    "solar": {"seed": 42, "devices": 20, "rate": 100.0},
    "nexmark": {"seed": 7, "rate": 100.0},
}


def dataset_params(name: str, backlog: int, live: int) -> dict:
    return {"dataset": name, "backlog": backlog, "live": live, **DATASETS[name], "version": 4}


def _records(params: dict) -> Iterator[dict]:
    n = params["backlog"] + params["live"]
    if params["dataset"] == "solar":
        return solar_records(n, params["seed"], params["devices"], params["rate"])
    return nexmark_records(n, params["seed"], params["rate"])


def event_time(params: dict, doc: dict) -> int:
    if params["dataset"] == "solar":
        return parse_iso_ms(doc["timestamp"])
    return parse_iso_ms(doc["dateTime"])


def generate(params: dict, out_dir: Path) -> dict:
    """Write ``data.jsonl``, ``et.bin`` and ``meta.json`` into ``out_dir`` unless they already
    hold a data set with the same parameters. Returns the meta (with reference results)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    meta_path = out_dir / "meta.json"
    key = hashlib.sha1(json.dumps(params, sort_keys=True).encode()).hexdigest()[:16]
    if meta_path.exists():
        meta = json.loads(meta_path.read_text())
        if meta.get("key") == key and (out_dir / "data.jsonl").exists():
            return meta
    ref = Reference()
    ets = array.array("q")
    offsets = array.array("q")
    passes = bytearray()       # per line: would the pass-through keep it

    max_et = None
    backlog_bytes = 0
    tmp = out_dir / ".data.jsonl.tmp"
    with open(tmp, "wb") as f:
        pos = 0
        for i, doc in enumerate(_records(params)):
            et = event_time(params, doc)
            line = (json.dumps(doc, separators=(",", ":")) + "\n").encode()
            f.write(line)
            offsets.append(pos)
            pos += len(line)
            ets.append(et)
            passes.append(1 if params["dataset"] == "solar" and doc.get("event_type") == 0 and
                          doc["obs"]["watts"] >= PASSTHROUGH_MIN_WATTS else 0)
            if i < params["backlog"]:
                backlog_bytes = pos
                max_et = et if max_et is None else max(max_et, et)
                if params["dataset"] == "solar":
                    ref.add_solar(doc, et)
                else:
                    ref.add_nexmark(doc, et)
        offsets.append(pos)
    os.replace(tmp, out_dir / "data.jsonl")
    (out_dir / "passthrough.bin").write_bytes(bytes(passes))
    with open(out_dir / "et.bin", "wb") as f:
        ets.tofile(f)
    with open(out_dir / "offsets.bin", "wb") as f:
        offsets.tofile(f)
    refs = ref.results(max_et)
    meta = {"key": key, "params": params, "backlog_max_et": max_et, "backlog_bytes": backlog_bytes,
            "reference": refs, "passthrough_backlog_outputs": ref.passthrough}
    meta_path.write_text(json.dumps(meta))
    return meta


def load_arrays(out_dir: Path) -> tuple[array.array, array.array]:
    ets, offs = array.array("q"), array.array("q")
    with open(out_dir / "et.bin", "rb") as f:
        ets.frombytes(f.read())
    with open(out_dir / "offsets.bin", "rb") as f:
        offs.frombytes(f.read())
    return ets, offs


def file_digest(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def compare(workload: str, reference: list[dict], got: list[dict]) -> dict[str, Any]:
    """Compare a system's window results with the reference (only the reference's windows)."""
    keyf = {"solar": lambda r: (r["ws"], r["k"]), "q5": lambda r: r["ws"], "q7": lambda r: r["ws"]}[workload]
    have: dict = {}
    for r in got:
        have[keyf(r)] = r
    missing = wrong = 0
    example = None
    for r in reference:
        g = have.get(keyf(r))
        if g is None:
            missing += 1
            example = example or {"missing": r}
            continue
        for f, v in r.items():
            gv = g.get(f)
            ok = (abs(float(gv) - float(v)) <= 1e-6 * max(1.0, abs(float(v)))) if isinstance(v, float) and \
                gv is not None else gv == v
            if not ok:
                wrong += 1
                example = example or {"expected": r, "got": g}
                break
    return {"expected": len(reference), "missing": missing, "wrong": wrong, "example": example}
