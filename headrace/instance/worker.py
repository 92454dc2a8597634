"""A worker: one OS process holding one SparkSession, running at most 4 processors as
streaming queries. It imports pyspark (through headrace.spark) lazily, only in this process.

Started by the control plane as ``python -m headrace.instance.worker --fd N --id W --tier T
--home H [--connections F] [--master URL]``: ``--fd`` is its end of a socket pair carrying
pickled messages (:class:`multiprocessing.connection.Connection`). Requests ``{"id", "op",
...}`` get replies ``{"id", "ok", "result" | "error"}``; the worker also sends events
``{"event": "ready" | "failed", ...}``. When the control plane's end closes, the worker stops
its processors and exits (no orphaned JVMs).
"""
from __future__ import annotations

import argparse
import collections
import datetime as _dt
import os
import sys
import threading
import time
import traceback
from multiprocessing.connection import Connection
from typing import Any

from .. import ejson
from ..errors import HeadraceError

#: tier -> (cores, driver memory). Spark's driver needs ~1 GB at least, so SP2/SP5 round up.
TIERS = {"SP2": (1, "1g"), "SP5": (1, "1g"), "SP10": (1, "2g"), "SP30": (2, "8g"), "SP50": (8, "32g")}
#: the small tiers trade peak throughput for start-up time and footprint (client compiler, serial GC):
#: a worker starts in about half the time. Set as headrace's JVM modes (``HEADRACE_JIT``,
#: ``HEADRACE_GC``), so the collector is the only one on the JVM's command line
SMALL_TIER_JVM = {"HEADRACE_JIT": "quick", "HEADRACE_GC": "serial"}
SAMPLE_LIMIT = 100


def _plain(v: Any) -> Any:
    return ejson.to_plain(v, relaxed=True)


class Hosted:
    """One processor in this worker: the engine's Processor plus the worker's own bookkeeping
    (output/DLQ bytes, event-to-sink latency, a bounded sample of recent outputs and DLQ)."""

    def __init__(self, name: str, proc: Any, ts_field: str, available: Any = None):
        self.name = name
        self.available = available      # partition -> records available at the source (for lag), or None
        self.proc = proc
        self.ts_field = ts_field
        self.sample: collections.deque = collections.deque(maxlen=SAMPLE_LIMIT)
        self.dlq_sample: collections.deque = collections.deque(maxlen=SAMPLE_LIMIT)
        self.out_bytes = 0
        self.dlq_bytes = 0
        self.latency_ms: collections.deque = collections.deque(maxlen=2000)
        self.stopping = False

    def on_output(self, docs: list[dict]) -> None:
        now = time.time() * 1000
        for d in docs:
            text = ejson.dumps(d)
            self.out_bytes += len(text)
            self.sample.append(text)
            t = (d.get("_stream_meta") or {}).get("window", {}).get("end") if isinstance(
                d.get("_stream_meta"), dict) else None
            t = t or d.get(self.ts_field)
            if isinstance(t, _dt.datetime):
                self.latency_ms.append(now - t.timestamp() * 1000)

    def on_dlq(self, docs: list[dict]) -> None:
        for d in docs:
            text = ejson.dumps(d)
            self.dlq_bytes += len(text)
            self.dlq_sample.append(text)

    def stats(self, verbose: bool) -> dict:
        s = _plain(self.proc.stats(verbose=verbose))
        s.pop("status", None)   # the control plane's state is authoritative
        lat = sorted(self.latency_ms)
        pick = (lambda q: round(lat[min(len(lat) - 1, int(q * len(lat)))], 1)) if lat else (lambda q: None)
        s.update({"outputMessageSize": self.out_bytes, "dlqMessageSize": self.dlq_bytes,
                  "latencyEventToSink": {"p50": pick(0.5), "p99": pick(0.99), "unit": "ms"},
                  "inputEnded": self.proc.finished.is_set()})
        avail = {}
        if self.available is not None:
            try:
                avail = self.available()
            except Exception:  # noqa: BLE001 - lag is best effort
                avail = {}
        for p in s.get("partitions", []):
            p.setdefault("committed", p.get("position"))
            n = avail.get(p.get("partition"))
            p["lag"] = max(0, n - (p.get("position") or 0)) if n is not None else None
        return s


def _available(parsed: Any, registry: Any) -> Any:
    """For an embedded-stream source: a function giving each shard's record count (lag = count
    minus position); None for other sources."""
    src = parsed.source
    if not src.connection_name or not src.stream:
        return None
    conn = registry.get(src.connection_name)
    if conn.type != "stream":
        return None
    home = conn.options.get("home") or str(registry.home)

    def counts() -> dict:
        from ..streams import Stream

        with Stream(home, src.stream) as s:
            return {sh.id: s.count(sh.id) for sh in s.shards()}
    return counts


class Worker:
    def __init__(self, conn: Connection, wid: int, home: str, connections: str | None, master: str | None,
                 trigger_ms: int | None):
        self.conn = conn
        self.wid = wid
        self.home = home
        self.connections = connections
        self.master = master
        self.trigger_ms = trigger_ms
        self.hosted: dict[str, Hosted] = {}
        self._send_lock = threading.Lock()
        self._lock = threading.Lock()
        self._process_lock = threading.Lock()

    def send(self, msg: dict) -> None:
        with self._send_lock:
            self.conn.send(msg)

    # ------------------------------------------------------------------ operations
    def op_start(self, name: str, pipeline: dict, checkpoint: str) -> dict:
        from pathlib import Path

        from ..connections import load_registry
        from ..spec import parse_pipeline
        from ..validate import check_connections
        from ..spark.engine import Processor, RunOptions

        parsed = parse_pipeline(pipeline)
        registry = load_registry(self.connections, self.home)
        check_connections(parsed, registry)
        h = Hosted(name, None, parsed.source.ts_field_name, _available(parsed, registry))
        kw = {"trigger_ms": self.trigger_ms} if self.trigger_ms else {}
        h.proc = Processor(parsed, RunOptions(name=name, checkpoint=Path(checkpoint), registry=registry,
                                              on_output=h.on_output, on_dlq=h.on_dlq, spark_master=self.master,
                                              **kw))
        with self._lock:
            if name in self.hosted:
                raise HeadraceError(f"processor {name!r} already runs on worker {self.wid}", code="ALREADY_RUNNING")
            self.hosted[name] = h
        try:
            h.proc.start()
        except BaseException:
            with self._lock:
                self.hosted.pop(name, None)
            raise
        threading.Thread(target=self._watch, args=(h,), daemon=True, name=f"watch-{name}").start()
        return {"pid": os.getpid()}

    def _watch(self, h: Hosted) -> None:
        """Report a query that ends on its own with an error (its sink refuses writes ...)."""
        reason = None
        try:
            h.proc.query.awaitTermination()
        except Exception as exc:  # noqa: BLE001 - StreamingQueryException
            reason = str(h.proc.error or exc)
        if h.proc.error is not None:
            reason = str(h.proc.error)
        if reason and not h.stopping:
            with self._lock:
                self.hosted.pop(h.name, None)
            self.send({"event": "failed", "name": h.name, "reason": reason.splitlines()[0][:2000]})

    def op_stop(self, name: str) -> dict:
        with self._lock:
            h = self.hosted.get(name)
        if h is None:
            return {}
        h.stopping = True
        q = h.proc.query
        deadline = time.monotonic() + 30
        # stop between micro-batches: the last committed batch is the final checkpoint
        while q is not None and q.isActive and q.status.get("isTriggerActive") and time.monotonic() < deadline:
            time.sleep(0.05)
        h.proc.stop()
        stats = h.stats(verbose=True)
        with self._lock:
            self.hosted.pop(name, None)
        return stats

    def op_process(self, pipeline: dict, name: str = "process", limit: int | None = None,
                   duration: float | None = None) -> dict:
        """An ephemeral run (``sp.process``) on this worker's warm session: a temp checkpoint,
        outputs and DLQ entries collected up to ``limit`` outputs or ``duration`` seconds (a finite
        source ends earlier). Runs one at a time. Returns relaxed Extended JSON."""
        import tempfile
        from pathlib import Path

        from ..launch import Prepared, start
        from ..connections import load_registry
        from ..spec import parse_pipeline
        from ..validate import check_connections

        parsed = parse_pipeline(pipeline)
        registry = load_registry(self.connections, self.home)
        check_connections(parsed, registry)
        outputs: list = []
        dlq: list = []
        with self._process_lock, tempfile.TemporaryDirectory(prefix="headrace-process-") as tmp:
            t0 = time.monotonic()
            proc = start(Prepared(parsed, registry), name=name, checkpoint=Path(tmp), spark_master=self.master,
                         on_output=outputs.extend, on_dlq=dlq.extend, once=True)
            stats = proc.run(duration_s=duration, limit=limit)
            seconds = round(time.monotonic() - t0, 3)
        truncated = limit is not None and len(outputs) > limit
        return {"outputs": [_plain(d) for d in outputs[:limit]], "dlq": [_plain(d) for d in dlq],
                "stats": _plain(stats), "truncated": truncated, "seconds": seconds}

    def op_stats(self, name: str, verbose: bool = False) -> dict:
        h = self._get(name)
        return h.stats(verbose)

    def op_all_stats(self) -> dict:
        with self._lock:
            hs = list(self.hosted.values())
        return {h.name: h.stats(False) for h in hs}

    def op_sample(self, name: str, limit: int = 20) -> dict:
        h = self._get(name)
        out = [ejson.to_plain(ejson.loads(t)) for t in list(h.sample)[-limit:]]
        dlq = [ejson.to_plain(ejson.loads(t)) for t in list(h.dlq_sample)[-limit:]]
        return {"outputs": out, "dlq": dlq}

    def _get(self, name: str) -> Hosted:
        with self._lock:
            h = self.hosted.get(name)
        if h is None:
            raise HeadraceError(f"processor {name!r} is not running on worker {self.wid}", code="NOT_RUNNING")
        return h

    def stop_all(self) -> None:
        for name in list(self.hosted):
            try:
                self.op_stop(name)
            except Exception:  # noqa: BLE001 - shutting down
                pass

    # ------------------------------------------------------------------ loop
    def handle(self, msg: dict) -> None:
        rid = msg.get("id")
        try:
            op = getattr(self, "op_" + msg["op"])
            args = {k: v for k, v in msg.items() if k not in ("id", "op")}
            self.send({"id": rid, "ok": True, "result": op(**args)})
        except HeadraceError as exc:
            self.send({"id": rid, "ok": False, "error": exc.to_dict()})
        except Exception as exc:  # noqa: BLE001 - reported to the control plane
            traceback.print_exc()
            self.send({"id": rid, "ok": False, "error": {"code": "WORKER_ERROR", "message": str(exc)[:2000]}})

    def serve(self) -> None:
        while True:
            try:
                msg = self.conn.recv()
            except (EOFError, OSError):
                break
            if msg.get("op") == "shutdown":
                self.stop_all()
                self.send({"id": msg.get("id"), "ok": True, "result": {}})
                break
            threading.Thread(target=self.handle, args=(msg,), daemon=True).start()
        self.stop_all()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="headrace-worker")
    ap.add_argument("--fd", type=int, required=True)
    ap.add_argument("--id", type=int, required=True)
    ap.add_argument("--tier", default="SP10", choices=sorted(TIERS))
    ap.add_argument("--home", required=True)
    ap.add_argument("--connections")
    ap.add_argument("--master")
    ap.add_argument("--trigger-ms", type=int)
    a = ap.parse_args(argv)
    cores, mem = TIERS[a.tier]
    os.environ["HEADRACE_DRIVER_MEMORY"] = mem
    if a.tier in ("SP2", "SP5"):
        os.environ.update(SMALL_TIER_JVM)
    os.environ.setdefault("HEADRACE_SHUFFLE_PARTITIONS", str(max(1, cores)))
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    master = a.master or f"local[{cores}]"
    conn = Connection(a.fd)
    w = Worker(conn, a.id, a.home, a.connections, master, a.trigger_ms)
    try:
        from ..spark.session import get_spark

        get_spark(master, app=f"headrace-worker-{a.id}")
        w.send({"event": "ready", "pid": os.getpid()})
    except Exception as exc:  # noqa: BLE001
        w.send({"event": "startup_failed", "reason": str(exc)[:2000]})
        return 1
    w.serve()
    os._exit(0)   # do not wait for Spark's non-daemon threads


if __name__ == "__main__":
    sys.exit(main())
