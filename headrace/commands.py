"""Core CLI subcommands: ``process``, ``demo``, ``explain``, ``connections``."""
from __future__ import annotations

import argparse
import contextlib
import json
import signal
import sys
import tempfile
from pathlib import Path

from . import ejson
from .spec import defaults


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("process", help="run a pipeline ephemerally, printing outputs and DLQ entries")
    p.add_argument("pipeline", help="JSON file: an array of stages or {\"pipeline\": [...], \"options\": {...}}")
    p.add_argument("--connections", help="connections YAML (default ./headrace.yaml if present)")
    p.add_argument("--home", help="headrace home (default $HEADRACE_HOME or ./.headrace)")
    p.add_argument("--limit", type=int, help="stop after N output documents")
    p.add_argument("--duration", type=float, help="stop after S seconds")
    p.add_argument("--stats", action="store_true", help="print final stats as JSON on stderr")
    p.add_argument("--checkpoint", help="keep the checkpoint in DIR: a rerun resumes from it (default: a temp dir)")
    p.set_defaults(func=cmd_process)

    e = sub.add_parser("explain", help="validate a pipeline and show its logical and Spark plans")
    e.add_argument("pipeline")
    e.add_argument("--connections")
    e.add_argument("--logical-only", action="store_true", help="do not start Spark")
    e.set_defaults(func=cmd_explain)

    d = sub.add_parser("demo", help="run the main job on embedded defaults (sample_stream_solar -> store)")
    d.add_argument("--duration", type=float, default=90.0, help="seconds to run (default 90)")
    d.add_argument("--rate", type=float, default=200.0, help="sample documents per second (default 200)")
    d.add_argument("--backlog", type=float, default=defaults.DEMO_BACKLOG_S,
                   help=f"seconds of readings already in the stream at start (default {defaults.DEMO_BACKLOG_S:g})")
    d.add_argument("--home", help="where results go (default ./.headrace)")
    d.set_defaults(func=cmd_demo)

    st = sub.add_parser("store", help="read collections of a store connection")
    st_sub = st.add_subparsers(dest="store_cmd", required=True)
    f = st_sub.add_parser("find", help="print a collection's documents as JSON lines")
    f.add_argument("db")
    f.add_argument("coll")
    f.add_argument("--connection", default="store", help="a store/postgres/zoned connection (default: store)")
    f.add_argument("--filter", help="a MongoDB query document (JSON)")
    f.add_argument("--limit", type=int)
    f.add_argument("--connections")
    f.add_argument("--home")
    f.set_defaults(func=cmd_store_find)
    ls = st_sub.add_parser("list", help="list databases and collections of the embedded store")
    ls.add_argument("--connection", default="store")
    ls.add_argument("--connections")
    ls.add_argument("--home")
    ls.set_defaults(func=cmd_store_list)

    c = sub.add_parser("connections", help="list the connection registry (secrets redacted)")
    c.add_argument("--connections")
    c.add_argument("--home")
    c.set_defaults(func=cmd_connections)


def _load(args: argparse.Namespace):
    from .launch import prepare
    from .spec import load_pipeline_file

    run = prepare(load_pipeline_file(args.pipeline), connections=getattr(args, "connections", None),
                  home=getattr(args, "home", None))
    return run.pipeline, run.registry


def _print_docs(docs: list[dict]) -> None:
    out = sys.stdout
    for d in docs:
        out.write(ejson.dumps(d) + "\n")
    out.flush()


def _print_dlq(docs: list[dict]) -> None:
    out = sys.stdout
    for d in docs:
        d = {k: v for k, v in d.items() if k != "_id"}
        out.write(ejson.dumps({"_dlqMessage": d}) + "\n")
    out.flush()


class _Terminated(BaseException):
    """SIGTERM received: stop the run as Ctrl-C does."""


@contextlib.contextmanager
def _sigterm_stops():
    """SIGTERM raises :class:`_Terminated` in the main thread while the run lasts."""
    def handler(signum, frame):
        raise _Terminated()

    try:
        old = signal.signal(signal.SIGTERM, handler)
    except ValueError:      # not the main thread (an embedding caller): keep its handling
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


def cmd_process(args: argparse.Namespace) -> int:
    """Run the pipeline and print its outputs and DLQ entries. Ctrl-C or SIGTERM stops it cleanly:
    the query stops, ``--stats`` are printed (status ``STOPPED``) and the exit status is 130 or
    143 (128 + the signal), as a shell reports a process ended by that signal."""
    from .launch import Prepared, start

    pipeline, registry = _load(args)  # refuses invalid input before Spark starts
    code = 0
    with tempfile.TemporaryDirectory(prefix="headrace-process-") as tmp:
        ckpt = Path(args.checkpoint) if args.checkpoint else Path(tmp)
        # a finite ephemeral run is one batch job: C2's compiler CPU would never pay back
        quick = not args.checkpoint and pipeline.source.finite
        proc = start(Prepared(pipeline, registry), name=Path(args.pipeline).stem, checkpoint=ckpt,
                     on_output=_print_docs, on_dlq=_print_dlq, once=not args.checkpoint,
                     jit="quick" if quick else None)
        try:
            with _sigterm_stops():
                stats = proc.run(duration_s=args.duration, limit=args.limit)
        except (KeyboardInterrupt, _Terminated) as stop:
            code = 143 if isinstance(stop, _Terminated) else 130
            proc.stop()         # run() stopped the query already, unless the signal came before it
            stats = proc.stats()
    if args.stats:
        print(json.dumps(stats, indent=2), file=sys.stderr)
    return code


def cmd_explain(args: argparse.Namespace) -> int:
    pipeline, registry = _load(args)
    from .plan import logical_plan, render

    print("== Logical plan ==")
    print(render(logical_plan(pipeline)))
    if not args.logical_only:
        from .spark.explain import spark_plan

        print("\n== Spark plan (one micro-batch) ==")
        print(spark_plan(pipeline))
    return 0


def cmd_connections(args: argparse.Namespace) -> int:
    from .connections import load_registry

    print(json.dumps(load_registry(args.connections, args.home).list(), indent=2))
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from .demo import run_demo

    return run_demo(args)


def cmd_store_find(args: argparse.Namespace) -> int:
    from .collections import open_collection
    from .connections import load_registry
    from .errors import HeadraceError

    registry = load_registry(args.connections, args.home)
    pred = None
    if args.filter:
        try:
            query = ejson.loads(args.filter)
        except ejson.EJSONError as exc:
            raise HeadraceError(f"--filter is not valid JSON: {exc}", code="FILTER_INVALID") from exc
        from .mql.match import matches
        from .mql.query import validate_query

        validate_query(query, "--filter")
        pred = lambda d: matches(d, query)  # noqa: E731
    n = 0
    for doc in open_collection(registry, args.connection, args.db, args.coll).find(pred):
        if args.limit is not None and n >= args.limit:
            break
        print(ejson.dumps(doc))
        n += 1
    return 0


def cmd_store_list(args: argparse.Namespace) -> int:
    from .connections import load_registry
    from .store.sqlite import SQLiteStore

    registry = load_registry(args.connections, args.home)
    store = SQLiteStore(registry.store_path(args.connection))
    print(json.dumps({db: store.collections(db) for db in store.databases()}, indent=2))
    return 0
