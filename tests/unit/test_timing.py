"""Window arithmetic and the watermark rule (pure Python)."""
from headrace.timing import PLUS_INF, TimeState, idle_timer_due, last_window_end, window_starts


def test_tumbling_starts():
    assert window_starts(0, 10, 10, 0) == [0]
    assert window_starts(9, 10, 10, 0) == [0]
    assert window_starts(10, 10, 10, 0) == [10]
    assert window_starts(-1, 10, 10, 0) == [-10]
    assert window_starts(7, 10, 10, 3) == [3]
    assert window_starts(2, 10, 10, 3) == [-7]


def test_hopping_starts_hold_the_instant():
    for t in range(-30, 30):
        starts = window_starts(t, 10, 4, 1)
        assert starts == sorted(s for s in range(-60, 60) if (s - 1) % 4 == 0 and s <= t < s + 10)
        assert last_window_end(t, 10, 4, 1) == max(starts) + 10


def test_watermark_min_over_partitions_never_decreases():
    ts = TimeState()
    ts.ensure(["a", "b"])
    ts.observe("a", 100, 100)
    ts.advance(100, None)
    assert ts.watermark is None  # b never produced: holds W back
    assert ts.holding_back(100, None) == ["b"]
    ts.observe("b", 50, 110)
    ts.advance(110, None)
    assert ts.watermark == 50
    ts.observe("b", 20, 120)   # older event: M_b stays 50
    ts.advance(120, None)
    assert ts.watermark == 50
    assert ts.holding_back(120, None) == ["b"]


def test_idle_partitions_are_skipped_and_all_idle_keeps_w():
    ts = TimeState()
    ts.ensure(["a", "b"])
    ts.observe("a", 100, 1000)
    ts.advance(1000, 30)
    assert ts.watermark == 100  # b never produced and a timeout is set: idle
    ts.advance(5000, 30)        # everything idle: W unchanged
    assert ts.watermark == 100


def test_idle_timer_due():
    assert idle_timer_due(180, 240, 60) == 300
    assert idle_timer_due(None, 240, 60) is None
    assert idle_timer_due(180, None, 60) is None
    assert PLUS_INF > 10**15


def test_state_roundtrip():
    ts = TimeState()
    ts.observe("p", 5, 6)
    ts.advance(6, None)
    assert TimeState.from_json(ts.to_json()).to_json() == ts.to_json()
