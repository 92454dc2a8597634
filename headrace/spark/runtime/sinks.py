"""Writing a micro-batch from the executors: outputs to the sink, errors to the DLQ.

The batch's record rows (:mod:`.records`) are turned into documents where they are, per Arrow
batch, by every partition's task at once (``mapInArrow``); each task writes its documents and
returns a small summary to the driver (counts, its part's size, an error), which then commits
the batch by its id. Documents come back to the driver only when asked (``collect``: the
printing of an ephemeral run, ``headrace.testing``, ``sample()``).

- JSON lines (``$emit`` with a path): each task writes its part to
  ``<checkpoint>/headrace/sink/<batch>/<partition>.jsonl``; the driver's commit cuts the file
  back to its size after the previous batch and appends the parts in partition order (a byte
  copy, no documents parsed), so the file is in the batch's order.
- Store and PostgreSQL (``$merge``/``$emit`` to a collection): rows are first hash-partitioned
  by the merge key (``on``; rows without ``_id`` get a unique engine ``_id``, so they spread),
  so documents that can meet in the target are written by one task, in batch order.
- Parallel writing needs partitions in the batch's order: the engine asks for it only for
  stateless pipelines (``parallel``); window outputs, zoned sinks (their statistics are
  per-write deltas) and collected merges go through one task, sorted (``_write_one``).

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
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from ... import ejson
from ...connections import Registry
from ...spec.model import EmitSpec, MergeIntoSpec
from .records import ORDER, RECORD_COLUMNS, TASK_COLUMNS, BatchInfo, build


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

    @property
    def jsonl_path(self) -> Path | None:
        """The JSON-lines file of an ``$emit`` with a path, else None."""
        s = self.sink
        return Path(s.path) if isinstance(s, EmitSpec) and s.path else None

    def parallel_ok(self) -> bool:
        """Whether tasks may write at once: no sink, JSON lines, or a store/PostgreSQL collection."""
        if self.sink is None or self.jsonl_path is not None:
            return True
        return self.registry.get(self.sink.connection_name).type in ("store", "postgres")

    def merge_on(self) -> tuple[str, ...]:
        s = self.sink
        return tuple(s.on) if isinstance(s, MergeIntoSpec) else ("_id",)

    def _merge(self, outputs: list[dict], info: BatchInfo | None = None) -> tuple[list[tuple[int, str]], dict | None]:
        """``$merge`` the outputs; returns the refused ones and, for a sink that keeps statistics
        (a zoned connection's zones), what this write added to them. With per-document
        expressions (:mod:`.targets`) each target is written on its own, in the batch's order."""
        from ...collections import open_collection
        from ...store.base import MergeSpec
        from .targets import Routed, route

        s = self.sink
        if isinstance(s, MergeIntoSpec):
            spec = MergeSpec(on=s.on, when_matched=s.when_matched, when_not_matched=s.when_not_matched)
        else:
            spec = MergeSpec(on=("_id",), when_matched="replace")
        dynamic = s.dynamic()
        if dynamic:
            word = "stream" if self.registry.get(s.connection_name).type == "redis" else "topic"
            groups, refused = route(outputs, "$emit" if isinstance(s, EmitSpec) else "$merge", s.db, s.coll, dynamic,
                                    word)
        else:
            groups, refused = [Routed(str(s.db), str(s.coll), list(range(len(outputs))), outputs,
                                      [{}] * len(outputs))], []
        config = s.config if isinstance(s, EmitSpec) else None
        delta = None
        for g in groups:
            coll = open_collection(self.registry, s.connection_name, g.db, g.coll)
            before = coll.stats() if hasattr(coll, "stats") else None
            fence = _fence(info) if hasattr(coll, "merge_fenced") else None
            if config is not None and hasattr(coll, "emit"):   # Kafka: key, headers, output format
                errors = coll.emit(g.docs, g.extras, config).errors
            elif fence is not None:   # PostgreSQL: documents and the batch's fence row in one transaction
                errors = coll.merge_fenced(g.docs, spec, fence)[0].errors
            else:
                errors = coll.merge_many(g.docs, spec).errors
            refused += [(g.index[j], reason) for j, reason in errors]
            if before is not None:
                delta = stats_add(delta, stats_delta(before, coll.stats()))
        return sorted(refused), delta


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


def _append_lines(path: Path, docs: list, size: int | None, exactly_once: bool = True) -> int:
    """Append documents (or their text, ``str``) to a JSON-lines file. Exactly once: cut back to
    ``size`` (the file after the previous batch) first, so a replayed batch replaces what a
    crashed attempt appended, and fsync."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+b") as f:
        if size is not None and exactly_once:
            f.truncate(size)
        f.seek(0, os.SEEK_END)
        f.write("".join((d if type(d) is str else ejson.dumps(d)) + "\n" for d in docs).encode())
        f.flush()
        if exactly_once:
            os.fsync(f.fileno())
        return f.tell()


def write_batch(records, plan: SinkPlan, info: BatchInfo, jsonl_size: int | None, collect: bool,
                parallel: bool = False, staging: Path | None = None, batch_id: int = 0) -> dict:
    """Build and write a batch's documents on the executors; the summary comes back.

    ``records`` is a DataFrame of :data:`.records.RECORD_SCHEMA`. ``parallel``: its partitions,
    each sorted, are in the batch's order (see the module docstring); ``staging`` is where
    JSON-lines parts go. Returns ``{"output", "dlq", "late", "jsonl_size", "error",
    "sinkStats"}`` plus ``"outputs"``/``"dlqDocs"`` (lists of documents) when ``collect``.
    """
    merge = plan.sink is not None and plan.jsonl_path is None
    if parallel and staging is not None and plan.parallel_ok() and not (collect and merge):
        return _write_parallel(records, plan, info, jsonl_size, collect, Path(staging) / str(batch_id))
    return _write_one(records, plan, info, jsonl_size, collect)


def write_work(proc, work, jsonl_size: int | None) -> dict:
    """Write what the batch ``work`` (:class:`.batch.BatchWork`) of the processor ``proc`` leaves:
    its outputs and DLQ entries, from the executors (:func:`write_batch`). A result with an
    ``error`` is the caller's to raise."""
    pieces = [p for p in work.pieces if p is not None]
    if not pieces:
        return {"output": 0, "dlq": 0, "late": 0, "jsonl_size": jsonl_size}
    p, o = proc.p, proc.o
    info = BatchInfo(name=o.name, source_type=proc.source_type, multi_partition=len(proc.partitions) > 1,
                     now=work.now, stream_meta=p.options.stream_meta, add_ids=p.sink is not None,
                     batch_id=work.batch_id, run_id=proc.checkpoints.run_id, guarantee=p.options.guarantee,
                     order=proc._order)
    records = pieces[0]
    for piece in pieces[1:]:
        records = records.unionByName(piece)
    # without a window, the batch is one frame whose partitions are in the batch's order:
    # every partition writes its own documents
    return write_batch(records, SinkPlan(o.registry, p.sink, p.options.dlq), info, jsonl_size,
                       collect=bool(o.on_output or o.on_dlq), parallel=proc.w is None and len(pieces) == 1,
                       staging=proc.hdir / "sink", batch_id=work.batch_id)


def _rows(batches) -> Iterator[dict]:
    """Record rows of Arrow batches as dicts (``doc`` as a VariantVal), read column by column
    (one Python list per column, not a dict per row and value)."""
    from pyspark.sql.types import VariantVal

    for b in batches:
        names = b.schema.names
        cols = []
        for name, col in zip(names, b.columns):
            if name == "doc":
                values, metas = col.field("value").to_pylist(), col.field("metadata").to_pylist()
                valid = col.is_valid().to_pylist() if col.null_count else None
                cols.append([VariantVal(v, m) if valid is None or valid[i] else None
                             for i, (v, m) in enumerate(zip(values, metas))])
            else:
                cols.append(col.to_pylist())
        for vals in zip(*cols):
            yield dict(zip(names, vals))


def _summary_batch(summary: dict):
    import pyarrow as pa

    return pa.RecordBatch.from_pydict({"s": [ejson.dumps(summary, relaxed=False)]})


def _task(plan: SinkPlan, info: BatchInfo, jsonl_size: int | None, collect: bool, part_dir: Path | None):
    """The function every task runs over its partition's Arrow batches."""
    def run(batches):
        built = build(_rows(batches), info, text=plan.jsonl_path is not None)
        summary: dict[str, Any] = {"late": built.late, "error": None}
        try:
            if part_dir is not None:      # JSON lines: this task's part; the driver appends the parts
                from pyspark import TaskContext

                tc = TaskContext.get()
                pid = tc.partitionId() if tc is not None else 0
                part = part_dir / f"{pid:06d}.jsonl"
                if built.outputs:
                    _append_lines(part, built.outputs, 0)
                res = SinkPlan(plan.registry, None, plan.dlq).write([], built.dlq, info, None)
                summary.update(res, output=len(built.outputs), outputs=built.outputs,
                               part=str(part) if built.outputs else None, pid=pid)
            else:
                summary.update(plan.write(built.outputs, built.dlq, info, jsonl_size))
        except Exception as exc:  # noqa: BLE001 - reported to the driver, which fails the batch
            summary.update(output=0, dlq=0, jsonl_size=jsonl_size, error=f"{type(exc).__name__}: {exc}")
            summary["outputs"] = []
        docs = summary.pop("outputs")
        if collect:
            summary["outputs"] = [ejson.loads(d) if type(d) is str else d for d in docs]
            summary["dlqDocs"] = built.dlq
        yield _summary_batch(summary)
    return run


def _merge_key(plan: SinkPlan):
    """The column rows are hash-partitioned by for a merge sink (see the module docstring)."""
    from pyspark.sql import functions as F

    from .. import values as V

    on = plan.merge_on()
    unique = F.concat_ws("|", F.col("partition"), F.col("offset").cast("string"), F.col("_o1").cast("string"))
    vals = [F.to_json(F.try_variant_get(F.col("doc"), V.variant_path(*f.split(".")), "variant")) for f in on]
    key = F.concat_ws("|", *[F.coalesce(v, F.lit("null")) for v in vals])
    if on == ("_id",):      # no _id: the engine gives one of its own, unique
        key = F.when(vals[0].isNotNull(), key).otherwise(unique)
    return F.when(F.col("_err").isNotNull() | F.col("_missed").isNotNull(), unique).otherwise(key)


def _task_input(df):
    """The columns the task reads (:data:`.records.TASK_COLUMNS`; the sort keys stay on the JVM),
    ``_missed`` as text (Spark checks an Arrow batch's size after every row, and a list column
    makes that check walk its vectors) and ``raw``'s shape (its field names and nesting), by
    which outputs share their field-order template."""
    from pyspark.sql import functions as F

    from ...mql.field_order import SHAPE_PATTERN

    return df.select(*TASK_COLUMNS, F.array_join("_missed", ",").alias("_missed"),
                     F.regexp_replace("raw", SHAPE_PATTERN, "$1").alias("_shape"))


def _write_parallel(records, plan: SinkPlan, info: BatchInfo, jsonl_size: int | None, collect: bool,
                    part_dir: Path) -> dict:
    jsonl = plan.jsonl_path
    df = records.select(*RECORD_COLUMNS)
    if plan.sink is not None and jsonl is None:
        n = max(1, df.sparkSession.sparkContext.defaultParallelism)
        df = df.repartition(n, _merge_key(plan)).sortWithinPartitions(*ORDER)
    # else each partition's rows already come in order (``_o1`` grows as its rows are made)
    df = _task_input(df)
    if jsonl is not None:
        shutil.rmtree(part_dir, ignore_errors=True)     # a replay writes its parts again
        part_dir.mkdir(parents=True, exist_ok=True)
    got = [ejson.loads(r["s"]) for r in
           df.mapInArrow(_task(plan, info, jsonl_size, collect, part_dir if jsonl is not None else None),
                         "s string").collect()]
    got.sort(key=lambda g: g.get("pid", 0))
    out: dict[str, Any] = {"output": 0, "dlq": 0, "late": 0, "jsonl_size": jsonl_size, "error": None,
                           "sinkStats": None}
    if collect:
        out["outputs"], out["dlqDocs"] = [], []
    for g in got:
        out["output"] += g.get("output", 0)
        out["dlq"] += g.get("dlq", 0)
        out["late"] += g.get("late", 0)
        out["error"] = out["error"] or g.get("error")
        if g.get("sinkStats"):
            out["sinkStats"] = stats_add(out["sinkStats"], g["sinkStats"])
        if collect:
            out["outputs"] += g.get("outputs", [])
            out["dlqDocs"] += g.get("dlqDocs", [])
    if jsonl is not None and not out["error"]:
        # the commit of batch N: the file as after N-1, then N's parts in partition order
        out["jsonl_size"] = _commit_parts(jsonl, [Path(g["part"]) for g in got if g.get("part")], jsonl_size)
        shutil.rmtree(part_dir, ignore_errors=True)
    return out


def _commit_parts(path: Path, parts: list[Path], size: int | None) -> int:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+b") as f:
        if size is not None:
            f.truncate(size)
        f.seek(0, os.SEEK_END)
        for p in parts:
            with open(p, "rb") as src:
                shutil.copyfileobj(src, f, 1 << 20)
        f.flush()
        os.fsync(f.fileno())
        return f.tell()


def _write_one(records, plan: SinkPlan, info: BatchInfo, jsonl_size: int | None, collect: bool) -> dict:
    """One task, the rows sorted in the batch's order."""
    ordered = _task_input(records.select(*RECORD_COLUMNS).repartition(1).sortWithinPartitions(*ORDER))
    got = ordered.mapInArrow(_task(plan, info, jsonl_size, collect, None), "s string").collect()
    if not got:  # no records at all: nothing was written
        return {"output": 0, "dlq": 0, "late": 0, "jsonl_size": jsonl_size, "error": None,
                "outputs": [], "dlqDocs": []}
    return ejson.loads(got[0]["s"])
