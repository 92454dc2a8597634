"""Auto-resharding policy on an injected clock (arrival stamps and the scaler's clock)."""
from __future__ import annotations

import pytest

from headrace.streams import InvalidArgument, Stream, create_stream
from headrace.streams.autoscale import AutoScaler, Policy


class Clock:
    def __init__(self, t: float):
        self.t = t

    def __call__(self) -> float:
        return self.t

    def us(self) -> int:
        return int(self.t * 1_000_000)


def _load(stream: Stream, clock: Clock, seconds: int, rate_by_key: dict[str, int]) -> None:
    """Advance the clock second by second, putting ``rate`` records per second per key."""
    for _ in range(seconds):
        clock.t += 1
        stream.put_many([(k, {"t": clock.t}) for k, r in rate_by_key.items() for _ in range(r)])


def _key_in(stream: Stream, shard_id: str, n: int = 1) -> list[str]:
    from headrace.streams import hash_key

    s = stream.shard(shard_id)
    out, i = [], 0
    while len(out) < n:
        k = f"key{i}"
        if s.start <= hash_key(k) <= s.end:
            out.append(k)
        i += 1
    return out


def test_hot_shard_is_split_after_sustained_load_and_cold_neighbours_merge(home):
    clock = Clock(1_000_000.0)
    create_stream(home, "s", 2, clock_us=clock.us)
    s = Stream(home, "s", clock_us=clock.us)
    scaler = AutoScaler(s, Policy(split_rate=50, merge_rate=5, window=10, sustain=2, max_shards=8), clock=clock)
    hot = _key_in(s, "shard-000000", 4)
    cool = _key_in(s, "shard-000001")[0]
    load = {**{k: 20 for k in hot}, cool: 1}  # 80/s on shard 0, 1/s on shard 1

    _load(s, clock, 10, load)
    assert scaler.rates() == {"shard-000000": 80.0, "shard-000001": 1.0}
    assert scaler.tick() == []  # hot once: not yet sustained
    _load(s, clock, 1, load)
    (act,) = scaler.tick()
    assert act["action"] == "split" and act["shard"] == "shard-000000"
    assert act["children"] == ["shard-000002", "shard-000003"]
    assert not s.shard("shard-000000").open

    # new shards are judged only once a whole window old
    _load(s, clock, 5, load)
    assert set(scaler.rates()) == {"shard-000001"}

    # load stops: after a window of silence every shard is cold; adjacent cold pairs merge
    _load(s, clock, 20, {})
    assert scaler.tick() == []
    acts = scaler.tick()
    assert [a["action"] for a in acts] == ["merge"]
    assert acts[0]["shards"] == ["shard-000002", "shard-000003"]
    _load(s, clock, 11, {})
    scaler.tick()
    acts = scaler.tick()
    assert [a["action"] for a in acts] == ["merge"] and s.describe()["open_shards"] == 1
    # min_shards holds
    _load(s, clock, 11, {})
    assert scaler.tick() == [] and scaler.tick() == []


def test_max_shards_and_policy_validation(home):
    clock = Clock(5_000.0)
    create_stream(home, "s", 2, clock_us=clock.us)
    s = Stream(home, "s", clock_us=clock.us)
    scaler = AutoScaler(s, Policy(split_rate=1, merge_rate=0, window=5, sustain=1, max_shards=2), clock=clock)
    _load(s, clock, 6, {k: 5 for k in _key_in(s, "shard-000000", 2) + _key_in(s, "shard-000001", 2)})
    assert scaler.tick() == []  # both hot, but already at max_shards
    for bad in [dict(split_rate=0, merge_rate=0), dict(split_rate=10, merge_rate=6),
                dict(split_rate=10, merge_rate=1, window=0), dict(split_rate=10, merge_rate=1, min_shards=3,
                                                                  max_shards=2)]:
        with pytest.raises(InvalidArgument) as ei:
            Policy(**bad)
        assert ei.value.code == "AUTOSCALE_POLICY"
