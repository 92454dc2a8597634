"""The HTTP API without workers (no Spark): roles, validation answers, modify on a created
processor, connections redacted, metrics and the OpenAPI description."""
import pytest
from fastapi.testclient import TestClient

from headrace.instance.api import build_app
from headrace.instance.control import ControlPlane
from headrace.instance.tokens import Tokens

A, R = "admin-token-0123456789", "reader-token-0123456789"
PIPE = [{"$source": {"connectionName": "stream", "stream": "s", "timeField": {"$toDate": "$t"}}},
        {"$tumblingWindow": {"interval": {"size": 10, "unit": "second"},
                             "pipeline": [{"$group": {"_id": "$k", "n": {"$sum": 1}}}]}},
        {"$merge": {"into": {"connectionName": "store", "db": "d", "coll": "c"}}}]


@pytest.fixture
def client(tmp_path):
    conns = tmp_path / "c.yaml"
    conns.write_text('connections:\n  pg: {type: postgres, dsn: "postgresql://u:hunter2pw@127.0.0.1:5/x"}\n')
    cp = ControlPlane(tmp_path / "home", connections=str(conns))
    tokens, _ = Tokens.load(tmp_path / "home", env={"HEADRACE_ADMIN_TOKEN": A, "HEADRACE_READER_TOKEN": R})
    with TestClient(build_app(cp, tokens)) as c:
        yield c
    cp.shutdown()


def _h(t):
    return {"Authorization": f"Bearer {t}"}


def test_roles(client):
    assert client.get("/api/processors").status_code == 401
    assert client.get("/api/processors", headers=_h("x")).json()["error"]["code"] == "UNAUTHENTICATED"
    r = client.post("/api/processors", headers=_h(R), json={"name": "p", "pipeline": PIPE})
    assert r.status_code == 403 and r.json()["error"]["code"] == "FORBIDDEN"
    assert client.post("/api/processors", headers=_h(A), json={"name": "p", "pipeline": PIPE}).status_code == 201
    assert client.get("/api/processors", headers=_h(R)).json()[0]["state"] == "CREATED"


def test_validation_conflict_and_modify_on_created(client):
    r = client.post("/api/processors", headers=_h(A), json={"name": "p", "pipeline": PIPE[:1] + [{"$group": {}}]})
    assert r.status_code == 400
    err = r.json()["error"]
    assert err["code"] and err["position"] == 1 and err["stage"] == "$group"
    r = client.post("/api/processors", headers=_h(A), json={"name": "bad name!", "pipeline": PIPE})
    assert r.status_code == 400 and r.json()["error"]["code"] == "NAME_INVALID"
    client.post("/api/processors", headers=_h(A), json={"name": "p", "pipeline": PIPE})
    assert client.post("/api/processors", headers=_h(A), json={"name": "p", "pipeline": PIPE}).status_code == 409
    changed = [PIPE[0], {"$sessionWindow": {"gap": {"size": 5, "unit": "second"}, "partitionBy": "$k",
                                            "pipeline": [{"$group": {"_id": "$k", "n": {"$sum": 1}}}]}}, PIPE[2]]
    r = client.post("/api/processors/p/modify", headers=_h(A), json={"pipeline": changed})
    assert r.status_code == 400 and r.json()["error"]["code"] == "MODIFY_INCOMPATIBLE"
    assert r.json()["error"]["reasons"][0]["code"] == "WINDOW_CHANGED"
    ok = [PIPE[0], {"$addFields": {"x": 1}}, *PIPE[1:]]
    assert client.post("/api/processors/p/modify", headers=_h(A), json={"pipeline": ok}).status_code == 200
    r = client.post("/api/processors/p/modify", headers=_h(A), json={"pipeline": changed, "resumeFromCheckpoint": False})
    assert r.status_code == 200
    hist = client.get("/api/processors/p", headers=_h(R)).json()["history"]
    assert [h["action"] for h in hist] == ["create", "modify", "modify"]
    assert client.get("/api/processors/nope/stats", headers=_h(R)).status_code == 404
    assert client.delete("/api/processors/p", headers=_h(A)).status_code == 200
    assert client.get("/api/processors", headers=_h(R)).json() == []


def test_connections_metrics_openapi_page_without_secrets(client):
    client.post("/api/processors", headers=_h(A), json={"name": "p", "pipeline": PIPE})
    conns = {c["name"]: c for c in client.get("/api/connections", headers=_h(R)).json()}
    assert conns["pg"]["dsn"] == "postgresql://u:***@127.0.0.1:5/x"
    m = client.get("/metrics", headers=_h(R))
    assert m.status_code == 200 and 'headrace_processor_state{processor="p",state="CREATED"} 1.0' in m.text
    assert "headrace_workers 0.0" in m.text
    spec = client.get("/openapi.json").json()
    assert "/api/processors/{name}/modify" in spec["paths"]
    assert client.get("/").status_code == 401
    r = client.get(f"/login?token={R}&next=/processors/p", follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/processors/p"
    page = client.get("/processors/p")                       # the cookie from the login
    assert page.status_code == 200 and 'data-name="p"' in page.text
    assert client.get("/login?token=wrong").status_code == 401
    everything = "".join(client.get(p, headers=_h(R)).text for p in ("/api/processors", "/api/processors/p",
                                                                       "/api/connections", "/metrics", "/"))
    for secret in (A, R, "hunter2pw"):
        assert secret not in everything


def test_process_is_refused_before_any_worker_starts(client):
    """sp.process answers 400 for an invalid pipeline, limit or duration and 403 for a reader,
    without provisioning the process worker (no worker process is started here)."""
    ok = [{"$source": {"documents": [{"a": 1}]}}]
    r = client.post("/api/process", headers=_h(R), json={"pipeline": ok})
    assert r.status_code == 403
    r = client.post("/api/process", headers=_h(A), json={"pipeline": ok + [{"$group": {}}]})
    assert r.status_code == 400 and r.json()["error"]["stage"] == "$group"
    r = client.post("/api/process", headers=_h(A), json={"pipeline": [{"$source": {"connectionName": "nope",
                                                                                    "stream": "s"}}]})
    assert r.status_code == 400 and "nope" in r.json()["error"]["message"]
    for body, code in (({"limit": 0}, "PROCESS_LIMIT_INVALID"), ({"limit": 10**9}, "PROCESS_LIMIT_INVALID"),
                       ({"duration": 601}, "PROCESS_DURATION_INVALID"), ({"duration": -1}, "PROCESS_DURATION_INVALID")):
        r = client.post("/api/process", headers=_h(A), json={"pipeline": ok, **body})
        assert r.status_code == 400 and r.json()["error"]["code"] == code, (body, r.json())
    assert [w for w in client.get("/api/workers", headers=_h(R)).json() if w.get("role") == "process"] == []


def test_the_warm_up_pipeline_is_valid(tmp_path):
    """``serve --warm`` runs ``WARM_PIPELINE`` on the process worker: it passes the same
    validation as a user's run (a bad one would only be logged at boot)."""
    from headrace.instance.ephemeral import WARM_PIPELINE

    cp = ControlPlane(tmp_path / "home")
    try:
        spec = cp._validated(WARM_PIPELINE, None)
    finally:
        cp.shutdown()
    assert spec["pipeline"][0]["$source"]["documents"]
