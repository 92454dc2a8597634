"""The two-pass micro-batch: the prepared source rows persisted, their statistics computed in a
job of their own (:func:`.batch_stats.batch_stats`), then steps 3-7 of
:mod:`headrace.spark.engine` compiled with what they found (the batch's facts, arrival order,
``T``). Every batch can run this way; a windowed batch of a steady stream runs in one pass where
:mod:`.one_pass` applies and stands.
"""
from __future__ import annotations

from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from ...mql.doc_facts import DocFacts
from ..sources import DATA
from ..values.facts import batch_facts
from .batch import BatchWork
from .batch_stats import batch_stats
from .prepare import prepare
from .state import EngineState


def run(proc: Any, bdf: DataFrame, batch_id: int, prev: EngineState, st: EngineState, env,
        phased: bool = False) -> bool:
    """The batch ``bdf`` of ``proc`` (a :class:`~headrace.spark.engine.Processor`): whether the
    input ended. ``phased``: the ``after_dedup`` phase was passed already (by a one-pass attempt)."""
    # rows the timeField's fast path did not read take the generic expression (prepare.py):
    # from the start when the previous batch had some, else once the statistics find some
    fixed = proc._slow_seen
    slow = proc._slow_steps is not None
    src = (prepare(bdf, proc._slow_steps) if fixed else bdf).persist()
    try:
        stats = batch_stats(src, proc._typed, slow)
        proc._slow_seen = slow and any(r["slow"] for r in stats)
        if proc._slow_seen and not fixed:
            done = prepare(src, proc._slow_steps).persist()
            src.unpersist()
            src = done
            stats = batch_stats(src, proc._typed, slow)
        with env.active():
            return _body(proc, src, stats, batch_id, prev, st, env, phased)
    finally:
        src.unpersist()


def _body(proc: Any, src: DataFrame, stats: list, batch_id: int, prev: EngineState, st: EngineState,
          env, phased: bool) -> bool:
    """Steps 3-7 over the persisted rows ``src`` and their statistics ``stats``."""
    ts = st.time
    # what every document of the batch holds at a path: the typed fast path (values.facts)
    doc_facts = DocFacts.from_schemas([r["schema"] for r in stats]) if proc._typed else None
    now, ended, n_in = proc._account(stats, st)
    proc._codegen.set(src.sparkSession, n_in)
    w, p = proc.w, proc.p
    work = BatchWork(src.sparkSession, batch_id, now, st, w, p.after, env, proc.checkpoints)

    if w is not None:
        work.fire_timers(ts, strict=True)
        if w.boundary == "processingTime":
            work.close_processing(now)
    w_prev = ts.watermark

    if proc.dedup is not None:    # $source.dedup: duplicates dropped before the stages (dedup.py)
        src = proc.dedup.apply(src, batch_id, w_prev, st.counters, env)
    if not phased:
        proc._phase("after_dedup", batch_id)
    if n_in:       # a batch without records (ticks, end of input, nothing new) has no stage work
        rows = src.filter(F.col("kind") == DATA)
        if w is not None:
            spans = [(r["maxarr"] if r["minarr"] == r["maxarr"] else None, r["partition"], r["minoff"],
                      r["maxoff"]) for r in stats if r["n"]]
            rows, with_seq = work.arrival_seq(rows, n_in, p.before, spans)
        with batch_facts(doc_facts):
            data = proc._stages(rows, env)
            if w is None:
                work.add_rows(data)
            else:
                if doc_facts is not None:
                    work.fields = proc._window_fields
                min_et = min((r["minet"] for r in stats if r["minet"] is not None), default=None)
                work.add_to_windows(data, w_prev, with_seq, min_et)
    proc.history.add(doc_facts, n_in)
    return proc._conclude(work, stats, st, prev, now, ended)
