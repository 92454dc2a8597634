"""Helpers for Spark expression tests: documents in, decoded MQL values out.

``eval_columns(spark, docs, {name: fn(doc_col) -> Column})`` builds one batch DataFrame with
a ``doc variant`` column and evaluates every column in one ``collect``; VARIANT results are
decoded with :func:`headrace.spark.docs.from_variant` (SQL NULL -> :data:`MISSING`).
``eval_exprs(spark, cases)`` compiles MQL expressions with ``compile_expression`` and returns,
per case, ``(value, error)``.
"""
from __future__ import annotations

import contextlib
import datetime as _dt
import decimal
import math
from typing import Any, Callable, Iterable

from headrace import ejson
from headrace.spark.docs import from_variant, to_variant


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING = _Missing()


def _decode(x: Any) -> Any:
    from pyspark.sql.types import VariantVal

    if x is None:
        return MISSING
    if isinstance(x, VariantVal):
        return from_variant(x)
    return x


def doc_frame(spark, docs: Iterable[dict]):
    return spark.createDataFrame([(to_variant(d),) for d in docs], "doc variant")


def eval_columns(spark, docs: list[dict], columns: dict[str, Callable]) -> list[dict]:
    """Per document, {name: decoded value} of ``columns[name](F.col("doc"))``."""
    from pyspark.sql import functions as F

    df = doc_frame(spark, docs)
    doc = F.col("doc")
    rows = df.select(*[fn(doc).alias(f"c{i}") for i, fn in enumerate(columns.values())]).collect()
    names = list(columns)
    return [{n: _decode(r[f"c{i}"]) for i, n in enumerate(names)} for r in rows]


def eval_exprs(spark, cases: list[tuple[dict, Any]], meta: dict | None = None,
               hoist: bool = True) -> list[tuple[Any, Any]]:
    """Evaluate ``(doc, expression)`` pairs; one DataFrame row per case, one collect.

    With ``hoist`` the field paths are evaluated once, as a stage does
    (:class:`headrace.spark.hoist.Hoister`); without, inline, as accumulators and windows do.
    Returns ``(value, error)`` per case: value decoded (MISSING for SQL NULL), error a string
    or None."""
    from pyspark.sql import functions as F

    from headrace.spark.expr import compile_expression
    from headrace.spark.hoist import Hoister
    from headrace.spark.registry import Ctx

    df = spark.createDataFrame([(i, to_variant(d)) for i, (d, _) in enumerate(cases)], "i int, doc variant")
    h = Hoister() if hoist else None
    ctx = Ctx(root=F.col("doc"), meta=meta or {}, hoist=h)
    vals, errs = [], []
    with (h.active() if h is not None else contextlib.nullcontext()):
        for i, (_, expr) in enumerate(cases):
            c = compile_expression(expr, ctx.at(f"case{i}"))
            vals.append(F.when(F.col("i") == i, c.value))
            errs.append(F.when(F.col("i") == i, c.error) if c.error is not None else None)
    value = F.coalesce(*vals) if len(vals) > 1 else vals[0]
    err_cols = [e for e in errs if e is not None]
    error = (F.coalesce(*err_cols) if len(err_cols) > 1 else err_cols[0]) if err_cols else F.lit(None).cast("string")
    if h is not None:
        df = h.apply(df)
    # sorted here, not by orderBy: its shuffle doubled the tasks that deserialize the plan
    rows = sorted(df.select("i", value.alias("v"), error.alias("e")).collect(), key=lambda r: r["i"])
    return [(_decode(r["v"]), r["e"]) for r in rows]


def same(a: Any, b: Any) -> bool:
    """Exact MQL equality of decoded values: types matter (1 vs 1.0 vs Decimal), NaN == NaN,
    floats compared to 1e-9 relative, decimals by value and exponent."""
    if a is MISSING or b is MISSING:
        return a is b
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return a == b or math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
    if isinstance(a, int) and isinstance(b, int):
        return a == b
    if type(a) is not type(b):
        if {type(a), type(b)} <= {int, ejson.Int64}:
            return a == b
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, _dt.datetime):
        return a == b
    if isinstance(a, decimal.Decimal) and (a.is_nan() or b.is_nan()):
        return a.is_nan() and b.is_nan()
    if isinstance(a, decimal.Decimal):     # and the exponent: Decimal128's 200.0 is not 200
        return a.as_tuple() == b.as_tuple()
    return a == b


def check_cases(spark, cases: list[tuple], meta: dict | None = None, chunk: int = 4,
                hoist: bool = True) -> None:
    """``cases``: ``(doc, expr, expected)`` or ``(doc, expr, expected, error_substring)``; with
    an error substring the row must carry an error containing it. Cases run ``chunk`` per query
    (one projection holding every case's expression); ``hoist``: see :func:`eval_exprs`."""
    results = []
    for i in range(0, len(cases), chunk):
        results += eval_exprs(spark, [(c[0], c[1]) for c in cases[i:i + chunk]], meta, hoist=hoist)
    bad = []
    for case, (val, err) in zip(cases, results):
        doc, expr, expected = case[:3]
        want_err = case[3] if len(case) > 3 else None
        if want_err is not None:
            if err is None or want_err.lower() not in err.lower():
                bad.append(f"{expr!r} on {doc!r}: expected error ~{want_err!r}, got value {val!r} error {err!r}")
        elif err is not None or not same(val, expected):
            bad.append(f"{expr!r} on {doc!r}: expected {expected!r}, got {val!r} (error {err!r})")
    assert not bad, "\n".join(bad)


def run_cases(spark, cases: list[tuple], meta: dict | None = None, hoist: bool = True) -> None:
    """:func:`check_cases` after validating every case's expression (as a pipeline would be)."""
    from headrace.mql.expressions import validate_expression

    for c in cases:
        validate_expression(c[1], "case")
    check_cases(spark, cases, meta, hoist=hoist)


def utc_dt(*a: int) -> _dt.datetime:
    """``datetime(*a)`` in UTC (how the tables write dates)."""
    return _dt.datetime(*a, tzinfo=ejson.UTC)
