"""Helpers for window-stage tests: build window frames, run many cases in one Spark job.

A case is a name, a list of windows (each a list of documents in arrival order) and the inner
stages to run (``("$group", spec)``, ``("$sort", spec)``, ``("$limit", n)``, ``("$count", f)``).
:func:`run_cases` puts every case's windows in one DataFrame (window key = case name, window i
starts ``i`` five-minute steps after 2024-01-01), runs each case's stages on its slice, unions
the outputs and collects once.
"""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from headrace.spark.docs import from_variant, to_variant

SCHEMA = "_w struct<start:timestamp,end:timestamp,key:string>, _seq bigint, doc variant, _err string"
T0 = dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)
STEP = dt.timedelta(minutes=5)


@dataclass
class Case:
    name: str
    windows: list[list[Any]]
    stages: list[tuple[str, Any]]
    #: documents that arrive already failed: (window index, position, doc, error)
    failed: list[tuple[int, int, Any, str]] = field(default_factory=list)
    #: deliver the rows to Spark in reverse order (results must still follow ``_seq``)
    reverse_rows: bool = False


@dataclass
class Out:
    doc: Any
    err: str | None
    seq: int


def window(i: int, key: str) -> tuple:
    return (T0 + i * STEP, T0 + (i + 1) * STEP, key)


def case_rows(case: Case, seq0: int) -> list[tuple]:
    rows = []
    seq = seq0
    for wi, docs in enumerate(case.windows):
        items = [(d, None) for d in docs]
        for fwi, pos, d, err in case.failed:
            if fwi == wi:
                items.insert(pos, (d, err))
        for d, err in items:
            seq += 1
            rows.append((window(wi, case.name), seq, to_variant(d), err))
    return rows[::-1] if case.reverse_rows else rows


def apply_stages(df, stages):
    """The window-only ``stages`` (``(name, argument)``) as the engine runs a closing window's
    inner pipeline (:func:`headrace.spark.windows.pipeline.run_window_pipeline`: the compilers of
    :data:`headrace.spark.registry.WINDOW_STAGES`, a ``$sort`` and the ``$limit`` after it as one)."""
    from types import SimpleNamespace

    from headrace.spark.registry import WINDOW_STAGES
    from headrace.spark.windows.pipeline import run_window_pipeline
    from headrace.spec.stages import spec_of

    for name, _ in stages:
        if name not in WINDOW_STAGES:
            raise ValueError(name)
    return run_window_pipeline(df, None, (), [SimpleNamespace(name=n, spec=spec_of(n, a)) for n, a in stages])


def run_cases(spark, cases: list[Case]) -> dict[str, dict[int, list[Out]]]:
    """Run every case; returns ``{case name: {window index: [Out in _seq order]}}``."""
    from pyspark.sql import functions as F

    rows, seq = [], 0
    for c in cases:
        r = case_rows(c, seq)
        seq += len(r) + 1000
        rows += r
    df = spark.createDataFrame(rows, SCHEMA)
    outs = [apply_stages(df.filter(F.col("_w.key") == c.name), c.stages).select("_w", "_seq", "doc", "_err")
            for c in cases]
    out = outs[0]
    for o in outs[1:]:
        out = out.unionByName(o)
    result: dict[str, dict[int, list[Out]]] = {c.name: {} for c in cases}
    for r in out.collect():
        wi = int((r["_w"]["start"].replace(tzinfo=dt.timezone.utc) - T0) / STEP)
        result[r["_w"]["key"]].setdefault(wi, []).append(Out(from_variant(r["doc"]), r["_err"], r["_seq"]))
    for per in result.values():
        for lst in per.values():
            lst.sort(key=lambda o: o.seq)
    return result


def docs_of(outs: list[Out]) -> list[Any]:
    return [o.doc for o in outs if o.err is None]


def by_id(outs: list[Out]) -> dict:
    """Group outputs keyed by their ``_id`` (hashable form)."""
    return {_hashable(o.doc["_id"]): o.doc for o in outs if o.err is None}


def _hashable(v: Any) -> Any:
    if isinstance(v, dict):
        return tuple(sorted((k, _hashable(x)) for k, x in v.items()))
    if isinstance(v, list):
        return tuple(_hashable(x) for x in v)
    return v
