"""Error isolation: one document whose expression fails goes to the DLQ, alone; the others of the
same batch come out right, in every stage that evaluates expressions.

The cases are generated, not hand-picked: :func:`failing_cases` takes every operator of the
validator's catalogue (``headrace.mql.expressions.OPERATORS``), builds it over a field ``$v``
in the first argument shape the validator accepts and whose compiled form can fail, and
evaluates it over a pool of values to find a value that fails and one that does not. Each
stage then runs over its operators: document ``k`` selects operator ``k`` through a
``$switch``, one good and one bad document per operator.

Compiling and analysing one operator costs about a second of Spark time, so by default a
deterministic spread of the catalogue is used (every ``STRIDE``-th operator, the operators
dealt round-robin over the stages); ``HEADRACE_FULL_ISOLATION=1`` runs every operator through
every stage (several minutes).
"""
from __future__ import annotations

import datetime as _dt
import json
import os

import pytest

from headrace import ejson
from headrace.errors import PipelineError
from headrace.mql.expressions import OPERATORS, validate_expression
from headrace.spark.docs import from_variant, to_variant

pytestmark = pytest.mark.spark

V = "$v"
CHUNK = 8
FULL = os.environ.get("HEADRACE_FULL_ISOLATION") == "1"
STRIDE = 1 if FULL else 8
#: values the operators are tried on; a good and a bad one are picked per operator
POOL = [7, "7", "q", 0, -1, 2.5, [1, 2], {"a": 1}, _dt.datetime(2020, 1, 2, 3, 4, 5, tzinfo=_dt.timezone.utc),
        True, "2020-01-02", [["a", 1]], "5ab9cbe531c2ab715d42129e", [[1, 2], [3]], None]
#: constant values for the other named arguments of object-form operators
NAMED = {"regex": "a", "find": "a", "replacement": "b", "to": "int", "unit": "day", "amount": 1,
         "format": "%Y", "in": "$$this", "cond": True, "initialValue": 0, "vars": {"x": 1},
         "branches": [{"case": True, "then": 1}], "field": "a", "value": 1, "algorithm": "sha256"}


def _shapes(op: str) -> list:
    spec = OPERATORS[op]
    if spec.form == "list":
        return [[V], [V, 2], [2, V], [V, "a"], [V, 1, 2], [V, V], [V, V, V], [[V], 1], [1, [V]]]
    if spec.form == "date_part":
        return [V]
    if spec.form == "object":
        out = []
        for key in sorted(spec.required) or sorted(spec.optional):
            arg = {k: NAMED.get(k, V) for k in spec.required}
            arg[key] = V if key != "inputs" else [V]
            out.append(arg)
        return out
    return []


def failing_cases(spark) -> list[tuple[str, object, object, object]]:
    """``(operator, expression, good value, bad value)`` for every operator that can fail."""
    from pyspark.sql import functions as F

    from headrace.spark.expr import compile_expression
    from headrace.spark import values as V_
    from headrace.spark.registry import Ctx

    ctx = Ctx(root=F.col("doc"))
    candidates = []
    for op in sorted(OPERATORS)[::STRIDE]:
        for arg in _shapes(op):
            expr = {op: arg}
            try:
                validate_expression(expr, "x")
            except PipelineError:
                continue
            c = compile_expression(expr, ctx)
            if c.error is not None:
                candidates.append((op, expr, c))
                break
    df = spark.createDataFrame([(i, to_variant({"v": v})) for i, v in enumerate(POOL)], "i int, doc variant")
    rows: dict[int, dict] = {i: {} for i in range(len(POOL))}
    for lo in range(0, len(candidates), CHUNK):  # small projections analyse much faster than one big one
        cols = []
        for j in range(lo, min(lo + CHUNK, len(candidates))):
            c = candidates[j][2]
            cols += [(~V_.is_null_or_missing(c.value)).alias(f"p{j}"), c.error.alias(f"e{j}")]
        for r in df.select("i", *cols).collect():
            rows[r["i"]].update(r.asDict())
    rows = [rows[i] for i in range(len(POOL))]
    out = []
    for j, (op, expr, _) in enumerate(candidates):
        good = [POOL[r["i"]] for r in rows if r[f"e{j}"] is None and r[f"p{j}"]]
        bad = [POOL[r["i"]] for r in rows if r[f"e{j}"] is not None]
        if good and bad:
            out.append((op, expr, good[0], bad[0]))
    return out


@pytest.fixture(scope="module")
def cases(spark):
    found = failing_cases(spark)
    # the generator must keep finding the usual suspects
    names = {c[0] for c in found}
    if FULL:
        assert {"$toInt", "$add", "$divide", "$concat", "$size", "$year", "$dateFromString", "$setUnion"} <= names, names
    assert len(found) >= (60 if FULL else 6), names
    return found


def _deal(cases, n: int, i: int) -> list:
    """The operators of stage ``i`` of ``n``: all of them in the full form, else round-robin
    (at least one per stage)."""
    if FULL:
        return cases
    return cases[i::n] or [cases[i % len(cases)]]


def _switch(cases) -> dict:
    return {"$switch": {"branches": [{"case": {"$eq": ["$k", i]}, "then": expr}
                                     for i, (_, expr, _, _) in enumerate(cases)]}}


def _docs(cases) -> list[dict]:
    docs = []
    for i, (_, _, good, bad) in enumerate(cases):
        docs += [{"k": i, "ok": True, "v": good}, {"k": i, "ok": False, "v": bad}]
    return docs


def _stages(cases) -> dict[str, list[dict]]:
    e = _switch(cases)
    return {
        "$project": [{"$project": {"_id": 0, "k": 1, "ok": 1, "r": e}}],
        "$addFields dotted": [{"$addFields": {"x.y": e, "k": "$k"}}],
        "$set dotted": [{"$set": {"x.y": e}}],
        "$replaceRoot": [{"$replaceRoot": {"newRoot": {"k": "$k", "ok": "$ok", "r": e}}}],
        "$replaceWith": [{"$replaceWith": {"k": "$k", "ok": "$ok", "r": e}}],
        "$unset then $project": [{"$unset": "zz"}, {"$project": {"k": 1, "ok": 1, "r": e}}],
        "$match $expr": [{"$match": {"$expr": {"$ne": [e, "never"]}}}],
        "$validate": [{"$validate": {"validator": {"$expr": {"$ne": [e, "never"]}}, "validationAction": "dlq"}}],
    }


def _frame(spark, docs):
    return spark.createDataFrame([(to_variant(d),) for d in docs], "doc variant").selectExpr(
        "doc", "CAST(NULL AS STRING) AS _err", "CAST(NULL AS STRING) AS _op")


def _check(name, cases, rows, good_doc):
    """rows: (doc, err, op); exactly the bad document of every case fails, naming its operator."""
    bad = []
    seen_good, seen_bad = set(), set()
    for doc, err, op in rows:
        if err is None:
            k = good_doc(doc)
            if k is None:
                bad.append(f"{name}: unexpected output {doc}")
            else:
                seen_good.add(k)
            continue
        k, ok = doc.get("k"), doc.get("ok")
        if ok is not False:
            bad.append(f"{name}: good document of {cases[k][0] if k is not None else '?'} failed: {err}")
            continue
        seen_bad.add(k)
        if cases[k][0] not in err:
            bad.append(f"{name}: {cases[k][0]} reason does not name the operator: {err}")
    for k, (op, expr, good, badv) in enumerate(cases):
        if k not in seen_good:
            bad.append(f"{name}: {op} lost the good document (v={good!r}) {json.dumps(expr, default=str)}")
        if k not in seen_bad:
            bad.append(f"{name}: {op} let the bad document through (v={badv!r})")
    return bad


def test_one_failing_document_fails_alone_in_every_stage(spark, cases):
    from pyspark.sql import functions as F

    from headrace.spark.stages import Env, apply_stages
    from headrace.spec import parse_pipeline

    problems = []
    frames, dealt = [], {}
    names = list(_stages(cases))
    for i, name in enumerate(names):
        # $project (drops fields, the case) takes every sampled operator
        mine = cases if name == "$project" else _deal(cases, len(names), i)
        # the full form runs CHUNK operators per $switch: a huge CASE tree is slow to analyse
        for j, part in enumerate([mine[k:k + CHUNK] for k in range(0, len(mine), CHUNK)] if FULL else [mine]):
            label = f"{name} #{j}"
            dealt[label] = part
            p = parse_pipeline([{"$source": {"documents": []}}, *_stages(part)[name]])
            out = apply_stages(_frame(spark, _docs(part)), p.before, Env())
            frames.append(out.select(F.lit(label).alias("stage"), "doc", "_err", "_op"))
    union = frames[0]
    for f in frames[1:]:
        union = union.unionByName(f)
    by_stage: dict[str, list] = {}
    for r in union.collect():
        by_stage.setdefault(r["stage"], []).append((from_variant(r["doc"]), r["_err"], r["_op"]))
    for label, rows in by_stage.items():
        cases = dealt[label]
        name = label.rsplit(" #", 1)[0]
        if name in ("$match $expr", "$validate"):
            problems += _check(name, cases, rows, lambda d: d["k"] if d.get("ok") else None)
        elif name.startswith("$addFields") or name.startswith("$set"):
            problems += _check(name, cases, rows, lambda d: d["k"] if d.get("ok") and "x" in d else None)
        else:
            problems += _check(name, cases, rows, lambda d: d["k"] if d.get("ok") and "r" in d else None)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("kind", ["$tumblingWindow", "$hoppingWindow", "$sessionWindow"])
def test_group_keys_and_accumulators_fail_alone_in_windows(spark, cases, kind):
    """Inside each window kind, ``$group``'s ``_id`` and accumulator expressions: the bad
    document of a window fails alone; the group of the good one comes out."""
    from pyspark.sql import functions as F

    from headrace.spark.windows.pipeline import run_window_pipeline
    from headrace.spec import parse_pipeline

    kinds = ["$tumblingWindow", "$hoppingWindow", "$sessionWindow"]
    cases = _deal(cases, 3, kinds.index(kind))
    e = _switch(cases)
    inner = [{"$group": {"_id": {"k": "$k", "r": e}, "n": {"$sum": 1}}}, {"$project": {"_id": 1}}]
    acc = [{"$group": {"_id": "$k", "r": {"$push": e}}}]
    size = {"interval": {"size": 1, "unit": "second"}}
    opts = {"$tumblingWindow": size, "$hoppingWindow": {**size, "hopSize": {"size": 1, "unit": "second"}},
            "$sessionWindow": {"partitionBy": "$k", "gap": {"size": 1, "unit": "second"}}}[kind]
    docs = _docs(cases)
    t0 = _dt.datetime(2024, 1, 1, tzinfo=_dt.timezone.utc)
    rows = [((t0, t0 + _dt.timedelta(seconds=1), str(d["k"])), i, to_variant(d)) for i, d in enumerate(docs)]
    framed = spark.createDataFrame(rows, "_w struct<start:timestamp,end:timestamp,key:string>, _seq bigint, "
                                         "doc variant").withColumns(
        {"_err": F.lit(None).cast("string"), "_op": F.lit(None).cast("string")})
    outs = []
    for label, pipeline in (("_id", inner), ("accumulators", acc)):
        p = parse_pipeline([{"$source": {"documents": []}}, {kind: {**opts, "pipeline": pipeline}}])
        out = run_window_pipeline(framed, p.window, ())
        outs.append(out.select(F.lit(label).alias("what"), "doc", "_err", "_op"))
    got: dict[str, list] = {}
    for r in outs[0].unionByName(outs[1]).collect():
        got.setdefault(r["what"], []).append((from_variant(r["doc"]), r["_err"], r["_op"]))
    problems = _check(f"{kind} $group _id", cases, got["_id"], lambda d: d["_id"]["k"])
    problems += _check(f"{kind} $group accumulators", cases, got["accumulators"],
                       lambda d: d["_id"] if len(d["r"]) == 1 else None)
    assert all(op == "$group" for _, err, op in got["_id"] + got["accumulators"] if err), got
    assert not problems, "\n".join(problems)


def test_project_reproduction_end_to_end():
    """The issue's reproduction through the whole engine: the good document comes out, the bad
    one goes to the DLQ with a reason naming its value."""
    from headrace.testing import run_pipeline

    res = run_pipeline([{"$project": {"_id": 0, "zeta": 1, "c": {"$toInt": "$n"}}}],
                       documents=[{"zeta": 1, "n": "7"}, {"zeta": 3, "n": "q"}], strip_meta=True)
    assert res.outputs == [{"zeta": 1, "c": 7}]
    assert len(res.dlq) == 1
    assert res.dlq[0]["operatorName"] == "$project"
    assert res.dlq[0]["errInfo"]["reason"] == '$toInt: cannot convert string "q" to int'
