"""Randomised runs against the reference model (model.py): out-of-order and late events around
the lateness boundary, idle and never-producing partitions, idle-source gaps, ticks, hopping
windows and offsets. Each seed is one replay run through the engine."""
from __future__ import annotations

import os

import random

import pytest

from headrace import ejson
from headrace.testing import run_pipeline

from .model import run_model

pytestmark = pytest.mark.spark
BASE = 1_714_564_800_000  # 2024-05-01T12:00:00Z
SEC = 1000


def scenario(seed: int):
    rnd = random.Random(seed)
    parts = ["p0", "p1", "p2"][: rnd.randint(1, 3)]
    interval = rnd.choice([5, 10]) * SEC
    hop = rnd.choice([None, interval // 5 * 2, interval // 2]) if rnd.random() < 0.5 else None
    offset = rnd.choice([0, 0, 2 * SEC])
    lateness = rnd.choice([0, 2 * SEC, 3 * SEC])
    idle = rnd.choice([None, 4 * SEC])
    pidle = rnd.choice([None, 6 * SEC]) if len(parts) > 1 else None
    silent = parts[-1] if len(parts) > 1 and rnd.random() < 0.3 else None  # never produces
    rows, clock, hi = [], 0, 0
    for _ in range(rnd.randint(8, 16)):
        clock += rnd.choice([0, 1, 1, 2, 3, 7]) * SEC
        if rnd.random() < 0.15:
            rows.append((clock, None, rnd.choice(parts)))   # tick
            continue
        hi = max(hi, clock)
        t = clock - rnd.choice([0, 0, 1, 2, 4, 6, 9]) * SEC
        p = rnd.choice([x for x in parts if x != silent])
        rows.append((clock, t, p))
    return dict(parts=parts, interval=interval, hop=hop, offset=offset, lateness=lateness, idle=idle,
                pidle=pidle, rows=rows)


def to_pipeline(sc):
    iso = lambda ms: ejson.format_date(ejson.millis_to_datetime(BASE + ms))  # noqa: E731
    docs = []
    for arr, t, p in sc["rows"]:
        d = {"arrival": iso(arr), "p": p}
        if t is not None:
            d["t"] = iso(t)
        docs.append(d)
    win = {"interval": {"size": sc["interval"], "unit": "ms"},
           "allowedLateness": {"size": sc["lateness"], "unit": "ms"},
           "pipeline": [{"$project": {"t": 1}}]}
    if sc["offset"]:
        win["offset"] = {"offsetFromUtc": sc["offset"], "unit": "ms"}
    if sc["idle"]:
        win["idleTimeout"] = {"size": sc["idle"], "unit": "ms"}
    src = {"documents": docs, "timeField": {"$toDate": "$t"},
           "replay": {"arrivalField": "arrival", "partitionField": "p", "partitions": sc["parts"]}}
    if sc["pidle"]:
        src["partitionIdleTimeout"] = {"size": sc["pidle"], "unit": "ms"}
    stage = {"$hoppingWindow": {**win, "hopSize": {"size": sc["hop"], "unit": "ms"}}} if sc["hop"] else \
        {"$tumblingWindow": win}
    return [{"$source": src}, stage]


#: two random scenarios in CI; HEADRACE_LONG_TESTS=1 runs eight
SEEDS = range(8) if os.environ.get("HEADRACE_LONG_TESTS") else range(2)


@pytest.mark.parametrize("seed", SEEDS)
def test_engine_matches_model(spark, seed):
    sc = scenario(seed)
    want_emit, want_late = run_model(sc["rows"], sc["parts"], sc["interval"], sc["hop"], sc["offset"],
                                     sc["lateness"], sc["idle"], sc["pidle"])
    res = run_pipeline(to_pipeline(sc))
    ms = lambda d: ejson.datetime_to_millis(d) - BASE  # noqa: E731
    got: dict = {}
    order = []
    for d, (clock, _w) in zip(res.outputs, res.emitted_at):
        win = d["_stream_meta"]["window"]
        key = (ms(win["start"]), ms(win["end"]))
        if key not in got:
            order.append(key)
            got[key] = ([], ms(clock))
        got[key][0].append(ms(ejson.parse_iso(d["t"])))
    got_emit = [(k[0], k[1], sorted(got[k][0]), got[k][1]) for k in order]
    # the end-of-input flush happens at the last batch instant in both
    assert [(s, e, ts) for s, e, ts, _ in got_emit] == [(s, e, ts) for s, e, ts, _ in want_emit], sc
    assert [c for *_, c in got_emit] == [c for *_, c in want_emit], sc
    got_late = sorted((ms(ejson.parse_iso(x["doc"]["t"])), [ms(s) for s in x["missedWindowStartTimes"]])
                      for x in res.dlq)
    assert got_late == sorted((t, ss) for t, ss in want_late), sc
