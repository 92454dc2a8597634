"""One micro-batch's work: what it writes, and the window rules of time-semantics.md.

:class:`BatchWork` gathers what a batch writes as frames of record rows (``pieces``, see
:mod:`.records`), written in one job at the end of the batch (:mod:`.sinks`); nothing is
collected to the driver here but per-window counts and bounds. With a window stage it applies
the spec's rules: late documents (judged against ``W`` after the previous batch) to the DLQ,
on-time ones into the window state, windows closing once ``W - allowedLateness`` passes their
end (in order of end, then start), idle-timeout timers, processing-time windows.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable

from pyspark.sql import Column, DataFrame, Observation, Window
from pyspark.sql import functions as F

from ...spec import defaults
from ...spec.model import WindowSpec
from ...timing import PLUS_INF, TimeState, idle_timer_due, last_window_end
from ..stages import Env
from ..windows import Window3, window_kind
from ..windows import partial as P
from ..windows.pipeline import run_window_pipeline
from .params import FRONTIER, long_param
from .records import RECORD_SCHEMA
from .state import Checkpoint, EngineState, StateFile, start_bounds

_TYPES = dict(c.split(" ", 1) for c in RECORD_SCHEMA.split(", "))
_NULLS: dict[str, Column] = {}      # the typed NULL of each record column, built once (py4j calls)


def _null(c: str) -> Column:
    if c not in _NULLS:
        _NULLS[c] = F.lit(None).cast(_TYPES[c]).alias(c)
    return _NULLS[c]


def seq_bases(spans: list, batch_id: int) -> dict[str, int] | None:
    """``_seq - offset`` per partition when each partition's rows of the batch arrived at one
    instant: ``spans`` is ``[(arrival, partition, first offset, last offset), ...]`` (an
    arrival of None: not one instant). Partitions in order of (arrival, name), each taking the
    numbers after the previous one's, from ``batch_id << 32`` + 1 as :meth:`BatchWork.seq_column`;
    None when an arrival varies or the offsets span ``2**31`` numbers or more."""
    if any(a is None for a, _, _, _ in spans):
        return None
    out, nxt = {}, 1
    for _, p, lo, hi in sorted(spans, key=lambda s: (s[0], s[1])):
        out[p] = batch_id * (1 << 32) + nxt - lo
        nxt += hi - lo + 1
    return out if nxt < (1 << 31) else None


class BatchWork:
    def __init__(self, spark, batch_id: int, now: int, st: EngineState, window: WindowSpec | None,
                 after: tuple, env: Env, checkpoint: Checkpoint, one_pass: bool = False):
        self.spark, self.batch_id, self.now, self.st = spark, batch_id, now, st
        # the batch's source rows are not persisted (:mod:`.one_pass`): a step that would read them
        # again in the sink's job is kept only when it has rows, and compaction waits for settle()
        self.one_pass = one_pass
        self._late: tuple | None = None      # one pass: (count, step, rows, columns) of the late rows
        self.w, self.after, self.env, self.ckpt = window, after, env, checkpoint
        self.kind = window_kind(window) if window is not None else None
        # a window whose inner pipeline starts with a decomposable $group keeps partial aggregates
        self.partial = P.partial_plan(window) if window is not None else None
        self.pieces: list[DataFrame | None] = []     # None: a step kept for rows that did not come
        # the fields of the windows' documents still the source's, when a partial window may
        # read them with the batch's facts (values.facts); set by the engine
        self.fields = None
        # a window that emits its documents themselves keeps their raw text: the sink orders
        # their fields by it (headrace.mql.field_order)
        self.keep_raw = window is not None and not any(st.name in ("$group", "$count") for st in window.pipeline)

    # ---------------------------------------------------------------- what the batch writes
    def _piece(self, df: DataFrame, cols: dict[str, Column], step: int | None = None) -> None:
        """Add rows to what the batch writes: ``cols`` over ``df``, the rest NULL, in order of step
        (``step``: a place kept earlier by :meth:`_keep_step`)."""
        cols = {"_ph": F.lit(len(self.pieces) if step is None else step), **cols}
        frame = df.select(*[cols[c].cast(t).alias(c) if c in cols else _null(c) for c, t in _TYPES.items()])
        if step is None:
            self.pieces.append(frame)
        else:
            self.pieces[step] = frame

    def _keep_step(self) -> int:
        """A place among the batch's steps for rows added later (``None`` in :attr:`pieces` until then)."""
        self.pieces.append(None)
        return len(self.pieces) - 1

    def add_rows(self, df: DataFrame, step: int | None = None) -> None:
        """Stage outputs and failures (outside windows), in the batch's row order. A failure's
        DLQ entry carries the original document (``_orig``), not the partly transformed one."""
        doc = F.when(F.col("_err").isNotNull(), F.col("_orig")).otherwise(F.col("doc"))
        self._piece(df, {"_o1": F.monotonically_increasing_id(), "partition": F.col("partition"),
                         "offset": F.col("offset"), "_arr": F.col("_arr"), "doc": doc,
                         "raw": F.col("raw"), "_err": F.col("_err"), "_op": F.col("_op")}, step)

    # ---------------------------------------------------------------- documents into windows
    def seq_column(self) -> Column:
        """``_seq`` over the batch's source rows: their arrival order (``_arr``, ``partition``,
        ``offset``) as a number above every earlier batch's (a window over the whole batch)."""
        order = Window.orderBy("_arr", "partition", "offset")
        return (F.row_number().over(order) + long_param(self.batch_id * (1 << 32))).cast("long")

    def arrival_seq(self, rows: DataFrame, n_rows: int, before: tuple,
                    spans: list | None = None) -> tuple[DataFrame, Callable]:
        """Arrival order for the windows: ``rows`` (the batch's source rows), and what
        :meth:`add_to_windows` applies to the stages' on-time output to give it ``_seq``.

        ``spans``: per watermark partition with data, ``(arrival, partition, first offset, last
        offset)`` from the batch's statistics. When every partition's rows arrived at one instant
        (a file's batch; not a stream's shards, whose records keep their append instants), arrival
        order is (that instant, partition, offset), so ``_seq`` is a base per partition plus the
        offset (:func:`seq_bases`): no job, no shuffle, and for contiguous offsets the very
        numbers of :meth:`seq_column`. Else a batch of at least ``SEQ_BROADCAST_MIN_ROWS`` rows
        numbers only ``(partition, offset, _arr)`` in the one-partition window and joins them back
        by broadcast, so the documents stay in their partitions (PROFILE.md); a smaller one
        numbers ``rows`` in place (no extra job); the numbers are the same either way. With
        ``$unwind`` among the stages ``before`` the window (several documents of one source row)
        the stages' output is numbered itself."""
        if any(st.name == "$unwind" for st in before):
            return rows, lambda good: good.withColumn("_seq", self.seq_column())
        bases = seq_bases(spans, self.batch_id) if spans and defaults.SEQ_FROM_OFFSETS else None
        if bases is not None:
            names = F.array(*[F.lit(p) for p in bases]).cast("array<string>")
            firsts = F.array(*[F.lit(b) for b in bases.values()]).cast("array<bigint>")
            seq = F.element_at(firsts, F.array_position(names, F.col("partition")).cast("int")) + F.col("offset")
            return rows.withColumn("_seq", seq.cast("long")), lambda good: good
        if n_rows < defaults.SEQ_BROADCAST_MIN_ROWS:
            return rows.withColumn("_seq", self.seq_column()), lambda good: good
        seqs = F.broadcast(rows.select("partition", "offset", "_arr").select(
            "partition", "offset", self.seq_column().alias("_seq")))
        return rows, lambda good: good.join(seqs, ["partition", "offset"])

    def add_to_windows(self, work: DataFrame, w_prev: int | None, with_seq: Callable,
                       min_t: int | None = None) -> None:
        """The stages' output ``work`` into the windows; ``with_seq`` from :meth:`arrival_seq`.
        ``min_t``: the smallest event time of the batch's source rows (None: not known), which
        the stages before the window do not change; when no row can be late against it
        (:meth:`..windows.kind.WindowKind.none_late`), no late rows are looked for.

        The stages' failed rows go to the DLQ ahead of the late ones; the job that writes the
        on-time rows into the state also counts them, and only when there are some does the
        batch's sink job evaluate the stages again to find them."""
        failed_step = self._keep_step()
        failed = Observation()
        self._add_on_time(work.observe(failed, F.count(F.when(F.col("_err").isNotNull(), 1)).alias("n")),
                          w_prev, with_seq, min_t)
        if failed.get["n"]:
            self.add_rows(work.filter(F.col("_err").isNotNull()), failed_step)

    def _add_on_time(self, work: DataFrame, w_prev: int | None, with_seq: Callable, min_t: int | None) -> None:
        """:meth:`add_to_windows` without the failed rows: the late ones to the DLQ, the others
        into the window state (one job)."""
        w, kind = self.w, self.kind
        proc_time = w.boundary == "processingTime"
        good = work.filter(F.col("_err").isNull()).withColumn("_key", kind.key(self.env))
        good = with_seq(good.withColumn("_t", F.col("_arr") if proc_time else F.col("_et")))
        frontier = None
        if w_prev is not None and not proc_time:
            frontier = w_prev - w.allowed_lateness_ms
            good = good.withColumn(FRONTIER, long_param(frontier))
            late, counted = None, None
            if min_t is None or not kind.none_late(min_t, frontier):
                if self.one_pass:       # counted by the job that writes the on-time rows
                    counted = Observation()
                    good = good.observe(counted, F.count(F.when(kind.is_late(frontier), 1)).alias("n"))
                late, good = kind.late(good, frontier, self.st)
            if late is not None:
                cols = {"_o1": F.monotonically_increasing_id(), "partition": F.col("partition"),
                        "offset": F.col("offset"), "_arr": F.col("_arr"), "doc": F.col("doc"),
                        "raw": F.col("raw"), "_op": F.lit(w.name), "_missed": kind.missed()}
                if counted is None:
                    self._piece(late, cols)
                else:
                    self._late = (counted, self._keep_step(), late, cols)
        if self.partial is not None:
            self._add_partial(good, frontier)
            return
        keep = good.select("partition", F.col("offset").cast("long").alias("offset"),
                           F.col("_arr").cast("long").alias("_arr"), F.col("_et").cast("long").alias("_et"),
                           F.col("_t").cast("long").alias("_t"), F.col("_key").cast("string").alias("_key"),
                           F.col("_seq").cast("long").alias("_seq"), "doc", *(["raw"] if self.keep_raw else []),
                           *([FRONTIER] if frontier is not None else []))
        path = self.ckpt.state_path(self.batch_id)
        obs = Observation()     # what the windows need of these documents, gathered by the write job
        keep.observe(obs, F.count(F.lit(1)).alias("n"), F.max("_t").alias("mt"), F.max("_arr").alias("ma"),
                     *kind.observe(frontier)).drop(FRONTIER).write.mode("overwrite").parquet(str(path))
        seen = obs.get
        if not seen["n"]:
            import shutil

            shutil.rmtree(path, ignore_errors=True)
            return
        kind.register(seen, self.st)
        self.st.files.append(StateFile(self.batch_id, seen["mt"], seen["ma"], str(path),
                                       start_bounds(seen.get("starts"))))

    def _add_partial(self, good: DataFrame, frontier: int | None) -> None:
        """The batch's partial rows per (window, group) into the state (:mod:`..windows.partial`)."""
        iv = self.kind.iv
        framed = good.select(F.explode(self.kind.joins(frontier)).alias("_s"), "_seq", "doc",
                             F.col("_t").cast("long").alias("_t"), F.col("_arr").cast("long").alias("_arr"))
        framed = framed.select(F.struct(F.timestamp_millis(F.col("_s")).alias("start"),
                                        F.timestamp_millis(F.col("_s") + F.lit(iv)).alias("end"),
                                        F.lit("").alias("key")).alias("_w"),
                               F.col("_seq").cast("long").alias("_seq"), "doc", "_t", "_arr")
        path = self.ckpt.state_path(self.batch_id)
        obs = Observation()     # the window starts and bounds of these rows, gathered by the write job
        flags = self.partial.flags()
        flagged = F.max(F.coalesce(F.greatest(*[F.col(c) for c in flags]) if len(flags) > 1 else F.col(flags[0]),
                                   F.lit(False))) if flags else F.lit(False)
        P.pre_aggregate(framed, self.partial, self.fields).observe(
            obs, F.collect_set("_ws").alias("starts"), F.max("_tmax").alias("mt"), F.max("_amax").alias("ma"),
            flagged.alias("flagged")
        ).write.mode("overwrite").parquet(str(path))
        seen = obs.get
        if not seen["starts"]:
            import shutil

            shutil.rmtree(path, ignore_errors=True)
            return
        self.kind.register(seen, self.st)
        self.st.files.append(StateFile(self.batch_id, seen["mt"], seen["ma"], str(path),
                                       start_bounds(seen["starts"]), bool(seen["flagged"])))
        if not self.one_pass:
            self._compact()

    def settle(self) -> None:
        """A one-pass batch (:mod:`.one_pass`), once its statistics say the pass stands: the late
        rows' step when the pass counted some, and the compaction :meth:`_add_partial` left."""
        if self._late is not None:
            counted, step, late, cols = self._late
            if counted.get["n"]:
                self._piece(late, cols, step)
        if self.st.files and self.st.files[-1].batch == self.batch_id:   # _add_partial wrote a file
            self._compact()

    def _compact(self) -> None:
        """Merge the live state files into one when there are more than ``COMPACT_AFTER``."""
        live = [f for f in self.st.files if Path(f.path).exists()]
        if len(live) <= P.COMPACT_AFTER:
            return
        opens = sorted({s for s, _, _ in self.kind.open(self.st)})
        rows = P.in_windows(self.ckpt.read_state(self.spark, [f.path for f in live]), opens)
        path = self.ckpt.state_path(self.batch_id, "c")
        P.merge(rows, self.partial).write.mode("overwrite").parquet(str(path))
        known = [f.starts for f in live]
        bounds = None if None in known else start_bounds([s for b in known for s in b])
        self.st.files = [StateFile(self.batch_id, max(f.max_t for f in live), max(f.max_arrival for f in live),
                                   str(path), bounds, any(f.flagged for f in live))]

    # ---------------------------------------------------------------- closing
    def close_event_time(self, ts: TimeState) -> None:
        if ts.watermark is None:
            return
        frontier = ts.watermark - self.w.allowed_lateness_ms if ts.watermark < PLUS_INF else PLUS_INF
        self._close([x for x in self.kind.open(self.st) if x[1] <= frontier])

    def close_processing(self, now: int) -> None:
        self._close([x for x in self.kind.open(self.st) if x[1] <= now])

    def fire_timers(self, ts: TimeState, strict: bool) -> None:
        """Idle-timeout timers due before ``now`` (``strict``), or at it."""
        w = self.w
        if w.idle_timeout is None or w.boundary != "eventTime":
            return
        while True:
            opens = self.kind.open(self.st)
            if not opens:
                return
            e = min(x[1] for x in opens)
            due = idle_timer_due(e, ts.last, w.idle_timeout.ms)
            if due is None or (due >= self.now if strict else due > self.now):
                return
            ts.raise_to(e + w.allowed_lateness_ms)
            self.close_event_time(ts)

    def _close(self, closing: list[Window3]) -> None:
        """Run the inner pipeline over the closing windows' documents; emitted in order of end, start."""
        if not closing:
            return
        closing = sorted(closing, key=lambda x: (x[1], x[0], x[2]))
        # only the files that may hold rows of a closing window (their window starts' bounds)
        starts = [s for s, _, _ in closing]
        files = [f for f in self.st.files if f.holds_any(starts) and Path(f.path).exists()]
        live = [f.path for f in files]
        for x in closing:
            self.kind.forget(self.st, x)
        if not live:
            return
        if self.partial is not None:
            rows = P.in_windows(self.ckpt.read_state(self.spark, live), sorted(set(starts)))
            plain = not any(f.flagged for f in files)      # no decimal total to finish: smaller plans
            out = run_window_pipeline(P.finish(rows, self.partial, plain), self.w, self.after,
                                      stages=self.partial.rest, prev=self.w.pipeline[0])
            self._emit(out)
            return
        j = self.kind.frame(self.spark, self.ckpt.read_state(self.spark, live), closing)
        framed = j.select(
            F.struct(F.timestamp_millis(F.col("_ws")).alias("start"), F.timestamp_millis(F.col("_we")).alias("end"),
                     F.col("_key").alias("key")).alias("_w"),
            F.col("_seq"), F.col("doc"), F.lit(None).cast("string").alias("_err"),
            F.lit(None).cast("string").alias("_op"), F.col("_ws"), F.col("_we"), F.col("_key"),
            *([F.col("raw")] if self.keep_raw and "raw" in j.columns else []))
        self._emit(run_window_pipeline(framed, self.w, self.after))

    def _emit(self, out: DataFrame) -> None:
        """What closing windows emit (``_w``, ``_seq``, ``doc``, ``_err``, ``_op``), in order of end, start."""
        ws, we = F.unix_millis(F.col("_w.start")), F.unix_millis(F.col("_w.end"))
        self._piece(out, {"_o1": we, "_o2": ws, "_o3": F.col("_w.key"), "_o4": F.col("_seq"), "_arr": we,
                          "doc": F.col("doc"), "_err": F.col("_err"), "_op": F.col("_op"), "_ws": ws, "_we": we,
                          "_wk": F.col("_w.key"), "_seq": F.col("_seq"),
                          **({"raw": F.col("raw")} if "raw" in out.columns else {})})

    def gc(self, ts: TimeState) -> None:
        """Forget state files that no open window needs any more."""
        w = self.w

        def dead(f: StateFile) -> bool:
            if w.boundary == "processingTime":
                return ts.clock is not None and last_window_end(
                    f.max_arrival, w.interval.ms, (w.hop or w.interval).ms, w.offset_ms) <= ts.clock
            return self.kind.dead(f.max_t, ts, self.st)

        self.st.files = [f for f in self.st.files if not dead(f)]
