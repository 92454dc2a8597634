"""``$source.dedup`` in the engine: drop records whose id was seen within the horizon.

One hook, called by the engine on a micro-batch's prepared source rows before the stages run
(:meth:`Dedup.apply`):

1. ``idField`` is evaluated per record (native Catalyst); its canonical JSON is hashed to 64
   bits in the JVM (``xxhash64``). A record whose id is missing, null or fails to evaluate goes
   to the DLQ (``operatorName: "$source"``), never silently dropped.
2. The checkable records (``partition``, ``offset``, arrival, event time, id hash: no documents)
   are shuffled by id hash into :data:`~headrace.spec.defaults.DEDUP_SHARDS` tasks, sorted in the
   batch's order (arrival, partition, position), and each task decides for its shard of the
   catalog with :class:`headrace.dedup.Shard` (numpy, once per task, never per record): it reads
   the shard's version below the batch and writes the batch's version (Bloom filters and exact
   ids, in the processor's checkpoint under ``headrace/dedup``), so a re-run of the batch after a
   crash makes the same decisions.
3. The task returns the keys of the dropped records and its statistics; the decisions are kept
   on the executors (persisted for the batch), the statistics (one row per shard) come to the driver,
   and the batch continues on its rows minus the dropped ones (a broadcast anti-join that keeps
   the rows' order).

Statistics (summed into the processor's counters, shown by ``stats()["dedup"]``): ``checked``,
``dropped``, ``expiredDuplicates``, ``bloomNegative`` (answered by the Bloom filters alone),
``bloomHits``, ``falsePositiveLookups`` (a Bloom "maybe" the exact ids denied),
``catalogSize`` (ids held after the batch), ``catalogBytes``, ``buckets``.

``guarantee: "atLeastOnce"`` skips all of this (:func:`make_dedup` returns None).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from ...spec import defaults
from ...spec.model import Pipeline
from .. import values as V
from ..sources import DATA

STAT_KEYS = ("checked", "dropped", "expiredDuplicates", "bloomNegative", "bloomHits", "falsePositiveLookups")
GAUGES = ("catalogSize", "catalogBytes", "buckets")
MISSING_ID = "$source.dedup.idField: the record's id is missing or null"


def make_dedup(p: Pipeline, state_dir: Path) -> "Dedup | None":
    """The hook for a pipeline with ``$source.dedup`` under ``exactlyOnce``; None otherwise."""
    if p.source.dedup is None or p.options.guarantee == "atLeastOnce":
        return None
    return Dedup(p, Path(state_dir) / "dedup")


class Dedup:
    def __init__(self, p: Pipeline, root: Path):
        self.spec = p.source.dedup
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        meta = root / "meta.json"
        if not meta.exists():       # fixed when the processor first runs: the shards' files depend on it
            meta.write_text(json.dumps({"shards": defaults.DEDUP_SHARDS, "buckets": defaults.DEDUP_BUCKETS,
                                        "fpr": defaults.DEDUP_BLOOM_FPR}))
        m = json.loads(meta.read_text())
        self.shards, self.buckets, self.fpr = int(m["shards"]), int(m["buckets"]), float(m["fpr"])
        self._id = None
        self._verdict = None       # the previous batch's decisions, released at the next batch

    def apply(self, src: DataFrame, batch_id: int, watermark: int | None, counters: dict, env: Any) -> DataFrame:
        """``src`` (prepared rows) minus the duplicates; ``counters`` gain the batch's statistics."""
        if self._id is None:
            from ..expr import compile_expression

            self._id = compile_expression(self.spec.id_field, env.ctx(where="$source.dedup.idField"))
        c = self._id
        ok = (F.col("kind") == DATA) & F.col("_err").isNull()
        err = F.when(V.is_null_or_missing(c.value), F.lit(MISSING_ID))
        if c.error is not None:
            err = F.coalesce(F.concat(F.lit("$source.dedup.idField: "), c.error), err)
        src = src.withColumn("_derr", F.when(ok, err))
        src = src.withColumns({
            "_dh": F.when(ok & F.col("_derr").isNull(), F.xxhash64(F.to_json(c.value))),
            "_op": F.when(F.col("_derr").isNotNull(), F.lit("$source")).otherwise(F.col("_op")),
            "_err": F.coalesce(F.col("_err"), F.col("_derr")),
        }).drop("_derr")
        cand = (src.filter(F.col("_dh").isNotNull())
                .select("partition", "offset", "_arr", "_et", "_dh")
                .repartition(self.shards, "_dh").sortWithinPartitions("_arr", "partition", "offset"))
        decide = _decider(str(self.root), batch_id, watermark, self.spec.horizon.ms, self.buckets, self.fpr)
        if self._verdict is not None:
            self._verdict.unpersist()
        # kept on the executors for the batch; should a block be lost, recomputing it reads the
        # same catalog version and decides the same (the files it rewrites are identical)
        verdict = self._verdict = cand.mapInArrow(decide, "partition string, offset bigint, stats string").persist()
        for r in verdict.filter(F.col("stats").isNotNull()).select("stats").collect():
            st = json.loads(r["stats"])
            for k in STAT_KEYS:
                counters["dedup." + k] = counters.get("dedup." + k, 0) + int(st.get(k, 0))
            for k in GAUGES:
                counters["dedup.shard%d.%s" % (st["shard"], k)] = int(st.get(k, 0))
        dropped = verdict.filter(F.col("stats").isNull()).select("partition", "offset")
        return src.drop("_dh").join(F.broadcast(dropped), ["partition", "offset"], "left_anti")


def _decider(root: str, batch_id: int, watermark: int | None, horizon_ms: int, buckets: int, fpr: float):
    def decide(batches: Iterator[Any]) -> Iterator[Any]:
        import numpy as np
        import pyarrow as pa
        from pyspark import TaskContext

        from ...dedup import Shard

        shard = TaskContext.get().partitionId()
        parts, offs, hs, ets = [], [], [], []
        for b in batches:
            parts.append(b.column("partition"))
            offs.append(b.column("offset"))
            hs.append(b.column("_dh").to_numpy(zero_copy_only=False))
            ets.append(b.column("_et").fill_null(0).to_numpy(zero_copy_only=False))
        h = np.concatenate(hs) if hs else np.zeros(0, dtype=np.int64)
        et = np.concatenate(ets) if ets else np.zeros(0, dtype=np.int64)
        d = Shard(root, shard, horizon_ms, buckets, fpr).decide(batch_id, h, et, watermark)
        if d.drop.any():
            idx = pa.array(np.flatnonzero(d.drop))
            yield pa.RecordBatch.from_arrays(
                [pa.chunked_array(parts, pa.string()).take(idx).combine_chunks(),
                 pa.chunked_array(offs, pa.int64()).take(idx).combine_chunks(),
                 pa.nulls(len(idx), pa.string())], names=["partition", "offset", "stats"])
        yield pa.RecordBatch.from_arrays(
            [pa.nulls(1, pa.string()), pa.nulls(1, pa.int64()), pa.array([json.dumps({**d.stats, "shard": shard})])],
            names=["partition", "offset", "stats"])
    return decide


def dedup_stats(counters: dict) -> dict:
    """``stats()["dedup"]`` from the processor's counters."""
    out = {k: counters.get("dedup." + k, 0) for k in STAT_KEYS}
    for k in GAUGES:
        out[k] = sum(v for c, v in counters.items() if c.startswith("dedup.shard") and c.endswith("." + k))
    out["bloomFalsePositiveRate"] = round(out["falsePositiveLookups"] / max(1, out["falsePositiveLookups"]
                                                                            + out["bloomNegative"]), 6)
    return out
