"""Placement rule of the instance (seed 000 example), pure Python."""
from headrace.instance.placement import Placement


def _seed() -> Placement:
    p = Placement()
    for i in range(1, 9):
        got = p.place(f"proc{i:02d}")
        assert (got.worker, got.slot) == ((i - 1) // 4 + 1, (i - 1) % 4 + 1)
    got = p.place("proc09")
    assert (got.worker, got.slot, got.provisioned) == (3, 1, True)
    rel = p.release("proc03")
    assert (rel.worker, rel.slot, rel.deprovisioned) == (1, 3, False)
    return p


def test_seed_a_restart_proc09_moves_to_worker1_and_worker3_goes():
    p = _seed()
    rel = p.release("proc09")
    assert rel.deprovisioned and rel.worker == 3
    got = p.place("proc09")
    assert (got.worker, got.slot, got.provisioned) == (1, 3, False)
    assert sorted(p.workers) == [1, 2]


def test_seed_b_proc10_takes_proc03_slot():
    p = _seed()
    got = p.place("proc10")
    assert (got.worker, got.slot, got.provisioned) == (1, 3, False)
    assert p.where("proc09") == (3, 1)


def test_lowest_free_worker_number_is_reused():
    p = Placement()
    for i in range(12):
        p.place(f"p{i}")
    for i in range(4):            # empty worker 1
        p.release(f"p{i}")
    assert sorted(p.workers) == [2, 3]
    for i in range(4, 8):         # empty worker 2
        p.release(f"p{i}")
    assert sorted(p.workers) == [3]
    got = p.place("new")          # worker 3 is full: worker 1 is provisioned again
    assert (got.worker, got.slot, got.provisioned) == (1, 1, True)


def test_full_workers_provision_lowest_free_number():
    p = Placement()
    for i in range(4):
        p.place(f"a{i}")
    for i in range(4):
        p.place(f"b{i}")
    for i in range(4):            # worker 1 goes away
        p.release(f"a{i}")
    got = p.place("c")
    assert (got.worker, got.slot, got.provisioned) == (1, 1, True)


def test_dead_worker_processors_are_replaced_by_the_rule():
    p = Placement()
    for i in range(6):
        p.place(f"p{i}")
    lost = p.drop_worker(1)
    assert lost == ["p0", "p1", "p2", "p3"]
    placed = [p.place(n) for n in lost]
    assert [(x.worker, x.slot) for x in placed] == [(2, 3), (2, 4), (1, 1), (1, 2)]
    assert placed[2].provisioned and not placed[3].provisioned


def test_place_is_idempotent_and_release_unknown_is_none():
    p = Placement()
    a = p.place("x")
    assert p.place("x") == a.__class__(a.worker, a.slot, False)
    assert p.release("nope") is None
