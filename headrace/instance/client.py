"""``headrace.Client``: the instance's HTTP API with mongosh's ``sp`` surface (pure Python, httpx).

    from headrace import Client
    sp = Client("http://127.0.0.1:8470", token).sp
    sp.process(pipeline)                      # ephemeral run on the instance's warm worker
    sp.create("proc01", pipeline, {"dlq": {...}})
    sp["proc01"].start(); sp.proc01.stats(verbose=True); sp.proc01.sample(); sp.proc01.stop()
    sp.list(); sp.workers(); sp.list_connections()

URL and token default to ``$HEADRACE_URL`` (else ``http://127.0.0.1:8470``) and ``$HEADRACE_TOKEN``.
An error answer raises :class:`ApiError` with the HTTP status and the error's ``code``.
"""
from __future__ import annotations

import os
from typing import Any
from urllib.parse import quote

import httpx

from ..errors import HeadraceError

DEFAULT_URL = "http://127.0.0.1:8470"


class ApiError(HeadraceError):
    def __init__(self, status: int, body: Any):
        err = body.get("error") if isinstance(body, dict) else None
        if isinstance(err, dict):
            code, msg = err.get("code", f"HTTP_{status}"), err.get("message", "")
        else:
            code = f"HTTP_{status}"
            msg = body.get("detail", "") if isinstance(body, dict) else str(body)
        super().__init__(f"{status}: {msg}", code=code)
        self.status = status
        self.body = body


class Client:
    def __init__(self, url: str | None = None, token: str | None = None, timeout: float = 600):
        self.url = (url or os.environ.get("HEADRACE_URL") or DEFAULT_URL).rstrip("/")
        token = token or os.environ.get("HEADRACE_TOKEN")
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.http = httpx.Client(base_url=self.url, headers=headers, timeout=timeout)
        self.sp = SP(self)

    def request(self, method: str, path: str, **kw: Any) -> Any:
        r = self.http.request(method, path, **kw)
        try:
            body = r.json()
        except ValueError:
            body = r.text
        if r.status_code >= 400:
            raise ApiError(r.status_code, body)
        return body

    def metrics(self) -> str:
        r = self.http.get("/metrics")
        if r.status_code >= 400:
            raise ApiError(r.status_code, r.text)
        return r.text

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class SP:
    """mongosh's ``sp``: ``sp.create``, ``sp.list``, ``sp["name"]`` / ``sp.name`` for one processor."""

    def __init__(self, client: Client):
        self._c = client

    def create(self, name: str, pipeline: list, options: dict | None = None) -> "StreamProcessor":
        self._c.request("POST", "/api/processors", json={"name": name, "pipeline": pipeline, "options": options or {}})
        return StreamProcessor(self._c, name)

    createStreamProcessor = create

    def list(self) -> list[dict]:
        return self._c.request("GET", "/api/processors")

    listStreamProcessors = list

    def process(self, pipeline: list, options: dict | None = None, *, limit: int | None = None,
                duration: float | None = None, name: str = "process") -> dict:
        """sp.process(pipeline): run it ephemerally on the instance's warm worker; ``{outputs, dlq,
        stats, truncated, seconds}`` with documents as relaxed Extended JSON (DLQ entries carry
        ``processorName: name``)."""
        body: dict = {"pipeline": pipeline, "options": options or {}, "name": name}
        if limit is not None:
            body["limit"] = limit
        if duration is not None:
            body["duration"] = duration
        return self._c.request("POST", "/api/process", json=body)

    def workers(self) -> list[dict]:
        return self._c.request("GET", "/api/workers")

    def list_connections(self) -> list[dict]:
        return self._c.request("GET", "/api/connections")

    listConnections = list_connections

    def __getitem__(self, name: str) -> "StreamProcessor":
        return StreamProcessor(self._c, name)

    def __getattr__(self, name: str) -> "StreamProcessor":
        if name.startswith("_"):
            raise AttributeError(name)
        return StreamProcessor(self._c, name)


class StreamProcessor:
    def __init__(self, client: Client, name: str):
        self._c = client
        self.name = name
        self._p = f"/api/processors/{quote(name, safe='')}"

    def start(self) -> dict:
        return self._c.request("POST", self._p + "/start")

    def stop(self) -> dict:
        return self._c.request("POST", self._p + "/stop")

    def drop(self) -> dict:
        return self._c.request("DELETE", self._p)

    def modify(self, pipeline: list, resumeFromCheckpoint: bool = True, options: dict | None = None) -> dict:
        body: dict = {"pipeline": pipeline, "resumeFromCheckpoint": resumeFromCheckpoint}
        if options is not None:
            body["options"] = options
        return self._c.request("POST", self._p + "/modify", json=body)

    def stats(self, verbose: bool = False) -> dict:
        return self._c.request("GET", self._p + "/stats", params={"verbose": str(verbose).lower()})

    def sample(self, limit: int = 20) -> dict:
        return self._c.request("GET", self._p + "/sample", params={"limit": limit})

    def wait(self, timeout: float = 60, state: str | None = None, **at_least: int) -> dict:
        """Wait until counters reach ``at_least`` (e.g. ``inputMessageCount=80``); returns stats."""
        params: dict = {"timeout": timeout, **at_least}
        if state:
            params["state"] = state
        return self._c.request("GET", self._p + "/wait", params=params)

    def info(self) -> dict:
        return self._c.request("GET", self._p)

    def timeline(self) -> list[dict]:
        return self._c.request("GET", self._p + "/timeline")
