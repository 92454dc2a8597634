"""The engine: one streaming query per processor, each micro-batch driven from ``foreachBatch``.

Per micro-batch ``N`` (time-semantics.md):
1. Evaluate ``timeField`` (else the source timestamp) into ``_et``; write it to ``tsFieldName``.
   Unparseable input and ``timeField`` errors become DLQ entries.
2. One small aggregate gives per-partition max event time and arrival, the batch instant ``T``
   and whether the input ended.
3. Idle-timeout timers due strictly before ``T`` fire; processing-time windows ending at or
   before ``T`` emit.
4. The stateless stages run (native Catalyst); their failures go to the DLQ.
5. With a window: documents are judged against ``W`` after batch ``N-1``; late ones go to the
   DLQ with ``missedWindowStartTimes``; on-time ones are appended to the window state.
6. ``W := max(W, min over non-idle partitions of M_p)`` (+infinity at end of input); every window
   that closed emits (order: end, then start), through the inner pipeline and the stages after
   the window; timers due at ``T`` fire.
7. Outputs and DLQ entries are written with deterministic ``_id``s (idempotent on replay), then
   the engine state for ``N`` is committed.

Engine state lives in the query's checkpoint directory (``<checkpoint>/headrace``), versioned
by batch id in step with Spark's own offset and commit logs: ``meta/<N>.json`` (watermark,
partition progress, open windows, counters) and ``state/<N>.parquet`` (the documents batch N
added to open windows). A re-run of batch N after a crash reads version N-1 and rewrites N,
so output is the same as an uninterrupted run.
"""
from __future__ import annotations

import datetime as _dt
import json
import math
import os
import shutil
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from .. import ejson
from ..connections import Registry
from ..errors import HeadraceError
from ..spec import defaults
from ..spec.model import Pipeline, WindowSpec
from ..timing import PLUS_INF, TimeState, idle_timer_due, last_window_end
from . import values as V
from .sources import DATA, END
from .stages import Env, apply_stages

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
    fault: Callable[[int, str], None] | None = None   # tests: called at phase "after_sink" (may raise)
    spark_master: str | None = None


def _ms(col: Column) -> Column:
    return F.unix_millis(col)


def _ts(ms: int) -> _dt.datetime:
    return ejson.millis_to_datetime(ms)


class Processor:
    """A running stream processor (one Spark streaming query)."""

    def __init__(self, pipeline: Pipeline, opts: RunOptions):
        self.p = pipeline
        self.o = opts
        self.ckpt = Path(opts.checkpoint)
        self.hdir = self.ckpt / "headrace"
        (self.hdir / "meta").mkdir(parents=True, exist_ok=True)
        (self.hdir / "state").mkdir(parents=True, exist_ok=True)
        self.w: WindowSpec | None = pipeline.window
        self.query = None
        self.error: BaseException | None = None
        self.finished = threading.Event()
        self._lock = threading.Lock()
        self.counters = {"input": 0, "output": 0, "dlq": 0, "late": 0, "batches": 0, "inputBytes": 0}
        self.latencies: list[float] = []
        self.time = TimeState()
        self.source_type = "generated"
        self.partitions: list[str] = []
        self.partitions_fn: Callable[[], list[str]] | None = None
        self.last_checkpoint: str | None = None
        self.positions: dict[str, int] = {}
        self._stopping = False
        self._time_field = None   # the compiled $source.timeField, built at the first batch
        self._sinks: dict[str, Any] = {}

    # ------------------------------------------------------------------ source
    def _source_df(self, spark) -> DataFrame:
        s = self.p.source
        if s.documents is not None:
            from .sources.documents import prepare_batches, write_batches

            path = self.hdir / "input.jsonl"
            parts_file = self.hdir / "partitions.json"
            if not path.exists():
                batches, parts = prepare_batches(s, _dt.datetime.now(_dt.timezone.utc))
                write_batches(path, batches)
                parts_file.write_text(json.dumps(parts))
            self.partitions = json.loads(parts_file.read_text())
            self.source_type = "replay" if s.replay else "documents"
            return spark.readStream.format("headrace_documents").option("path", str(path)).load()
        conn = self.o.registry.get(s.connection_name or "")
        if conn.type == "sample":
            self.partitions = ["0"]
            self.source_type = "generated"
            r = spark.readStream.format("headrace_sample")
            for k, v in {**conn.options, **s.config}.items():
                r = r.option(k, str(v))
            return r.load()
        if conn.type == "file":
            self.partitions = ["0"]
            self.source_type = "file"
            r = spark.readStream.format("headrace_file").option("path", str(conn.options["path"]))
            if self._needs_ticks():
                r = r.option("tickMs", "1000")
            for k, v in s.config.items():
                r = r.option(k, str(v))
            return r.load()
        if conn.type == "stream":
            from ..streams import watermark_partitions

            if not s.stream:
                raise HeadraceError(f"$source on stream connection {conn.name!r} needs 'stream'",
                                    code="SOURCE_STREAM_REQUIRED")
            home = conn.options.get("home") or str(self.o.registry.home)
            self.source_type = "stream"
            self.partitions_fn = lambda positions: watermark_partitions(home, s.stream, positions)
            self.partitions = self.partitions_fn({})
            r = spark.readStream.format("headrace_stream").option("home", home).option("stream", s.stream)
            if self._needs_ticks():
                r = r.option("tickMs", "1000")
            for k, v in s.config.items():
                r = r.option(k, str(v))
            return r.load()
        raise HeadraceError(f"connection {conn.name!r} of type {conn.type!r} cannot be a source yet",
                            code="SOURCE_TYPE")

    def _needs_ticks(self) -> bool:
        """Idle timeouts and processing-time windows need the clock to move without data."""
        w = self.w
        return bool(w and (w.idle_timeout or w.boundary == "processingTime"))

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> "Processor":
        from .session import get_spark

        spark = get_spark(self.o.spark_master)
        df = self._source_df(spark)
        self._restore_counters()
        w = (df.writeStream.foreachBatch(self._on_batch)
             .option("checkpointLocation", str(self.ckpt / "spark"))
             .queryName(f"headrace_{self.o.name}_{os.getpid()}_{id(self)}"))
        if self.o.trigger_ms:
            w = w.trigger(processingTime=f"{self.o.trigger_ms} milliseconds")
        self.query = w.start()
        return self

    def _restore_counters(self) -> None:
        last = self._latest_meta(None)
        if last is not None:
            meta = json.loads(last.read_text())
            self.counters.update(meta.get("counters", {}))
            self.time = TimeState.from_json(meta["time"])

    def run(self, duration_s: float | None = None, limit: int | None = None,
            progress: Callable[["Processor"], None] | None = None, max_input: int | None = None) -> dict:
        """Run until a finite input is exhausted, ``duration_s`` passes, ``limit`` outputs exist or
        ``max_input`` input records were processed (whichever comes first)."""
        if self.query is None:
            self.start()
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

    def stop(self) -> None:
        """Stop the query; a micro-batch it interrupts is re-run from the checkpoint next time."""
        self._stopping = True
        if self.query is not None and self.query.isActive:
            try:
                self.query.stop()
            except Exception:  # noqa: BLE001 - stopping a failed query
                pass

    # ------------------------------------------------------------------ state versions
    def _latest_meta(self, below: int | None) -> Path | None:
        best = None
        for f in (self.hdir / "meta").glob("*.json"):
            n = int(f.stem)
            if below is not None and n >= below:
                continue
            if best is None or n > int(best.stem):
                best = f
        return best

    def _load(self, batch_id: int) -> dict:
        f = self._latest_meta(batch_id)
        if f is None:
            return {"time": TimeState().to_json(), "windows": {}, "sessions": {}, "files": [], "counters": {
                "input": 0, "output": 0, "dlq": 0, "late": 0, "batches": 0, "inputBytes": 0}, "jsonl_size": None}
        return json.loads(f.read_text())

    def _save(self, batch_id: int, meta: dict, previous: dict) -> None:
        tmp = self.hdir / "meta" / f".{batch_id}.tmp"
        tmp.write_text(json.dumps(meta))
        tmp.replace(self.hdir / "meta" / f"{batch_id}.json")
        # A re-run of this batch reads the previous version: keep what either version references.
        referenced = {Path(f[3]).name for f in meta["files"] + previous["files"]}
        for d in (self.hdir / "state").glob("*.parquet"):
            if d.name not in referenced and int(d.stem) <= batch_id:
                shutil.rmtree(d, ignore_errors=True)
        for f in (self.hdir / "meta").glob("*.json"):
            if int(f.stem) < batch_id - 5:
                f.unlink(missing_ok=True)
        self.last_checkpoint = _dt.datetime.now(_dt.timezone.utc).isoformat()

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
            if ended:
                self.finished.set()
        finally:
            self.latencies.append(time.monotonic() - t0)
            self.latencies = self.latencies[-1000:]

    def _ctx_env(self, meta_cols: dict[str, Column]) -> Env:
        return Env(meta=meta_cols)

    def _source_meta(self) -> dict[str, Column]:
        return {"stream.source.partition": V.to_variant(F.col("partition")),
                "stream.source.offset": V.to_variant(F.col("offset")),
                "stream.source.ts": V.to_variant(F.col("source_ts")),
                "stream.source.type": V.lit_value(self.source_type)}

    def _batch(self, bdf: DataFrame, batch_id: int) -> bool:
        meta = self._load(batch_id)
        ts = TimeState.from_json(meta["time"])
        counters = dict(meta["counters"])
        if self.partitions_fn is not None:
            # shards drained and closed by resharding stop being watermark partitions
            self.partitions = self.partitions_fn(meta.get("positions", {}))
            for gone in set(ts.partitions) - set(self.partitions):
                del ts.partitions[gone]
        ts.ensure(self.partitions)
        s = self.p.source
        env = self._ctx_env(self._source_meta())

        from .runtime.parse import NOT_JSON, parse

        bdf = parse(bdf, F.col("kind") == DATA)
        src = bdf.withColumn("_err", F.when((F.col("kind") == DATA) & F.col("doc").isNull(),
                                            F.coalesce(F.col("error"), F.lit(NOT_JSON))))
        src = src.withColumn("_op", F.when(F.col("_err").isNotNull(), F.lit("$source")).cast("string"))
        if s.time_field is not None:
            if self._time_field is None:  # compiled once: building big Column trees costs py4j calls
                from .expr import compile_expression

                self._time_field = compile_expression(s.time_field, env.ctx(where="$source.timeField"))
            c = self._time_field
            # the value (and error) once per row, as columns the checks below read
            src = src.withColumns({"_tv": c.value, "_tve": c.error if c.error is not None
                                   else F.lit(None).cast("string")})
            tv = F.col("_tv")
            et = V.as_timestamp(tv)
            not_date = F.when(et.isNull(), F.concat(
                F.lit("$source.timeField did not evaluate to a date; found "), V.type_name(tv)))
            terr = F.coalesce(F.concat(F.lit("timeField: "), F.col("_tve")), not_date)
            ok = F.col("_err").isNull() & (F.col("kind") == DATA)
            src = src.withColumns({"_et": F.when(ok, et),
                                   "_op": F.when(ok & terr.isNotNull(), F.lit("$source")).otherwise(F.col("_op")),
                                   "_err": F.when(ok, terr).otherwise(F.col("_err"))}).drop("_tv", "_tve")
        else:
            src = src.withColumn("_et", F.col("source_ts"))
        good = F.col("_err").isNull() & (F.col("kind") == DATA)
        src = src.withColumns({
            "_et": F.when(good, _ms(F.col("_et"))),
            "_arr": _ms(F.col("arrival")),
            "doc": F.when(good, V.set_fields(F.col("doc"), {s.ts_field_name: V.to_variant(F.col("_et"))}))
                    .otherwise(F.col("doc")),
        }).persist()
        try:
            return self._batch_body(src, batch_id, meta, ts, counters, env)
        finally:
            src.unpersist()

    def _batch_body(self, src: DataFrame, batch_id: int, meta: dict, ts: TimeState, counters: dict,
                    env: Env) -> bool:
        stats = src.groupBy("partition").agg(
            F.max(F.when(F.col("kind") == DATA, F.col("_et"))).alias("maxet"),
            F.max(F.when(F.col("kind") == DATA, F.col("_arr"))).alias("maxarr"),
            F.max("_arr").alias("anyarr"),
            F.max("kind").alias("maxkind"),
            F.sum(F.when(F.col("kind") == DATA, 1).otherwise(0)).alias("n"),
            F.sum(F.when(F.col("kind") == DATA, F.length("raw")).otherwise(0)).alias("bytes"),
            F.max(F.when(F.col("kind") == DATA, F.col("offset"))).alias("maxoff"),
        ).collect()
        positions = dict(meta.get("positions", {}))
        for r in stats:
            if r["maxoff"] is not None:
                positions[r["partition"]] = max(positions.get(r["partition"], 0), r["maxoff"] + 1)
        now = max((r["anyarr"] for r in stats if r["anyarr"] is not None), default=ts.clock or 0)
        ended = any(r["maxkind"] == END for r in stats)
        n_in = sum(r["n"] or 0 for r in stats)
        counters["input"] += n_in
        counters["inputBytes"] += sum(r["bytes"] or 0 for r in stats)
        counters["batches"] += 1
        w = self.w
        windows = dict(meta["windows"])      # "start|end|key" -> count, open windows holding docs
        sessions = {k: [list(x) for x in v] for k, v in meta["sessions"].items()}  # key -> [[first,last]]
        files = list(meta["files"])           # [[batch, max_et, max_arr, path]]
        ctx = _BatchCtx(self, src.sparkSession, batch_id, now, windows, sessions, files)

        if w is not None:
            ctx.fire_timers(ts, strict=True)
            if w.boundary == "processingTime":
                ctx.close_processing(now)
        w_prev = ts.watermark

        data = src.filter(F.col("kind") == DATA)
        work = apply_stages(data, self.p.before, env)
        if w is None:
            ctx.add_rows(work)
        else:
            ctx.add_to_windows(work, w_prev, ts)

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
                ctx.close_event_time(ts)
                ctx.fire_timers(ts, strict=False)
            elif ended:
                ctx.close_processing(PLUS_INF)
            ctx.gc(ts)
        res = self._write(ctx, meta.get("jsonl_size"))
        if self.o.fault:
            self.o.fault(batch_id, "after_sink")
        counters["output"] += res["output"]
        counters["dlq"] += res["dlq"]
        counters["late"] += res["late"]
        jsonl_size = res["jsonl_size"]
        new_meta = {"time": ts.to_json(), "windows": windows, "sessions": sessions, "files": ctx.files,
                    "counters": counters, "jsonl_size": jsonl_size, "positions": positions,
                    "holdingBack": ts.holding_back(now, pit)}
        self._save(batch_id, new_meta, meta)
        with self._lock:
            self.time = ts
            self.positions = positions
            self.counters = counters
            self.holding_back = new_meta["holdingBack"]
        if self.o.on_batch:
            self.o.on_batch(batch_id, ts.clock, ts.watermark)
        if self.o.on_dlq and res.get("dlqDocs"):
            self.o.on_dlq(res["dlqDocs"])
        if self.o.on_output and res.get("outputs"):
            self.o.on_output(res["outputs"])
        return ended

    # ------------------------------------------------------------------ sinks
    def _write(self, ctx: "_BatchCtx", jsonl_size: int | None) -> dict:
        """Write the batch's outputs and DLQ entries from an executor (:mod:`.runtime.sinks`)."""
        from .runtime.records import BatchInfo
        from .runtime.sinks import SinkPlan, write_batch

        collect = bool(self.o.on_output or self.o.on_dlq)
        if not ctx.pieces:
            return {"output": 0, "dlq": 0, "late": 0, "jsonl_size": jsonl_size}
        info = BatchInfo(name=self.o.name, source_type=self.source_type, multi_partition=len(self.partitions) > 1,
                         now=ctx.now, stream_meta=self.p.options.stream_meta, add_ids=self.p.sink is not None)
        plan = SinkPlan(self.o.registry, self.p.sink, self.p.options.dlq)
        records = ctx.pieces[0]
        for piece in ctx.pieces[1:]:
            records = records.unionByName(piece)
        res = write_batch(records, plan, info, jsonl_size, collect)
        if res.get("error"):
            raise ProcessorFailed(f"processor {self.o.name!r}: {res['error']}")
        return res

    # ------------------------------------------------------------------ stats
    def stats(self, verbose: bool = False) -> dict:
        with self._lock:
            ts = self.time
            lat = sorted(self.latencies)
            pit = self.p.source.partition_idle_timeout.ms if self.p.source.partition_idle_timeout else None
            parts = []
            for p in sorted(ts.partitions):
                st = ts.partitions[p]
                parts.append({"partition": p,
                              "position": self.positions.get(p),
                              "watermark": _fmt(st.max_event),
                              "lastArrival": _fmt(st.last_arrival),
                              "idle": ts.idle(p, ts.clock, pit) if ts.clock is not None else False})
            out = {
                "name": self.o.name,
                "status": "FAILED" if self.error else ("STOPPED" if self.finished.is_set() else "STARTED"),
                "inputMessageCount": self.counters["input"],
                "inputMessageSize": self.counters["inputBytes"],
                "outputMessageCount": self.counters["output"],
                "dlqMessageCount": self.counters["dlq"],
                "lateMessageCount": self.counters["late"],
                "batches": self.counters["batches"],
                "stateSize": sum(f.stat().st_size for f in (self.hdir / "state").rglob("*") if f.is_file()),
                "watermark": _fmt(ts.watermark),
                "watermarkHeldBackBy": ts.holding_back(ts.clock, pit),
                "partitions": parts,
                "latency": {"p50": _pct(lat, 0.5), "p99": _pct(lat, 0.99), "unit": "seconds per micro-batch"},
                "lastCheckpoint": self.last_checkpoint,
            }
            if self.error:
                out["error"] = str(self.error)
            return out


def _fmt(ms: int | None) -> str | None:
    if ms is None:
        return None
    if ms >= PLUS_INF:
        return "+infinity"
    return ejson.format_date(_ts(ms))


def _pct(values: list[float], p: float) -> float | None:
    if not values:
        return None
    return round(values[min(len(values) - 1, int(p * len(values)))], 4)


class _BatchCtx:
    """One micro-batch's working set: the window registry and what the batch writes.

    What the batch writes accumulates as frames of record rows (``pieces``, see
    :mod:`.runtime.records`), written in one job at the end of the batch; nothing is collected.
    """

    def __init__(self, proc: Processor, spark, batch_id: int, now: int, windows: dict, sessions: dict,
                 files: list):
        self.proc, self.spark, self.batch_id, self.now = proc, spark, batch_id, now
        self.windows, self.sessions, self.files = windows, sessions, files
        self.pieces: list[DataFrame] = []
        self.w: WindowSpec = proc.w  # type: ignore[assignment]
        self.name = proc.o.name

    # ---------------------------------------------------------------- records
    def _piece(self, df: DataFrame, cols: dict[str, Column]) -> None:
        """Add rows to what the batch writes: ``cols`` over ``df``, the rest NULL, in order of step."""
        from .runtime.records import RECORD_SCHEMA

        types = dict(c.split(" ", 1) for c in RECORD_SCHEMA.split(", "))
        cols = {"_ph": F.lit(len(self.pieces)), **cols}
        self.pieces.append(df.select(*[(cols[c] if c in cols else F.lit(None)).cast(t).alias(c)
                                       for c, t in types.items()]))

    def add_rows(self, df: DataFrame) -> None:
        """Stage outputs and failures (outside windows), in the batch's row order."""
        self._piece(df, {"_o1": F.monotonically_increasing_id(), "partition": F.col("partition"),
                         "offset": F.col("offset"), "_arr": F.col("_arr"), "doc": F.col("doc"),
                         "raw": F.col("raw"), "_err": F.col("_err"), "_op": F.col("_op")})

    # ---------------------------------------------------------------- windows
    def _wkey(self, start: int, end: int, key: str) -> str:
        return f"{start}|{end}|{key}"

    def add_to_windows(self, work: DataFrame, w_prev: int | None, ts: TimeState) -> None:
        w = self.w
        self.add_rows(work.filter(F.col("_err").isNotNull()))
        good = work.filter(F.col("_err").isNull())
        proc_time = w.boundary == "processingTime"
        t = F.col("_arr") if proc_time else F.col("_et")
        if w.kind == "session":
            from .expr import compile_expression

            c = compile_expression(w.partition_by, Env(meta=self.proc._source_meta()).ctx(
                where=f"{w.name}.partitionBy"))
            key = F.coalesce(F.to_json(c.value), F.lit("null"))
            good = good.withColumn("_key", key)
        else:
            good = good.withColumn("_key", F.lit(""))
        order = Window.orderBy("_arr", "partition", "offset")
        good = good.withColumn("_t", t).withColumn(
            "_seq", F.row_number().over(order) + F.lit(self.batch_id * (1 << 32)))
        late_seqs: set[int] = set()
        lat = w.allowed_lateness_ms
        if w_prev is not None and not proc_time:
            if w.kind == "session":
                cand = good.filter(F.col("_t") + F.lit(w.gap.ms) <= F.lit(w_prev - lat)) \
                    .select("_seq", "_key", "_t").collect()
                for r in cand:
                    joins = any(first - w.gap.ms < r["_t"] < last + w.gap.ms
                                for first, last in self.sessions.get(r["_key"], []))
                    if not joins:
                        late_seqs.add(r["_seq"])
                late = good.filter(F.col("_seq").isin(list(late_seqs))) if late_seqs else None
            else:
                iv, hop = w.interval.ms, (w.hop or w.interval).ms
                last_end = F.floor((F.col("_t") - F.lit(w.offset_ms)) / F.lit(hop)) * F.lit(hop) + \
                    F.lit(w.offset_ms + iv)
                good = good.withColumn("_late", last_end <= F.lit(w_prev - lat))
                late = good.filter("_late")
            if late is not None:
                missed = F.array(F.col("_t")) if w.kind == "session" else self._starts_col(F.col("_t"))
                self._piece(late, {"_o1": F.monotonically_increasing_id(), "partition": F.col("partition"),
                                   "offset": F.col("offset"), "_arr": F.col("_arr"), "doc": F.col("doc"),
                                   "_op": F.lit(w.name), "_missed": missed})
                good = good.filter(~F.col("_late")) if w.kind != "session" else \
                    good.filter(~F.col("_seq").isin(list(late_seqs)))
        keep = good.select("partition", F.col("offset").cast("long").alias("offset"),
                           F.col("_arr").cast("long").alias("_arr"), F.col("_et").cast("long").alias("_et"),
                           F.col("_t").cast("long").alias("_t"), F.col("_key").cast("string").alias("_key"),
                           F.col("_seq").cast("long").alias("_seq"), "doc")
        path = self.proc.hdir / "state" / f"{self.batch_id}.parquet"
        keep.write.mode("overwrite").parquet(str(path))
        summary = self.spark.read.parquet(str(path))
        if w.kind == "session":
            rows = summary.groupBy("_key").agg(F.sort_array(F.collect_set("_t")).alias("ts"),
                                               F.max("_t").alias("mx"), F.max("_arr").alias("ma")).collect()
            if not rows:
                shutil.rmtree(path, ignore_errors=True)
                return
            for r in rows:
                self._merge_sessions(r["_key"], r["ts"])
            self.files.append([self.batch_id, max(r["mx"] for r in rows), max(r["ma"] for r in rows), str(path)])
            return
        iv, hop = w.interval.ms, (w.hop or w.interval).ms
        starts = self._starts_col(F.col("_t"))
        if w_prev is not None and not proc_time:
            # a document joins only the windows still open (a hopping document may miss some)
            starts = F.filter(starts, lambda x: x + F.lit(iv) > F.lit(w_prev - lat))
        rows = summary.select(F.explode_outer(starts).alias("s"), "_t", "_arr").groupBy("s").agg(
            F.count(F.lit(1)).alias("count"), F.max("_t").alias("mt"), F.max("_arr").alias("ma")).collect()
        if not rows:
            shutil.rmtree(path, ignore_errors=True)
            return
        for r in rows:
            if r["s"] is not None:
                k = self._wkey(r["s"], r["s"] + iv, "")
                self.windows[k] = self.windows.get(k, 0) + r["count"]
        self.files.append([self.batch_id, max(r["mt"] for r in rows), max(r["ma"] for r in rows), str(path)])

    def _starts_col(self, t: Column) -> Column:
        w = self.w
        iv, hop, off = w.interval.ms, (w.hop or w.interval).ms, w.offset_ms
        last = F.floor((t - F.lit(off)) / F.lit(hop)) * F.lit(hop) + F.lit(off)
        n = math.ceil(iv / hop)
        seq = F.sequence(last - F.lit((n - 1) * hop), last, F.lit(hop))
        return F.filter(seq, lambda s: s > t - F.lit(iv))

    def _merge_sessions(self, key: str, times: list[int]) -> None:
        gap = self.w.gap.ms
        ss = [list(x) for x in self.sessions.get(key, [])]
        for t in times:
            ss.append([t, t])
        ss.sort()
        merged: list[list[int]] = []
        for first, last in ss:
            if merged and first - merged[-1][1] < gap:
                merged[-1][1] = max(merged[-1][1], last)
            else:
                merged.append([first, last])
        self.sessions[key] = merged

    def _open(self) -> list[tuple[int, int, str]]:
        """Open windows holding documents, as (start, end, key)."""
        if self.w.kind == "session":
            return [(f, l + self.w.gap.ms, k) for k, ss in self.sessions.items() for f, l in ss]
        out = []
        for k in self.windows:
            s, e, key = k.split("|", 2)
            out.append((int(s), int(e), key))
        return out

    def close_event_time(self, ts: TimeState) -> None:
        if ts.watermark is None:
            return
        frontier = ts.watermark - self.w.allowed_lateness_ms if ts.watermark < PLUS_INF else PLUS_INF
        closing = sorted((e, s, k) for s, e, k in self._open() if e <= frontier)
        if closing:
            self.emit([(s, e, k) for e, s, k in closing])

    def close_processing(self, now: int) -> None:
        closing = sorted((e, s, k) for s, e, k in self._open() if e <= now)
        if closing:
            self.emit([(s, e, k) for e, s, k in closing])

    def fire_timers(self, ts: TimeState, strict: bool) -> None:
        w = self.w
        if w.idle_timeout is None or w.boundary != "eventTime":
            return
        while True:
            opens = self._open()
            if not opens:
                return
            e = min(x[1] for x in opens)
            due = idle_timer_due(e, ts.last, w.idle_timeout.ms)
            if due is None or (due >= self.now if strict else due > self.now):
                return
            ts.raise_to(e + w.allowed_lateness_ms)
            self.close_event_time(ts)

    def emit(self, closing: list[tuple[int, int, str]]) -> None:
        """Run the inner pipeline over the documents of the closing windows, in order."""
        w = self.w
        live = [f for f in self.files if Path(f[3]).exists()]
        for s, e, k in closing:
            if w.kind == "session":
                self.sessions[k] = [x for x in self.sessions.get(k, []) if not (x[0] == s and x[1] + w.gap.ms == e)]
                if not self.sessions[k]:
                    del self.sessions[k]
            else:
                self.windows.pop(self._wkey(s, e, k), None)
        if not live:
            return
        docs = self.spark.read.parquet(*[f[3] for f in live])
        if w.kind == "session":
            sess = self.spark.createDataFrame([(k, s, e - w.gap.ms, e) for s, e, k in closing],
                                              "k string, s bigint, l bigint, e bigint")
            j = docs.join(F.broadcast(sess), (docs["_key"] == sess["k"]) & (docs["_t"] >= sess["s"]) &
                          (docs["_t"] <= sess["l"]))
            j = j.withColumn("_ws", F.col("s")).withColumn("_we", F.col("e"))
        else:
            iv = w.interval.ms
            starts = sorted({s for s, _, _ in closing})
            j = docs.withColumn("_ws", F.explode(self._starts_col(F.col("_t")))) \
                .filter(F.col("_ws").isin(starts)).withColumn("_we", F.col("_ws") + F.lit(iv))
        framed = j.select(
            F.struct(F.timestamp_millis(F.col("_ws")).alias("start"), F.timestamp_millis(F.col("_we")).alias("end"),
                     F.col("_key").alias("key")).alias("_w"),
            F.col("_seq"), F.col("doc"), F.lit(None).cast("string").alias("_err"),
            F.lit(None).cast("string").alias("_op"), F.col("_ws"), F.col("_we"), F.col("_key"))
        out = run_window_pipeline(framed, w, self.proc.p.after)
        ws, we = F.unix_millis(F.col("_w.start")), F.unix_millis(F.col("_w.end"))
        self._piece(out, {"_o1": we, "_o2": ws, "_o3": F.col("_w.key"), "_o4": F.col("_seq"), "_arr": we,
                          "doc": F.col("doc"), "_err": F.col("_err"), "_op": F.col("_op"), "_ws": ws, "_we": we,
                          "_wk": F.col("_w.key"), "_seq": F.col("_seq")})

    def gc(self, ts: TimeState) -> None:
        w = self.w
        keep = []
        for f in self.files:
            _, max_et, max_arr, path = f
            if w.boundary == "processingTime":
                dead = ts.clock is not None and last_window_end(max_arr, w.interval.ms, (w.hop or w.interval).ms,
                                                                w.offset_ms) <= ts.clock
            elif w.kind == "session":
                firsts = [x[0] for ss in self.sessions.values() for x in ss]
                dead = not firsts or min(firsts) > max_et
            else:
                dead = ts.watermark is not None and last_window_end(
                    max_et, w.interval.ms, (w.hop or w.interval).ms, w.offset_ms) <= \
                    ts.watermark - w.allowed_lateness_ms
            if not dead:
                keep.append(f)
        self.files = keep


def run_window_pipeline(df: DataFrame, w: WindowSpec, after) -> DataFrame:
    """The window's inner pipeline, then the stateless stages after the window."""
    meta = {"stream.window.start": V.to_variant(F.col("_w.start")),
            "stream.window.end": V.to_variant(F.col("_w.end"))}
    env = Env(meta=meta)
    for st in w.pipeline:
        if st.name in ("$group", "$sort", "$limit", "$count"):
            from . import window_stages as WS
        if st.name == "$group":
            df = WS.apply_group(df, st.arg, lambda root: env.ctx(root))
        elif st.name == "$sort":
            df = WS.apply_sort(df, st.arg)
        elif st.name == "$limit":
            df = WS.apply_limit(df, st.arg)
        elif st.name == "$count":
            df = WS.apply_count(df, st.arg)
        else:
            df = apply_stages(df, [st], env)
    return apply_stages(df, after, env)
