"""``headrace stream ...``: create, put, split, merge, describe, read, leases, list.

All output is JSON (one document, or JSON lines for ``put`` and ``read``). User errors raise
:class:`~headrace.streams.errors.StreamError` subclasses with stable codes.
"""
from __future__ import annotations

import argparse
import datetime as _dt
import json
import signal
import sys
from typing import Any

from .errors import InvalidArgument
from .leases import LeaseTable, Worker
from .stream import Stream, create_stream, list_streams, parse_hash_key

PUT_CHUNK = 1000


def _print(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj, separators=(",", ":")) + "\n")


def _positive_int(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, found {text!r}") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, found {v}")
    return v


def _positive_float(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive number, found {text!r}") from None
    if not v > 0:
        raise argparse.ArgumentTypeError(f"expected a positive number, found {v}")
    return v


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def parse_put_lines(lines: "list[str] | list[bytes]") -> list[tuple]:
    """Validate every input line (1-based numbers in errors) before anything is written.

    A line is ``{"key": "<non-empty string>", "data": <any JSON>}`` or
    ``{"key": ..., "raw": "<text stored as is>"}``, in UTF-8. Blank lines are not records and
    are skipped.
    """
    out: list[tuple] = []
    for n, line in enumerate(lines, 1):
        if isinstance(line, bytes):
            try:
                line = line.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise InvalidArgument(f"stdin line {n}: not UTF-8 ({exc}); nothing was written",
                                      code="INPUT_INVALID") from None
        if not line.strip():
            continue
        try:
            obj = json.loads(line, parse_constant=_reject_constant)
        except ValueError as exc:
            raise InvalidArgument(f"stdin line {n}: not valid JSON ({exc}); nothing was written",
                                  code="INPUT_INVALID") from None
        if not isinstance(obj, dict):
            raise InvalidArgument(f"stdin line {n}: expected an object {{\"key\": ..., \"data\": ...}}, found "
                                  f"{type(obj).__name__}; nothing was written", code="INPUT_INVALID")
        key = obj.get("key")
        if not isinstance(key, str) or not key or len(key.encode("utf-8")) > 256:
            raise InvalidArgument(f"stdin line {n}: 'key' must be a non-empty string of at most 256 bytes, found "
                                  f"{json.dumps(key)}; nothing was written", code="INPUT_INVALID")
        extra = set(obj) - {"key", "data", "raw"}
        if extra or ("data" in obj) == ("raw" in obj):
            raise InvalidArgument(f"stdin line {n}: expected exactly the fields 'key' and one of 'data' or 'raw',"
                                  f" found {sorted(obj)}; nothing was written", code="INPUT_INVALID")
        if "raw" in obj:
            if not isinstance(obj["raw"], str):
                raise InvalidArgument(f"stdin line {n}: 'raw' must be a string; nothing was written",
                                      code="INPUT_INVALID")
            out.append((key, None, obj["raw"]))
        else:
            out.append((key, obj["data"]))
    return out


def _iso(us: int) -> str:
    return (_dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc) + _dt.timedelta(microseconds=us)).isoformat(
        timespec="microseconds").replace("+00:00", "Z")


# ---- handlers -------------------------------------------------------------------------------
def cmd_create(args: argparse.Namespace) -> int:
    s = create_stream(args.home, args.name, args.shards)
    _print(s.describe())
    return 0


def cmd_put(args: argparse.Namespace) -> int:
    buf = getattr(sys.stdin, "buffer", None)
    data = buf.read() if buf is not None else sys.stdin.read()
    # split on newlines only: JSON strings may hold U+2028 and friends, which splitlines() splits on
    records = parse_put_lines(data.split(b"\n" if isinstance(data, bytes) else "\n"))
    with Stream(args.home, args.name) as s:
        for i in range(0, len(records), PUT_CHUNK):
            chunk = records[i:i + PUT_CHUNK]
            for rec, res in zip(chunk, s.put_many(chunk)):
                _print({"key": rec[0], "shard": res.shard, "seq": res.seq, "arrival": _iso(res.arrival_us)})
            sys.stdout.flush()
    return 0


def cmd_split(args: argparse.Namespace) -> int:
    with Stream(args.home, args.name) as s:
        at = None if args.at is None else parse_hash_key(args.at)
        children = s.split(args.shard, at)
        _print({"split": args.shard, "children": children, "stream": s.describe()})
    return 0


def cmd_merge(args: argparse.Namespace) -> int:
    with Stream(args.home, args.name) as s:
        child = s.merge(args.shard_a, args.shard_b)
        _print({"merged": [args.shard_a, args.shard_b], "child": child, "stream": s.describe()})
    return 0


def cmd_describe(args: argparse.Namespace) -> int:
    with Stream(args.home, args.name) as s:
        print(json.dumps(s.describe(), indent=2))
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    _print({"streams": list_streams(args.home)})
    return 0


def cmd_leases(args: argparse.Namespace) -> int:
    with Stream(args.home, args.name) as s:
        print(json.dumps(LeaseTable(s, args.group).describe(), indent=2))
    return 0


def cmd_read(args: argparse.Namespace) -> int:
    stop = {"flag": False}

    def on_term(signum: int, frame: Any) -> None:
        stop["flag"] = True

    signal.signal(signal.SIGTERM, on_term)

    def on_event(ev: dict) -> None:
        sys.stderr.write(json.dumps(ev, separators=(",", ":")) + "\n")
        sys.stderr.flush()

    out = sys.stdout

    def process(rec: Any) -> None:
        line = {"shard": rec.shard, "seq": rec.seq, "key": rec.key, "arrival": _iso(rec.arrival_us)}
        try:
            line["data"] = json.loads(rec.data)
        except ValueError:
            line["raw"] = rec.data
        out.write(json.dumps(line, separators=(",", ":")) + "\n")

    with Stream(args.home, args.name) as s:
        w = Worker(s, args.group, args.worker, lease_duration=args.lease_duration, batch_size=args.batch,
                   initial=args.initial, on_event=on_event if args.events else None,
                   before_checkpoint=out.flush)
        w.run(process, max_records=args.max, follow=args.follow, idle_wait=args.idle_wait,
              should_stop=lambda: stop["flag"])
    out.flush()
    return 0


# ---- parser ---------------------------------------------------------------------------------
def register(subparsers: Any) -> None:
    p = subparsers.add_parser("stream", help="sharded streams: create, put, reshard, read with leases",
                              description="Embedded durable sharded streams (see headrace.streams).")
    sub = p.add_subparsers(dest="stream_command", required=True)

    def cmd(name: str, help_: str, func: Any) -> argparse.ArgumentParser:
        c = sub.add_parser(name, help=help_, description=help_)
        c.add_argument("--home", default=None, help="headrace home (default: $HEADRACE_HOME or ./.headrace)")
        c.set_defaults(func=func)
        return c

    c = cmd("create", "create a stream", cmd_create)
    c.add_argument("name")
    c.add_argument("--shards", type=_positive_int, default=1, help="number of shards (default 1)")

    c = cmd("put", 'put JSON lines {"key": ..., "data": ...} from stdin; prints shard and seq per record', cmd_put)
    c.add_argument("name")

    c = cmd("split", "split an open shard at a hash key (default: the middle of its range)", cmd_split)
    c.add_argument("name")
    c.add_argument("shard")
    c.add_argument("--at", default=None, metavar="HASHKEY", help="first hash key of the upper child (decimal)")

    c = cmd("merge", "merge two adjacent open shards", cmd_merge)
    c.add_argument("name")
    c.add_argument("shard_a")
    c.add_argument("shard_b")

    c = cmd("describe", "shards, ranges, state and lineage as JSON", cmd_describe)
    c.add_argument("name")

    cmd("list", "list streams", cmd_list)

    c = cmd("read", "consume through the group's lease table, printing records as JSON lines; without --follow,"
                    " stops once the group has consumed everything put so far", cmd_read)
    c.add_argument("name")
    c.add_argument("--group", required=True)
    c.add_argument("--worker", default=None, help="worker id (default: host-pid-random)")
    c.add_argument("--max", type=_positive_int, default=None, help="stop after N records")
    c.add_argument("--follow", action="store_true", help="keep reading (until SIGTERM/SIGINT)")
    c.add_argument("--batch", type=_positive_int, default=500, help="records per shard per checkpoint")
    c.add_argument("--lease-duration", type=_positive_float, default=10.0, help="seconds (default 10)")
    c.add_argument("--idle-wait", type=_positive_float, default=0.2, help="seconds between polls when idle")
    c.add_argument("--initial", choices=["earliest", "latest"], default="earliest",
                   help="where a new group starts")
    c.add_argument("--events", action="store_true", help="print lease events as JSON lines on stderr")

    c = cmd("leases", "the group's lease table as JSON", cmd_leases)
    c.add_argument("name")
    c.add_argument("--group", required=True)
