"""Subprocess of the crash test: ``_crash_run.py ROOT`` runs the counting topology on Spark over
``topologies.batches`` (publishing them if not yet published), one upstream batch per
micro-batch, and prints the ``totals`` stream as JSON. ``HEADRACE_KEYED_KILL_AFTER`` kills it."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
from tests.spark.keyed_spark.topologies import batches, counting_topology  # noqa: E402

from headrace.spark.keyed.runner import SparkRunner  # noqa: E402

root = sys.argv[1]
os.setpgid(0, 0) if os.getpgid(0) != os.getpid() else None
sr = SparkRunner(counting_topology(), root, max_batches=1)
inj = sr.injector("in")
data = batches(3)
for i, (recs, clock) in enumerate(data):
    if i >= inj.n:
        inj.publish(recs, clock, position=i)
if not inj.finished:
    inj.publish([], data[-1][1] + 1000, position=len(data), end=True)
sr.run_until_quiescent()
print(json.dumps({"totals": sorted(sr.output("totals"), key=json.dumps), "counts": sorted(sr.output("counts"), key=json.dumps),
                  "stats": sr.stats()}))
