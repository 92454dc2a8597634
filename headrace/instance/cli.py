"""``headrace serve`` (the control plane) and ``headrace sp ...`` (its client), registered as a CLI plugin."""
from __future__ import annotations

import argparse
import contextlib
import json
import logging
import sys
import threading
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    s = sub.add_parser("serve", help="run the stream processing instance (control plane, HTTP API, page)")
    s.add_argument("--home", help="headrace home (default $HEADRACE_HOME or ./.headrace)")
    s.add_argument("--host", default="127.0.0.1")
    s.add_argument("--port", type=int, default=8470)
    s.add_argument("--connections", help="connections YAML")
    s.add_argument("--tier", default="SP10", help="worker tier: SP2, SP5, SP10, SP30, SP50 (cores and memory)")
    s.add_argument("--master", help="Spark master URL for the workers' sessions (default local[cores of tier])")
    s.add_argument("--trigger-ms", type=int, help="micro-batch trigger interval of the workers' queries")
    s.add_argument("--warm", action="store_true",
                   help="start the worker for ephemeral runs (sp process) at boot, not at the first run")
    s.set_defaults(func=cmd_serve)

    sp = sub.add_parser("sp", help="manage processors of a running instance (headrace serve)")
    sp.add_argument("--url", help="instance URL (default $HEADRACE_URL or http://127.0.0.1:8470)")
    sp.add_argument("--token", help="bearer token (default $HEADRACE_TOKEN)")
    ssub = sp.add_subparsers(dest="sp_cmd", required=True)
    c = ssub.add_parser("create", help="create a processor from a pipeline file")
    c.add_argument("name")
    c.add_argument("pipeline", help="JSON file: an array of stages or {pipeline, options}")
    c.add_argument("--options", help="options as JSON, e.g. '{\"dlq\": {...}}'")
    pr = ssub.add_parser("process", help="run a pipeline file ephemerally on the instance's warm worker "
                                         "(outputs and DLQ entries as JSON lines, like headrace process)")
    pr.add_argument("pipeline", help="JSON file: an array of stages or {pipeline, options}")
    pr.add_argument("--limit", type=int, help="stop after N outputs (default 1000)")
    pr.add_argument("--duration", type=float, help="stop after S seconds (default 60)")
    pr.add_argument("--stats", action="store_true", help="print the run's stats as JSON on stderr")
    for name in ("start", "stop", "drop", "sample", "stats"):
        p = ssub.add_parser(name)
        p.add_argument("name")
        if name == "stats":
            p.add_argument("--verbose", action="store_true")
        if name == "sample":
            p.add_argument("--limit", type=int, default=20)
    m = ssub.add_parser("modify", help="change a stopped processor's pipeline")
    m.add_argument("name")
    m.add_argument("pipeline")
    m.add_argument("--no-resume", action="store_true", help="start over instead of resuming from the checkpoint")
    ssub.add_parser("list")
    ssub.add_parser("workers")
    ssub.add_parser("connections")
    sp.set_defaults(func=cmd_sp)


def _setup_logging(home: Path) -> None:
    logdir = home / "instance" / "logs"
    logdir.mkdir(parents=True, exist_ok=True)
    fmt = logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
    root = logging.getLogger("headrace")
    root.setLevel(logging.INFO)
    for h in (logging.StreamHandler(sys.stderr), logging.FileHandler(logdir / "serve.log")):
        h.setFormatter(fmt)
        root.addHandler(h)


def cmd_serve(args: argparse.Namespace) -> int:
    import uvicorn

    from ..connections import headrace_home
    from ..errors import ConfigError
    from .api import build_app
    from .control import ControlPlane
    from .tokens import Tokens
    from .worker import TIERS

    if args.tier not in TIERS:
        raise ConfigError(f"--tier must be one of {', '.join(TIERS)}, found {args.tier!r}", code="TIER_INVALID")
    home = headrace_home(args.home).resolve()
    _setup_logging(home)
    tokens, new = Tokens.load(home)
    for role, tok in new.items():   # printed once; only hashes are kept
        print(f"generated {role} token (shown once): {tok}", flush=True)
    cp = ControlPlane(home, connections=args.connections, tier=args.tier, master=args.master,
                      trigger_ms=args.trigger_ms)

    @contextlib.asynccontextmanager
    async def lifespan(_app):
        # processors that were STARTED restart in the background: the API answers meanwhile
        threading.Thread(target=cp.boot, daemon=True, name="boot").start()
        if args.warm:
            threading.Thread(target=cp.processes.warm, daemon=True, name="warm").start()
        yield
        cp.shutdown()

    app = build_app(cp, tokens, lifespan=lifespan)

    logging.getLogger("headrace.instance").info("serving on http://%s:%d (home %s)", args.host, args.port, home)
    uvicorn.run(app, host=args.host, port=args.port, access_log=False, log_level="warning")
    return 0


def cmd_sp(args: argparse.Namespace) -> int:
    from .. import ejson
    from .client import Client

    c = Client(args.url, args.token)
    sp = c.sp
    cmd = args.sp_cmd
    if cmd == "process":
        return _sp_process(sp, args)
    if cmd == "create":
        obj = ejson.to_plain(ejson.loads(Path(args.pipeline).read_text()))
        stages, opts = (obj["pipeline"], obj.get("options", {})) if isinstance(obj, dict) else (obj, {})
        if args.options:
            opts = {**opts, **json.loads(args.options)}
        sp.create(args.name, stages, opts)
        out = sp[args.name].info()
    elif cmd == "modify":
        obj = ejson.to_plain(ejson.loads(Path(args.pipeline).read_text()))
        stages = obj["pipeline"] if isinstance(obj, dict) else obj
        out = sp[args.name].modify(stages, resumeFromCheckpoint=not args.no_resume)
    elif cmd in ("start", "stop", "drop"):
        out = getattr(sp[args.name], cmd)()
    elif cmd == "stats":
        out = sp[args.name].stats(verbose=args.verbose)
    elif cmd == "sample":
        out = sp[args.name].sample(args.limit)
    elif cmd == "list":
        out = sp.list()
    elif cmd == "workers":
        out = sp.workers()
    else:
        out = sp.list_connections()
    print(json.dumps(out, indent=2, default=str))
    return 0


def _sp_process(sp, args: argparse.Namespace) -> int:
    from .. import ejson
    from ..commands import _print_dlq, _print_docs

    obj = ejson.to_plain(ejson.loads(Path(args.pipeline).read_text()))
    stages, opts = (obj["pipeline"], obj.get("options", {})) if isinstance(obj, dict) else (obj, {})
    res = sp.process(stages, opts, limit=args.limit, duration=args.duration)
    _print_docs([ejson.from_plain(d) for d in res["outputs"]])
    _print_dlq([ejson.from_plain(d) for d in res["dlq"]])
    if args.stats:
        print(json.dumps({**res["stats"], "seconds": res["seconds"], "truncated": res["truncated"]}, indent=2),
              file=sys.stderr)
    return 0
