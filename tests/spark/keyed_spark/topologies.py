"""Topologies and inputs shared by the Spark keyed tests and their crash subprocess."""
from __future__ import annotations

import json

from headrace.keyed import Topology
from headrace.keyed.examples import Tee, Total, WindowCount


def fan_topology() -> Topology:
    """in -> tee (fan-out: left, right) -> wc (fan-in of both, 1 s windows) -> tot."""
    return (Topology().injector("in", ["ev"], partitions=["a", "b"])
            .computation("tee", Tee, ["ev"], ["left", "right"], {"outputs": ("left", "right")})
            .computation("wc", WindowCount, ["left", "right"], ["counts"])
            .computation("tot", Total, ["counts"], ["totals"]))


def counting_topology() -> Topology:
    return (Topology().injector("in", ["ev"], partitions=["a", "b"])
            .computation("wc", WindowCount, ["ev"], ["counts"])
            .computation("tot", Total, ["counts"], ["totals"]))


def batches(n_batches: int = 4, per_batch: int = 24, keys: int = 4, seed: int = 3) -> list[tuple[list, int]]:
    """Injector batches ``(records, clock)``: event times move forward 1.5 s a batch, out of
    order within a batch only (so no record is late and outputs do not depend on batching)."""
    import random

    rng = random.Random(seed)
    out = []
    for i in range(n_batches):
        recs = []
        for j in range(per_batch):
            ts = 10_000 + i * 1500 + rng.randint(0, 1400)
            recs.append(("a" if j % 2 else "b", None, f"k{rng.randrange(keys)}", {"i": i, "j": j}, ts))
        out.append((recs, 100_000 + i * 1000))
    return out


def reference_outputs(topo: Topology, data, stream: str) -> list:
    from headrace.keyed import ReferenceRunner

    r = ReferenceRunner(topo, collect=[stream])
    for recs, clock in data:
        r.inject("in", recs, clock)
        r.run()
    r.inject("in", [], data[-1][1] + 1000, end=True)
    r.run()
    return sorted(((o.key, o.value, o.timestamp) for o in r.output(stream)), key=json.dumps)
