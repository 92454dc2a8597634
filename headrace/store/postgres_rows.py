"""What the PostgreSQL backend (:mod:`headrace.store.postgres`) stores as text: a document as
canonical Extended JSON (``_serialize``, refusing what PostgreSQL cannot hold), and the rows of
the fence table: its schema and how many rows are kept, :class:`Fence` (which micro-batch a
fenced write belongs to) and the write result stored with each row.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass

from .. import ejson
from .base import WriteResult

FENCE_SCHEMA = "_headrace"          # the fence table lives here, beside the collections
FENCE_KEEP = 1000                   # fence rows kept per (processor, run, target): older batches never replay
_NUL = re.compile(r"(?<!\\)(?:\\\\)*\\u0000")


def _serialize(doc: dict) -> str:
    """Canonical Extended JSON text of a document; ValueError when PostgreSQL cannot store it."""
    try:
        text = ejson.dumps(doc, relaxed=False)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"cannot store the document: {exc}") from exc
    if "\\u0000" in text and _NUL.search(text):
        raise ValueError("PostgreSQL cannot store the NUL character (\\u0000) in a JSONB document")
    return text


@dataclass(frozen=True)
class Fence:
    """Which micro-batch a fenced write belongs to: the row of ``_headrace.fence``.

    ``processor`` (its name), ``run_id`` (the checkpoint's identity: a processor dropped and
    created again under the same name starts a new run whose batch ids start again at 0),
    ``batch_id``, ``part`` (the writing task within the batch, for parallel writes). The
    target collection is part of the key too."""

    processor: str
    run_id: str
    batch_id: int
    part: int = 0


def _result_json(r: WriteResult) -> str:
    return json.dumps({"inserted": r.inserted, "replaced": r.replaced, "merged": r.merged, "kept": r.kept,
                       "discarded": r.discarded, "deleted": r.deleted, "errors": [list(e) for e in r.errors]})


def _result_from_json(text: str | None) -> WriteResult:
    d = json.loads(text or "{}")
    return WriteResult(inserted=d.get("inserted", 0), replaced=d.get("replaced", 0), merged=d.get("merged", 0),
                       kept=d.get("kept", 0), discarded=d.get("discarded", 0), deleted=d.get("deleted", 0),
                       errors=[(int(i), str(m)) for i, m in d.get("errors", [])])

