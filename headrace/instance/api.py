"""The HTTP JSON API of the control plane (FastAPI; OpenAPI at ``/openapi.json``, docs at ``/docs``).

Every route needs ``Authorization: Bearer <token>`` (or the ``headrace_token`` cookie the page
login sets): 401 without a valid token; ``reader`` may read (GET), ``admin`` may also change
state (403 for a reader). Errors answer ``{"error": {"code", "message", ...}}``: 400 for an
invalid pipeline (with ``position``, ``stage``, ``path``) or a refused modify (with
``reasons``), 404 unknown processor, 409 duplicate name or running processor, 503 worker gone.
"""
from __future__ import annotations

import logging
from typing import Any

from fastapi import Depends, FastAPI, HTTPException, Query, Request
from fastapi.responses import HTMLResponse, JSONResponse, PlainTextResponse, RedirectResponse, Response
from pydantic import BaseModel, Field

from ..errors import ConfigError, HeadraceError, PipelineError
from .compat import ModifyRefused
from .control import Conflict, ControlPlane, NotFound
from .tokens import Tokens
from .workers import WorkerGone

log = logging.getLogger("headrace.instance")
COOKIE = "headrace_token"


class CreateBody(BaseModel):
    name: str = Field(description="processor name (letters, digits, '_', '-', '.')")
    pipeline: list[dict[str, Any]] = Field(description="aggregation pipeline: $source first, a sink last")
    options: dict[str, Any] = Field(default_factory=dict, description="e.g. {dlq: {connectionName, db, coll}}")


class ModifyBody(BaseModel):
    pipeline: list[dict[str, Any]]
    resumeFromCheckpoint: bool = True
    options: dict[str, Any] | None = None


class ProcessBody(BaseModel):
    pipeline: list[dict[str, Any]] = Field(description="aggregation pipeline: $source first; a sink is optional")
    options: dict[str, Any] = Field(default_factory=dict)
    limit: int | None = Field(None, description="stop after this many outputs (default 1000)")
    duration: float | None = Field(None, description="stop after this many seconds (default 60, at most 600)")
    name: str = Field("process", description="the processorName its DLQ entries carry")


def _status(exc: HeadraceError) -> int:
    if isinstance(exc, NotFound):
        return 404
    if isinstance(exc, Conflict):
        return 409
    if isinstance(exc, (PipelineError, ConfigError, ModifyRefused)) or exc.code in ("NAME_INVALID",):
        return 400
    if isinstance(exc, WorkerGone):
        return 503
    if exc.code == "WAIT_TIMEOUT":
        return 408
    return 500


def build_app(cp: ControlPlane, tokens: Tokens, lifespan: Any = None) -> FastAPI:
    """The API over ``cp``; ``lifespan`` (a FastAPI lifespan context) boots and ends the control plane."""
    app = FastAPI(title="headrace instance", version="0.1.0", lifespan=lifespan,
                  description="Named stream processors on workers of 4 slots (mongosh `sp` after Atlas Stream "
                              "Processing). Bearer tokens: admin manages, reader reads.")

    @app.exception_handler(HeadraceError)
    async def _herr(_req: Request, exc: HeadraceError) -> JSONResponse:
        import json

        body = json.loads(json.dumps({"error": exc.to_dict()}, default=str))
        return JSONResponse(body, status_code=_status(exc))

    from starlette.exceptions import HTTPException as StarletteHTTPException

    @app.exception_handler(StarletteHTTPException)
    async def _http(_req: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = {401: "UNAUTHENTICATED", 403: "FORBIDDEN", 404: "NOT_FOUND"}.get(exc.status_code, f"HTTP_{exc.status_code}")
        return JSONResponse({"error": {"code": code, "message": str(exc.detail)}}, status_code=exc.status_code,
                            headers=getattr(exc, "headers", None))

    def role_of(request: Request) -> str | None:
        auth = request.headers.get("authorization", "")
        token = auth[7:].strip() if auth.lower().startswith("bearer ") else request.cookies.get(COOKIE)
        return tokens.role(token)

    def reader(request: Request) -> str:
        role = role_of(request)
        if role is None:
            raise HTTPException(401, "a valid 'Authorization: Bearer <token>' is required",
                                headers={"WWW-Authenticate": "Bearer"})
        return role

    def admin(role: str = Depends(reader)) -> str:
        if role != "admin":
            raise HTTPException(403, "this needs the admin role")
        return role

    # ------------------------------------------------------------------ processors
    @app.post("/api/processors", status_code=201, dependencies=[Depends(admin)], tags=["processors"])
    def create(body: CreateBody) -> dict:
        """sp.createStreamProcessor(name, pipeline, options): validated fully, state CREATED."""
        return cp.create(body.name, body.pipeline, body.options)

    @app.get("/api/processors", dependencies=[Depends(reader)], tags=["processors"])
    def list_processors() -> list[dict]:
        """sp.listStreamProcessors(): name, state, worker, slot, counts, watermark, throughput."""
        return cp.list()

    @app.get("/api/processors/{name}", dependencies=[Depends(reader)], tags=["processors"])
    def get_processor(name: str) -> dict:
        """The catalog entry: pipeline, options, state, worker, slot and history of changes."""
        return cp.get(name)

    @app.post("/api/processors/{name}/start", dependencies=[Depends(admin)], tags=["processors"])
    def start(name: str) -> dict:
        return cp.start(name)

    @app.post("/api/processors/{name}/stop", dependencies=[Depends(admin)], tags=["processors"])
    def stop(name: str) -> dict:
        """Stops after the current micro-batch: its checkpoint is the final one."""
        return cp.stop(name)

    @app.delete("/api/processors/{name}", dependencies=[Depends(admin)], tags=["processors"])
    def drop(name: str) -> dict:
        cp.drop(name)
        return {"dropped": name}

    @app.post("/api/processors/{name}/modify", dependencies=[Depends(admin)], tags=["processors"])
    def modify(name: str, body: ModifyBody) -> dict:
        """Change a stopped processor's pipeline; with resumeFromCheckpoint a change the saved state
        cannot follow is refused (400, MODIFY_INCOMPATIBLE, with ``reasons``)."""
        return cp.modify(name, body.pipeline, body.resumeFromCheckpoint, body.options)

    @app.get("/api/processors/{name}/stats", dependencies=[Depends(reader)], tags=["processors"])
    def stats(name: str, verbose: bool = False) -> dict:
        return cp.stats(name, verbose)

    @app.get("/api/processors/{name}/sample", dependencies=[Depends(reader)], tags=["processors"])
    def sample(name: str, limit: int = Query(20, ge=1, le=100)) -> dict:
        """The most recent outputs and DLQ entries (kept by the worker; the sink is untouched)."""
        return cp.sample(name, limit)

    @app.get("/api/processors/{name}/timeline", dependencies=[Depends(reader)], tags=["processors"])
    def timeline(name: str) -> list[dict]:
        """Counts and watermark lag sampled about once a second (the page's plots)."""
        return cp.timeline(name)

    @app.get("/api/processors/{name}/wait", dependencies=[Depends(reader)], tags=["processors"])
    def wait(name: str, request: Request, state: str | None = None,
             timeout: float = Query(60, gt=0, le=600)) -> dict:
        """Block until counters reach the values given as query parameters (e.g.
        ``?inputMessageCount=80``) and the state is ``state``; 408 ``WAIT_TIMEOUT`` otherwise."""
        want = {k: int(v) for k, v in request.query_params.items() if k.endswith("Count")}
        return cp.wait(name, want, state, timeout)

    @app.post("/api/process", dependencies=[Depends(admin)], tags=["processors"])
    def process(body: ProcessBody) -> dict:
        """sp.process(pipeline): an ephemeral run on the instance's warm worker, answered with its
        outputs, DLQ entries and stats (``{outputs, dlq, stats, truncated, seconds}``). Ends when a
        finite source is exhausted, after ``limit`` outputs or ``duration`` seconds. An invalid
        pipeline is refused (400) before anything runs."""
        return cp.processes.run(body.pipeline, body.options, limit=body.limit, duration=body.duration,
                                name=body.name)

    @app.get("/api/workers", dependencies=[Depends(reader)], tags=["instance"])
    def workers() -> list[dict]:
        return cp.workers_list()

    @app.get("/api/connections", dependencies=[Depends(reader)], tags=["instance"])
    def connections() -> list[dict]:
        """sp.listConnections(): the registry, secrets redacted."""
        return cp.list_connections()

    @app.get("/metrics", dependencies=[Depends(reader)], tags=["instance"], response_class=PlainTextResponse)
    def metrics() -> Response:
        from .metrics import render

        body, ctype = render(cp)
        return Response(body, media_type=ctype)

    # ------------------------------------------------------------------ page
    from . import page

    @app.get("/login", include_in_schema=False)
    def login_get(token: str | None = None, next: str = "/") -> Response:
        if token is None:
            return HTMLResponse(page.login_html())
        return _login(token, next)

    @app.post("/login", include_in_schema=False)
    async def login_post(request: Request) -> Response:
        form = (await request.body()).decode()
        from urllib.parse import parse_qs

        q = parse_qs(form)
        return _login((q.get("token") or [""])[0], (q.get("next") or ["/"])[0])

    def _login(token: str, nxt: str) -> Response:
        if tokens.role(token) is None:
            return HTMLResponse(page.login_html("invalid token"), status_code=401)
        target = nxt if nxt.startswith("/") and not nxt.startswith("//") else "/"
        r = RedirectResponse(target, status_code=303)
        r.set_cookie(COOKIE, token, httponly=True, samesite="strict")
        return r

    def _page(request: Request, html: str) -> Response:
        if role_of(request) is None:
            return HTMLResponse(page.login_html(next_path=request.url.path), status_code=401)
        return HTMLResponse(html)

    @app.get("/", include_in_schema=False)
    def index(request: Request) -> Response:
        return _page(request, page.index_html())

    @app.get("/processors/{name}", include_in_schema=False)
    def processor_page(request: Request, name: str) -> Response:
        return _page(request, page.processor_html(name))

    @app.get("/healthz", include_in_schema=False)
    def healthz() -> dict:
        return {"ok": True}

    return app

