"""A small, independent reference model of time-semantics.md (tumbling/hopping, event time).

Written from the spec's text, one batch at a time, without sharing code with the engine.
Input: replay rows ``(arrival_ms, event_ms | None, partition)`` (None = clock tick).
Output: emitted windows ``[(start, end, sorted event times, batch instant)]`` in emission
order and late documents ``[(event, missed starts)]``.
"""
from __future__ import annotations

INF = float("inf")


def run_model(rows, partitions, interval, hop=None, offset=0, lateness=0, idle=None, pidle=None):
    hop = hop or interval
    batches = []
    for r in rows:
        if batches and batches[-1][0] == r[0]:
            batches[-1][1].append(r)
        else:
            batches.append((r[0], [r]))
    W = -INF
    M = {p: -INF for p in partitions}
    last_arr = {p: None for p in partitions}
    last = None
    open_w: dict[int, list] = {}
    emitted, late = [], []

    def starts_of(t):
        s = ((t - offset) // hop) * hop + offset
        out = []
        while s > t - interval:
            out.append(s)
            s -= hop
        return sorted(out)

    def close(now):
        for s in sorted(open_w, key=lambda s: (s + interval, s)):
            if W - lateness >= s + interval:
                emitted.append((s, s + interval, sorted(open_w.pop(s)), now))

    def fire(now, strict):
        nonlocal W
        while idle is not None and open_w and last is not None:
            e = min(s + interval for s in open_w)
            due = max(e, last) + idle
            if due < now or (not strict and due == now):
                W = max(W, e + lateness)
                close(now)
            else:
                return

    def is_idle(p, now):
        if pidle is None:
            return False
        return last_arr[p] is None or last_arr[p] <= now - pidle

    for now, rs in batches:
        fire(now, True)
        w_prev = W
        for arr, t, p in rs:
            if t is None:
                continue
            ss = starts_of(t)
            if max(ss) + interval <= w_prev - lateness:
                late.append((t, ss))
            else:
                for s in ss:
                    if s + interval > w_prev - lateness:
                        open_w.setdefault(s, []).append(t)
            M[p] = max(M[p], t)
            last_arr[p] = arr if last_arr[p] is None else max(last_arr[p], arr)
            last = arr if last is None else max(last, arr)
        active = [M[p] for p in partitions if not is_idle(p, now)]
        if active:
            W = max(W, min(active))
        close(now)
        fire(now, False)
    W = INF
    close(batches[-1][0] if batches else 0)
    return emitted, late
