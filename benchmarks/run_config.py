"""Settings of the benchmark driver (``benchmarks/run.py``): its paths (work directory, peers
environment, results), which data set each workload reads and how each system is fed, the full
and quick profiles, and ``log``, the driver's progress line. A leaf: imports nothing of the
benchmarks.
"""
from __future__ import annotations

import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

WORK = HERE / ".work"
PEERS = HERE / ".venv-peers"
REQS = HERE / "requirements-peers.txt"
RUNS_JSON = HERE / "results" / "runs.json"
PRODUCT_PY = ROOT / ".venv" / "bin" / "python"

DATASET_OF = {"solar": "solar", "passthrough": "solar", "q5": "nexmark", "q7": "nexmark"}
FEED_MODE = {"headrace": "append", "bytewax": "append", "pyspark": "chunks", "pyflink": "chunks"}
TICK_S = 0.05

# Full and quick settings. backlog: lines drained for throughput; rate: lines/s fed for latency.
# The full profile's sizes are issue 11's: 1M-line backlogs (steady state, not per-batch
# overhead) and latency at 5,000 events/s.
PROFILES = {
    "full": {"runs": 3, "latency_runs": 1, "warmup_s": 5.0, "measure_s": 25.0, "tail_s": 25.0,
             "backlog": {"solar": 1_000_000, "nexmark": 1_000_000},
             "rate": {"solar": 5_000, "q5": 5_000, "q7": 5_000, "passthrough": 5_000},
             "headrace_batch": 100_000, "backlog_timeout_s": 1_200},
    "quick": {"runs": 1, "latency_runs": 1, "warmup_s": 2.0, "measure_s": 6.0, "tail_s": 15.0,
              "backlog": {"solar": 4_000, "nexmark": 4_000},
              "rate": {"solar": 500, "q5": 500, "q7": 500, "passthrough": 500},
              "headrace_batch": 100_000, "backlog_timeout_s": 300},
}


def log(msg: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", flush=True)

