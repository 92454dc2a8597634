"""``headrace dlq replay``: re-feed DLQ entries through a fixed pipeline (:mod:`.dlq_replay`)."""
from __future__ import annotations

import argparse
import json
import sys


def register(sub: argparse._SubParsersAction) -> None:
    d = sub.add_parser("dlq", help="dead letter queue tools")
    ds = d.add_subparsers(dest="dlq_cmd", required=True)
    r = ds.add_parser("replay", help="replay DLQ entries through a fixed pipeline, each entry once")
    r.add_argument("--from", dest="source", required=True, metavar="CONNECTION",
                   help="the connection holding the DLQ (store, postgres or mongodb)")
    r.add_argument("collection", metavar="DB.COLL", help="the DLQ collection")
    r.add_argument("--into", required=True, metavar="PIPELINE", help="pipeline file (its $source is replaced)")
    r.add_argument("--filter", help="a MongoDB query document (JSON) on the DLQ entries")
    r.add_argument("--dry-run", action="store_true", help="print the documents that would be replayed")
    r.add_argument("--connections")
    r.add_argument("--home")
    r.set_defaults(func=cmd_replay)


def cmd_replay(args: argparse.Namespace) -> int:
    from .. import ejson
    from ..connections import load_registry
    from ..errors import HeadraceError
    from .dlq_replay import replay

    db, dot, coll = args.collection.partition(".")
    if not dot or not db or not coll:
        raise HeadraceError(f"expected DB.COLL, found {args.collection!r}", code="DLQ_REPLAY_ARGS")
    query = None
    if args.filter:
        try:
            query = ejson.loads(args.filter)
        except ejson.EJSONError as exc:
            raise HeadraceError(f"--filter is not valid JSON: {exc}", code="FILTER_INVALID") from exc
    registry = load_registry(args.connections, args.home)
    res = replay(registry, args.source, db, coll, args.into, query, args.dry_run)
    res.pop("stats", None)
    print(json.dumps(res), file=sys.stderr)
    return 0
