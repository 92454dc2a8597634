"""Replaying DLQ entries through a fixed pipeline:
``headrace dlq replay --from CONNECTION DB.COLL --into PIPELINE.json [--filter QUERY] [--dry-run]``.

1. The DLQ entries of ``DB.COLL`` on ``CONNECTION`` (a store, PostgreSQL or MongoDB
   connection) that match ``--filter`` and carry no ``replayedAt`` are taken in ``_id`` order.
2. Each entry's document is its ``doc``: the original document, or its raw text parsed again
   (an entry whose text still is not a JSON object is reported and left as it is). A document
   without an ``_id`` gets the entry's ``_id``, so its outputs have ids that do not depend on
   which entries are replayed together.
3. The documents run through the pipeline (its ``$source`` replaced by the documents; its
   ``timeField`` and options kept) into the pipeline's sink and DLQ.
4. Then the entries are marked: ``replayedAt`` (now) and ``replayedInto`` (the pipeline file's
   name). A marked entry is never replayed again. A crash between 3 and 4 replays the same
   entries again, writing the same documents with the same ``_id``s: the sink holds each once.

``--dry-run`` prints what would be replayed (the documents, as JSON lines) and changes nothing.
"""
from __future__ import annotations

import datetime as _dt
import tempfile
from pathlib import Path
from typing import Any, Callable

from .. import ejson
from ..errors import HeadraceError

REPLAYABLE_FROM = ("store", "postgres", "mongodb")


def entries(registry, conn: str, db: str, coll: str, query: dict | None = None) -> list[dict]:
    """The DLQ entries not yet replayed (matching ``query``), in ``_id`` order."""
    from ..collections import open_collection
    from ..store.base import id_key

    c = registry.get(conn)
    if c.type not in REPLAYABLE_FROM:
        raise HeadraceError(f"connection {conn!r} is of type {c.type!r}: DLQ replay reads {', '.join(REPLAYABLE_FROM)}"
                            " collections", code="DLQ_REPLAY_SOURCE")
    pred: Callable[[dict], bool] = lambda d: "replayedAt" not in d  # noqa: E731
    if query:
        from ..mql.match import matches
        from ..mql.query import validate_query

        validate_query(query, "--filter")
        pred = lambda d: "replayedAt" not in d and matches(d, query)  # noqa: E731
    return sorted(open_collection(registry, conn, db, coll).find(pred), key=lambda d: id_key(d.get("_id")))


def document_of(entry: dict) -> dict | None:
    """The document an entry replays (None: its raw text still is not a JSON object)."""
    doc = entry.get("doc")
    if isinstance(doc, str):
        try:
            doc = ejson.loads(doc)
        except Exception:  # noqa: BLE001 - reported by the caller
            return None
    if not isinstance(doc, dict):
        return None
    doc = dict(doc)
    doc.setdefault("_id", entry.get("_id"))
    return doc


def replay(registry, conn: str, db: str, coll: str, pipeline_file: str, query: dict | None = None,
           dry_run: bool = False, out: Callable[[str], None] = print) -> dict:
    """Replay (see the module docstring); returns ``{"entries", "replayed", "skipped", "stats"}``."""
    from ..spec import load_pipeline_file, parse_pipeline
    from ..validate import check_connections

    todo = entries(registry, conn, db, coll, query)
    docs, used, skipped = [], [], []
    for e in todo:
        d = document_of(e)
        (skipped if d is None else used).append(e)
        if d is not None:
            docs.append(d)
    result: dict[str, Any] = {"entries": len(todo), "replayed": 0, "skipped": [ejson.to_plain(e.get("_id"))
                                                                                 for e in skipped]}
    if dry_run:
        for d in docs:
            out(ejson.dumps(d))
        result["wouldReplay"] = len(docs)
        return result
    if not docs:
        return result
    import json

    load_pipeline_file(pipeline_file)       # an invalid pipeline is refused as it is
    obj = json.loads(Path(pipeline_file).read_text())
    raw, opts = (list(obj["pipeline"]), obj.get("options")) if isinstance(obj, dict) else (list(obj), None)
    src = dict(raw[0]["$source"]) if raw and isinstance(raw[0], dict) and "$source" in raw[0] else {}
    keep = {k: v for k, v in src.items() if k in ("timeField", "tsFieldName")}
    stages = [{"$source": {**keep, "documents": [ejson.to_plain(d, relaxed=False) for d in docs]}}] + \
        (raw[1:] if src else raw)
    pipeline = parse_pipeline({"pipeline": stages, "options": opts or {}})
    check_connections(pipeline, registry)
    if pipeline.sink is None:
        raise HeadraceError("the replay pipeline needs a sink ($merge or $emit)", code="DLQ_REPLAY_SINK")
    from ..spark.session import get_spark

    get_spark()
    from ..spark.engine import Processor, RunOptions

    with tempfile.TemporaryDirectory(prefix="headrace-dlq-replay-") as tmp:
        stats = Processor(pipeline, RunOptions(name=f"dlq-replay-{Path(pipeline_file).stem}", checkpoint=Path(tmp),
                                               registry=registry)).run()
    _mark(registry, conn, db, coll, used, Path(pipeline_file).name)
    result.update(replayed=len(used), stats=stats)
    return result


def _mark(registry, conn: str, db: str, coll: str, used: list[dict], into: str) -> None:
    from ..collections import open_collection
    from ..store.base import MergeSpec

    now = _dt.datetime.now(_dt.timezone.utc)
    marks = [{"_id": e["_id"], "replayedAt": now, "replayedInto": into} for e in used]
    res = open_collection(registry, conn, db, coll).merge_many(marks, MergeSpec(on=("_id",), when_matched="merge",
                                                                                when_not_matched="discard"))
    if res.errors:
        raise HeadraceError(f"replayed, but marking {len(res.errors)} DLQ entries failed: {res.errors[0][1]}",
                            code="DLQ_REPLAY_MARK")
