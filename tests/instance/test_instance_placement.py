"""The seed's placement example through the HTTP API with real worker processes.

proc01-proc08 fill workers 1 and 2; proc09 provisions worker 3; stop proc03. (b) start proc10
first: it takes proc03's slot; stopping it gives back the same starting point, from which (a)
stop and restart proc09: it lands in worker 1's freed slot and worker 3's process ends. Processors are tiny (an empty
embedded stream) and the trigger is slow, so ten queries cost little.
"""
from __future__ import annotations

import os

import pytest

pytestmark = pytest.mark.instance


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:   # a zombie is gone too
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split()[2] != "Z"
    except FileNotFoundError:
        return False


def _where(inst) -> dict[str, tuple]:
    return {p["name"]: (p["worker"], p["slot"]) for p in inst.sp.list() if p["state"] == "STARTED"}


def test_seed_placement_example(make_instance):
    inst = make_instance(trigger_ms=10_000)
    from headrace.streams import create_stream

    create_stream(inst.home, "quiet", 1)
    for i in range(1, 11):
        inst.sp.create(f"proc{i:02d}", [{"$source": {"connectionName": "stream", "stream": "quiet"}},
                                        {"$emit": {"path": str(inst.base / f"proc{i:02d}.jsonl")}}])
    for i in range(1, 9):
        st = inst.sp[f"proc{i:02d}"].start()
        assert (st["worker"], st["slot"]) == ((i - 1) // 4 + 1, (i - 1) % 4 + 1)
    assert [w["id"] for w in inst.workers()] == [1, 2]
    st = inst.sp.proc09.start()
    assert (st["worker"], st["slot"]) == (3, 1)
    ws = inst.workers()
    assert [w["id"] for w in ws] == [1, 2, 3]
    assert len({w["pid"] for w in ws}) == 3 and all(_alive(w["pid"]) for w in ws)
    w3 = ws[2]["pid"]
    assert inst.sp.proc03.stop()["state"] == "STOPPED"
    assert ws[0]["slots"] == ["proc01", "proc02", "proc03", "proc04"]
    assert inst.workers()[0]["slots"] == ["proc01", "proc02", None, "proc04"]

    assert _where(inst)["proc09"] == (3, 1) and "proc03" not in _where(inst)
    start_point = [w["slots"] for w in inst.workers()]

    # (b) start proc10 first: it takes proc03's slot, proc09 stays on worker 3
    st = inst.sp.proc10.start()
    assert (st["worker"], st["slot"]) == (1, 3)
    assert [w["slots"] for w in inst.workers()] == [["proc01", "proc02", "proc10", "proc04"],
                                                    ["proc05", "proc06", "proc07", "proc08"],
                                                    ["proc09", None, None, None]]
    inst.sp.proc10.stop()                       # back to the starting point
    assert [w["slots"] for w in inst.workers()] == start_point

    # (a) stop and restart proc09: worker 1's freed slot; worker 3 is deprovisioned
    inst.sp.proc09.stop()
    assert [w["id"] for w in inst.workers()] == [1, 2]
    assert not _alive(w3)                       # its process ended
    st = inst.sp.proc09.start()
    assert (st["worker"], st["slot"]) == (1, 3)
    assert [w["id"] for w in inst.workers()] == [1, 2]

    # only running processors count: stopping all of worker 2 deprovisions it
    pid2 = inst.workers()[1]["pid"]
    for i in range(5, 9):
        inst.sp[f"proc{i:02d}"].stop()
    assert [w["id"] for w in inst.workers()] == [1] and not _alive(pid2)
    assert {p["name"]: p["state"] for p in inst.sp.list()}["proc05"] == "STOPPED"
