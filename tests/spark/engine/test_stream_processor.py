"""A processor reading an embedded sharded stream while it is split and merged: every record
comes out once, in put order per key, and drained parents stop holding the watermark."""
from __future__ import annotations

import pytest

from headrace.connections import load_registry
from headrace.streams.stream import Stream, create_stream

pytestmark = pytest.mark.spark


def test_processor_reads_across_resharding(spark, tmp_path):
    home = tmp_path / "home"
    create_stream(home, "events", 2)
    s = Stream(home, "events")
    n = 0

    def put(count):
        nonlocal n
        s.put_many([(f"k{i % 5}", {"k": f"k{i % 5}", "i": i}) for i in range(n, n + count)])
        n += count

    put(30)

    def fault(batch_id, phase):
        if batch_id == 1:
            first = s.meta().open_shards()[0].id
            s.split(first)
            put(20)
        if batch_id == 3:
            a, b = [x.id for x in s.meta().open_shards()][:2]
            s.merge(a, b)
            put(20)

    from headrace.spark.engine import Processor, RunOptions
    from headrace.spec import parse_pipeline

    outputs: list = []
    pipe = [{"$source": {"connectionName": "stream", "stream": "events", "config": {"maxRecordsPerBatch": 12}}},
            {"$match": {"i": {"$gte": 0}}}]
    proc = Processor(parse_pipeline(pipe), RunOptions(name="s", checkpoint=tmp_path / "ck",
                                                      registry=load_registry(None, home),
                                                      on_output=outputs.extend, fault=fault))
    stats = proc.run(max_input=70, duration_s=600)
    got = [d["i"] for d in outputs]
    assert sorted(got) == list(range(70))
    for k in range(5):
        per_key = [d["i"] for d in outputs if d["k"] == f"k{k}"]
        assert per_key == sorted(per_key), f"key k{k} out of order: {per_key}"
    assert {d["_stream_meta"]["source"]["type"] for d in outputs} == {"stream"}
    # drained parents are no longer watermark partitions: only shards open now (or still holding
    # unread records) remain in the processor's partition list

    open_now = {x.id for x in s.meta().shards.values() if x.open}
    listed = {p["partition"] for p in stats["partitions"]}
    closed = {x.id for x in s.meta().shards.values() if not x.open}
    assert open_now <= listed and len(closed) == 3


def test_idle_timeout_closes_a_window_on_a_quiet_stream(spark, tmp_path):
    """No record arrives after the first batch: the stream source's clock ticks alone move the
    processing clock past last arrival + idleTimeout, and the open window is emitted."""
    home = tmp_path / "home"
    create_stream(home, "quiet", 2)
    s = Stream(home, "quiet")
    s.put_many([(f"k{i}", {"k": f"k{i}", "t": f"2024-05-01T12:00:0{i}Z"}) for i in range(4)])

    from headrace.spark.engine import Processor, RunOptions
    from headrace.spec import parse_pipeline

    outputs: list = []
    pipe = [{"$source": {"connectionName": "stream", "stream": "quiet", "timeField": {"$toDate": "$t"}}},
            {"$tumblingWindow": {"interval": {"size": 10, "unit": "second"},
                                 "idleTimeout": {"size": 2, "unit": "second"},
                                 "pipeline": [{"$group": {"_id": None, "n": {"$count": {}}}}]}}]
    proc = Processor(parse_pipeline(pipe), RunOptions(name="q", checkpoint=tmp_path / "ck",
                                                      registry=load_registry(None, home),
                                                      on_output=outputs.extend))
    stats = proc.run(limit=1, duration_s=120)
    assert [d["n"] for d in outputs] == [4], stats
    assert stats["inputMessageCount"] == 4 and stats["batches"] >= 2


def test_stop_lets_the_running_batch_finish_and_plans_no_other(spark, tmp_path):
    """``stop()`` during a micro-batch: that batch finishes and commits (Spark's commit log, the
    engine state), no further batch starts though input is waiting, nothing fails, and a restart
    reads on from there: every record once."""
    import threading
    import time

    home = tmp_path / "home"
    create_stream(home, "events", 1)
    Stream(home, "events").put_many([("k", {"i": i}) for i in range(30)])

    from headrace.spark.engine import Processor, RunOptions
    from headrace.spec import parse_pipeline

    pipe = parse_pipeline([{"$source": {"connectionName": "stream", "stream": "events",
                                        "config": {"maxRecordsPerBatch": 12}}}, {"$match": {"i": {"$gte": 0}}}])
    outputs: list = []
    batches: list = []
    stopper: list = []

    def fault(batch_id, _phase):       # after batch 1's sink write, before its state and commit
        if batch_id == 1 and not stopper:
            stopper.append(threading.Thread(target=proc.stop))
            stopper[0].start()
            deadline = time.monotonic() + 20      # stop() holds the source before it waits
            while not (proc.hdir / "hold").exists() and time.monotonic() < deadline:
                stopper[0].join(0.01)

    def opts(**kw):
        return RunOptions(name="s", checkpoint=tmp_path / "ck", registry=load_registry(None, home),
                          on_output=outputs.extend, on_batch=lambda b, *_: batches.append(b), **kw)

    proc = Processor(pipe, opts(fault=fault))
    stats = proc.run(duration_s=600)
    stopper[0].join()
    assert proc.query.exception() is None
    assert batches == [0, 1] and stats["inputMessageCount"] == 24
    assert sorted(p.name for p in (tmp_path / "ck" / "spark" / "commits").iterdir()
                  if not p.name.startswith(".")) == ["0", "1"]
    Processor(pipe, opts()).run(max_input=30, duration_s=600)
    assert sorted(d["i"] for d in outputs) == list(range(30))
    assert batches[:3] == [0, 1, 2]
