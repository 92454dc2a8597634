"""Worker faults and control-plane restarts, with real worker processes.

kill -9 of a worker mid-run: the control plane notices at once (its socket closes), restarts
the worker's processors from their checkpoints by the placement rule, and the sink ends up
exactly as without the fault. Then ``headrace serve`` itself restarts: it finds the processor
in its catalog and starts it again, still exact.
"""
from __future__ import annotations

import datetime as dt
import os
import re
import signal

import pytest

from .conftest import expected_windows, put, read_windows, window_pipeline

pytestmark = pytest.mark.instance


def test_kill9_worker_then_serve_restart_sinks_exact(make_instance, tmp_path):
    inst = make_instance()
    from headrace.streams import create_stream

    create_stream(inst.home, "kv", 2)
    out1 = tmp_path / "a.jsonl"
    inst.sp.create("ka", window_pipeline("kv", out1))
    inst.sp.ka.start()
    a = [(f"k{i % 4}", i) for i in range(0, 33)]
    put(inst.home, "kv", a)
    inst.sp.ka.wait(inputMessageCount=len(a), timeout=180)
    [w1] = inst.workers()
    b = [(f"k{i % 4}", i) for i in range(33, 70)]
    put(inst.home, "kv", b[:20])
    killed_at = dt.datetime.now()                    # the log stamps local time
    os.kill(w1["pid"], signal.SIGKILL)                     # mid-run: batches may be in flight
    put(inst.home, "kv", b[20:])
    n = len(a) + len(b)
    st = inst.sp.ka.wait(inputMessageCount=n, state="STARTED", timeout=240)
    assert st["inputMessageCount"] == n and (st["worker"], st["state"]) == (1, "STARTED")
    [w] = inst.workers()
    assert w["id"] == 1 and w["pid"] != w1["pid"] and w["slots"] == ["ka", None, None, None]
    m = re.search(r"^(\S+ \S+) WARNING headrace.instance: worker 1 \(pid %d\) is gone" % w1["pid"], inst.logs(), re.M)
    assert m, "the control plane logs the dead worker"
    noticed = dt.datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S,%f")
    assert (noticed - killed_at).total_seconds() < 5
    assert [h["action"] for h in inst.sp.ka.info()["history"]][-1] == "recover"
    flush = [(k, 300) for k in ("k0", "k1", "k2", "k3")]
    put(inst.home, "kv", flush)
    inst.sp.ka.wait(inputMessageCount=n + 4, timeout=180)
    assert read_windows(out1) == expected_windows(a + b, closed_before=300)   # no loss, no duplicates

    # the control plane restarts: STARTED processors come back from the catalog and resume
    inst.stop()
    inst.proc = None
    inst.start()
    c = [(f"k{i % 4}", i) for i in range(300, 330)] + [(k, 500) for k in ("k0", "k1", "k2", "k3")]
    put(inst.home, "kv", c)
    st = inst.sp.ka.wait(inputMessageCount=n + 4 + len(c), state="STARTED", timeout=240)
    assert (st["worker"], st["slot"]) == (1, 1)
    assert read_windows(out1) == expected_windows(a + b + flush + c, closed_before=500)
    assert [h["action"] for h in inst.sp.ka.info()["history"]][-1] == "restart after serve restart"
