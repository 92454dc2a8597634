"""Test helpers (public API): run a pipeline over documents and get outputs and DLQ back.

    from headrace.testing import run_pipeline
    result = run_pipeline([{"$source": {"documents": [...]}}, {"$match": {"a": 1}}])
    result.outputs, result.dlq, result.stats

``run_pipeline(pipeline, documents=...)`` replaces the ``$source`` with inline ``documents``
(keeping ``timeField``/``tsFieldName``/``partitionIdleTimeout``); pass ``replay=...`` for replay
mode. Without ``checkpoint`` the run is ephemeral, as ``headrace process`` without
``--checkpoint``: inline documents (one micro-batch) run as one batch job instead of a
streaming query (``RunOptions.once``: the same outputs, DLQ entries and counters, about 2 s
less per run); ``once=False`` forces the streaming query. Outputs are ``headrace.ejson``
values (dates are aware datetimes). ``strip_meta`` drops
``_stream_meta`` and the ``tsFieldName`` field, which most assertions do not care about.
``field_pairs(value)`` makes ``==`` compare field order too (outputs keep MongoDB's order).
"""
from __future__ import annotations

import copy
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from .connections import Registry


@dataclass
class Result:
    outputs: list[dict] = field(default_factory=list)
    dlq: list[dict] = field(default_factory=list)
    stats: dict = field(default_factory=dict)
    emitted_at: list = field(default_factory=list)    # per output: (processing clock, W) when emitted
    watermarks: list = field(default_factory=list)    # per micro-batch: (processing clock, W) after it


def _strip(doc: dict, ts_field: str) -> dict:
    return {k: v for k, v in doc.items() if k not in ("_stream_meta", ts_field)}


def run_pipeline(pipeline: Any, documents: list | None = None, *, replay: Mapping[str, Any] | None = None,
                 options: Mapping[str, Any] | None = None, connections: "str | Path | None" = None,
                 registry: Registry | None = None, checkpoint: "str | Path | None" = None,
                 strip_meta: bool = False, limit: int | None = None, duration: float | None = None,
                 home: "str | Path | None" = None, max_input: int | None = None,
                 once: bool | None = None) -> Result:
    """Validate and run ``pipeline`` to completion on the shared local Spark session."""
    from .launch import prepare, start

    obj = copy.deepcopy(pipeline)
    if isinstance(obj, dict):
        stages, opts = obj["pipeline"], dict(obj.get("options", {}))
    else:
        stages, opts = obj, {}
    opts.update(options or {})
    if documents is not None or replay is not None:
        src = dict(stages[0].get("$source", {})) if stages and "$source" in stages[0] else {}
        src.pop("connectionName", None)
        src.pop("stream", None)
        if documents is not None:
            src["documents"] = documents
        if replay is not None:
            src["replay"] = dict(replay)
        if stages and "$source" in stages[0]:
            stages = [{"$source": src}] + stages[1:]
        else:
            stages = [{"$source": src}] + stages
    run = prepare({"pipeline": stages, "options": opts}, connections=connections, home=home, registry=registry)
    parsed = run.pipeline
    res = Result()
    with tempfile.TemporaryDirectory(prefix="headrace-test-") as tmp:
        state: dict = {}

        def on_batch(_bid: int, clock: int | None, w: int | None) -> None:
            state["now"] = (_ms_dt(clock), _ms_dt(w))
            res.watermarks.append(state["now"])

        def on_output(docs: list[dict]) -> None:
            res.outputs.extend(docs)
            res.emitted_at.extend([state.get("now")] * len(docs))

        proc = start(run, name="test", checkpoint=Path(checkpoint or tmp),
                     once=checkpoint is None if once is None else once,
                     on_output=on_output, on_dlq=res.dlq.extend, on_batch=on_batch)
        res.stats = proc.run(duration_s=duration, limit=limit, max_input=max_input)
    if strip_meta:
        ts = parsed.source.ts_field_name
        res.outputs = [_strip(d, ts) for d in res.outputs]
        res.dlq = [{**d, "doc": _strip(d["doc"], ts) if isinstance(d.get("doc"), dict) else d.get("doc")}
                   for d in res.dlq]
    return res


def field_pairs(value: Any) -> Any:
    """``value`` with every document as its list of ``(field, value)`` pairs, so that ``==``
    compares field order too (``dict`` equality ignores it): ``field_pairs(got) == field_pairs(want)``."""
    if isinstance(value, dict):
        return [(k, field_pairs(x)) for k, x in value.items()]
    if isinstance(value, list):
        return [field_pairs(x) for x in value]
    return value


def _ms_dt(ms: int | None) -> Any:
    from . import ejson
    from .timing import PLUS_INF

    if ms is None:
        return None
    return "+inf" if ms >= PLUS_INF else ejson.millis_to_datetime(ms)


def replay_docs(rows: list[tuple], *, partition: bool = False) -> list[dict]:
    """Build replay documents from tuples ``(arrival, event_time[, partition])``; ``event_time``
    None makes a clock tick. Fields: ``arrival``, ``t`` and ``p``."""
    out = []
    for r in rows:
        d: dict[str, Any] = {"arrival": r[0]}
        if r[1] is not None:
            d["t"] = r[1]
        if partition:
            d["p"] = r[2]
        out.append(d)
    return out
