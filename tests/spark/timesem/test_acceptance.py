"""Acceptance examples A-D of time-semantics.md, in replay mode, exactly as tabled.

Each example runs twice: through ``headrace.testing`` (checking W after every micro-batch and the
instant each window emits) and through the ``headrace process`` command (checking its output).
"""
from __future__ import annotations

import datetime as dt
import json

import pytest

from headrace import ejson
from headrace.cli import main
from headrace.testing import run_pipeline

pytestmark = pytest.mark.spark

DAY = "2024-05-01T"


def T(hhmm: str) -> str:
    """'12:01' or '12:00:40' -> an ISO instant on a fixed day."""
    return DAY + (hhmm if hhmm.count(":") == 2 else hhmm + ":00") + "Z"


def D(hhmm: str) -> dt.datetime:
    return ejson.parse_iso(T(hhmm))


def docs(rows):
    """rows: (arrival, event or None for a tick[, partition])."""
    out = []
    for r in rows:
        d = {"arrival": T(r[0])}
        if r[1] is not None:
            d["t"] = T(r[1])
        if len(r) > 2:
            d["p"] = r[2]
        out.append(d)
    return out


def pipeline(rows, window, replay=None, source=None):
    src = {"documents": docs(rows), "timeField": {"$toDate": "$t"},
           "replay": replay or {"arrivalField": "arrival"}, **(source or {})}
    return [{"$source": src}, {"$tumblingWindow": {**window, "pipeline": [{"$project": {"t": 1}}]}}]


def windows_of(res):
    """{(start, end): (sorted event times, processing clock at emission, W at emission)}."""
    out: dict = {}
    for d, (clock, w) in zip(res.outputs, res.emitted_at):
        win = d["_stream_meta"]["window"]
        key = (win["start"], win["end"])
        ts, _, _ = out.get(key, ([], None, None))
        out[key] = (sorted(ts + [d["t"]]), clock, w)
    return out


def run_cli(tmp_path, capsys, stages):
    f = tmp_path / "p.json"
    f.write_text(json.dumps(stages))
    assert main(["process", str(f)]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines() if x.strip()]
    outs = [ejson.from_plain(x) for x in lines if "_dlqMessage" not in x]
    dlq = [ejson.from_plain(x["_dlqMessage"]) for x in lines if "_dlqMessage" in x]
    return outs, dlq


FIVE = {"size": 5, "unit": "minute"}
A_ROWS = [("12:00", "12:00"), ("12:03", "12:01"), ("12:05", "12:02"), ("12:06", "12:01"), ("12:07", "12:06")]


def test_a_event_time(spark):
    res = run_pipeline(pipeline(A_ROWS, {"interval": FIVE}))
    assert [w for _, w in res.watermarks] == [D("12:00"), D("12:01"), D("12:02"), D("12:02"), D("12:06"), "+inf"]
    ws = windows_of(res)
    assert ws[(D("12:00"), D("12:05"))] == ([T("12:00"), T("12:01"), T("12:01"), T("12:02")], D("12:07"), D("12:06"))
    assert ws[(D("12:05"), D("12:10"))][0] == [T("12:06")]
    assert res.dlq == []


def test_a_processing_time(spark):
    res = run_pipeline(pipeline(A_ROWS, {"interval": FIVE, "boundary": "processingTime"}))
    ws = windows_of(res)
    first = ws[(D("12:00"), D("12:05"))]
    assert first[0] == [T("12:00"), T("12:01")]
    assert first[1] == D("12:05")  # emitted at the 12:05 batch, before its document joins 12:05-12:10
    assert ws[(D("12:05"), D("12:10"))][0] == [T("12:01"), T("12:02"), T("12:06")]


def test_a_single_event_0933(spark):
    rows = [("09:37", "09:33")]
    ev = windows_of(run_pipeline(pipeline(rows, {"interval": FIVE})))
    pt = windows_of(run_pipeline(pipeline(rows, {"interval": FIVE, "boundary": "processingTime"})))
    assert list(ev) == [(D("09:30"), D("09:35"))]
    assert list(pt) == [(D("09:35"), D("09:40"))]


B_ROWS = [("12:10", "12:00"), ("12:11", "12:02"), ("12:12", "12:01"), ("12:13", "12:05"), ("12:14", "12:04"),
          ("12:15", "12:07")]


def test_b_allowed_lateness_two_minutes(spark):
    res = run_pipeline(pipeline(B_ROWS, {"interval": FIVE, "allowedLateness": {"size": 2, "unit": "minute"}}))
    assert [w for _, w in res.watermarks][:6] == [D("12:00"), D("12:02"), D("12:02"), D("12:05"), D("12:05"),
                                                   D("12:07")]
    ws = windows_of(res)
    assert ws[(D("12:00"), D("12:05"))][:2] == ([T("12:00"), T("12:01"), T("12:02"), T("12:04")], D("12:15"))
    assert ws[(D("12:05"), D("12:10"))][0] == [T("12:05"), T("12:07")]
    assert res.dlq == []


def test_b_allowed_lateness_zero(spark, tmp_path, capsys):
    stages = pipeline(B_ROWS, {"interval": FIVE, "allowedLateness": {"size": 0, "unit": "second"}})
    res = run_pipeline(stages)
    ws = windows_of(res)
    assert ws[(D("12:00"), D("12:05"))][:2] == ([T("12:00"), T("12:01"), T("12:02")], D("12:13"))
    assert len(res.dlq) == 1
    late = res.dlq[0]
    assert late["errInfo"]["reason"] == "Input document arrived late."
    assert late["missedWindowStartTimes"] == [D("12:00")]
    assert late["doc"]["t"] == T("12:04")
    outs, dlq = run_cli(tmp_path, capsys, stages)
    assert sorted(o["t"] for o in outs) == [T(x) for x in ("12:00", "12:01", "12:02", "12:05", "12:07")]
    assert [d["missedWindowStartTimes"] for d in dlq] == [[D("12:00")]]


C_ROWS = [("12:00", "12:00"), ("12:01", None), ("12:02", None), ("12:03", None), ("12:04", "12:02"),
          ("12:05", "12:05"), ("12:06", None), ("12:07", None), ("12:08", None), ("12:09", "12:09")]


def test_c_idle_timeout(spark, tmp_path, capsys):
    stages = pipeline(C_ROWS, {"interval": {"size": 3, "unit": "minute"}, "idleTimeout": {"size": 1, "unit": "minute"},
                               "allowedLateness": {"size": 0, "unit": "ms"}})
    res = run_pipeline(stages)
    assert [w for _, w in res.watermarks][:10] == [D(x) for x in (
        "12:00", "12:00", "12:00", "12:00", "12:02", "12:05", "12:05", "12:06", "12:06", "12:09")]
    ws = windows_of(res)
    assert ws[(D("12:00"), D("12:03"))][:2] == ([T("12:00"), T("12:02")], D("12:05"))
    assert ws[(D("12:03"), D("12:06"))][:2] == ([T("12:05")], D("12:07"))
    assert ws[(D("12:09"), D("12:12"))][0] == [T("12:09")]
    assert len(ws) == 3 and res.dlq == []
    outs, dlq = run_cli(tmp_path, capsys, stages)
    assert [o["t"] for o in outs] == [T("12:00"), T("12:02"), T("12:05"), T("12:09")] and dlq == []


D_ROWS = [("12:00:10", "12:00:10", "p0"), ("12:00:20", "12:00:20", "p1"), ("12:01:10", "12:01:10", "p0"),
          ("12:01:20", "12:00:40", "p0")]
D_REPLAY = {"arrivalField": "arrival", "partitionField": "p", "partitions": ["p0", "p1"]}
MINUTE = {"interval": {"size": 1, "unit": "minute"}, "allowedLateness": {"size": 0, "unit": "second"}}


def test_d_without_partition_idle_timeout(spark, tmp_path, capsys):
    stages = pipeline(D_ROWS, MINUTE, replay=D_REPLAY)
    res = run_pipeline(stages)
    assert [w for _, w in res.watermarks] == [None, D("12:00:10"), D("12:00:20"), D("12:00:20"), "+inf"]
    ws = windows_of(res)
    assert ws[(D("12:00"), D("12:01"))][0] == [T("12:00:10"), T("12:00:20"), T("12:00:40")]
    assert ws[(D("12:00"), D("12:01"))][2] == "+inf"  # only the end-of-input flush emits it
    assert ws[(D("12:01"), D("12:02"))][0] == [T("12:01:10")]
    assert res.dlq == []
    assert res.stats["watermarkHeldBackBy"] == [] or res.stats["watermark"] == "+infinity"
    outs, dlq = run_cli(tmp_path, capsys, stages)
    assert len(outs) == 4 and dlq == []


def test_d_with_partition_idle_timeout(spark, tmp_path, capsys):
    stages = pipeline(D_ROWS, MINUTE, replay=D_REPLAY,
                      source={"partitionIdleTimeout": {"size": 30, "unit": "second"}})
    res = run_pipeline(stages)
    ws = windows_of(res)
    assert ws[(D("12:00"), D("12:01"))][:2] == ([T("12:00:10"), T("12:00:20")], D("12:01:10"))
    assert ws[(D("12:01"), D("12:02"))][0] == [T("12:01:10")]
    assert len(res.dlq) == 1 and res.dlq[0]["missedWindowStartTimes"] == [D("12:00")]
    assert res.dlq[0]["doc"]["t"] == T("12:00:40")
    outs, dlq = run_cli(tmp_path, capsys, stages)
    assert len(outs) == 3 and len(dlq) == 1


def test_d_stats_name_the_partition_holding_the_watermark(spark):
    rows = [("12:00:10", "12:00:10", "p0"), ("12:01:10", "12:01:10", "p0")]
    from headrace.spec import parse_pipeline

    res = run_pipeline(pipeline(rows, MINUTE, replay=D_REPLAY))
    # p1 never produced: it held W back for the whole run (until the end-of-input flush)
    assert [w for _, w in res.watermarks][:2] == [None, None]
    assert res.stats["partitions"][1]["partition"] == "p1"
