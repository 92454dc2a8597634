"""The keyed-computation API on the reference runner: state, timers, produce, low watermarks."""
from __future__ import annotations

import pytest

from headrace.keyed import Computation, KeyedError, MapState, ReferenceRunner, Topology, ValueState
from headrace.keyed import defaults
from headrace.keyed.examples import LastSeen, Tee, Total, WindowCount


def counting() -> Topology:
    return (Topology().injector("in", ["ev"], partitions=["a", "b"])
            .computation("wc", WindowCount, ["ev"], ["counts"])
            .computation("tot", Total, ["counts"], ["totals"]))


def test_event_timers_fire_when_the_low_watermark_passes_them():
    r = ReferenceRunner(counting())
    r.inject("in", [("a", None, "k1", 1, 100), ("b", None, "k1", 1, 200), ("a", None, "k2", 1, 1500)], clock=1000)
    r.run()
    st = r.stats()["computations"]
    # injector watermark = min over partitions of M_p = 200: no window has ended
    assert st["wc"]["inputWatermark"] == 200
    assert st["wc"]["pendingTimers"] == 2 and st["wc"]["lowWatermark"] == 200
    assert r.output("totals") == []
    r.inject("in", [("b", None, "k1", 1, 2500), ("a", None, "k1", 1, 2600)], clock=3000)
    r.run()
    # watermark 2500: windows [0,1000) and [1000,2000) closed; [2000,3000) still pending
    assert sorted((x.key, x.value, x.timestamp) for x in r.output("totals")) == [("k1", 2, 0), ("k2", 1, 1000)]
    st = r.stats()["computations"]
    assert st["wc"]["lowWatermark"] == 2500 and st["wc"]["pendingTimers"] == 1
    assert st["tot"]["lowWatermark"] == 2500
    r.inject("in", [], clock=4000, end=True)
    r.run()
    assert sorted((x.key, x.value, x.timestamp) for x in r.output("totals")) == [
        ("k1", 2, 0), ("k1", 4, 2000), ("k2", 1, 1000)]
    st = r.stats()["computations"]
    assert st["wc"]["lowWatermark"] == defaults.END_MS and st["wc"]["timersFired"] == 3
    assert st["wc"]["stateKeys"] == 0   # window counts removed once produced
    assert st["tot"]["stateKeys"] == 2


def test_low_watermark_is_held_by_pending_timers_and_by_the_slowest_partition():
    r = ReferenceRunner(counting())
    r.inject("in", [("a", None, "k", 1, 10_500)], clock=1)
    r.run()
    assert r.stats()["injectors"]["in"]["lowWatermark"] == defaults.NEG_INF_MS   # b never produced
    r.inject("in", [("b", None, "k", 1, 3_200)], clock=2)
    r.run()
    st = r.stats()
    assert st["injectors"]["in"]["lowWatermark"] == 3_200
    # the window [3000, 4000) of "k" is pending: the counter's low watermark is its input's (3200),
    # and its timers at 4000 and 11000 hold its own
    assert st["computations"]["wc"]["lowWatermark"] == 3_200
    r.inject("in", [("b", None, "k", 1, 20_000), ("a", None, "k", 1, 20_000)], clock=3)
    r.run()
    st = r.stats()["computations"]["wc"]
    # input at 20000; pending timer at 21000; the two earlier windows fired
    assert st["inputWatermark"] == 20_000 and st["lowWatermark"] == 20_000 and st["timersFired"] == 2


def test_idle_partitions_and_lateness_follow_the_per_partition_rule():
    t = Topology().injector("in", ["ev"], partitions=["a", "b"], lateness_ms=100, idle_timeout_ms=1000)
    t.computation("wc", WindowCount, ["ev"], ["counts"])
    r = ReferenceRunner(t)
    r.inject("in", [("a", None, "k", 1, 5000)], clock=10_000)   # b never produced: idle
    assert r.stats()["injectors"]["in"]["lowWatermark"] == 4900
    r.inject("in", [("b", None, "k", 1, 3000)], clock=10_500)   # b active again, behind: LW never decreases
    assert r.stats()["injectors"]["in"]["lowWatermark"] == 4900
    r.inject("in", [("a", None, "k", 1, 9000)], clock=10_600)
    assert r.stats()["injectors"]["in"]["lowWatermark"] == 4900   # min(8900, 2900) < 4900
    r.inject("in", [("a", None, "k", 1, 9500)], clock=11_600)     # b idle again (nothing since 10500)
    assert r.stats()["injectors"]["in"]["lowWatermark"] == 9400


class Stateful(Computation):
    state = {"v": ValueState(), "l": __import__("headrace.keyed", fromlist=["ListState"]).ListState(),
             "m": MapState()}

    def process_record(self, ctx, record):
        ctx.value("v").set({"last": record.value})
        ctx.list("l").append(record.value)
        ctx.map("m").put(str(record.value), record.timestamp)
        if record.value == "clear":
            ctx.list("l").clear()
            ctx.map("m").clear()
        ctx.produce("out", ctx.key, {"v": ctx.value("v").get(), "l": ctx.list("l").get(),
                                     "m": ctx.map("m").items()}, record.timestamp)


def test_value_list_and_map_state_are_per_key():
    t = Topology().injector("in", ["ev"]).computation("s", Stateful, ["ev"], ["out"])
    r = ReferenceRunner(t)
    r.inject("in", [("p0", None, "x", "a", 1), ("p0", None, "y", "b", 2)], clock=1)
    r.inject("in", [("p0", None, "x", "c", 3)], clock=2)
    r.run()
    out = {(o.key, o.timestamp): o.value for o in r.output("out")}
    assert out[("x", 3)] == {"v": {"last": "c"}, "l": ["a", "c"], "m": [["a", 1], ["c", 3]]} or \
        out[("x", 3)] == {"v": {"last": "c"}, "l": ["a", "c"], "m": [("a", 1), ("c", 3)]}
    assert out[("y", 2)]["l"] == ["b"]
    r.inject("in", [("p0", None, "x", "clear", 4)], clock=3)
    r.run()
    assert r.output("out")[-1].value["l"] == [] and r.output("out")[-1].value["m"] == []


def test_ttl_expires_state_on_the_processing_clock():
    t = Topology().injector("in", ["ev"]).computation("ls", LastSeen, ["ev"], ["seen"])
    r = ReferenceRunner(t)
    for clock in (1_000, 6_000, 30_000):
        r.inject("in", [("p0", None, "k", clock, clock)], clock=clock)
        r.run()
    assert [o.value["had"] for o in r.output("seen")] == [False, True, False]   # ttl 10 s


class Rearm(Computation):
    """Sets a timer per record, deletes it when the value is 'cancel'; fires produce."""
    state = {"n": ValueState()}

    def process_record(self, ctx, record):
        if record.value == "cancel":
            for t in ctx.timers():
                ctx.delete_timer(t)
        else:
            ctx.set_timer(record.timestamp + 100)
            ctx.set_timer(record.timestamp + 100)   # idempotent

    def process_timer(self, ctx, timer):
        n = ctx.value("n").get(0) + 1
        ctx.value("n").set(n)
        ctx.produce("fired", ctx.key, n, timer.timestamp)


def test_timers_set_delete_list_and_fire_once():
    t = Topology().injector("in", ["ev"]).computation("r", Rearm, ["ev"], ["fired"])
    r = ReferenceRunner(t)
    r.inject("in", [("p0", None, "a", 1, 1000), ("p0", None, "b", 1, 1000), ("p0", None, "b", "cancel", 1001)],
             clock=1)
    r.run()
    assert r.stats()["computations"]["r"]["pendingTimers"] == 1
    r.inject("in", [], clock=2, end=True)
    r.run()
    r.run()
    assert [(o.key, o.value, o.timestamp) for o in r.output("fired")] == [("a", 1, 1100)]


def test_fan_out_and_fan_in():
    t = (Topology().injector("in", ["ev"])
         .computation("tee", Tee, ["ev"], ["left", "right"], {"outputs": ("left", "right")})
         .computation("tot", Total, ["left", "right"], ["totals"]))
    r = ReferenceRunner(t)
    r.inject("in", [("p0", None, "k", {"count": 2}, 5), ("p0", None, "j", {"count": 1}, 6)], clock=1, end=True)
    r.run()
    assert sorted((o.key, o.value) for o in r.output("totals")) == [("j", 2), ("k", 4)]


def test_adding_a_computation_keeps_the_others_state():
    r = ReferenceRunner(counting())
    r.inject("in", [("a", None, "k", 1, 100), ("b", None, "k", 1, 100)], clock=1)
    r.inject("in", [("a", None, "k", 1, 1100), ("b", None, "k", 1, 1100)], clock=2)
    r.run()
    before = r.stats()["computations"]["tot"]
    r.add_computation("tot2", Total, ["counts"], ["totals2"], {"out": "totals2"})
    r.inject("in", [("a", None, "k", 1, 5000), ("b", None, "k", 1, 5000)], clock=3, end=True)
    r.run()
    totals = [(o.key, o.value, o.timestamp) for o in r.output("totals")]
    assert totals == [("k", 2, 0), ("k", 6, 5000)]   # old computation continued from its state (2)
    assert before["batches"] < r.stats()["computations"]["tot"]["batches"]
    # the new one read the stream from its first batch
    assert [(o.key, o.value) for o in r.output("totals2")] == [("k", 6)]


class BadProduce(Computation):
    def process_record(self, ctx, record):
        ctx.produce("nowhere", ctx.key, 1, record.timestamp)


class BadState(Computation):
    def process_record(self, ctx, record):
        ctx.value("undeclared").get()


def test_errors_have_stable_codes():
    with pytest.raises(KeyedError) as e:
        Topology().injector("in", ["ev"]).computation("c", Total, ["nope"], []).validate()
    assert e.value.code == "KEYED_STREAM_UNKNOWN"
    with pytest.raises(KeyedError) as e:
        (Topology().injector("in", ["ev"]).computation("a", Total, ["ev", "y"], ["x"])
         .computation("b", Total, ["x"], ["y"]).validate())
    assert e.value.code == "KEYED_CYCLE"
    with pytest.raises(KeyedError) as e:
        Topology().injector("in", ["ev"]).injector("in", ["ev"])
    assert e.value.code == "KEYED_NAME"
    for cls, code in ((BadProduce, "KEYED_PRODUCE"), (BadState, "KEYED_STATE")):
        r = ReferenceRunner(Topology().injector("in", ["ev"]).computation("c", cls, ["ev"], ["out"]))
        r.inject("in", [("p0", None, "k", 1, 1)], clock=1)
        with pytest.raises(KeyedError) as e:
            r.run()
        assert e.value.code == code
