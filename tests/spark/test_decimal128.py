"""Decimal arithmetic as MongoDB's Decimal128 (``headrace/spark/expr/decimal128.py``): the exact
result rounded to 34 significant digits, ties to even; ints and longs converted exactly, doubles
to 15 significant digits (of their exact binary value). Checked against Python's ``decimal``
with the same context."""
from __future__ import annotations

import decimal
import random

import pytest

from headrace.mql.expressions import validate_expression
from _expr_helpers import check_cases, eval_columns

pytestmark = pytest.mark.spark

D = decimal.Decimal
CTX = decimal.Context(prec=34, rounding=decimal.ROUND_HALF_EVEN, Emin=-6143, Emax=6144)
CTX15 = decimal.Context(prec=15, rounding=decimal.ROUND_HALF_EVEN)


def nd(text: str) -> dict:
    return {"$numberDecimal": text}


CASES = [
    # products and quotients of fractions lost digits in DECIMAL(38,18) (0.0005 * 0.0003 gave 0)
    ({"a": D("0.0005"), "b": D("0.0003")}, {"$multiply": ["$a", "$b"]}, D("1.5E-7")),
    ({"a": D("1"), "b": D("3")}, {"$divide": ["$a", "$b"]}, D("0.3333333333333333333333333333333333")),
    ({"a": D("2"), "b": D("3")}, {"$divide": ["$a", "$b"]}, D("0.6666666666666666666666666666666667")),
    ({"a": D("19.99")}, {"$multiply": ["$a", 3]}, D("59.97")),
    ({"p": D("3.141592653589793238462643383279503")}, {"$multiply": ["$p", "$p"]},
     D("9.869604401089358618834490999876152")),
    ({"p": D("3.141592653589793238462643383279503")}, {"$add": ["$p", 1]}, D("4.141592653589793238462643383279503")),
    ({"p": D("3.141592653589793238462643383279503")}, {"$subtract": ["$p", D("0.0005")]},
     D("3.141092653589793238462643383279503")),
    # beyond what a VARIANT decimal holds: a {$numberDecimal} text
    ({"a": D("12345678901234567890.123456789")}, {"$multiply": ["$a", "$a"]},
     D("1.524157875323883675049535156253620E+38")),
    ({"a": D("1E-30"), "b": D("1E-30")}, {"$multiply": ["$a", "$b"]}, D("1E-60")),
    ({"a": D("1"), "b": D("-1E-40")}, {"$add": ["$a", "$b"]}, D("1")),
    # a double operand as 15 significant digits
    ({"a": D("1"), "b": 0.1}, {"$add": ["$a", "$b"]}, D("1.1")),
    ({"a": D("1"), "b": 1 / 3}, {"$add": ["$a", "$b"]}, D("1.333333333333333")),
    ({"a": D("-2.5")}, {"$abs": "$a"}, D("2.5")),
    ({"a": D("0.000000000000000000000000000001")}, {"$abs": "$a"}, D("1E-30")),
    ({"a": D("1E-40")}, {"$divide": [1, "$a"]}, D("1E+40")),
    ({"a": D("1E-40")}, {"$divide": ["$a", 0]}, None, "divide by zero"),
    ({"a": nd("0")}, {"$divide": [1, "$a"]}, None, "divide by zero"),
    ({"a": D("0.5")}, {"$add": ["$a", float("nan")]}, None, "out of range"),
    ({"a": D("53.13010235415597870314438744090659")}, {"$degreesToRadians": "$a"},
     D("0.9272952180016122324285124629224290")),
    ({"a": D("0.6435011087932843868028092287173227")}, {"$radiansToDegrees": "$a"},
     D("36.86989764584402129685561255909341")),
]


def test_documented_results(spark):
    for c in CASES:
        validate_expression(c[1], "case")
    check_cases(spark, CASES)


def _random_decimal(rng: random.Random) -> D:
    k = rng.choice([1, 2, 5, 17, 18, 30, 34, 34])
    digits = "".join(rng.choice("0123456789") for _ in range(k)).lstrip("0") or "0"
    return D(f"{'-' if rng.random() < 0.3 else ''}{digits}E{rng.randint(-45, 12)}")


def _operand(rng: random.Random):
    r = rng.random()
    if r < 0.7:
        return _random_decimal(rng)
    if r < 0.85:
        return rng.randint(-10**12, 10**12)
    # doubles from 1e-6 to 1e14: where a tie at the 16th digit is decided exactly (decimal128._double_text)
    return rng.choice([-1, 1]) * rng.uniform(1, 1e6) * 10.0 ** rng.randint(-6, 8)


def _model(x) -> D:
    if isinstance(x, float):
        return CTX15.plus(D(x))
    return CTX.plus(D(x))


OPS = {"$add": CTX.add, "$subtract": CTX.subtract, "$multiply": CTX.multiply, "$divide": CTX.divide}


def test_random_against_decimal_module(spark):
    """Random operands (decimals of 1-34 digits over 57 exponents, some ints and doubles): every
    operation's result equals Python's at 34 digits, ties to even."""
    from headrace.spark.expr import compile_expression
    from headrace.spark.registry import Ctx

    rng = random.Random(20261129)
    docs = []
    for _ in range(400):
        a = _random_decimal(rng)
        b = _operand(rng)
        docs.append({"a": a, "b": b} if rng.random() < 0.8 else {"a": b, "b": a})
    cols = {}
    for op in OPS:
        def col(doc, op=op):
            return compile_expression({op: ["$a", "$b"]}, Ctx(root=doc, meta={}).at(op)).value
        cols[op] = col
    rows = eval_columns(spark, docs, cols)
    bad = []
    for doc, row in zip(docs, rows):
        a, b = _model(doc["a"]), _model(doc["b"])
        for op, fn in OPS.items():
            if op == "$divide" and b == 0:
                continue
            want, got = fn(a, b), row[op]
            if not isinstance(got, D) or got != want:
                bad.append(f"{op} {doc['a']!r} {doc['b']!r}: got {got!r}, want {want}")
    assert not bad, f"{len(bad)} wrong:\n" + "\n".join(bad[:20])


def test_no_decimal_branch_where_the_types_are_known(spark):
    """A constant or a path whose type the batch's facts know (the typed fast path) is never a
    decimal, so arithmetic over such operands compiles without the decimal branch."""
    from pyspark.sql import functions as F

    from headrace.spark import values as V
    from headrace.spark.expr import decimal128 as Dec

    doc = F.col("doc")
    known_int = V.known(F.variant_get(doc, "$.a", "variant"), V.CODE["int"],
                        lambda t: F.variant_get(doc, "$.a", t))
    assert not Dec.possible([known_int, V.lit_value(2), V.lit_value(2.5)])
    assert Dec.possible([known_int, V.lit_value(D("1.5"))])
    assert Dec.possible([known_int, F.variant_get(doc, "$.b", "variant")])
