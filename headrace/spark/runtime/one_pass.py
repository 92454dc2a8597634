"""The one-pass micro-batch: a windowed batch whose rows are read once, by the job that writes them
into the window state, with its statistics gathered by the same job.

The two-pass batch (:mod:`.two_pass`) persists the prepared source rows, computes their
statistics in a job of their own (:func:`.batch_stats.batch_stats`), then compiles the stages with
the batch's facts and arrival order from those statistics and writes the window state in a second
job. A steady stream does not need the first job to know what the second will find: the batch's
facts are most often the previous batch's, and the arrival order of a file's batch is its
offsets from the partition's position. So, when :func:`applies`, the batch is compiled with the
previous batch's facts and with arrival order from the partition's position, the statistics are
observed (:class:`.batch_stats.ObservedStats`) by the job that writes the window state, and
nothing is persisted: one job and one cache fewer per batch (PROFILE.md).

The pass stands only when the statistics it gathered show that the two-pass batch would have
compiled the same plan (:func:`run`): one watermark partition, every row arrived at one
instant, the smallest offset the partition's position (the same ``_seq`` numbers, from
:func:`.batch.seq_bases`), no row for the ``timeField``'s generic expression, and the batch's
facts answering every question the compiled trees asked as the previous batch's did
(:func:`..values.facts.holds`). Otherwise it is thrown away (its state file is overwritten, the
engine state copy dropped) and the batch runs in two passes: the result is the two-pass batch's
either way, and a changed batch costs one extra pass. The late rows and the stages' failed rows
are read again from the source by the sink's job, so their steps are kept only when the pass
counted some.
"""
from __future__ import annotations

import os
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from ...mql.doc_facts import DocFacts
from ...spec import defaults
from ..sources import DATA
from ..values.facts import batch_facts, holds, recording
from ..windows.partial import partial_plan
from .batch import BatchWork, seq_bases
from .batch_stats import ObservedStats
from .state import EngineState


def enabled() -> bool:
    """``HEADRACE_ONE_PASS=off`` runs every batch in two passes (for comparisons)."""
    return os.environ.get("HEADRACE_ONE_PASS", "on") != "off"


def min_rows() -> int:
    """:data:`~headrace.spec.defaults.ONE_PASS_MIN_ROWS`, or ``HEADRACE_ONE_PASS_MIN_ROWS``."""
    return int(os.environ.get("HEADRACE_ONE_PASS_MIN_ROWS", defaults.ONE_PASS_MIN_ROWS))


class History:
    """What one-pass batches assume of a processor's run: the last batch's facts and data rows,
    and whether those facts were the ones before them (a stream whose facts change from batch to
    batch would pay a second pass for most batches)."""

    def __init__(self) -> None:
        self.facts: DocFacts | None = None
        self.rows = 0
        self.steady = False
        self.off = False      # a pass was refused for its arrival order or partition: never again

    def add(self, facts: DocFacts | None, rows: int) -> None:
        """A batch of ``rows`` data rows with ``facts`` ran (a batch without rows changes nothing)."""
        if rows:
            self.steady = facts is not None and facts == self.facts
            self.facts, self.rows = facts, rows

    def ready(self) -> bool:
        return self.steady and not self.off and self.rows >= min_rows()


def applies(proc: Any, prev: EngineState) -> bool:
    """Whether a batch of ``proc`` (a :class:`~headrace.spark.engine.Processor`) after ``prev`` may
    run in one pass: an event-time tumbling or hopping window kept as partial aggregates, with no
    idle timeout, clock ticks or de-duplication, over one watermark partition with a position;
    the previous batch of this run had :func:`min_rows` data rows and the facts of the batch
    before it (:class:`History`); no ``$unwind`` before the window (its output is numbered
    itself); no ``timeField`` rows for the generic expression in the previous batch."""
    w = proc.w
    if not enabled() or w is None or not proc.history.ready():
        return False
    if w.boundary != "eventTime" or w.idle_timeout or proc._needs_ticks() or proc.dedup is not None:
        return False
    if proc.partitions_fn is not None or len(proc.partitions) != 1 or proc.partitions[0] not in prev.positions:
        return False
    if proc._slow_seen or any(s.name == "$unwind" for s in proc.p.before):
        return False
    return partial_plan(w) is not None


def run(proc: Any, bdf: DataFrame, batch_id: int, prev: EngineState, st: EngineState, env) -> bool | None:
    """The batch in one pass (the caller checked :func:`applies`): whether the input ended, as
    ``Processor._batch``; None when the pass does not stand and the batch must run in two."""
    (part,) = proc.partitions
    facts, rows_before = proc.history.facts, proc.history.rows
    lo = st.positions[part]
    observed = ObservedStats(part, True, proc._slow_steps is not None)
    src = observed.on(bdf)
    proc._codegen.set(src.sparkSession, rows_before)
    work = BatchWork(src.sparkSession, batch_id, st.time.clock or 0, st, proc.w, proc.p.after, env,
                     proc.checkpoints, one_pass=True)
    assumed = [(0, part, lo, lo)]     # one arrival instant, offsets from the position
    rows, with_seq = work.arrival_seq(src.filter(F.col("kind") == DATA), rows_before, proc.p.before, assumed)
    with batch_facts(facts), recording() as asked:
        data = proc._stages(rows, env)
        work.fields = proc._window_fields
        work.add_to_windows(data, st.time.watermark, with_seq, None)
    stats = observed.rows() if observed.done() else None
    why = "statistics" if stats is None else _refused(stats[0], batch_id, part, assumed, asked)
    if why is not None:
        # arrivals or offsets of another form, or rows of another partition, stop one pass for the
        # whole run; changed facts until they are steady again (History.add)
        proc.history.off = proc.history.off or why in ("arrival order", "statistics")
        return None
    work.settle()
    doc_facts = DocFacts.from_schemas([stats[0]["schema"]])
    now, ended, n_in = proc._account(stats, st)
    proc._codegen.set(src.sparkSession, n_in)
    work.now = now
    proc.history.add(doc_facts, n_in)
    return proc._conclude(work, stats, st, prev, now, ended)


def _refused(s: dict, batch_id: int, part: str, assumed: list, asked: list) -> str | None:
    """Why the statistics ``s`` of the pass say that two passes compile another plan, or None."""
    if not s["n"] or s.get("slow"):
        return "rows"
    span = (s["maxarr"] if s["minarr"] == s["maxarr"] else None, part, s["minoff"], s["maxoff"])
    bases = seq_bases(assumed, batch_id)
    if bases is None or seq_bases([span], batch_id) != bases:
        return "arrival order"
    with batch_facts(DocFacts.from_schemas([s["schema"]])):
        return None if holds(asked) else "facts"
