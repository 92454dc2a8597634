"""The engine: one streaming query per processor, each micro-batch driven from ``foreachBatch``.

Per micro-batch ``N`` (time-semantics.md):
1. Parse what the reader left to the JVM; evaluate ``timeField`` (else the source timestamp) into
   ``_et``; write it to ``tsFieldName`` (:mod:`.runtime.prepare`). Unparseable input and
   ``timeField`` errors become DLQ entries. These columns are part of the streaming query
   (analysed once at start); the batch DataFrame arrives with them. Where ``timeField`` has a
   fast path, its generic expression is applied in the batch, to the rows that need it
   (:mod:`.runtime.prepare`).
2. One small aggregate gives per-partition max event time and arrival, the batch instant ``T``,
   whether the input ended, and the documents' merged schema: the facts of the typed fast path
   (:mod:`.values.facts`), as :mod:`.runtime.batch_stats` says. A two-pass batch (:mod:`.runtime.two_pass`)
   computes it in a job of its own over the persisted rows; a one-pass windowed batch
   (:mod:`.runtime.one_pass`) is compiled with the previous batch's facts and gathers it in the job
   that writes the window state, standing only when it shows the same plan.
3. Idle-timeout timers due strictly before ``T`` fire; processing-time windows ending at or
   before ``T`` emit.
4. The stateless stages run (native Catalyst); their failures go to the DLQ. A batch without
   records skips steps 4 and 5 (no Spark work for an idle trigger).
5. With a window: documents are judged against ``W`` after batch ``N-1``; late ones go to the
   DLQ with ``missedWindowStartTimes``; on-time ones are appended to the window state.
6. ``W := max(W, min over non-idle partitions of M_p)`` (+infinity at end of input); every window
   that closed emits (order: end, then start), through the inner pipeline and the stages after
   the window; timers due at ``T`` fire.
7. Outputs and DLQ entries are built and written on an executor in one job, with deterministic
   ``_id``s (idempotent on replay) (:mod:`.runtime.sinks`); then the engine state for ``N`` is
   committed.

The modules: :mod:`.runtime.sources` (which reader for which connection type),
:mod:`.runtime.prepare` and :mod:`.runtime.parse` (step 1), :mod:`.runtime.batch` (window rules,
what a batch writes), :mod:`.windows` (one module per window kind), :mod:`.runtime.records` and
:mod:`.runtime.sinks` (step 7), :mod:`.runtime.stats` (what ``stats()`` reports),
:mod:`.runtime.state` (engine state versions in the checkpoint:
a re-run of batch N after a crash reads version N-1 and rewrites N, so output is the same as
an uninterrupted run).
"""
from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from ..mql.field_order import OrderPlan
from ..connections import Registry
from ..errors import HeadraceError
from ..faults import maybe_crash
from ..spec import defaults
from ..spec.model import Pipeline, WindowSpec
from ..spec.stages import with_sink_targets
from ..timing import PLUS_INF, TimeState
from . import planners
from . import values as V
from .runtime import one_pass, two_pass
from .runtime.batch import BatchWork
from .runtime.sinks import write_work
from .runtime.prepare import has_slow_rows, prepare, prepare_steps, slow_steps
from .runtime.state import Checkpoint, EngineState, new_counters
from .session import CodegenSwitch
from .sources import END
from .sources.hold import hold_still
from .stages import Env, apply_stages, source_fields_after

Callback = Callable[[list[dict]], None]


class ProcessorFailed(HeadraceError):
    code = "PROCESSOR_FAILED"
    exit_code = 1


@dataclass
class RunOptions:
    name: str
    checkpoint: Path
    registry: Registry
    on_output: Callback | None = None          # every output document (ephemeral runs print them)
    on_dlq: Callback | None = None             # every DLQ document
    trigger_ms: int = defaults.TRIGGER_INTERVAL_MS
    on_batch: Callable[[int, int | None, int | None], None] | None = None  # (batch id, clock, W) after each
    fault: Callable[[int, str], None] | None = None   # tests: called at the phases below (may raise)
    fault_phases: tuple[str, ...] = ("after_sink",)   # of Processor._phase: after_dedup, after_sink, after_state
    spark_master: str | None = None
    once: bool = False     # a finite one-batch source on a fresh checkpoint runs as one batch job


class Processor:
    """A running stream processor (one Spark streaming query)."""

    def __init__(self, pipeline: Pipeline, opts: RunOptions):
        self.p = with_sink_targets(pipeline)   # the sink's per-document expressions as a last stage
        self._order = OrderPlan.of(self.p)       # outputs' field order (headrace.mql.field_order)
        self.o = opts
        self.ckpt = Path(opts.checkpoint)
        self.checkpoints = Checkpoint(self.ckpt)
        self.hdir = self.checkpoints.dir
        self._hold = self.hdir / "hold"     # while it exists the source plans no new batch (stop())
        self.w: WindowSpec | None = pipeline.window
        self.query = None
        self.error: BaseException | None = None
        self.finished = threading.Event()
        self._lock = threading.Lock()
        self.counters = new_counters()
        self.latencies: list[float] = []
        self.time = TimeState()
        self.source_type = "generated"
        self.partitions: list[str] = []
        self.partitions_fn: Callable[[dict], list[str]] | None = None
        self.positions: dict[str, int] = {}
        self.holding_back: list[str] = []
        self._stopping = False
        self._env: Env | None = None   # expressions' environment and compiled trees, from start()
        self.sink_stats: dict | None = None   # what the sink reports (a zoned sink: its zones), summed
        self.dedup = None                     # the $source.dedup hook (runtime/dedup.py), set at start
        self._codegen = CodegenSwitch()       # generated code for this query's jobs, per batch size
        # the typed fast path (values.facts); HEADRACE_FAST_PATH=off runs every path generically
        self._typed = os.environ.get("HEADRACE_FAST_PATH", "on") != "off"
        # the fields of the windows' documents still the source's (what a partial window reads with the facts)
        self._window_fields = (source_fields_after(self.p.before, self.p.source.ts_field_name)
                               if self.w is not None else None)
        self._once: DataFrame | None = None   # RunOptions.once: the one batch run() runs itself
        self._planning = False                # counted among the queries starting (.planners)
        # the steps that finish rows the timeField's fast path did not read (runtime/prepare.py),
        # built once with the streaming query; None without a fast path
        self._slow_steps = None
        self._slow_seen = False               # the last batch had such rows
        # the last batches' facts and data rows in this run: what a one-pass batch assumes (runtime/one_pass.py)
        self.history = one_pass.History()

    @property
    def stopped(self) -> bool:
        """Whether :meth:`stop` was called (the run was ended by its caller, not by its input)."""
        return self._stopping

    @property
    def last_checkpoint(self) -> str | None:
        return self.checkpoints.last_saved

    def _needs_ticks(self) -> bool:
        """Idle timeouts and processing-time windows need the clock to move without data."""
        w = self.w
        return bool(w and (w.idle_timeout or w.boundary == "processingTime"))

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> "Processor":
        """Start the streaming query (or prepare the one batch of ``RunOptions.once``). Until its
        first micro-batch completes, the query counts among those starting (:mod:`.planners`)."""
        planners.starting()
        self._planning = True
        try:
            return self._start()
        except BaseException:
            self._planned()
            raise

    def _start(self) -> "Processor":
        from .runtime.dedup import make_dedup
        from .runtime.sources import SourceContext, open_source
        from .session import get_spark

        spark = get_spark(self.o.spark_master)
        self.dedup = make_dedup(self.p, self.hdir)
        last = self.checkpoints.load()
        if last is not None:
            self.counters.update(last.counters)
            self.time = last.time
        once = self.o.once and last is None and not self._needs_ticks()
        self._hold.unlink(missing_ok=True)      # a stop of an earlier run held the source still
        src = open_source(spark, SourceContext(self.p.source, self.o.registry, self.hdir, self._needs_ticks(),
                                               once, hold=self._hold))
        self.source_type, self.partitions, self.partitions_fn = src.source_type, src.partitions, src.partitions_fn
        if src.once is not None:
            self._once = self._prepared(src.once)
            return self
        w = (self._prepared(src.df).writeStream.foreachBatch(self._on_batch)
             .option("checkpointLocation", str(self.ckpt / "spark"))
             .queryName(f"headrace_{self.o.name}_{os.getpid()}_{id(self)}"))
        if self.o.trigger_ms:
            w = w.trigger(processingTime=f"{self.o.trigger_ms} milliseconds")
        self.query = w.start()
        return self

    def run(self, duration_s: float | None = None, limit: int | None = None,
            progress: Callable[["Processor"], None] | None = None, max_input: int | None = None) -> dict:
        """Run until a finite input is exhausted, ``duration_s`` passes, ``limit`` outputs exist or
        ``max_input`` input records were processed (whichever comes first)."""
        if self.query is None and self._once is None:
            self.start()
        if self._once is not None:      # RunOptions.once: the whole input is batch 0, run here
            batch, self._once = self._once, None
            try:
                self._on_batch(batch, 0)
            except Exception:  # noqa: BLE001 - kept in self.error, raised below
                pass
            self.finished.set()
        deadline = time.monotonic() + duration_s if duration_s else None
        try:
            while True:
                if self.finished.wait(0.5):
                    break
                if self.query.exception() is not None or not self.query.isActive:
                    break
                if progress:
                    progress(self)
                if deadline and time.monotonic() >= deadline:
                    break
                if limit is not None and self.counters["output"] >= limit:
                    break
                if max_input is not None and self.counters["input"] >= max_input:
                    break
        finally:
            self.stop()
        if self.error is not None:
            raise ProcessorFailed(f"processor {self.o.name!r} failed: {self.error}") from self.error
        exc = self.query.exception() if self.query else None
        if exc is not None and not self.finished.is_set() and not self._interrupted(exc):
            raise ProcessorFailed(f"processor {self.o.name!r} failed: {exc}")
        return self.stats()

    def _interrupted(self, exc: Any) -> bool:
        return self._stopping and "InterruptedException" in str(exc)

    def _planned(self) -> None:
        """The query is past its start: Spark's planner processes may go (:mod:`.planners`)."""
        with self._lock:
            was, self._planning = self._planning, False
        if was:
            planners.started()

    def stop(self) -> None:
        """Stop the query. Its source holds still first (:mod:`.sources.hold`), so Spark plans no
        further micro-batch and the running one finishes and commits; one still running after
        ``defaults.STOP_WAIT_S`` is interrupted, and re-run from the checkpoint next time."""
        self._stopping = True
        self._planned()
        q = self.query
        if q is None or not q.isActive:
            return
        hold_still(self._hold, q, defaults.STOP_WAIT_S)
        try:
            q.stop()
        except Exception:  # noqa: BLE001 - stopping a failed query
            pass

    # ------------------------------------------------------------------ the micro-batch
    def _on_batch(self, bdf: DataFrame, batch_id: int) -> None:
        t0 = time.monotonic()
        try:
            ended = self._batch(bdf, batch_id)
        except BaseException as exc:  # surfaced by run()
            if not self.finished.is_set() and not self._stopping:
                self.error = exc
            raise
        else:
            self._planned()
            if ended:
                self.finished.set()
        finally:
            self.latencies.append(time.monotonic() - t0)
            self.latencies = self.latencies[-1000:]

    def _source_meta(self) -> dict[str, Column]:
        return {"stream.source.partition": V.to_variant(F.col("partition")),
                "stream.source.offset": V.to_variant(F.col("offset")),
                "stream.source.ts": V.to_variant(F.col("source_ts")),
                "stream.source.type": V.lit_value(self.source_type)}

    def _prepared(self, df: DataFrame) -> DataFrame:
        """The source's streaming rows through :func:`.runtime.prepare.prepare` (JVM parse, event
        time): part of the streaming query itself, so Spark analyses these columns once at start
        instead of at every micro-batch."""
        from .expr import compile_expression

        env = self._env = self._env or Env(meta=self._source_meta())
        tf = self.p.source.time_field
        time_field = None if tf is None else compile_expression(tf, env.ctx(where="$source.timeField"))
        if has_slow_rows(self.p.source):
            self._slow_steps = slow_steps(self.p.source, time_field)
        return prepare(df, prepare_steps(self.p.source, time_field))

    def _begin(self, prev: EngineState) -> EngineState:
        """This batch's copy of the engine state after the previous one, its watermark partitions
        brought up to date."""
        st = EngineState.from_json(prev.to_json())
        ts = st.time
        if self.partitions_fn is not None:
            # shards drained and closed by resharding stop being watermark partitions
            self.partitions = self.partitions_fn(st.positions)
            for gone in set(ts.partitions) - set(self.partitions):
                del ts.partitions[gone]
        ts.ensure(self.partitions)
        return st

    def _batch(self, bdf: DataFrame, batch_id: int) -> bool:
        prev = self.checkpoints.load(batch_id) or EngineState()
        env = self._env
        if self._codegen.on is None:
            self._codegen.set(bdf.sparkSession, 0)
        passes = one_pass.applies(self, prev)
        if passes:
            self._phase("after_dedup", batch_id)     # (no $source.dedup in one pass)
            with env.active():
                ended = one_pass.run(self, bdf, batch_id, prev, self._begin(prev), env)
            if ended is not None:
                return ended
        return two_pass.run(self, bdf, batch_id, prev, self._begin(prev), env, phased=passes)

    def _account(self, stats: list, st: EngineState) -> tuple[int, bool, int]:
        """The batch's statistics into ``st`` (positions, counters): ``(T, input ended, data rows)``."""
        ts, counters = st.time, st.counters
        for r in stats:
            if r["maxoff"] is not None:
                st.positions[r["partition"]] = max(st.positions.get(r["partition"], 0), r["maxoff"] + 1)
        now = max((r["anyarr"] for r in stats if r["anyarr"] is not None), default=ts.clock or 0)
        ended = any(r["maxkind"] == END for r in stats)
        n_in = sum(r["n"] or 0 for r in stats)
        counters["input"] += n_in
        counters["inputBytes"] += sum(r["bytes"] or 0 for r in stats)
        counters["batches"] += 1
        return now, ended, n_in

    def _stages(self, rows: DataFrame, env: Env) -> DataFrame:
        """The stages before the window (or all, without one) over the batch's data rows, under
        the facts the caller set (``_orig``: the document as the source gave it, for the DLQ
        entry of a failing stage)."""
        data = apply_stages(rows.withColumn("_orig", F.col("doc")), self.p.before, env,
                            raw=("raw", self.p.source.ts_field_name))
        if self.p.before:
            self._codegen.check(data)
        return data

    def _conclude(self, work: BatchWork, stats: list, st: EngineState, prev: EngineState, now: int,
                  ended: bool) -> bool:
        """Steps 6-7 once the batch's documents are in the windows (or its stages' output among what
        it writes): ``W``, the windows that close, the sink, the engine state for the batch."""
        ts, counters, w, batch_id = st.time, st.counters, self.w, work.batch_id
        for r in stats:
            if r["n"]:
                ts.observe(r["partition"], r["maxet"], r["maxarr"])
        pit = self.p.source.partition_idle_timeout.ms if self.p.source.partition_idle_timeout else None
        ts.advance(now, pit)
        if ended:
            ts.raise_to(PLUS_INF)
            ts.ended = True
        if w is not None:
            if w.boundary == "eventTime":
                work.close_event_time(ts)
                work.fire_timers(ts, strict=False)
            elif ended:
                work.close_processing(PLUS_INF)
            work.gc(ts)
        res = write_work(self, work, st.jsonl_size)
        if res.get("error"):
            raise ProcessorFailed(f"processor {self.o.name!r}: {res['error']}")
        self._phase("after_sink", batch_id)
        counters["output"] += res["output"]
        counters["dlq"] += res["dlq"]
        counters["late"] += res["late"]
        st.jsonl_size = res["jsonl_size"]
        if res.get("sinkStats"):
            from .runtime.sinks import stats_add

            self.sink_stats = stats_add(self.sink_stats, res["sinkStats"])
        st.holding_back = ts.holding_back(now, pit)
        self.checkpoints.save(batch_id, st, prev)
        self._phase("after_state", batch_id)
        with self._lock:
            self.time = ts
            self.positions = st.positions
            self.counters = counters
            self.holding_back = st.holding_back
        if self.o.on_batch:
            self.o.on_batch(batch_id, ts.clock, ts.watermark)
        if self.o.on_dlq and res.get("dlqDocs"):
            self.o.on_dlq(res["dlqDocs"])
        if self.o.on_output and res.get("outputs"):
            self.o.on_output(res["outputs"])
        return ended

    def _phase(self, phase: str, batch_id: int) -> None:
        """Crash injection points (:mod:`headrace.faults`, ``RunOptions.fault``): ``after_dedup``
        (before the stages and the sink), ``after_sink``, ``after_state`` (before Spark's commit)."""
        maybe_crash(phase, batch_id)
        if self.o.fault and phase in self.o.fault_phases:
            self.o.fault(batch_id, phase)

    # ------------------------------------------------------------------ stats
    def stats(self, verbose: bool = False) -> dict:
        """The processor's statistics (:func:`.runtime.stats.processor_stats`)."""
        from .runtime.stats import processor_stats

        with self._lock:
            return processor_stats(self)
