"""Step 2 of a micro-batch: the statistics of its source rows, per watermark partition.

Per partition: the largest event time and arrival of its data rows (``maxet``, ``maxarr``), the
largest arrival of any row, ticks included (``anyarr``), the largest row kind (``maxkind``: end of
input), data rows and their bytes (``n``, ``bytes``), the offsets' and arrivals' bounds
(``minoff``/``maxoff``, ``minarr``), the smallest event time (``minet``), with the typed fast path
the documents' merged schema (``schema``: :mod:`..values.facts`), and with a ``timeField`` fast
path whether rows need its generic expression (``slow``: :mod:`.prepare`).

:func:`batch_stats` computes them in a job of their own (the two-pass batch);
:class:`ObservedStats` gathers them for a batch of one watermark partition while another job
reads its rows (the one-pass batch, :mod:`.one_pass`). Both give the same values.
"""
from __future__ import annotations

from pyspark.sql import Column, DataFrame, Observation
from pyspark.sql import functions as F

from ..sources import DATA
from .prepare import SLOW


def _columns(typed: bool, slow: bool) -> list[Column]:
    data = F.col("kind") == DATA
    return [
        F.max(F.when(data, F.col("_et"))).alias("maxet"),
        F.max(F.when(data, F.col("_arr"))).alias("maxarr"),
        F.max("_arr").alias("anyarr"),
        F.max("kind").alias("maxkind"),
        F.sum(F.when(data, 1).otherwise(0)).alias("n"),
        F.sum(F.when(data, F.octet_length("raw")).otherwise(0)).alias("bytes"),
        F.max(F.when(data, F.col("offset"))).alias("maxoff"),
        F.min(F.when(data, F.col("offset"))).alias("minoff"),
        F.min(F.when(data, F.col("_arr"))).alias("minarr"),
        F.min(F.when(data, F.col("_et"))).alias("minet"),
        *([F.schema_of_variant_agg(F.when(data, F.col("doc"))).alias("schema")] if typed else []),
        *([F.max(F.col(SLOW).cast("int")).alias("slow")] if slow else []),
    ]


def batch_stats(src: DataFrame, typed: bool, slow: bool) -> list[dict]:
    """The statistics of the prepared source rows ``src``, one dict per partition with rows
    (``typed``: with ``schema``; ``slow``: with ``slow``)."""
    return [r.asDict() for r in src.groupBy("partition").agg(*_columns(typed, slow)).collect()]


class ObservedStats:
    """The statistics of a batch whose rows are all of one watermark partition, gathered by
    whichever job reads ``src`` next (:meth:`on`), with no job of their own."""

    def __init__(self, partition: str, typed: bool, slow: bool):
        self.partition, self._typed, self._slow = partition, typed, slow
        self._obs = Observation()

    def on(self, src: DataFrame) -> DataFrame:
        """``src`` with the statistics observed (read it once, in the next job)."""
        return src.observe(self._obs, *_columns(self._typed, self._slow),
                           F.min("partition").alias("_pmin"), F.max("partition").alias("_pmax"))

    def done(self) -> bool:
        """Whether the job that read ``src`` gathered the statistics (False when that cannot be
        told without waiting)."""
        try:
            return self._obs._jo is not None and bool(self._obs._jo.future().isCompleted())
        except Exception:  # noqa: BLE001 - pyspark's Observation without a future: not gathered
            return False

    def rows(self) -> list[dict] | None:
        """After the job: the statistics as :func:`batch_stats` gives them for that partition,
        or None when a row of another partition was seen."""
        got = dict(self._obs.get)
        if {got.pop("_pmin"), got.pop("_pmax")} - {self.partition, None}:
            return None
        return [{"partition": self.partition, **got}]
