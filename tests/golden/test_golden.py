"""The golden corpus: one JSON file per whole-pipeline case in ``cases/``.

A case has ``pipeline`` (stages; when it does not start with ``$source``, ``input`` becomes
inline ``documents``), and either ``error`` (the expected stable error code, checked without
Spark) or ``expected`` (outputs in order, compared without ``_stream_meta`` and ``_ts``) and
optionally ``dlq`` (per DLQ entry: ``operatorName`` and ``reason_contains``). Outputs compare
with their fields in order, as MongoDB gives them (:mod:`headrace.mql.field_order`). A case whose
``knownDifference`` names how headrace differs from MongoDB's documented output is a strict
xfail: it keeps the manual's expected output and passes the day the difference is fixed. A case's
``unorderedArrays`` names top-level fields whose arrays compare as multisets, where the manual says
the order of the elements is unspecified (``$setUnion``, ``$setIntersection``). Decimals compare
by exponent (``NumberDecimal("200.0")`` is not ``NumberDecimal("200")``: MongoDB prints both as
they are) and by value to 33 significant digits: the transcendental operators are within a unit
of the 34th digit of MongoDB's (README, "Decimals").
"""
from __future__ import annotations

import decimal
import json
from pathlib import Path

import pytest

from headrace import ejson
from headrace.errors import PipelineError
from headrace.spec import parse_pipeline

CASES = sorted((Path(__file__).parent / "cases").glob("*.json"))


def _load(path: Path) -> dict:
    case = json.loads(path.read_text())
    stages = case["pipeline"]
    if "input" in case and "$source" not in stages[0]:
        stages = [{"$source": {"documents": case.get("input", [])}}] + stages
    case["stages"] = stages
    return case


_DEC33 = decimal.Context(prec=33, rounding=decimal.ROUND_HALF_EVEN)


def _dec_by_value(v):
    """``v`` with each decimal as its exponent and its value to 33 digits."""
    if isinstance(v, dict):
        if set(v) == {"$numberDecimal"}:
            d = decimal.Decimal(v["$numberDecimal"])
            return {"$numberDecimal": [str(d.as_tuple().exponent), str(_DEC33.plus(d))]}
        return {k: _dec_by_value(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_dec_by_value(x) for x in v]
    return v


def _unordered(doc: dict, fields: list[str]) -> dict:
    """``doc`` with the arrays of ``fields`` in one canonical order (by their elements' JSON)."""
    return {k: sorted(v, key=lambda x: json.dumps(x, sort_keys=True)) if k in fields and isinstance(v, list) else v
            for k, v in doc.items()}


def _norm(v):
    return json.loads(ejson.dumps(ejson.from_plain(v) if not isinstance(v, (str, int, float)) else v))


@pytest.mark.parametrize("path", [p for p in CASES if "error" in json.loads(p.read_text())], ids=lambda p: p.stem)
def test_refused(path):
    case = _load(path)
    with pytest.raises(PipelineError) as info:
        parse_pipeline(case["stages"])
    assert info.value.code == case["error"], str(info.value)
    assert info.value.where.position is not None or info.value.where.path


#: every STREAMING_EVERY-th case also runs as a streaming query (``run_pipeline(once=False)``); the
#: others run as ``headrace process`` runs them, as one batch job (tests/spark/engine/test_once.py)
STREAMING_EVERY = 8


def _run_cases():
    out = []
    for i, p in enumerate(CASES):
        case = json.loads(p.read_text())
        if "error" in case:
            continue
        marks = ([pytest.mark.xfail(strict=True, reason=case["knownDifference"])]
                 if "knownDifference" in case else [])
        out.append(pytest.param(p, True, id=p.stem, marks=marks))
        if i % STREAMING_EVERY == 0:
            out.append(pytest.param(p, False, id=f"{p.stem}-streaming", marks=marks))
    return out


@pytest.mark.spark
@pytest.mark.parametrize(("path", "once"), _run_cases())
def test_case(path, once, spark):
    from headrace.testing import field_pairs, run_pipeline

    case = _load(path)
    res = run_pipeline(case["stages"], strip_meta=True, once=once)
    got = [_dec_by_value(json.loads(ejson.dumps(d))) for d in res.outputs]
    want = [_dec_by_value(json.loads(ejson.dumps(ejson.from_plain(d)))) for d in case["expected"]]
    if case.get("unorderedArrays"):
        got = [_unordered(d, case["unorderedArrays"]) for d in got]
        want = [_unordered(d, case["unorderedArrays"]) for d in want]
    assert got == want
    assert field_pairs(got) == field_pairs(want), "same documents, fields in another order"
    expected_dlq = case.get("dlq", [])
    assert len(res.dlq) == len(expected_dlq), res.dlq
    for entry, exp in zip(res.dlq, expected_dlq):
        assert entry["operatorName"] == exp["operatorName"]
        assert exp["reason_contains"] in entry["errInfo"]["reason"]
        assert entry["doc"] is not None
