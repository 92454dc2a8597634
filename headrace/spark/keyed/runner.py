"""Run a :class:`headrace.keyed.Topology` on Spark.

Each computation is its own streaming query: the ``headrace_keyed`` source over its input streams
(:mod:`.source`), ``withWatermark("lw", "0 seconds")`` on the heartbeat's input watermark,
``groupBy("key").transformWithStateInPandas(KeyedProcessor, ..., "Append", "EventTime")`` with the
RocksDB state store provider (set on the session), and a ``foreachBatch`` that writes the batch's
produced records and manifest into the channel (:mod:`headrace.keyed.channel`). Spark commits the
state store version, the source offsets and the commit record of a batch together; the channel
batch of the same number becomes visible to consumers only once that commit exists. A batch re-run
after a crash rewrites identical files. So every record's effects (state, timers, productions)
happen once.

Layout: ``<root>/producers/...`` (channel), ``<root>/checkpoints/<computation>`` (Spark).
Injectors are pure Python (:class:`headrace.keyed.injectors.ChannelInjector`).

Topology change: a computation added later gets a fresh checkpoint and reads its input streams from
their first batch; the other queries are neither stopped nor changed. Removing one stops its
query; its output batches stay readable. A computation's own code may change between runs as long
as its declared state keeps its names and kinds.
"""
from __future__ import annotations

import os
import uuid
from pathlib import Path
from typing import Any

from ...keyed import defaults
from ...keyed.channel import Channel, input_watermark
from ...keyed.errors import KeyedError
from ...keyed.injectors import ChannelInjector
from ...keyed.topology import Topology
from ..runtime.sources import read_stream
from .processor import OUTPUT_SCHEMA, KeyedProcessor, read_offset
from .source import KeyedSource


class SparkRunner:
    def __init__(self, topology: Topology, root: "str | os.PathLike[str]", spark: Any = None,
                 max_batches: int | None = None):
        from ..session import get_spark

        self.topo = topology
        self.order = topology.validate()
        self.root = Path(root)
        self.ch = Channel(self.root)
        self.spark = spark or get_spark()
        self.max_batches = max_batches
        self.queries: dict[str, Any] = {}
        self.last_progress: dict[str, Any] = {}
        self._injectors: dict[str, ChannelInjector] = {}
        for name, spec in topology.computations.items():
            if spec.domain != "event":
                raise KeyedError("KEYED_NOT_SUPPORTED", f"computation {name!r}: processing-time timers are not"
                                                        f" supported by the Spark runner yet; expected"
                                                        f" timer_domain 'event', found {spec.domain!r}")

    def checkpoint(self, name: str) -> str:
        return str(self.root / "checkpoints" / name)

    def injector(self, name: str) -> ChannelInjector:
        if name not in self._injectors:
            self._injectors[name] = ChannelInjector(self.ch, self.topo.injectors[name])
        return self._injectors[name]

    # -- queries
    def _query(self, name: str, trigger: dict) -> Any:
        spec = self.topo.computations[name]
        ckpt = self.checkpoint(name)
        self.ch.register(name, "spark", ckpt)
        upstream = self.topo.upstream(name)
        r = (read_stream(self.spark, KeyedSource, uuid.uuid4().hex[:12]).option("root", str(self.root))
             .option("computation", name).option("upstream", ",".join(upstream))
             .option("streams", ",".join(spec.inputs)))
        if self.max_batches:
            r = r.option("maxBatches", str(self.max_batches))
        df = r.load().withWatermark("lw", "0 seconds")
        out = df.groupBy("key").transformWithStateInPandas(
            KeyedProcessor(spec, ckpt), OUTPUT_SCHEMA, "Append", "EventTime")
        ch, root_upstream = self.ch, upstream

        def write(batch_df: Any, batch_id: int) -> None:
            write_batch(ch, name, root_upstream, ckpt, batch_df, batch_id)

        return (out.writeStream.foreachBatch(write).option("checkpointLocation", ckpt)
                .queryName(f"keyed_{name}_{abs(hash(str(self.root))) % 10**8}").trigger(**trigger).start())

    def has_work(self, name: str) -> bool:
        """Whether an upstream producer committed batches the computation has not consumed, or its
        last batch left timers due (what its next batch would do)."""
        m = self.ch.manifest(name, self.ch.committed(name))
        if m is None:
            return True
        pos = m.get("positions", {})
        if any(self.ch.committed(p) > pos.get(p, -1) for p in self.topo.upstream(name)):
            return True
        return bool(m.get("due"))

    def run_available(self, names: list[str] | None = None) -> int:
        """Run each computation that has work, in topological order, over what is available
        (Trigger.AvailableNow), waiting for each; return how many batches were committed."""
        total = 0
        for name in names or self.order:
            if not self.has_work(name):
                continue
            before = self.ch.committed(name)
            q = self._query(name, {"availableNow": True})
            q.awaitTermination()
            if q.exception():
                raise q.exception()
            self.last_progress[name] = q.lastProgress
            total += self.ch.committed(name) - before
        return total

    def run_until_quiescent(self, max_rounds: int = 20) -> None:
        """``run_available`` until no computation has work."""
        for _ in range(max_rounds):
            self.run_available()
            if not any(self.has_work(n) for n in self.order):
                return

    def start(self, names: list[str] | None = None, interval: str = "1 second") -> None:
        """Start live queries (processing-time trigger) for the named computations."""
        for name in names or self.order:
            if name not in self.queries:
                self.queries[name] = self._query(name, {"processingTime": interval})

    def stop(self, names: list[str] | None = None) -> None:
        for name in list(names or self.queries):
            q = self.queries.pop(name, None)
            if q is not None:
                q.stop()

    # -- topology change
    def add_computation(self, name: str, cls: type, inputs: list[str], outputs: list[str] = (),
                        params: dict | None = None, start: bool = False) -> None:
        """Add a computation; running queries are untouched (see the module docstring)."""
        self.topo.computation(name, cls, inputs, outputs, params)
        self.order = self.topo.validate()
        if start:
            self.start([name])

    def remove_computation(self, name: str) -> None:
        self.stop([name])
        self.topo.remove(name)
        self.order = self.topo.validate()

    # -- results
    def output(self, stream: str) -> list[tuple[str, Any, int]]:
        """Every committed record of ``stream``: ``(key, value, ts)``."""
        return self.ch.records(self.topo.producers(stream), stream)

    def stats(self) -> dict:
        """Per computation: low and input watermarks, pending work (uncommitted upstream batches'
        records and pending timers), batches, and state size from Spark's last progress."""
        out: dict[str, Any] = {"injectors": {}, "computations": {}}
        for n in self.topo.injectors:
            m = self.ch.manifest(n, self.ch.committed(n))
            out["injectors"][n] = {"lowWatermark": m["lw"] if m else None, "batches": self.ch.committed(n) + 1}
        for n in self.order:
            last = self.ch.committed(n)
            m = self.ch.manifest(n, last) or {}
            pos = m.get("positions", {})
            pending = 0
            for p in self.topo.upstream(n):
                for b in range(pos.get(p, -1) + 1, self.ch.committed(p) + 1):
                    pending += sum((self.ch.manifest(p, b) or {}).get("records", {}).get(s, 0)
                                   for s in self.topo.computations[n].inputs)
            q = self.queries.get(n)
            prog = q.lastProgress if q is not None else self.last_progress.get(n)
            so = (prog or {}).get("stateOperators") or [{}]
            out["computations"][n] = {
                "lowWatermark": m.get("lw"), "inputWatermark": m.get("iw"), "pendingRecords": pending,
                "pendingTimers": sum(c for _, c in m.get("timers", [])), "batches": last + 1,
                "stateRows": so[0].get("numRowsTotal"), "stateBytes": so[0].get("memoryUsedBytes")}
        return out


def write_batch(ch: Channel, name: str, upstream: list[str], ckpt: str, batch_df: Any, batch_id: int) -> None:
    """The ``foreachBatch`` body: produced records and the manifest of batch ``batch_id``.
    ``HEADRACE_KEYED_KILL_AFTER=<computation>:<batch>`` (tests only) kills the process group with
    SIGKILL right after that batch's files are written, before Spark commits it."""
    pdf = batch_df.toPandas()
    got = read_offset(ckpt, batch_id)
    src = got[1] if got else {}
    positions = {k[2:]: int(v) for k, v in src.items() if k.startswith("p:")}
    iw, clock = input_watermark(ch, upstream, positions, defaults.NEG_INF_MS)
    prev = ch.manifest(name, batch_id - 1) or {}
    timers: dict[int, int] = {int(t): int(c) for t, c in prev.get("timers", [])}
    recs = []
    if len(pdf):
        for kind, stream, key, value, ts in zip(pdf["kind"], pdf["stream"], pdf["key"], pdf["value"], pdf["ts"]):
            if kind == 0:
                recs.append((stream, key, value, int(ts)))
            else:
                t = int(ts)
                timers[t] = timers.get(t, 0) + (1 if kind == 1 else -1)
                if timers[t] <= 0:
                    del timers[t]
    recs.sort()
    w = max(int(prev.get("w", defaults.NEG_INF_MS)), iw)
    first = min(timers) if timers else None
    lw = iw if first is None else min(iw, first)
    crash = os.environ.get("HEADRACE_KEYED_KILL_AFTER")   # fault injection for the crash tests
    ch_write = ch.write_batch
    ch_write(name, batch_id, recs, {
        "lw": lw, "iw": iw, "w": w, "clock": max(clock, int(prev.get("clock", 0))),
        "timers": sorted(timers.items()), "due": first is not None and first <= w,
        "tick": int(src.get("tick", 0)), "positions": positions})
    if crash == f"{name}:{batch_id}":
        import signal

        # kill -9 of the whole process group (driver and JVM): outputs written, commit not yet
        os.killpg(os.getpgid(0), signal.SIGKILL)
