"""The Zeitgeist topology (after MillWheel, section 2): count search queries per second, keep a
per-query model of the expected count, report spikes and dips as soon as they are certain.

    searches (injector; partitions dc1, dc2)  --queries-->  window_counter  --counts-->  model  --anomalies-->

- ``window_counter`` (key: the query): de-duplicates by ``id`` (a retry carries the same ``id``
  and event time, so the ids of each 1-second bucket are kept, in map state, until the low
  watermark is ``horizon_ms`` past the bucket), counts per 1-second event-time bucket, and when
  the low watermark passes a bucket's end (an event-time timer) produces ``{"b", "n"}``. Its low
  watermark stays at the earliest bucket not yet produced, so downstream a bucket whose end is at
  or before the model's input watermark is final: a missing bucket was empty, not late.
- ``model`` (key: the query): one value-state document per query. Buckets are taken in order,
  empty buckets filled in once the low watermark proves them empty (an event-time timer
  ``gap_ms`` after the last bucket). The expected count per second is an exponentially weighted
  level (time constant ``tau_s``), learned from each bucket once it has left the window being
  tested (so an anomaly in the making is not learned; optionally clipped to within ``clip`` of
  the expected count, 0: off), never from buckets inside an anomaly, times a seasonal factor
  per 1/60 of ``season_ms`` when a period is given (learned online, used once one period of
  data has been seen). Each new bucket tests the shortest recent window (``l_min`` to ``l_max``
  seconds) whose expected total is at least ``e_min``: a spike when the observed total is at
  least ``spike_ratio`` times the expected and ``z`` standard deviations (Poisson) above it, a
  dip when at most ``dip_ratio`` times and ``z`` below. The first positive test opens an anomaly
  (produced at once, ``event: open``, with ``reportedAt`` = the batch's processing instant); it
  closes when the window is back within ``close_spike`` / ``close_dip`` times the expected
  (``event: close``); the level then restarts from the mean of the ``rebase_s`` seconds that
  follow (no test meanwhile), since the world may have moved while the model was frozen. An
  anomaly open for ``max_open_s`` is closed the same way (the rate has moved for good). No report
  during ``warmup_ms`` of a query's event time. The parameters were tuned on generated data of
  seed 1 only (see the README for held-out figures).
"""
from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import asdict, dataclass

from .. import defaults
from ..api import Computation, MapState, ValueState
from ..topology import Topology


class WindowCounter(Computation):
    state = {"counts": MapState(), "ids": MapState()}

    def __init__(self, horizon_ms: int = defaults.ZG_DEDUP_HORIZON_MS):
        self.horizon_ms = horizon_ms

    def process_batch(self, ctx, records):
        per: dict[int, list[str]] = defaultdict(list)
        for r in records:
            per[r.timestamp - r.timestamp % 1000].append(r.value["id"])
        counts, ids = ctx.map("counts"), ctx.map("ids")
        for b in sorted(per):
            known = set(ids.get(str(b), []))
            new = []
            for i in per[b]:
                if i not in known:
                    known.add(i)
                    new.append(i)
            if not new:
                continue
            ids.put(str(b), sorted(known))
            counts.put(str(b), counts.get(str(b), 0) + len(new))
            ctx.set_timer(b + 1000)

    def process_timer(self, ctx, timer):
        t = timer.timestamp
        if t % 1000 == 1:   # garbage collection of a bucket's ids
            ctx.map("ids").remove(str(t - 1 - self.horizon_ms - 1000))
            return
        b = t - 1000
        counts = ctx.map("counts")
        n = counts.get(str(b), 0)
        counts.remove(str(b))
        if n:
            ctx.produce("counts", ctx.key, {"b": b, "n": n}, b)
        ctx.set_timer(t + self.horizon_ms + 1)


@dataclass(frozen=True)
class ModelParams:
    warmup_ms: int = defaults.ZG_WARMUP_MINUTES * 60_000
    season_ms: int = 0
    e_min: float = 40.0
    l_min: int = 5
    l_max: int = 60
    z: float = 4.0
    spike_ratio: float = 2.0
    dip_ratio: float = 0.25
    rebase_s: int = 20
    max_open_s: int = 240
    close_spike: float = 1.4
    close_dip: float = 0.6
    tau_s: float = 20.0
    clip: float = 0.0
    gap_ms: int = 5_000


class Model(Computation):
    state = {"m": ValueState()}

    def __init__(self, **params):
        self.p = ModelParams(**params)

    # -- model
    def _factor(self, m: dict, b: int) -> float:
        p = self.p
        if not p.season_ms or b - m["first"] < p.season_ms:
            return 1.0
        s = m["season"].get(str(b % p.season_ms * 60 // p.season_ms))
        return s[0] if s and s[1] >= p.season_ms / 60_000 else 1.0

    def _expect(self, m: dict, b: int) -> float:
        return max(m["lvl"] * self._factor(m, b), 0.05)

    def _learn(self, m: dict, b: int, n: float, flagged: int = 0) -> None:
        p = self.p
        f = self._factor(m, b)
        if flagged and m["lvl"] is not None:   # inside an anomaly: not learned
            return
        if m["lvl"] is None:
            m["acc"].append(n)
            if len(m["acc"]) >= p.l_min:
                m["lvl"] = sum(m["acc"]) / len(m["acc"])
                m["acc"] = []
            return
        if p.clip:   # learned at once: an anomaly in the making moves the level little
            e = m["lvl"] * f
            n = min(max(n, e * (1 - p.clip)), e * (1 + p.clip))
        m["lvl"] += (n / f - m["lvl"]) / p.tau_s
        if p.season_ms and not flagged:
            k = str(b % p.season_ms * 60 // p.season_ms)
            r = n / max(m["lvl"], 0.05)
            s = m["season"].setdefault(k, [1.0, 0])
            w = 1.0 / min(s[1] + 1, max(p.season_ms / 60_000, 1))
            s[0] += (r - s[0]) * w
            s[1] += 1

    # -- buckets
    def _bucket(self, ctx, m: dict, b: int, n: int) -> None:
        p = self.p
        ring = m["ring"]
        # ring entries: [bucket, count, 1 if inside an anomaly, 1 if learned]
        ring.append([b, n, 1 if m["open"] else 0, 0])
        while len(ring) > p.l_max:
            e = ring.pop(0)
            if not e[2] and not e[3]:
                self._learn(m, e[0], e[1])
        if m["lvl"] is None:
            e = ring[-1]
            e[3] = 1
            self._learn(m, e[0], e[1])
            return
        if b - m["first"] < p.warmup_ms:
            self._learn_before(m, len(ring) - p.l_min)
            return
        rb0 = m.get("rebase")
        if rb0 is not None:   # after an anomaly: the level restarts from what follows it
            if b - rb0 < p.rebase_s * 1000:
                return
            after = [e for e in ring if e[0] >= rb0]
            m["lvl"] = max(sum(e[1] / self._factor(m, e[0]) for e in after) / len(after), 0.05)
            for e in after:
                e[3] = 1
            m["rebase"] = None
        obs = exp = 0.0
        length = 0
        for rb, rn, _, _ in reversed(ring):
            obs += rn
            exp += self._expect(m, rb)
            length += 1
            if length >= p.l_min and exp >= p.e_min:
                break
        if m["open"] is None:
            # buckets older than the tested window are learned (the window itself is not yet)
            self._learn_before(m, len(ring) - length)
        if exp < p.e_min:
            return
        z = (obs - exp) / math.sqrt(exp)
        start = b - (length - 1) * 1000
        op = m["open"]
        if op is None:
            kind = None
            if z >= p.z and obs >= p.spike_ratio * exp:
                kind = "spike"
            elif z <= -p.z and obs <= p.dip_ratio * exp:
                kind = "dip"
            if kind:
                m["open"] = {"kind": kind, "start": start, "rep": ctx.processing_time}
                for e in ring[-length:]:
                    e[2] = 1
                ctx.produce("anomalies", ctx.key, {"event": "open", "kind": kind, "start": start,
                                                   "reportedAt": ctx.processing_time}, b)
        else:
            done = obs <= p.close_spike * exp if op["kind"] == "spike" else obs >= p.close_dip * exp
            if b - op["start"] >= p.max_open_s * 1000:   # a level shift, not an anomaly: relearn
                self._close(ctx, m, b + 1000)
            elif done:
                self._close(ctx, m, b + 1000 - (length * 1000) // 2)

    def _learn_before(self, m: dict, upto: int) -> None:
        for e in m["ring"][:max(upto, 0)]:
            if not e[2] and not e[3]:
                e[3] = 1
                self._learn(m, e[0], e[1])

    def _close(self, ctx, m: dict, end: int) -> None:
        op = m["open"]
        m["open"] = None
        m["rebase"] = (m["ring"][-1][0] + 1000) if m["ring"] else None
        end = max(end, op["start"] + 1000)
        ctx.produce("anomalies", ctx.key, {"event": "close", "kind": op["kind"], "start": op["start"], "end": end,
                                           "reportedAt": op["rep"]}, end)

    def _fill(self, ctx, m: dict, upto: int) -> None:
        """Empty buckets from ``cur`` while their end is at or before ``upto``."""
        while m["cur"] is not None and m["cur"] + 1000 <= upto:
            self._bucket(ctx, m, m["cur"], 0)
            m["cur"] += 1000

    def _arm(self, ctx, m: dict) -> None:
        if m.get("t") is not None:
            ctx.delete_timer(m["t"])
            m["t"] = None
        if m["cur"] is not None:
            m["t"] = m["cur"] + self.p.gap_ms
            ctx.set_timer(m["t"])

    @staticmethod
    def _new() -> dict:
        return {"cur": None, "first": None, "lvl": None, "acc": [], "ring": [], "season": {}, "open": None,
                "t": None, "late": 0}

    def process_batch(self, ctx, records):
        v = ctx.value("m")
        m = v.get() or self._new()
        for b, n in sorted((r.value["b"], r.value["n"]) for r in records):
            if m["cur"] is None:
                m["cur"] = m["first"] = b
            if b < m["cur"]:
                m["late"] += 1
                continue
            self._fill(ctx, m, b)
            self._bucket(ctx, m, b, n)
            m["cur"] = b + 1000
        if ctx.low_watermark < defaults.END_MS:
            self._fill(ctx, m, ctx.low_watermark)
        self._arm(ctx, m)
        v.set(m)

    def process_timer(self, ctx, timer):
        v = ctx.value("m")
        m = v.get() or self._new()
        m["t"] = None
        if ctx.low_watermark >= defaults.END_MS:
            if m["open"] is not None:
                self._close(ctx, m, m["cur"])
        else:
            self._fill(ctx, m, ctx.low_watermark)
            self._arm(ctx, m)
        v.set(m)


def topology(lateness_ms: int = defaults.ZG_LATENESS_MS, params: ModelParams | None = None,
             horizon_ms: int = defaults.ZG_DEDUP_HORIZON_MS) -> Topology:
    """The Zeitgeist topology; injector ``searches`` takes ``(dc, None, query, {"id": id}, ts)``."""
    return (Topology()
            .injector("searches", ["queries"], partitions=["dc1", "dc2"], lateness_ms=lateness_ms,
                      adaptive=True)
            .computation("window_counter", WindowCounter, ["queries"], ["counts"], {"horizon_ms": horizon_ms})
            .computation("model", Model, ["counts"], ["anomalies"], asdict(params or ModelParams())))
