"""A topology stream exported into an embedded stream (what a pipeline's $source reads)."""
from __future__ import annotations

import json

from headrace.keyed.bridge import export_stream
from headrace.keyed.channel import Channel
from headrace.keyed.injectors import ChannelInjector
from headrace.keyed.topology import Topology
from headrace.streams import Stream


def test_export_is_incremental_with_stable_ids(tmp_path):
    topo = Topology().injector("in", ["ev"], partitions=["a"])
    ch = Channel(tmp_path / "topo")
    inj = ChannelInjector(ch, topo.injectors["in"])
    inj.publish([("a", None, "k1", {"x": 1}, 1000), ("a", None, "k2", {"x": 2}, 1500)], clock=2000)
    home = str(tmp_path / "home")
    assert export_stream(ch, ["in"], "ev", home, "out") == 2
    assert export_stream(ch, ["in"], "ev", home, "out") == 0          # nothing new
    inj.publish([("a", None, "k1", {"x": 3}, 2500)], clock=3000)
    # a restarted injector continues after its last batch
    inj2 = ChannelInjector(ch, topo.injectors["in"])
    assert inj2.n == 2 and inj2.wm.lw == 2500
    assert export_stream(ch, ["in"], "ev", home, "out") == 1
    s = Stream(home, "out")
    got = [json.loads(r.data) for sh in s.meta().shards for r in s.read(sh)]
    s.close()
    assert sorted(d["_id"] for d in got) == ["in:0:0", "in:0:1", "in:1:0"]
    assert {d["key"]: d["value"]["x"] for d in got if d["_id"] != "in:0:0"} == {"k2": 2, "k1": 3}
