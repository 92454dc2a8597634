"""``headrace zones``: read, trim, inspect and balance a zoned collection.

    headrace zones find    [--connections FILE] CONNECTION DB.COLL [--filter JSON] [--dedupe FIELD | --no-dedupe]
                           [--keep first|last] [--limit N] [--allow-partial]
    headrace zones trim    [--connections FILE] CONNECTION DB.COLL [--dedupe FIELD] [--keep first|last] [--dry-run]
    headrace zones status  [--connections FILE] CONNECTION [DB.COLL] [--json]
    headrace zones balance [--connections FILE] CONNECTION DB.COLL [--rate DOCS_PER_S] [--window HH:MM-HH:MM | --now]
                           [--batch-size N]

``find`` prints relaxed Extended JSON, one document per line (broadcast read, duplicates
resolved; the filter applies to the resolved documents). Every zone is probed first; a zone
that does not answer fails the read (exit 1) unless ``--allow-partial``. ``trim`` deletes duplicates down to
the one ``find`` keeps and prints a JSON report. ``status`` probes every zone and shows up/down,
documents per zone and range violations. ``balance`` moves violating documents in the
foreground, with progress on stderr and a JSON report on stdout.

Exit codes: 0 ok; 1 a zone could not be read or a balance left documents unmoved; 2 invalid
input (configuration, arguments, filter).
"""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from .. import ejson
from ..errors import ConfigError


def register(sub: argparse._SubParsersAction) -> None:
    z = sub.add_parser("zones", help="zone-aware collections: find, trim, status, balance")
    zs = z.add_subparsers(dest="zones_command", required=True)

    def common(p: argparse.ArgumentParser, ns_required: bool = True) -> None:
        p.add_argument("--connections", help="connections YAML (default ./headrace.yaml if present)")
        p.add_argument("--home", help="headrace home (default $HEADRACE_HOME or ./.headrace)")
        p.add_argument("connection", help="a connection of type 'zoned'")
        if ns_required:
            p.add_argument("namespace", metavar="DB.COLL")
        else:
            p.add_argument("namespace", metavar="DB.COLL", nargs="?")

    f = zs.add_parser("find", help="broadcast read with duplicates resolved (Extended JSON lines)")
    common(f)
    f.add_argument("--filter", help="a MongoDB query document (Extended JSON)")
    f.add_argument("--dedupe", metavar="FIELD", help="message id field (default: reads.dedupeField)")
    f.add_argument("--no-dedupe", action="store_true", help="do not resolve duplicates by a message id")
    f.add_argument("--keep", choices=("first", "last"), help="which duplicate to keep (default: reads.keep or first)")
    f.add_argument("--limit", type=int, help="print at most N documents")
    f.add_argument("--allow-partial", action="store_true", help="skip zones that cannot be read instead of failing")
    f.set_defaults(func=cmd_find)

    t = zs.add_parser("trim", help="delete duplicates down to one per message id")
    common(t)
    t.add_argument("--dedupe", metavar="FIELD", help="message id field (default: reads.dedupeField)")
    t.add_argument("--keep", choices=("first", "last"))
    t.add_argument("--dry-run", action="store_true", help="report what would be deleted")
    t.set_defaults(func=cmd_trim)

    s = zs.add_parser("status", help="zones up/down, documents per zone, range violations")
    common(s, ns_required=False)
    s.add_argument("--json", action="store_true", help="print JSON")
    s.set_defaults(func=cmd_status)

    b = zs.add_parser("balance", help="move documents that violate the zone ranges to their zone")
    common(b)
    b.add_argument("--rate", type=float, help="documents per second (default: balancer.docsPerSecond)")
    b.add_argument("--window", help="only inside this daily UTC window, e.g. 01:00-05:00 (default: balancer.window)")
    b.add_argument("--now", action="store_true", help="ignore the configured window")
    b.add_argument("--batch-size", type=int, help="documents per move (default: balancer.batchSize)")
    b.set_defaults(func=cmd_balance)


def _open(args: argparse.Namespace, namespace_required: bool = True):
    from ..connections import load_registry
    from . import ZonedCollection, get_router

    registry = load_registry(args.connections, args.home)
    conn = registry.get(args.connection)
    if conn.type != "zoned":
        raise ConfigError(f"connection {conn.name!r} is of type {conn.type!r}, not 'zoned'", code="CONNECTION_TYPE")
    router = get_router(registry, conn, check=False)
    ns = args.namespace
    if ns is None and not namespace_required:
        return router, None
    db, dot, coll = (ns or "").partition(".")
    if not db or not dot or not coll:
        raise ConfigError(f"expected DB.COLL, found {ns!r}", code="NAMESPACE_INVALID")
    return router, ZonedCollection(router, db, coll)


def _filter(text: str | None):
    if not text:
        return None
    try:
        query = ejson.loads(text)
    except ejson.EJSONError as exc:
        raise ConfigError(f"--filter: not valid (Extended) JSON: {exc}", code="FILTER_INVALID") from exc
    if not isinstance(query, dict):
        raise ConfigError(f"--filter: expected a query document, found {text!r}", code="FILTER_INVALID")
    try:
        from ..mql.match import matches
    except ImportError as exc:  # the query matcher ships with headrace.mql
        raise ConfigError("--filter needs the query matcher (headrace.mql.match), which is not available yet",
                          code="NOT_SUPPORTED_YET") from exc
    return lambda doc: matches(doc, query)


def cmd_find(args: argparse.Namespace) -> int:
    from .collection import ZoneReadError

    pred = _filter(args.filter)
    router, coll = _open(args)
    dedupe: Any = False if args.no_dedupe else args.dedupe
    field, keep = coll._dedupe_args(dedupe, args.keep)
    router.probe(router.order)          # a zone that does not answer is not read (no hanging on it)
    down = [z for z in router.order if not router.is_up(z)]
    if down and not args.allow_partial:
        raise ZoneReadError(f"zoned connection {router.name!r}: zone(s) {down} do not answer ("
                            + "; ".join(f"{z}: {router.state[z].last_error}" for z in down)
                            + "); a broadcast read would be incomplete (use --allow-partial to read the others)",
                            code="ZONES_READ_UNAVAILABLE")
    up = [z for z in router.order if z not in down]
    winners, _, _ = coll.resolve(coll.copies(zones=up, skip_unavailable=args.allow_partial), field, keep)
    out = sys.stdout
    n = 0
    for c in winners:
        if args.limit is not None and n >= args.limit:
            break
        if pred is None or pred(c.doc):
            out.write(ejson.dumps(c.doc) + "\n")
            n += 1
    out.flush()
    return 0


def cmd_trim(args: argparse.Namespace) -> int:
    router, coll = _open(args)
    field = args.dedupe or router.cfg.dedupe_field
    if not field:
        raise ConfigError(f"connection {router.name!r}: trim needs --dedupe FIELD (or reads.dedupeField)",
                          code="ZONES_READS")
    print(ejson.dumps(coll.trim(field, args.keep, dry_run=args.dry_run)))
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    router, coll = _open(args, namespace_required=False)
    if coll is None:
        router.probe(router.order)
        st = router.stats()
        report = {"connection": router.name, "zones": {z: {"up": v["up"], "store": v["store"], "lastError": v["lastError"]}
                                                         for z, v in st["zones"].items()}}
    else:
        report = coll.status()
    if args.json:
        print(ejson.dumps(report))
        return 0
    title = f"zoned connection {router.name!r}" + (f", {report['namespace']}" if coll is not None else "")
    print(title)
    rows = [("zone", "state", "documents", "violations", "store")]
    for z, v in report["zones"].items():
        rows.append((z, "up" if v["up"] else "DOWN", "-" if v.get("count") is None else str(v["count"]),
                     "-" if v.get("violations") is None else str(v["violations"]), v["store"]))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
    for z, v in report["zones"].items():
        if not v["up"] and v.get("lastError"):
            print(f"  {z}: {v['lastError']}")
    if coll is not None:
        print(f"range violations: {report['violations']}")
        for z, v in report["zones"].items():
            for t, n in (v.get("violationsByTarget") or {}).items():
                print(f"  {n} document(s) in {z} belong in {t}")
        if report["dedupeField"]:
            print(f"duplicates by {report['dedupeField']}: {report['duplicates']}")
    return 0


def cmd_balance(args: argparse.Namespace) -> int:
    router, coll = _open(args)
    router.probe(router.order)
    kw: dict[str, Any] = {}
    if args.rate is not None:
        if args.rate <= 0:
            raise ConfigError(f"--rate: expected a positive number, found {args.rate}", code="ZONES_BALANCER")
        kw["docs_per_second"] = args.rate
    if args.now:
        kw["window"] = None
    elif args.window:
        from .config import parse_window

        kw["window"] = parse_window(args.window, "--window")
    if args.batch_size:
        kw["batch_size"] = args.batch_size
    tty = sys.stderr.isatty()
    last = {"line": ""}

    def progress(r: dict) -> None:
        line = (f"balance {coll.db}.{coll.name}: {r['state']}; moved {r['moved']}/{r['violations']}"
                f", skipped {r['skipped']}")
        if line == last["line"]:
            return
        last["line"] = line
        sys.stderr.write(("\r" + line + " " * 8) if tty else line + "\n")
        sys.stderr.flush()

    report = coll.balancer(progress=progress, **kw).run()
    if tty:
        sys.stderr.write("\n")
    print(json.dumps(report))
    return 0 if report["skipped"] == 0 and report["state"] == "done" else 1
