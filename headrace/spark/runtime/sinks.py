"""Writing a micro-batch from an executor: outputs to the sink, errors to the DLQ.

One Spark job per micro-batch: the batch's record rows (:mod:`.records`) are brought to one
task in the batch's order (a shuffle into one partition, sorted), which builds the documents,
writes them and returns a small summary to the driver (counts, the JSON-lines file size, an
error). Documents come back to the driver only when asked (``collect``: the printing of an
ephemeral run, ``headrace.testing``, ``sample()``).

Exactly once: a replayed batch writes the same documents with the same ``_id``s. PostgreSQL
writes the batch's documents and its fence row (processor, run, target, batch, task) in one
transaction, so a replayed batch is a no-op there (:meth:`~headrace.store.postgres.PostgresCollection.merge_fenced`);
the store and zoned sinks and the DLQ are idempotent by deterministic ``_id`` (``$merge`` matches
the same documents again; the DLQ upserts with ``on: _id``); the JSON-lines sink is cut back to
its size after the previous batch before appending, and fsynced. Under ``guarantee:
"atLeastOnce"`` the fence and the JSON-lines truncation and fsync are skipped (duplicates are
possible after a crash). README.md has the table of each sink's guarantee.

Error policy (one for every sink): a document the sink refuses (``$merge`` ``fail``, a zone
that cannot take it...) goes to the DLQ with the sink's reason; a write that fails as a whole,
or any DLQ write that fails, fails the micro-batch with a reason naming the target.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from ... import ejson
from ...connections import Registry
from ...spec.model import EmitSpec, MergeIntoSpec
from .records import ORDER, BatchInfo, build


@dataclass(frozen=True)
class SinkPlan:
    """Where a processor writes (picklable: it travels to the executor with the task)."""

    registry: Registry
    sink: Any                      # EmitSpec | MergeIntoSpec | None
    dlq: Any                       # DlqSpec | None

    def write(self, outputs: list[dict], dlq: list[dict], info: BatchInfo, jsonl_size: int | None) -> dict:
        """Write one batch; returns ``{"output", "dlq", "jsonl_size"}`` (counts after sink errors)."""
        sink = self.sink
        sink_stats = None
        if sink is not None and outputs:
            if isinstance(sink, EmitSpec) and sink.path:
                jsonl_size = _append_lines(Path(sink.path), outputs, jsonl_size, info.guarantee != "atLeastOnce")
            else:
                refused, sink_stats = self._merge(outputs, info)
                if refused:
                    op = "$merge" if isinstance(sink, MergeIntoSpec) else "$emit"
                    for i, reason in refused:
                        d = outputs[i]
                        dlq.append(info.dlq_doc(d, reason, op, d.get("_stream_meta", {}).get("source")))
                    bad = {i for i, _ in refused}
                    outputs = [d for i, d in enumerate(outputs) if i not in bad]
        if dlq and self.dlq is not None:
            from ...collections import open_collection
            from ...store.base import MergeSpec

            d = self.dlq
            res = open_collection(self.registry, d.connection_name, d.db, d.coll).merge_many(
                dlq, MergeSpec(on=("_id",), when_matched="replace"))
            if res.errors:
                raise SinkError(f"cannot write to the DLQ {d.connection_name}:{d.db}.{d.coll}: {res.errors[0][1]}")
        return {"output": len(outputs), "dlq": len(dlq), "jsonl_size": jsonl_size, "outputs": outputs,
                "sinkStats": sink_stats}

    def _merge(self, outputs: list[dict], info: BatchInfo | None = None) -> tuple[list[tuple[int, str]], dict | None]:
        """``$merge`` the outputs; returns the refused ones and, for a sink that keeps statistics
        (a zoned connection's zones), what this write added to them."""
        from ...collections import open_collection
        from ...store.base import MergeSpec

        s = self.sink
        if isinstance(s, MergeIntoSpec):
            spec = MergeSpec(on=s.on, when_matched=s.when_matched, when_not_matched=s.when_not_matched)
        else:
            spec = MergeSpec(on=("_id",), when_matched="replace")
        coll = open_collection(self.registry, s.connection_name, str(s.db), str(s.coll))
        before = coll.stats() if hasattr(coll, "stats") else None
        fence = _fence(info) if hasattr(coll, "merge_fenced") else None
        if fence is not None:     # PostgreSQL: documents and the batch's fence row in one transaction
            errors = coll.merge_fenced(outputs, spec, fence)[0].errors
        else:
            errors = coll.merge_many(outputs, spec).errors
        return errors, (None if before is None else stats_delta(before, coll.stats()))


def _fence(info: BatchInfo | None):
    """The fence of this write (exactly once, batch known); the task's partition is the part."""
    if info is None or info.batch_id is None or info.run_id is None or info.guarantee == "atLeastOnce":
        return None
    from ...store.postgres import Fence

    part = 0
    try:
        from pyspark import TaskContext

        tc = TaskContext.get()
        part = tc.partitionId() if tc is not None else 0
    except ImportError:
        pass
    return Fence(info.name, info.run_id, info.batch_id, part)


def stats_delta(before: Any, after: Any) -> Any:
    """What ``after`` adds to ``before``: numbers subtracted, other values as in ``after``."""
    if isinstance(after, dict):
        b = before if isinstance(before, dict) else {}
        return {k: stats_delta(b.get(k), v) for k, v in after.items()}
    if isinstance(after, (int, float)) and not isinstance(after, bool) and isinstance(before, (int, float)):
        return after - before
    return after


def stats_add(total: Any, delta: Any) -> Any:
    """``total`` with ``delta`` added (see :func:`stats_delta`)."""
    if isinstance(delta, dict):
        t = total if isinstance(total, dict) else {}
        return {**t, **{k: stats_add(t.get(k), v) for k, v in delta.items()}}
    if isinstance(delta, (int, float)) and not isinstance(delta, bool) and isinstance(total, (int, float)):
        return total + delta
    return delta


class SinkError(Exception):
    """A write that failed as a whole (reported to the driver, which fails the batch)."""


def _append_lines(path: Path, docs: list[dict], size: int | None, exactly_once: bool = True) -> int:
    """Append to a JSON-lines file. Exactly once: cut back to ``size`` (the file after the previous
    batch) first, so a replayed batch replaces what a crashed attempt appended, and fsync."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+b") as f:
        if size is not None and exactly_once:
            f.truncate(size)
        f.seek(0, os.SEEK_END)
        f.write("".join(ejson.dumps(d) + "\n" for d in docs).encode())
        f.flush()
        if exactly_once:
            os.fsync(f.fileno())
        return f.tell()


def write_batch(records, plan: SinkPlan, info: BatchInfo, jsonl_size: int | None, collect: bool) -> dict:
    """Build and write a batch's documents on an executor (one job); the summary comes back.

    ``records`` is a DataFrame of :data:`.records.RECORD_SCHEMA`. Returns ``{"output", "dlq",
    "late", "jsonl_size", "error", "sinkStats"}`` plus ``"outputs"``/``"dlqDocs"`` (lists of documents) when
    ``collect``.
    """
    ordered = records.repartition(1).sortWithinPartitions(*ORDER)

    def task(rows: Iterator[Any]) -> Iterator[str]:
        built = build((r.asDict() for r in rows), info)
        summary: dict[str, Any] = {"late": built.late, "error": None}
        try:
            summary.update(plan.write(built.outputs, built.dlq, info, jsonl_size))
        except Exception as exc:  # noqa: BLE001 - reported to the driver, which fails the batch
            summary.update(output=0, dlq=0, jsonl_size=jsonl_size, error=f"{type(exc).__name__}: {exc}")
            summary["outputs"] = []
        docs = summary.pop("outputs")
        if collect:
            summary["outputs"] = docs
            summary["dlqDocs"] = built.dlq
        yield ejson.dumps(summary, relaxed=False)

    got = ordered.rdd.mapPartitions(task).collect()
    if not got:  # no records at all: nothing was written
        return {"output": 0, "dlq": 0, "late": 0, "jsonl_size": jsonl_size, "error": None,
                "outputs": [], "dlqDocs": []}
    return ejson.loads(got[0])
