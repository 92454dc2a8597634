"""``headrace zeitgeist generate|detect|evaluate`` (registered by ``headrace.cli``).

    headrace zeitgeist generate --out FILE [--seed S] [--minutes M] [--queries Q] [--season-minutes P]
                                [--delay-profile low|high] [--rate-min R] [--rate-max R] [--dup-rate D]
    headrace zeitgeist detect FILE [--warmup-minutes W] [--season-minutes P] [--engine reference|spark]
    headrace zeitgeist detect --stream NAME [--duration S]        # live, on an embedded stream
    headrace zeitgeist evaluate FILE [--reports REPORTS] [--json]

``detect`` prints one JSON line per anomalous period, ``{"query", "kind", "start", "end",
"reportedAt"}``, then exits; ``evaluate`` compares reports (``--reports``, else it runs
``detect`` itself with the same options) with ``FILE.truth.json``: a table, then one JSON line.
"""
from __future__ import annotations

import argparse
import json
import sys

from .. import defaults


def _model(args):
    from .detector import ModelParams

    return ModelParams(warmup_ms=int(args.warmup_minutes * 60_000), season_ms=int(args.season_minutes * 60_000))


def _detect_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--warmup-minutes", type=float, default=defaults.ZG_WARMUP_MINUTES)
    p.add_argument("--season-minutes", type=float, default=defaults.ZG_SEASON_MINUTES,
                   help="seasonality period of the model (0: none)")
    p.add_argument("--lateness-ms", type=int, default=defaults.ZG_LATENESS_MS,
                   help="injector lateness (grows with the disorder it sees)")
    p.add_argument("--batch-ms", type=int, default=defaults.REPLAY_BATCH_MS)
    p.add_argument("--engine", choices=["reference", "spark"], default="reference")
    p.add_argument("--workdir", help="spark engine: topology directory (default: a temporary one)")
    p.add_argument("--stats", action="store_true", help="print the runner's stats() to stderr at the end")


def cmd_generate(args) -> int:
    from .generate import GenParams, generate

    t = generate(args.out, GenParams(seed=args.seed, minutes=args.minutes, queries=args.queries,
                                     season_minutes=args.season_minutes, delay_profile=args.delay_profile,
                                     rate_min=args.rate_min, rate_max=args.rate_max, dup_rate=args.dup_rate))
    print(f"{t['records']} records ({t['duplicates']} retries), {len(t['anomalies'])} anomalies -> {args.out},"
          f" truth -> {args.out}.truth.json", file=sys.stderr)
    return 0


def cmd_detect(args) -> int:
    from .replay import detect, live

    if args.stream:
        st = live(args.stream, args.home, _model(args), args.lateness_ms, args.duration,
                  lambda d: print(json.dumps(d), flush=True), args.batch_ms)
    else:
        if not args.file:
            print("error: detect needs FILE or --stream NAME", file=sys.stderr)
            return 2
        lines, st = detect(args.file, _model(args), args.lateness_ms, args.batch_ms, args.engine, args.workdir)
        for d in lines:
            print(json.dumps(d))
    if args.stats:
        print(json.dumps(st, indent=1), file=sys.stderr)
    return 0


def cmd_evaluate(args) -> int:
    from .evaluate import evaluate, load_reports, table
    from .replay import detect

    truth = json.loads(open(args.file + ".truth.json").read())
    if args.reports:
        reports = load_reports(args.reports)
    else:
        reports, _ = detect(args.file, _model(args), args.lateness_ms, args.batch_ms, args.engine, args.workdir)
    res = evaluate(reports, truth)
    print(table(res))
    print(json.dumps(res))
    return 0


def register(sub) -> None:
    z = sub.add_parser("zeitgeist", help="the Zeitgeist anomaly detector (keyed computations)")
    zs = z.add_subparsers(dest="zcommand", required=True)
    g = zs.add_parser("generate", help="generate search queries with injected spikes and dips")
    g.add_argument("--out", required=True)
    g.add_argument("--seed", type=int, default=defaults.ZG_SEED)
    g.add_argument("--minutes", type=float, default=defaults.ZG_MINUTES)
    g.add_argument("--queries", type=int, default=defaults.ZG_QUERIES)
    g.add_argument("--season-minutes", type=float, default=0.0, help="seasonality period (0: minutes / 1.5)")
    g.add_argument("--delay-profile", choices=["low", "high"], default="low")
    g.add_argument("--rate-min", type=float, default=1.0)
    g.add_argument("--rate-max", type=float, default=10.0)
    g.add_argument("--dup-rate", type=float, default=0.01)
    g.set_defaults(func=cmd_generate)
    d = zs.add_parser("detect", help="run the Zeitgeist topology over a file (replay) or a stream (live)")
    d.add_argument("file", nargs="?")
    d.add_argument("--stream", help="live mode: read this embedded stream")
    d.add_argument("--home", help="headrace home of the stream")
    d.add_argument("--duration", type=float, default=60.0, help="live mode: seconds to run")
    _detect_args(d)
    d.set_defaults(func=cmd_detect)
    e = zs.add_parser("evaluate", help="precision, recall and latency against FILE.truth.json")
    e.add_argument("file")
    e.add_argument("--reports", help="detect's output (default: run detect now)")
    _detect_args(e)
    e.set_defaults(func=cmd_evaluate)
