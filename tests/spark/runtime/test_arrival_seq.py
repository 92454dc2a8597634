"""The batch's arrival order (``_seq``) is the same whether a windowed micro-batch numbers its
rows in place (small batches) or numbers ``(partition, offset, _arr)`` apart and joins them back
by broadcast (batches of at least ``SEQ_BROADCAST_MIN_ROWS``): outputs and DLQ entries equal,
including arrival-order results (``$first``, ``$push``, a document window's order) and an
``$unwind`` before the window whose unwound documents fail one by one."""
from __future__ import annotations

import pytest

from headrace.spec import defaults
from headrace.testing import run_pipeline

pytestmark = pytest.mark.spark

T0 = "2026-01-01T00:00:"


def _docs() -> list[dict]:
    rows = []
    for i in range(24):     # arrival second, event second, document
        rows.append((i // 4, i, {"k": i % 3, "v": i, "xs": [i, "bad" if i % 5 == 0 else i + 1]}))
    return [{**d, "t": f"{T0}{et:02d}Z", "arrival": f"{T0}{arr * 5:02d}Z"} for arr, et, d in rows]


PIPES = {
    "group": [{"$tumblingWindow": {"interval": {"size": 10, "unit": "second"}, "allowedLateness": {"size": 0, "unit": "second"},
                                   "pipeline": [{"$group": {"_id": "$k", "first": {"$first": "$v"}, "all": {"$push": "$v"},
                                                            "s": {"$sum": "$v"}}}]}}],
    "documents": [{"$tumblingWindow": {"interval": {"size": 10, "unit": "second"}, "allowedLateness": {"size": 0, "unit": "second"},
                                       "pipeline": [{"$project": {"_id": 0, "v": 1, "k": 1}}]}}],
    "unwind": [{"$unwind": "$xs"},
               {"$tumblingWindow": {"interval": {"size": 10, "unit": "second"}, "allowedLateness": {"size": 0, "unit": "second"},
                                    "pipeline": [{"$group": {"_id": "$k", "n": {"$sum": {"$toInt": "$xs"}},
                                                             "xs": {"$push": "$xs"}}}]}}],
}


def _run(stages):
    src = {"$source": {"timeField": {"$dateFromString": {"dateString": "$t"}}}}
    return run_pipeline([src, *stages], _docs(), replay={"arrivalField": "arrival"}, strip_meta=True)


@pytest.mark.parametrize("name", ["group", "documents"])
def test_broadcast_numbering_equals_in_place(name, monkeypatch):
    """Numbers from the offsets (one arrival instant per partition and batch), from the window
    in place, and from the window joined back by broadcast: the same results."""
    by_offset = _run(PIPES[name])
    monkeypatch.setattr(defaults, "SEQ_FROM_OFFSETS", False)
    small = _run(PIPES[name])
    monkeypatch.setattr(defaults, "SEQ_BROADCAST_MIN_ROWS", 0)
    big = _run(PIPES[name])
    assert small.outputs and big.outputs == small.outputs == by_offset.outputs
    assert big.dlq == small.dlq == by_offset.dlq


def test_seq_bases_number_as_the_window_does():
    """Per-partition bases: partitions in order of (arrival, name), each after the previous one's
    offsets, from ``batch_id << 32`` + 1; none when a partition's arrival varies or the offsets
    span too many numbers."""
    from headrace.spark.runtime.batch import seq_bases

    b = seq_bases([(5, "b", 10, 12), (5, "a", 0, 1), (4, "c", 7, 7)], 2)
    base = 2 << 32
    # c (arrival 4): 7 -> 1; a: 0, 1 -> 2, 3; b: 10..12 -> 4..6
    assert [b["c"] + 7, b["a"], b["a"] + 1, b["b"] + 10, b["b"] + 12] == [base + 1, base + 2, base + 3, base + 4, base + 6]
    assert seq_bases([(None, "a", 0, 3)], 0) is None
    assert seq_bases([(1, "a", 0, 1 << 31)], 0) is None


def test_unwind_before_the_window_numbers_each_unwound_document(monkeypatch):
    """(Renumbered after the stages whatever the batch size.) Each failing unwound document
    has its own DLQ entry, with its own id."""
    monkeypatch.setattr(defaults, "SEQ_BROADCAST_MIN_ROWS", 0)
    res = _run(PIPES["unwind"])
    assert res.outputs and len(res.dlq) == 5
    assert len({d.get("_id", repr(d)) for d in res.dlq}) == 5
