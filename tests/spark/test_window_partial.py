"""Windows kept as partial aggregates give the same results as windows kept as documents.

Every ``$group``-first case of ``test_window_stages`` (MongoDB's manual examples, typing, ties,
null/missing, per-document and per-group errors) runs twice: through the document path
(``apply_group`` over all the window's documents) and through the partial path
(:mod:`headrace.spark.windows.partial`): the documents split into micro-batches in arrival
order, each pre-aggregated on its own, some merged (as a compaction would) and merged again,
then finalised. Outputs (documents, errors, ``_seq``) must be equal.
"""
from __future__ import annotations

import os

import pytest

from headrace.spark.windows import partial as P

import _window_stage_cases as TWS
from _window_helpers import SCHEMA, Out, apply_stages, case_rows

pytestmark = pytest.mark.spark


def _cases():
    out = []
    for cases in TWS.CASES.values():
        for c in cases:
            if c.failed or not c.stages or c.stages[0][0] != "$group":
                continue
            plan = P.partial_plan(_Spec(c.stages))
            if plan is not None:
                out.append((c, plan))
    return out


class _Stage:
    def __init__(self, name, arg):
        from headrace.spec.stages import spec_of

        self.name, self.arg, self.spec = name, arg, spec_of(name, arg)


class _Spec:
    """What :func:`partial_plan` reads of a window spec."""

    kind = "tumbling"

    def __init__(self, stages):
        self.pipeline = [_Stage(n, a) for n, a in stages]


#: every third case in CI (the union of all is minutes of planning), and the decimal totals (a
#: running Decimal128 state); HEADRACE_LONG_TESTS=1 runs all
CASES = _cases() if os.environ.get("HEADRACE_LONG_TESTS") else \
    [c for i, c in enumerate(_cases()) if i % 3 == 0 or c[0].name == "decimal_sums"]


def _outs(frames) -> dict:
    """Collect the union of ``frames`` once: {(case, window start): [Out in _seq order]}."""
    from headrace.spark.docs import from_variant

    df = frames[0]
    for f in frames[1:]:
        df = df.unionByName(f)
    got: dict = {}
    for r in df.select("_w", "_seq", "doc", "_err").collect():
        got.setdefault((r["_w"]["key"], r["_w"]["start"]), []).append(
            Out(from_variant(r["doc"]), r["_err"], r["_seq"]))
    return {k: sorted(v, key=lambda o: o.seq) for k, v in got.items()}


def _all_rows(spark):
    """Every case's windows in one frame (window key = case name), with ``_t``, ``_arr`` and
    ``_b``: the document's position in its case, 0..1 (to split it into micro-batches)."""
    from pyspark.sql import functions as F

    rows, seq, spans = [], 0, []
    for c, _ in CASES:
        r = case_rows(c, seq)
        spans.append((c.name, seq, len(r)))
        seq += len(r) + 1000
        rows += r
    df = spark.createDataFrame(rows, SCHEMA)
    pos = None
    for name, s0, n in spans:
        this = F.when(F.col("_w.key") == name, (F.col("_seq") - F.lit(s0 + 1)) / F.lit(max(n, 1)))
        pos = this if pos is None else F.coalesce(pos, this)
    return df.withColumns({"_t": F.lit(0).cast("long"), "_arr": F.lit(0).cast("long"), "_b": pos})


def _partial(df, case, plan, batches: int, compact: bool):
    """The case through the partial path: ``batches`` micro-batches (by arrival order)."""
    from pyspark.sql import functions as F

    mine = df.filter(F.col("_w.key") == case.name)
    parts = [P.pre_aggregate(mine.filter(F.floor(F.col("_b") * batches) == b).drop("_b"), plan)
             for b in range(batches)]
    state = parts[0]
    for i, p in enumerate(parts[1:]):
        state = state.unionByName(p)
        if compact and i % 2 == 0:
            state = P.merge(state, plan)
    return apply_stages(P.finish(state, plan), case.stages[1:])


@pytest.fixture(scope="module")
def expected(spark):
    from pyspark.sql import functions as F

    df = _all_rows(spark).drop("_t", "_arr", "_b")
    return _outs([apply_stages(df.filter(F.col("_w.key") == c.name), c.stages) for c, _ in CASES])


@pytest.mark.parametrize("batches,compact", [
    (1, False),
    # three batches with compaction: a large plan, minutes on this machine: HEADRACE_LONG_TESTS=1
    pytest.param(3, True, marks=pytest.mark.skipif(not os.environ.get("HEADRACE_LONG_TESTS"),
                                                   reason="long: HEADRACE_LONG_TESTS=1"))])
def test_partial_path_equals_document_path(spark, expected, batches, compact):
    assert len(_cases()) >= 15, [c.name for c, _ in _cases()]
    df = _all_rows(spark)
    got = _outs([_partial(df, c, plan, batches, compact) for c, plan in CASES])
    assert set(got) == set(expected)
    for k in expected:
        assert got[k] == expected[k], k
def test_non_decomposable_pipelines_keep_documents():
    assert P.partial_plan(_Spec([("$group", {"_id": None, "m": {"$median": {"input": "$x", "method": "approximate"}}})])) is None
    assert P.partial_plan(_Spec([("$sort", {"x": 1}), ("$group", {"_id": None, "n": {"$count": {}}})])) is None
    s = _Spec([("$group", {"_id": "$k", "n": {"$count": {}}})])
    s.kind = "session"
    assert P.partial_plan(s) is None
    plan = P.partial_plan(_Spec([("$group", {"_id": "$k", "n": {"$count": {}}}), ("$sort", {"n": -1}), ("$limit", 1)]))
    assert plan is not None and [st.name for st in plan.rest] == ["$sort", "$limit"]
