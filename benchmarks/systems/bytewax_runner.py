"""The same queries as a Bytewax dataflow (one worker, ``bytewax.testing.run_main``).

Input: a source that tails the input JSON-lines file (the backlog, then the lines the feed
appends), 1,000 lines per batch; it ends once the stop file exists and the file is read to its
end. Lines are parsed with ``json.loads``. Windows: ``fold_window`` with an ``EventClock`` over the
event time (``wait_for_system_duration`` = 3 s, so the watermark is the largest event time seen
minus 3 s, advancing with the system clock in between) and ``TumblingWindower`` /
``SlidingWindower`` aligned to the epoch. Bytewax windows are per key: solar is keyed by device;
q5 and q7 pick one row per window, so they fold under a single key (as Bytewax needs for a
global per-window top). Results go to a sink that appends JSON lines and flushes per batch.
"""
from __future__ import annotations

import datetime as _dt
import json
import os
import sys
import time
from pathlib import Path
from typing import Any, List, Optional

sys.path.insert(0, os.path.dirname(__file__))
from runner_util import Events, load_config, passthrough_latencies  # noqa: E402

UTC = _dt.timezone.utc
EPOCH = _dt.datetime(1970, 1, 1, tzinfo=UTC)


def main() -> None:
    cfg = load_config()
    ev = Events(cfg["events_file"])
    import bytewax.operators as op
    from bytewax.dataflow import Dataflow
    from bytewax.inputs import FixedPartitionedSource, StatefulSourcePartition
    from bytewax.operators.windowing import EventClock, SlidingWindower, TumblingWindower, fold_window
    from bytewax.outputs import DynamicSink, StatelessSinkPartition
    from bytewax.testing import run_main

    stop_file = Path(cfg["stop_file"])

    class TailPartition(StatefulSourcePartition[str, int]):
        def __init__(self, path: str, pos: int):
            self.f = open(path, "rb")
            self.f.seek(pos)
            self.buf = b""
            self.awake: Optional[_dt.datetime] = None

        def next_batch(self) -> List[str]:
            out: list[str] = []
            while len(out) < 1000:
                line = self.f.readline()
                if not line:
                    break
                if not line.endswith(b"\n"):      # a line still being written
                    self.buf += line
                    continue
                if self.buf:
                    line, self.buf = self.buf + line, b""
                out.append(line.decode())
            if out:
                self.awake = None
                return out
            if stop_file.exists() and not self.buf:
                raise StopIteration()
            self.awake = _dt.datetime.now(UTC) + _dt.timedelta(milliseconds=10)
            return out

        def next_awake(self) -> Optional[_dt.datetime]:
            return self.awake

        def snapshot(self) -> int:
            return self.f.tell() - len(self.buf)

    class TailSource(FixedPartitionedSource[str, int]):
        def list_parts(self) -> List[str]:
            return ["0"]

        def build_part(self, step_id: str, for_part: str, resume_state: Optional[int]) -> TailPartition:
            return TailPartition(cfg["input_file"], resume_state or 0)

    out_path = Path(cfg["out_dir"])
    out_path.mkdir(parents=True, exist_ok=True)
    wl = cfg["workload"]

    class Sink(StatelessSinkPartition[Any]):
        def __init__(self) -> None:
            self.f = open(out_path / "results.jsonl", "a")

        def write_batch(self, items: List[Any]) -> None:
            if wl == "passthrough":
                for d in items:
                    self.f.write(json.dumps(d) + "\n")
                self.f.flush()
                t = time.time()
                arrs = [d["arr"] for d in items if d.get("arr") is not None]
                ev.emit("out", t=t, n=len(items), backlog=len(items) - len(arrs), lat=passthrough_latencies(arrs, t))
                return
            for d in items:
                self.f.write(json.dumps(d) + "\n")
            self.f.flush()
            ev.emit("out", rows=items)

    class FileSink(DynamicSink[Any]):
        def build(self, step_id: str, worker_index: int, worker_count: int) -> Sink:
            return Sink()

    def et(text: str) -> _dt.datetime:
        return _dt.datetime.fromisoformat(text)

    def ms(d: _dt.datetime) -> int:
        return int(round((d - EPOCH).total_seconds() * 1000))

    ten, two, wait = _dt.timedelta(seconds=10), _dt.timedelta(seconds=2), _dt.timedelta(seconds=3)
    # The watermark follows the data only (largest event time - 3 s), as in the other systems: by
    # default EventClock also advances it with the system clock between items, which is right when
    # event time runs at wall-clock speed; the benchmark's event time runs faster (see RESULTS.md).
    frozen = _dt.datetime(2000, 1, 1, tzinfo=UTC)
    now = lambda: frozen  # noqa: E731
    flow = Dataflow("bench")
    lines = op.input("in", flow, TailSource())
    docs = op.map("parse", lines, json.loads)
    if wl == "solar":
        obs = op.filter("type0", docs, lambda d: d.get("event_type") == 0)
        keyed = op.key_on("by_device", obs, lambda d: d["device_id"])
        clock = EventClock(lambda d: et(d["timestamp"]), wait_for_system_duration=wait, now_getter=now)

        def fold(acc: list, d: dict) -> list:
            w = d["obs"]["watts"]
            acc[0] += w
            acc[1] = w if acc[1] is None or w > acc[1] else acc[1]
            acc[2] += 1
            return acc

        win = fold_window("win", keyed, clock, TumblingWindower(ten, EPOCH), lambda: [0, None, 0], fold,
                          lambda a, b: [a[0] + b[0], max(a[1], b[1]), a[2] + b[2]], ordered=False)
        size = 10_000
        res = op.map("fmt", win.down, lambda kv: {
            "ws": kv[1][0] * size, "we": kv[1][0] * size + size, "k": kv[0],
            "avg": kv[1][1][0] / kv[1][1][2], "max": kv[1][1][1], "n": kv[1][1][2]})
    elif wl in ("q5", "q7"):
        bids = op.filter("bids", docs, lambda d: d.get("event_type") == 2)
        keyed = op.key_on("all", bids, lambda d: "all")
        clock = EventClock(lambda d: et(d["dateTime"]), wait_for_system_duration=wait, now_getter=now)
        if wl == "q5":
            def fold(acc: dict, d: dict) -> dict:
                a = d["bid"]["auction"]
                acc[a] = acc.get(a, 0) + 1
                return acc

            def merge(a: dict, b: dict) -> dict:
                for k, v in b.items():
                    a[k] = a.get(k, 0) + v
                return a

            win = fold_window("win", keyed, clock, SlidingWindower(ten, two, EPOCH), dict, fold, merge,
                              ordered=False)

            def fmt(kv: Any) -> dict:
                wid, counts = kv[1]
                auction, n = min(counts.items(), key=lambda x: (-x[1], x[0]))
                return {"ws": wid * 2000, "we": wid * 2000 + 10_000, "auction": auction, "n": n}
        else:
            def fold(acc: Any, d: dict) -> Any:
                b = d["bid"]
                k = (b["price"], -b["auction"], -b["bidder"])
                return k if acc is None or k > acc else acc

            win = fold_window("win", keyed, clock, TumblingWindower(ten, EPOCH), lambda: None, fold,
                              lambda a, b: max(a, b), ordered=False)

            def fmt(kv: Any) -> dict:
                wid, (p, a, b) = kv[1]
                return {"ws": wid * 10_000, "we": wid * 10_000 + 10_000, "price": p, "auction": -a, "bidder": -b}
        res = op.map("fmt", win.down, fmt)
    else:
        def proj(d: dict) -> Optional[dict]:
            if d.get("event_type") == 0 and d["obs"]["watts"] >= 100:
                return {"device_id": d["device_id"], "watts": d["obs"]["watts"], "ts": d["timestamp"],
                        "arr": d.get("arr")}
            return None
        res = op.filter_map("proj", docs, proj)
    op.output("out", res, FileSink())
    ev.emit("ready")
    run_main(flow)
    ev.emit("end", info={})
    ev.close()


if __name__ == "__main__":
    main()
