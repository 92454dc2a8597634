"""The input of a workload (``benchmarks/run.py``): ``Dataset`` generates a data set once
(``gen``, seeded) and holds its backlog size, its live lines and, per live line, the largest
event time seen so far (which line lets a window close).
"""
from __future__ import annotations

import array
import bisect
import time

import gen
from run_config import DATASET_OF, WORK, log


class Dataset:
    def __init__(self, name: str, prof: dict, workloads: list[str]):
        self.name = name
        rates = [prof["rate"][w] for w in workloads if DATASET_OF[w] == name]
        live = int(max(rates) * (prof["warmup_s"] + prof["measure_s"] + 2)) + 1000
        self.params = gen.dataset_params(name, prof["backlog"][name], live)
        self.dir = WORK / name
        t = time.time()
        self.meta = gen.generate(self.params, self.dir)
        log(f"data set {name}: {self.params['backlog']:,} backlog + {live:,} live lines "
            f"({time.time() - t:.1f} s) in {self.dir}")
        self.ets, self.offs = gen.load_arrays(self.dir)
        self.backlog = self.params["backlog"]
        with open(self.dir / "data.jsonl", "rb") as f:
            f.seek(self.offs[self.backlog])
            blob = f.read(self.offs[len(self.offs) - 1] - self.offs[self.backlog])
        base = self.offs[self.backlog]
        self.live_lines = [blob[self.offs[i] - base:self.offs[i + 1] - base]
                           for i in range(self.backlog, len(self.offs) - 1)]
        self.passes = (self.dir / "passthrough.bin").read_bytes()
        live_ets = self.ets[self.backlog:]
        self.prefix_max = array.array("q")
        m = self.meta["backlog_max_et"]
        for x in live_ets:
            m = max(m, x)
            self.prefix_max.append(m)

    def trigger_index(self, close_at: int) -> int | None:
        """Index (in the live lines) of the first line whose arrival makes max event time >= close_at."""
        i = bisect.bisect_left(self.prefix_max, close_at)
        return i if i < len(self.prefix_max) else None

