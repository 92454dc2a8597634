"""The instance through its HTTP API with a real worker: validation, stop/start exactness,
modify with resumeFromCheckpoint, a processor failing on its own, security and secrets.

One ``headrace serve`` for the module; a ``keeper`` processor holds worker 1 so the tests
share one worker JVM.
"""
from __future__ import annotations

import httpx
import pytest

from headrace.instance.client import ApiError

from .conftest import ADMIN, PG_PASSWORD, READER, Instance, expected_windows, put, read_windows, window_pipeline

pytestmark = pytest.mark.instance


@pytest.fixture(scope="module")
def inst(tmp_path_factory):
    base = tmp_path_factory.mktemp("instance-api")
    conns = base / "headrace.yaml"
    conns.write_text("connections:\n  pgdown: {type: postgres, dsn: \"postgresql://app:%s@127.0.0.1:9/app\"}\n"
                     % PG_PASSWORD)
    i = Instance(base, connections=str(conns))
    i.start()
    from headrace.streams import create_stream

    for name in ("idle", "ev", "mod", "bad"):
        create_stream(i.home, name, 2)
    i.sp.create("keeper", [{"$source": {"connectionName": "stream", "stream": "idle"}},
                           {"$emit": {"path": str(base / "keeper.jsonl")}}])
    i.sp.keeper.start()
    yield i
    i.stop()


def test_create_validation_duplicate_and_unknown(inst):
    with pytest.raises(ApiError) as ei:
        inst.sp.create("bad1", [{"$source": {"connectionName": "stream", "stream": "ev"}},
                                {"$match": {"a": {"$foo": 1}}}])
    assert ei.value.status == 400 and ei.value.code == "QUERY_UNKNOWN_OPERATOR"
    err = ei.value.body["error"]
    assert (err["position"], err["stage"], err["path"]) == (1, "$match", "a.$foo")
    with pytest.raises(ApiError) as ei:
        inst.sp.create("bad2", [{"$source": {"connectionName": "nope"}}])
    assert ei.value.status == 400 and ei.value.code == "CONNECTION_UNKNOWN"
    with pytest.raises(ApiError) as ei:
        inst.sp.create("keeper", [{"$source": {"connectionName": "stream", "stream": "idle"}}])
    assert ei.value.status == 409 and ei.value.code == "PROCESSOR_EXISTS"
    with pytest.raises(ApiError) as ei:
        inst.sp["ghost"].stats()
    assert ei.value.status == 404 and ei.value.code == "PROCESSOR_NOT_FOUND"
    assert {p["name"]: p["state"] for p in inst.reader.sp.list()}["keeper"] == "STARTED"


def test_stop_in_open_windows_then_start_equals_uninterrupted_run(inst, tmp_path):
    ref_out, out = tmp_path / "ref.jsonl", tmp_path / "stp.jsonl"
    inst.sp.create("ref", window_pipeline("ev", ref_out))
    inst.sp.create("stp", window_pipeline("ev", out))
    for n in ("ref", "stp"):
        st = inst.sp[n].start()
        assert (st["state"], st["worker"]) == ("STARTED", 1)
    a = [(f"k{i % 4}", i) for i in range(0, 36)]          # windows 0-30 close, 30-40 stays open
    put(inst.home, "ev", a)
    inst.sp.ref.wait(inputMessageCount=len(a), timeout=180)
    inst.sp.stp.wait(inputMessageCount=len(a), timeout=180)
    stopped = inst.sp.stp.stop()
    assert stopped["state"] == "STOPPED" and stopped["worker"] is None
    s = inst.sp.stp.stats(verbose=True)
    assert s["state"] == "STOPPED" and s["stateSize"] > 0 and s["lastCheckpoint"]   # open windows saved
    assert s["inputMessageCount"] == len(a)
    for key in ("inputMessageSize", "outputMessageCount", "outputMessageSize", "dlqMessageCount", "dlqMessageSize",
                "watermark", "watermarkHeldBackBy", "latency", "latencyEventToSink", "worker", "slot"):
        assert key in s, key
    parts = {p["partition"]: p for p in s["partitions"]}
    assert sorted(parts) == ["shard-000000", "shard-000001"]
    assert sum(p["position"] for p in parts.values()) == len(a)
    for p in parts.values():
        assert p["committed"] == p["position"] and p["lag"] == 0 and p["watermark"] and "idle" in p
    b = [(f"k{i % 4}", i) for i in range(36, 75)] + [(k, 200) for k in ("k0", "k1", "k2", "k3")]
    put(inst.home, "ev", b)
    inst.sp.ref.wait(inputMessageCount=len(a) + len(b), timeout=180)
    assert inst.sp.stp.start()["state"] == "STARTED"
    st = inst.sp.stp.wait(inputMessageCount=len(a) + len(b), timeout=180)
    assert st["inputMessageCount"] == len(a) + len(b)     # nothing read twice, nothing lost
    want = expected_windows(a + b, closed_before=200)
    assert read_windows(ref_out) == want
    assert read_windows(out) == want                         # equals the uninterrupted run, no duplicates
    hist = [h["action"] for h in inst.sp.stp.info()["history"]]
    assert hist == ["create", "start", "stop", "start"]
    for n in ("ref", "stp"):
        inst.sp[n].drop()
    assert "stp" not in {p["name"] for p in inst.sp.list()}
    assert not (inst.home / "instance" / "checkpoints" / "stp").exists()     # drop removes the checkpoint


def test_modify_resume_refused_for_window_change_accepted_for_addfields(inst, tmp_path):
    out = tmp_path / "mod.jsonl"
    inst.sp.create("mod", window_pipeline("mod", out))
    inst.sp.mod.start()
    put(inst.home, "mod", [(f"k{i % 4}", i) for i in range(15)])
    inst.sp.mod.wait(inputMessageCount=15, timeout=180)
    with pytest.raises(ApiError) as ei:        # running: stop first
        inst.sp.mod.modify(window_pipeline("mod", out, add={"tag": "x"}))
    assert ei.value.status == 409
    inst.sp.mod.stop()
    hop = window_pipeline("mod", out)
    hop[1] = {"$hoppingWindow": {"interval": {"size": 10, "unit": "second"}, "hopSize": {"size": 5, "unit": "second"},
                                 "pipeline": [{"$group": {"_id": "$j", "n": {"$sum": 1}}}]}}
    with pytest.raises(ApiError) as ei:
        inst.sp.mod.modify(hop, resumeFromCheckpoint=True)
    assert ei.value.status == 400 and ei.value.code == "MODIFY_INCOMPATIBLE"
    reasons = ei.value.body["error"]["reasons"]
    assert [r["code"] for r in reasons] == ["WINDOW_CHANGED"]
    assert "$tumblingWindow to $hoppingWindow" in reasons[0]["reason"]
    longer = window_pipeline("mod", out)
    longer[1]["$tumblingWindow"]["interval"]["size"] = 20
    longer[1]["$tumblingWindow"]["pipeline"][0]["$group"]["_id"] = "$v"
    with pytest.raises(ApiError) as ei:
        inst.sp.mod.modify(longer, resumeFromCheckpoint=True)
    assert [r["code"] for r in ei.value.body["error"]["reasons"]] == ["WINDOW_CHANGED", "GROUP_KEY_CHANGED"]
    ok = inst.sp.mod.modify(window_pipeline("mod", out, add={"tag": "x"}), resumeFromCheckpoint=True)
    assert ok["state"] == "STOPPED"
    inst.sp.mod.start()
    put(inst.home, "mod", [(f"k{i % 4}", i) for i in range(15, 40)])
    st = inst.sp.mod.wait(inputMessageCount=40, timeout=180)
    assert st["inputMessageCount"] == 40                 # resumed: the first 15 were not read again
    assert read_windows(out) == expected_windows([(f"k{i % 4}", i) for i in range(40)], closed_before=30)
    assert [h["action"] for h in inst.sp.mod.info()["history"]][-2:] == ["modify", "start"]
    inst.sp.mod.drop()


def test_processor_failing_on_its_own_goes_failed_and_frees_its_slot(inst):
    inst.sp.create("pgfail", [{"$source": {"connectionName": "stream", "stream": "bad"}},
                              {"$merge": {"into": {"connectionName": "pgdown", "db": "app", "coll": "x"}}}])
    st = inst.sp.pgfail.start()
    slot = (st["worker"], st["slot"])
    put(inst.home, "bad", [("k0", 1)])
    s = inst.sp.pgfail.wait(state="FAILED", timeout=180)
    assert s["state"] == "FAILED" and s["worker"] is None and s["lastError"]
    assert PG_PASSWORD not in s["lastError"]
    held = [x for w in inst.workers() for x in w["slots"] if x]
    assert "pgfail" not in held and slot != (None, None)
    inst.sp.pgfail.drop()


def test_security_roles_and_secrets(inst):
    url = inst.url
    # 401: no token, a wrong token
    for h in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": f"Basic {ADMIN}"}):
        r = httpx.get(url + "/api/processors", headers=h)
        assert r.status_code == 401 and r.json()["error"]["code"] == "UNAUTHENTICATED"
    assert httpx.get(url + "/metrics").status_code == 401
    assert httpx.get(url + "/").status_code == 401
    # 403: the reader changes nothing
    rh = {"Authorization": f"Bearer {READER}"}
    for method, path, body in (("POST", "/api/processors", {"name": "r1", "pipeline": []}),
                               ("POST", "/api/processors/keeper/stop", None),
                               ("POST", "/api/processors/keeper/start", None),
                               ("POST", "/api/processors/keeper/modify", {"pipeline": []}),
                               ("DELETE", "/api/processors/keeper", None)):
        r = httpx.request(method, url + path, headers=rh, json=body)
        assert r.status_code == 403, (method, path)
        assert r.json()["error"]["code"] == "FORBIDDEN"
    assert inst.sp.keeper.stats()["state"] == "STARTED"
    # the reader reads everything
    answers = []
    for path in ("/api/processors", "/api/processors/keeper", "/api/processors/keeper/stats?verbose=true",
                 "/api/processors/keeper/sample", "/api/workers", "/api/connections", "/metrics", "/",
                 "/processors/keeper", "/openapi.json"):
        r = httpx.get(url + path, headers=rh)
        assert r.status_code == 200, path
        answers.append(r.text)
    conns = {c["name"]: c for c in inst.reader.sp.list_connections()}
    assert conns["pgdown"]["dsn"] == "postgresql://app:***@127.0.0.1:9/app"
    text = "\n".join(answers) + inst.logs()
    for secret in (ADMIN, READER, PG_PASSWORD):
        assert secret not in text
    spec = httpx.get(url + "/openapi.json", headers=rh).json()
    for route in ("/api/processors", "/api/processors/{name}/start", "/api/processors/{name}/stop",
                  "/api/processors/{name}", "/api/processors/{name}/modify", "/api/processors/{name}/stats",
                  "/api/processors/{name}/sample", "/api/workers", "/api/connections"):
        assert route in spec["paths"], route
    metrics = answers[6]
    assert 'headrace_processor_state{processor="keeper",state="STARTED"} 1.0' in metrics
    assert "headrace_workers 1.0" in metrics


def _chromium() -> str:
    import shutil

    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return shutil.which(name)
    pytest.skip("the page test needs Debian's chromium package (scripts/ensure_servers.sh installs it)")


def _browse(tmp_path, url: str, *extra: str) -> str:
    import subprocess

    cmd = [_chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
           f"--user-data-dir={tmp_path / 'chromium-profile'}", "--virtual-time-budget=8000",
           "--window-size=1280,1200", *(extra or ("--dump-dom",)), url]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    return r.stdout


def test_page_in_chromium_lists_processors_and_plots_live_values(inst, tmp_path):
    import re

    from headrace.streams import create_stream

    from .conftest import ARTIFACTS

    create_stream(inst.home, "live", 1)
    inst.sp.create("live", [{"$source": {"connectionName": "stream", "stream": "live", "timeField": {"$toDate": "$t"}}},
                            {"$addFields": {"w": {"$multiply": ["$v", 2]}}},
                            {"$emit": {"path": str(tmp_path / "live.jsonl")}}])
    inst.sp.live.start()
    put(inst.home, "live", [(f"k{i % 3}", i) for i in range(30)])
    inst.sp.live.wait(inputMessageCount=30, timeout=180)
    login = f"{inst.url}/login?token={READER}&next="
    index = _browse(tmp_path, login + "/")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / "instance-index.html").write_text(index)
    rows = dict(re.findall(r'<tr data-name="([^"]+)">.*?class="(STARTED|STOPPED|CREATED|FAILED)"', index, re.S))
    assert rows.get("live") == "STARTED" and rows.get("keeper") == "STARTED"
    assert re.search(r"<td>1</td><td>\d+</td>\s*<td>SP2</td><td>(keeper|live)", index)     # the workers table
    page = _browse(tmp_path, login + "/processors/live")
    (ARTIFACTS / "instance-processor.html").write_text(page)
    assert "STARTED" in page and "worker 1, slot" in page
    points = {k: int(v) for k, v in re.findall(r'id="p-(\w+)".*?data-points="(\d+)"', page, re.S)}
    assert points["lag"] >= 1 and points["dlq"] >= 1 and points["throughput"] >= 1, points
    assert "<polyline" in page
    assert re.search(r'id="p-lag"><h3>watermark lag <span class="latest">[\d.]+ s</span>', page)
    assert '"inputMessageCount": 30' in page                      # stats
    assert '&quot;w&quot;' in page or '"w":' in page              # recent outputs (the sample)
    for secret in (ADMIN, READER, PG_PASSWORD):
        assert secret not in index and secret not in page
    for name, path in (("instance-index.png", "/"), ("instance-processor.png", "/processors/live")):
        shot = ARTIFACTS / name
        shot.unlink(missing_ok=True)
        _browse(tmp_path, login + path, f"--screenshot={shot}")
        assert shot.exists() and shot.stat().st_size > 10_000
    inst.sp.live.drop()


def test_cli_and_python_client(inst):
    import json
    import os
    import subprocess
    import sys

    import headrace

    assert headrace.Client is not None and isinstance(headrace.Client(inst.url, READER).sp.list(), list)
    env = {**os.environ, "HEADRACE_URL": inst.url, "HEADRACE_TOKEN": READER}
    run = lambda *a: subprocess.run([sys.executable, "-m", "headrace.cli", "sp", *a], env=env,  # noqa: E731
                                    capture_output=True, text=True, timeout=60)
    r = run("list")
    assert r.returncode == 0 and "keeper" in {p["name"] for p in json.loads(r.stdout)}
    r = run("workers")
    assert r.returncode == 0 and json.loads(r.stdout)[0]["slots"][0] == "keeper"
    r = run("stats", "keeper")
    assert r.returncode == 0 and json.loads(r.stdout)["state"] == "STARTED"
    r = run("stop", "keeper")                       # a reader may not
    assert r.returncode == 2 and "FORBIDDEN" in r.stderr
    r = run("--token", ADMIN, "stats", "ghost")
    assert r.returncode == 2 and "PROCESSOR_NOT_FOUND" in r.stderr
    assert READER not in r.stdout + r.stderr


def test_process_runs_ephemerally_on_one_warm_worker(inst, tmp_path):
    """sp.process: refused before anything runs when invalid; answered from worker 0, whose
    session serves the next run too; the CLI prints what ``headrace process`` prints; a killed
    process worker is provisioned again by the next run."""
    import json
    import os
    import signal
    import subprocess
    import sys
    import time

    docs = [{"zeta": 1, "n": "7"}, {"zeta": 3, "n": "q"}, {"zeta": 5, "n": "12"}]
    pipe = [{"$source": {"documents": docs}}, {"$project": {"_id": 0, "zeta": 1, "c": {"$toInt": "$n"}}}]
    with pytest.raises(ApiError) as ei:
        inst.sp.process([{"$source": {"documents": docs}}, {"$project": {"c": {"$toInt": 1, "x": 2}}}])
    assert ei.value.status == 400 and ei.value.code.startswith("EXPR_")
    with pytest.raises(ApiError) as ei:
        inst.sp.process([{"$source": {"connectionName": "nowhere", "stream": "x"}}])
    assert ei.value.status == 400 and "nowhere" in str(ei.value)
    with pytest.raises(ApiError) as ei:
        inst.sp.process(pipe, duration=0)
    assert ei.value.status == 400 and ei.value.code == "PROCESS_DURATION_INVALID"
    with pytest.raises(ApiError) as ei:
        inst.reader.sp.process(pipe)
    assert ei.value.status == 403
    assert not [w for w in inst.workers() if w.get("role") == "process"]   # nothing ran

    res = inst.sp.process(pipe, name="quick")
    strip = lambda d: {k: v for k, v in d.items() if k != "_stream_meta"}  # noqa: E731
    assert [strip(d) for d in res["outputs"]] == [{"zeta": 1, "c": 7}, {"zeta": 5, "c": 12}]
    assert len(res["dlq"]) == 1 and res["dlq"][0]["processorName"] == "quick"
    assert "\"q\"" in res["dlq"][0]["errInfo"]["reason"] and res["dlq"][0]["doc"]["n"] == "q"
    assert res["stats"]["inputMessageCount"] == 3 and res["truncated"] is False
    (w0,) = [w for w in inst.workers() if w.get("role") == "process"]
    assert w0["id"] == 0 and w0["runs"] == 1 and w0["slots"] == []

    limited = inst.sp.process([{"$source": {"documents": [{"i": i} for i in range(50)]}}], limit=5)
    assert len(limited["outputs"]) == 5
    (w0b,) = [w for w in inst.workers() if w.get("role") == "process"]
    assert w0b["pid"] == w0["pid"] and w0b["runs"] == 2          # the same warm session

    f = tmp_path / "p.json"
    f.write_text(json.dumps(pipe))
    env = {**os.environ, "HEADRACE_URL": inst.url, "HEADRACE_TOKEN": ADMIN}
    r = subprocess.run([sys.executable, "-m", "headrace.cli", "sp", "process", str(f)], env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    lines = [json.loads(x) for x in r.stdout.splitlines()]
    assert [strip(d) for d in lines if "_dlqMessage" not in d] == [{"zeta": 1, "c": 7}, {"zeta": 5, "c": 12}]
    (dl,) = [d["_dlqMessage"] for d in lines if "_dlqMessage" in d]
    assert dl["operatorName"] == "$project" and "_id" not in dl

    os.kill(w0["pid"], signal.SIGKILL)
    time.sleep(0.5)          # the kernel ends the process (a death the next run checks for)
    again = inst.sp.process(pipe)
    assert [strip(d) for d in again["outputs"]] == [{"zeta": 1, "c": 7}, {"zeta": 5, "c": 12}]
    (w1,) = [w for w in inst.workers() if w.get("role") == "process"]
    assert w1["pid"] != w0["pid"] and w1["alive"]
