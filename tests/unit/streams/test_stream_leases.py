"""Lease table and workers, deterministic: several workers in one process on an injected clock."""
from __future__ import annotations

import json

import pytest

from headrace.streams import LeaseTable, Stream, Worker, create_stream


class Clock:
    def __init__(self, t: float = 1000.0):
        self.t = t

    def __call__(self) -> float:
        return self.t


def _loads(stream, group="g"):
    d = LeaseTable(stream, group).describe(now=0)  # 'workers' below is recomputed with the real time
    out: dict[str, list[str]] = {}
    for l in d["leases"]:
        if l["owner"] and not l["finished"]:
            out.setdefault(l["owner"], []).append(l["shard"])
    return {k: sorted(v) for k, v in out.items()}


def _counts(stream):
    return sorted(len(v) for v in _loads(stream).values())


def _workers(home, clock, ids, **kw):
    got: dict[str, list] = {i: [] for i in ids}
    ws = [Worker(Stream(home, "s"), "g", i, lease_duration=10, clock=clock, batch_size=kw.pop("batch", 1000), **kw)
          for i in ids]
    procs = {w.id: (lambda rec, wid=w.id: got[wid].append(rec)) for w in ws}
    return ws, procs, got


def _rounds(ws, procs, n=6):
    for _ in range(n):
        for w in ws:
            w.step(procs[w.id])


def test_balance_4_shards_2_workers_then_split_to_5(home):
    s = create_stream(home, "s", 4)
    s.put_many([(f"k{i}", {"i": i}) for i in range(200)])
    clock = Clock()
    (a, b), procs, got = _workers(home, clock, ["A", "B"])
    a.step(procs["A"])  # A alone takes everything
    assert _counts(s) == [4]
    _rounds([a, b], procs)
    assert _counts(s) == [2, 2]
    # split the shard A holds first; its children wait for it to be drained, then 5 = 3 + 2
    s.split(_loads(s)["A"][0])
    _rounds([a, b], procs)
    assert _counts(s) == [2, 3]
    assert len(_loads(s)["A"]) + len(_loads(s)["B"]) == 5
    # stealing was graceful: nothing delivered twice
    seen = [(r.shard, r.seq) for r in got["A"] + got["B"]]
    assert len(seen) == len(set(seen)) == 200


def test_three_workers_four_shards(home):
    s = create_stream(home, "s", 4)
    clock = Clock()
    ws, procs, _ = _workers(home, clock, ["A", "B", "C"])
    ws[0].step(procs["A"])
    _rounds(ws, procs)
    assert _counts(s) == [1, 1, 2]


def test_dead_worker_leases_expire_and_are_taken_from_checkpoints(home):
    s = create_stream(home, "s", 2)
    s.put_many([(f"k{i}", {"i": i}) for i in range(40)])
    clock = Clock()
    (a, b), procs, got = _workers(home, clock, ["A", "B"], batch=3)
    _rounds([a, b], procs, 2)
    assert _counts(s) == [1, 1]
    # A "dies" (stops stepping) holding its lease; B keeps going until A's lease expires
    a_shard = _loads(s)["A"][0]
    cp = LeaseTable(s, "g").load()[a_shard].checkpoint
    for _ in range(3):
        clock.t += 4
        b.step(procs["B"])
    assert _loads(s)["B"] == sorted(["shard-000000", "shard-000001"])  # took A's lease after expiry
    _rounds([b], procs, 20)
    mine = [r.seq for r in got["B"] if r.shard == a_shard]
    assert mine[0] == cp and mine == list(range(cp, len(mine) + cp))  # resumed at A's checkpoint
    total = {(r.shard, r.seq) for r in got["A"] + got["B"]}
    assert len(total) == 40


def test_a_worker_never_processes_without_its_lease(home):
    s = create_stream(home, "s", 1)
    s.put_many([("k", {"i": i}) for i in range(10)])
    clock = Clock()
    (a, b), procs, got = _workers(home, clock, ["A", "B"], batch=2)
    a.step(procs["A"])
    assert len(got["A"]) == 2
    clock.t += 11  # A's lease has expired: B takes it
    b.step(procs["B"])
    assert got["B"][0].seq == 2
    # A comes back: it finds the lease lost before delivering anything
    before = len(got["A"])
    res = a.step(procs["A"])
    assert res.lost == 1 and len(got["A"]) == before
    # a worker stops delivering when its lease is about to expire (safety margin), mid-batch
    delivered = []

    def slow(rec):
        delivered.append(rec.seq)
        clock.t += 1.5

    c = Worker(Stream(home, "s"), "h", "C", lease_duration=5, safety=1, batch_size=100, clock=clock)
    c.step(slow)
    assert delivered == [0, 1, 2]  # at t0+4.5 >= expires - safety it stops; checkpoint at 3
    assert LeaseTable(s, "h").load()["shard-000000"].checkpoint == 3


def test_lost_lease_cannot_checkpoint(home):
    s = create_stream(home, "s", 1)
    s.put_many([("k", {"i": i}) for i in range(6)])
    clock = Clock()
    events = []
    a = Worker(Stream(home, "s"), "g", "A", lease_duration=5, clock=clock, batch_size=3, on_event=events.append)
    b = Worker(Stream(home, "s"), "g", "B", lease_duration=5, clock=clock, batch_size=3)

    def stall(rec):
        if rec.seq == 0:
            clock.t += 100  # stalls past its lease (the safety check runs before each record)
            b.step(lambda r: None)  # B takes the lease meanwhile and processes 0..2

    a.step(stall)
    assert any(e["event"] == "lease_lost" and e["uncheckpointed"] == [0, 1] for e in events)
    lease = LeaseTable(s, "g").load()["shard-000000"]
    assert lease.owner == "B" and lease.checkpoint == 3


def test_shutdown_releases_and_same_id_adopts(home):
    s = create_stream(home, "s", 2)
    clock = Clock()
    a = Worker(Stream(home, "s"), "g", "A", clock=clock)
    a.step(lambda r: None)
    assert _counts(s) == [2]
    a.shutdown()
    assert _counts(s) == []
    a2 = Worker(Stream(home, "s"), "g", "A", clock=clock)
    a2.step(lambda r: None)
    a3 = Worker(Stream(home, "s"), "g", "A", clock=clock)  # restarted with the same id: adopts
    res = a3.step(lambda r: None)
    assert res.taken == 2 and _loads(s) == {"A": ["shard-000000", "shard-000001"]}


def test_initial_latest_and_group_isolation(home):
    s = create_stream(home, "s", 1)
    s.put_many([("k", {"i": i}) for i in range(5)])
    got = []
    w = Worker(Stream(home, "s"), "late", "A", initial="latest")
    w.run(got.append)
    assert got == []
    s.put("k", {"i": 5})
    w.run(got.append)
    assert [r.seq for r in got] == [5]
    other = []
    Worker(Stream(home, "s"), "early", "A").run(other.append)
    assert [r.seq for r in other] == list(range(6))


@pytest.mark.parametrize("kw, code", [
    ({"lease_duration": 0}, "LEASE_OPTION"), ({"batch_size": 0}, "LEASE_OPTION"),
    ({"initial": "middle"}, "LEASE_OPTION"), ({"worker_id": "a/b"}, "NAME_INVALID"),
])
def test_worker_options(home, kw, code):
    create_stream(home, "s", 1)
    from headrace.streams import StreamError

    with pytest.raises(StreamError) as ei:
        Worker(Stream(home, "s"), "g", **kw)
    assert ei.value.code == code


def test_lease_table_document(home):
    s = create_stream(home, "s", 2)
    Worker(Stream(home, "s"), "g", "A").run(lambda r: None)
    d = LeaseTable(s, "g").describe()
    assert [l["shard"] for l in d["leases"]] == ["shard-000000", "shard-000001"]
    assert set(d["leases"][0]) >= {"shard", "owner", "counter", "checkpoint", "parents", "finished", "expires"}
    json.dumps(d)
