"""The documents a micro-batch writes, built from rows on the executor that writes them.

The engine describes everything a batch writes as rows of :data:`RECORD_SCHEMA` (one frame per
step of the batch, unioned); :func:`build` turns them, in order, into output documents (with
``_stream_meta`` and a deterministic ``_id``) and DLQ documents (system.md, "Dead letter
queue"). Nothing here imports pyspark at module level: it runs inside a Python worker.

Order: rows are sorted by ``_ph`` (the step of the batch that made them), then ``_o1``..``_o4``
(for stage outputs the row's position in the batch; for window outputs window end, start, key
and the document's sequence number), so outputs and DLQ entries come in the order the spec
gives (windows in order of end, then start; documents in arrival order).
"""
from __future__ import annotations

import datetime as _dt
import hashlib
from dataclasses import dataclass
from functools import cached_property
from json.encoder import encode_basestring as _quote
from typing import Any, Iterable

from ... import ejson
from ...spec import defaults
from ...timing import PLUS_INF

NOT_JSON = "Input is not valid JSON"   # the JVM parser's reason (headrace.spark.runtime.parse)

RECORD_SCHEMA = ("_ph int, _o1 bigint, _o2 bigint, _o3 string, _o4 bigint, partition string, offset bigint, "
                 "_arr bigint, doc variant, raw string, _err string, _op string, _ws bigint, _we bigint, "
                 "_wk string, _seq bigint, _missed array<bigint>")
RECORD_COLUMNS = [c.split(" ")[0] for c in RECORD_SCHEMA.split(", ")]
# what :func:`build` reads of a row, besides ``_missed`` (as text: "1000,2000") and ``_shape``
TASK_COLUMNS = ["partition", "offset", "_arr", "doc", "raw", "_err", "_op", "_ws", "_we", "_wk", "_seq"]
ORDER = ["_ph", "_o1", "_o2", "_o3", "_o4"]


def ts(ms: int) -> _dt.datetime:
    return ejson.millis_to_datetime(ms)


def _object_id_bytes(seed: str, when_ms: int) -> bytes:
    secs = max(0, min(int(when_ms // 1000), 2**32 - 1))
    return secs.to_bytes(4, "big") + hashlib.sha1(seed.encode()).digest()[:8]


def object_id(seed: str, when_ms: int) -> ejson.ObjectId:
    """A deterministic ObjectId: the time part from ``when_ms``, the rest from a hash of ``seed``."""
    return ejson.ObjectId(_object_id_bytes(seed, when_ms))


def object_id_text(seed: str, when_ms: int) -> str:
    """``"_id":`` and :func:`object_id` as Extended JSON text."""
    return '"_id":{"$oid":"%s"}' % _object_id_bytes(seed, when_ms).hex()


@dataclass(frozen=True)
class BatchInfo:
    """What building a batch's documents needs from the driver (small, picklable)."""

    name: str                   # processor name
    source_type: str            # "stream", "documents", "replay", "file", "generated"
    multi_partition: bool       # more than one watermark partition
    now: int                    # the batch instant (ms): dlqTime and DLQ ``_id`` time
    stream_meta: bool           # add ``_stream_meta`` to outputs
    add_ids: bool               # add a deterministic ``_id`` to outputs without one (a sink exists)
    batch_id: int | None = None  # the micro-batch (transactional sinks fence on it)
    run_id: str | None = None    # the checkpoint's identity (a processor dropped and re-created has a new one)
    guarantee: str = defaults.GUARANTEE   # "atLeastOnce": sinks skip the transactional commit work
    order: Any = None           # a headrace.mql.field_order.OrderPlan: outputs' field order

    @cached_property
    def per_record(self) -> bool:
        """Whether an output's source meta names its partition and offset (else its type alone)."""
        return self.source_type == "stream" or self.multi_partition

    @cached_property
    def _type_meta_text(self) -> str:
        """:meth:`meta_text` when it is the source's type alone: the same for every output."""
        return '"_stream_meta":' + ejson.dumps({"source": {"type": self.source_type}})

    @cached_property
    def _partition_heads(self) -> dict[str, str]:
        """:meth:`meta_text` up to the offset, per partition (filled as partitions come)."""
        return {}

    def meta_text(self, partition: str | None, offset: int | None) -> str:
        """``"_stream_meta":`` and a stateless output's ``{"source": source_meta(...)}`` as text."""
        if not self.per_record:
            return self._type_meta_text
        if type(partition) is str and type(offset) is int and offset >= 0:   # the common case, by hand
            heads = self._partition_heads
            head = heads.get(partition)
            if head is None:
                head = heads[partition] = '"_stream_meta":{"source":{"type":%s,"partition":%s,"offset":' % (
                    _quote(self.source_type), _quote(partition))
            return "%s%d}}" % (head, offset)
        return '"_stream_meta":' + ejson.dumps({"source": self.source_meta(partition, offset)})

    def source_meta(self, partition: str | None, offset: int | None) -> dict:
        m: dict[str, Any] = {"type": self.source_type}
        if self.per_record:
            m["partition"] = partition
            if offset is not None and offset >= 0:
                m["offset"] = offset
        return m

    def dlq_doc(self, doc: Any, reason: str, op: str, source: dict | None, missed: list[int] | None = None,
                seed: str | None = None) -> dict:
        d: dict[str, Any] = {
            "_stream_meta": {"source": source or {"type": self.source_type}},
            "errInfo": {"reason": reason},
            "operatorName": op,
            "doc": doc,
            "processorName": self.name,
            "dlqTime": ts(min(self.now, PLUS_INF - 1)),
        }
        if missed is not None:
            d["missedWindowStartTimes"] = [ts(x) for x in missed]
        d["_id"] = object_id(f"{self.name}|dlq|{seed or ejson.dumps(d['doc'])}|{op}", self.now)
        return d


def _missed(v: "str | list | None") -> list[int]:
    """``_missed`` as the task gets it (text: ``"1000,2000"``) or as a list."""
    if isinstance(v, str):
        return [int(x) for x in v.split(",")] if v else []
    return list(v or [])


def _meta(src: "dict | None", window: "tuple | None", info: BatchInfo) -> dict:
    """An output's ``_stream_meta``: its source, and its window."""
    meta: dict[str, Any] = {"source": src or {"type": info.source_type}}
    if window is not None:
        meta["window"] = {"start": ts(window[0]), "end": ts(window[1])}
    return meta


@dataclass
class Built:
    outputs: list               # documents; with ``text``, their Extended JSON lines (``str``)
    dlq: list
    late: int = 0


def build(rows: Iterable[Any], info: BatchInfo, text: bool = False) -> Built:
    """Output and DLQ documents from sorted record rows (see the module docstring): dicts of
    :data:`TASK_COLUMNS`, ``_missed`` and ``_shape`` (``raw``'s :func:`~headrace.mql.field_order.shape`).

    ``text``: outputs are their relaxed Extended JSON text (one line each, as
    :func:`headrace.ejson.dumps` writes the document), written straight from the VARIANT bytes
    (:func:`headrace.spark.docs_text.to_text`) for the JSON-lines sink."""
    from ...mql.field_order import OrderPlan, reorder
    from ..docs import from_variant, parse_error
    from ..docs_text import to_text

    order = info.order or OrderPlan()
    out = Built([], [])
    ordinal: dict[Any, int] = {}
    for r in rows:
        window = (r["_ws"], r["_we"], r["_wk"]) if r["_we"] is not None else None
        if r["_missed"] is not None:          # late: it fits only windows already closed
            out.late += 1
            out.dlq.append(info.dlq_doc(reorder(from_variant(r["doc"]), order.source(r["raw"])),
                                        defaults.LATE_REASON, r["_op"],
                                        info.source_meta(r["partition"], r["offset"]), _missed(r["_missed"]),
                                        seed=f"{r['partition']}|{r['offset']}"))
            continue
        src = info.source_meta(r["partition"], r["offset"]) if window is None else None
        if r["_err"] is not None:
            doc = reorder(from_variant(r["doc"]), order.source(r["raw"])) if r["doc"] is not None else r["raw"]
            reason = r["_err"]
            if r["doc"] is None and r["_op"] == "$source" and reason == NOT_JSON:
                reason = parse_error(r["raw"])    # the JVM says only that; Python says where
            seed = f"{r['partition']}|{r['offset']}" if window is None else f"w|{window}|{r['_seq']}"
            out.dlq.append(info.dlq_doc(doc, reason, r["_op"] or "unknown", src, seed=seed))
            continue
        t = order.output(r["raw"], r.get("_shape")) if window is None else order.window_output(r["raw"])
        key = (r["partition"], r["offset"]) if window is None else window
        when = r["_arr"] if window is None else window[1]
        if text and r["doc"] is not None:
            line = to_text(r["doc"].value, r["doc"].metadata, t,
                           object_id_text(f"{info.name}|{key}|{ordinal.get(key, -1) + 1}", when)
                           if info.add_ids else "",
                           (info.meta_text(r["partition"], r["offset"]) if window is None else
                            '"_stream_meta":' + ejson.dumps(_meta(src, window, info))) if info.stream_meta else "")
            if line is not None:
                ordinal[key] = ordinal.get(key, -1) + 1
                out.outputs.append(line)
                continue
        doc = from_variant(r["doc"])
        if not isinstance(doc, dict):
            continue
        doc = reorder(doc, t)
        k = ordinal[key] = ordinal.get(key, -1) + 1
        if info.stream_meta:
            meta = _meta(src, window, info)
            doc["_stream_meta"] = {**doc["_stream_meta"], **meta} \
                if isinstance(doc.get("_stream_meta"), dict) else meta
        if "_id" not in doc and info.add_ids:
            doc = {"_id": object_id(f"{info.name}|{key}|{k}", when), **doc}
        out.outputs.append(ejson.dumps(doc) if text else doc)
    return out
