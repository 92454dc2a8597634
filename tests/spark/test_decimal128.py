"""Decimal arithmetic as MongoDB's Decimal128 (``headrace/spark/expr/decimal128.py``): the exact
result rounded to 34 significant digits, ties to even; ints and longs converted exactly, doubles
to 15 significant digits (of their exact binary value). Rounding to a place and remainders
(``decimal_quantize.py``) exact at any magnitude; the expression forms of ``$sum``/``$avg`` add
as MongoDB's accumulators. Checked against Python's ``decimal`` with the same context."""
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
    ({"a": D("1"), "b": D("-1E-40")}, {"$add": ["$a", "$b"]}, D("1.000000000000000000000000000000000")),
    # a double operand as 15 significant digits
    ({"a": D("1"), "b": 0.1}, {"$add": ["$a", "$b"]}, D("1.100000000000000")),
    # the exponent as IEEE 754 gives it: a sum's the smaller, a product's the sum, an exact quotient's the difference
    ({"a": D("1.50"), "b": 1}, {"$add": ["$a", "$b"]}, D("2.50")),
    ({"a": D("20.0"), "b": 10}, {"$multiply": ["$a", "$b"]}, D("200.0")),
    ({"a": D("50.0"), "b": 2}, {"$divide": ["$a", "$b"]}, D("25.0")),
    ({"a": D("1"), "b": 4}, {"$divide": ["$a", "$b"]}, D("0.25")),
    ({"a": D("0.00"), "b": D("5E+2")}, {"$add": ["$a", "$b"]}, D("500.00")),
    ({"a": D("0E-3"), "b": 4}, {"$divide": ["$a", "$b"]}, D("0.000")),
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


def _exact(x) -> D:
    """A decimal operand rounded to 34 digits, its sign kept (``plus`` would make -0 a 0)."""
    return CTX.create_decimal(D(x))


def _model(x) -> D:
    """MongoDB's Decimal128 of an operand: a double quantized to exactly 15 digits (2.5 is
    2.50000000000000), an int at exponent 0."""
    if isinstance(x, float):
        if x == 0:
            return D(0)
        return D(x).quantize(D(1).scaleb(CTX15.plus(D(x)).adjusted() - 14), context=CTX15)
    return _exact(x)


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
            if not isinstance(got, D) or got.as_tuple() != want.as_tuple():     # exponents too
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


ROUNDING_CASES = [
    # beyond DECIMAL(38,18): nothing came out (1.5E+30), or digits past the 18th place were lost
    # at the place's exponent (IEEE 754's quantize): 31 digits at 0, 2E+1 at -1
    ({"a": D("1.5E+30")}, {"$round": ["$a", 0]}, D("1500000000000000000000000000000")),
    ({"a": D("1.5E+30")}, {"$trunc": ["$a", -19]}, D("1.50000000000E+30")),
    ({"a": D("19.25")}, {"$round": ["$a", -1]}, D("2E+1")),
    ({"a": D("-0.4")}, {"$round": ["$a", 0]}, D("-0")),
    ({"a": D("2.5E-25")}, {"$round": ["$a", 25]}, D("2E-25")),
    ({"a": D("3.5E-25")}, {"$round": ["$a", 25]}, D("4E-25")),
    ({"a": D("-1.99E-25")}, {"$trunc": ["$a", 25]}, D("-1E-25")),
    ({"a": D("0.1000000000000000000001")}, {"$round": ["$a", 21]}, D("0.100000000000000000000")),
    ({"a": D("0.1000000000000000000006")}, {"$round": ["$a", 21]}, D("0.100000000000000000001")),
    ({"a": D("-12.5")}, {"$round": ["$a", 0]}, D("-12")),
    ({"a": D("-13.5")}, {"$round": "$a"}, D("-14")),
    ({"a": D("1234.5678")}, {"$round": ["$a", -2]}, D("1.2E+3")),
    ({"a": D("0.4")}, {"$round": ["$a", 0]}, D("0")),
    ({"a": D("0.6")}, {"$round": ["$a", 0]}, D("1")),
    ({"a": D("0.06")}, {"$round": ["$a", 0]}, D("0")),
    ({"a": D("99.96")}, {"$round": ["$a", 1]}, D("100.0")),
    ({"a": D("1E+40")}, {"$round": ["$a", 0]}, D("NaN")),       # 41 digits: MongoDB's NaN
    ({"a": D("-2.000000000000000000000001")}, {"$ceil": "$a"}, D("-2")),
    ({"a": D("-2.000000000000000000000001")}, {"$floor": "$a"}, D("-3")),
    ({"a": D("2.000000000000000000000001")}, {"$ceil": "$a"}, D("3")),
    ({"a": D("1.5E+30")}, {"$floor": "$a"}, D("1500000000000000000000000000000")),
    ({"a": D("1.55E+20"), "p": -19}, {"$round": ["$a", "$p"]}, D("1.6E+20")),
    ({"a": D("1E-25"), "p": 30}, {"$trunc": ["$a", "$p"]}, D("1.00000E-25")),
    # $mod: the exact remainder, with the dividend's sign
    ({"a": D("1.5E+30"), "b": D("7")}, {"$mod": ["$a", "$b"]}, D(1500000000000000000000000000000 % 7)),
    ({"a": D("1E-25"), "b": D("0.3")}, {"$mod": ["$a", "$b"]}, D("1E-25")),
    ({"a": D("-10.5"), "b": 3}, {"$mod": ["$a", "$b"]}, D("-1.5")),
    ({"a": D("10.5"), "b": D("-3")}, {"$mod": ["$a", "$b"]}, D("1.5")),
    ({"a": 7, "b": D("0.25")}, {"$mod": ["$a", "$b"]}, D("0.00")),
    ({"a": D("0.1000000000000000000001"), "b": D("0.3")}, {"$mod": ["$a", "$b"]}, D("0.1000000000000000000001")),
]


def test_rounding_and_remainders(spark):
    """``$round $trunc $ceil $floor`` of decimals as ``Decimal128::quantize``, ``$mod`` as
    ``Decimal128::modulo``: exact at any magnitude."""
    for c in ROUNDING_CASES:
        validate_expression(c[1], "case")
    check_cases(spark, ROUNDING_CASES)


def test_random_rounding_against_decimal_module(spark):
    """Random decimals (1-34 digits over 57 exponents) rounded to random places and divided with
    remainder by random decimals and ints: Python's ``quantize`` and ``%`` give the same."""
    from headrace.spark.expr import compile_expression
    from headrace.spark.registry import Ctx

    rng = random.Random(20261130)
    docs = [{"a": _random_decimal(rng), "b": _random_decimal(rng) if rng.random() < 0.7 else rng.randint(-999, 999),
             "p": rng.randint(-19, 60)} for _ in range(300)]
    exprs = {"round": {"$round": ["$a", "$p"]}, "trunc": {"$trunc": ["$a", "$p"]}, "ceil": {"$ceil": "$a"},
             "floor": {"$floor": "$a"}, "mod": {"$mod": ["$a", "$b"]}}

    def col(e):
        return lambda doc: compile_expression(e, Ctx(root=doc, meta={}).at("case")).value
    rows = eval_columns(spark, docs, {k: col(e) for k, e in exprs.items()})
    big = decimal.Context(prec=200, Emin=-9999, Emax=9999)
    bad = []
    for doc, row in zip(docs, rows):
        a, b, p = _exact(doc["a"]), _exact(doc["b"]), doc["p"]
        want = {}
        for k, mode, exp in (("round", decimal.ROUND_HALF_EVEN, -p), ("trunc", decimal.ROUND_DOWN, -p),
                             ("ceil", decimal.ROUND_CEILING, 0), ("floor", decimal.ROUND_FLOOR, 0)):
            q = a.quantize(D(1).scaleb(exp), rounding=mode, context=big)
            want[k] = D("NaN") if len(q.as_tuple().digits) > 34 else q
        if b != 0:     # Decimal128::modulo (Intel's bid128_fmod) gives the dividend itself when it is smaller
            want["mod"] = a if abs(a) < abs(b) or a.is_zero() else big.remainder(a, b)
        for k, w in want.items():
            got = row[k]
            same = isinstance(got, D) and (got.as_tuple() == w.as_tuple() or (got.is_nan() and w.is_nan()))
            if not same:
                bad.append(f"{k} {doc}: got {got!r}, want {w}")
    assert not bad, f"{len(bad)} wrong:\n" + "\n".join(bad[:20])


SUM_CASES = [
    # the expression forms add as the accumulators do: double-double sums, Decimal128 totals
    ({"a": [0.1, 0.2, 0.3]}, {"$sum": "$a"}, 0.6),                        # was 0.6000000000000001
    ({"a": [0.1, 0.2, 0.3]}, {"$avg": "$a"}, 0.19999999999999998),
    ({}, {"$sum": [0.1, 0.2, 0.3]}, 0.6),
    ({"a": [D("0.1000000000000000000001"), D("1E-25"), 2]}, {"$sum": "$a"}, D("2.1000000000000000000001001")),
    ({"a": [D("0.1000000000000000000001"), D("1E-25"), 2]}, {"$avg": "$a"}, D("0.7000000000000000000000333666666667")),
    ({"a": [D("1E+34"), D("1"), D("1"), D("-1E+34")]}, {"$sum": "$a"}, D("0")),
    ({"a": [1, 2, "x", None]}, {"$sum": "$a"}, 3),
    ({"a": [1, 2, "x", None]}, {"$avg": "$a"}, 1.5),
    ({"a": 2**31 - 1, "b": 1}, {"$sum": ["$a", "$b"]}, 2**31),
    ({"a": "x"}, {"$sum": "$a"}, 0),
    ({"a": "x"}, {"$avg": "$a"}, None),
]


def test_sum_and_avg_expressions(spark):
    for c in SUM_CASES:
        validate_expression(c[1], "case")
    check_cases(spark, SUM_CASES)
    # doubles exactly (check_cases compares doubles to 1e-9): MongoDB's double-double sum
    from _expr_helpers import eval_exprs

    got = [v for v, _ in eval_exprs(spark, [({}, {"$sum": [0.1, 0.2, 0.3]}), ({}, {"$avg": [0.1, 0.2, 0.3]})])]
    assert got == [0.6, 0.19999999999999998]


def test_integer_constant_beyond_64_bits_is_a_double(spark):
    """A pipeline's integer constant too long for 64 bits is a double, as in a document (the
    constant made the processor fail with a py4j NumberFormatException)."""
    cases = [({"a": 1}, {"$add": ["$a", 123456789012345678901234567890]}, 1.2345678901234568e29),
             ({}, {"$type": 123456789012345678901234567890}, "double")]
    check_cases(spark, cases)


CONVERSION_CASES = [
    # $toString of a decimal was its DECIMAL(38,18) text ("1.500000000000000000")
    ({"a": D("1.5")}, {"$toString": "$a"}, "1.5"),
    ({"a": D("100")}, {"$toString": "$a"}, "100"),
    ({"a": D("-0.00012")}, {"$toString": "$a"}, "-0.00012"),
    ({"a": D("1.0000000000000000000001")}, {"$toString": "$a"}, "1.0000000000000000000001"),
    ({"a": D("1E-25")}, {"$toString": "$a"}, "1E-25"),
    ({"a": D("-1.5E-9")}, {"$toString": "$a"}, "-1.5E-9"),
    ({"a": D("1.5")}, {"$concat": [{"$toString": "$a"}, " EUR"]}, "1.5 EUR"),
    # $toDecimal as Decimal128: a string to 34 digits at any magnitude, a double to 15
    ({"a": "1.0000000000000000000001"}, {"$toDecimal": "$a"}, D("1.0000000000000000000001")),
    ({"a": "1E+30"}, {"$toDecimal": "$a"}, D("1E+30")),
    ({"a": "-1.5e-7"}, {"$toDecimal": "$a"}, D("-1.5E-7")),
    ({"a": "0.12345678901234567890123456789012345678"}, {"$toDecimal": "$a"},
     D("0.1234567890123456789012345678901235")),
    ({"a": 0.1}, {"$toDecimal": "$a"}, D("0.100000000000000")),     # 15 digits, as Decimal128(double)
    ({"a": "1.50"}, {"$toDecimal": "$a"}, D("1.50")),          # a string's exponent kept
    ({"a": 0.0}, {"$toDecimal": "$a"}, D("0")),                # a double zero is 0, not 0E-16
    ({"a": 2.5}, {"$toDecimal": "$a"}, D("2.50000000000000")),
    ({"a": 1 / 3}, {"$toDecimal": "$a"}, D("0.333333333333333")),
    ({"a": 2**62}, {"$toDecimal": "$a"}, D(2**62)),
    ({"a": True}, {"$toDecimal": "$a"}, D("1")),
    ({"a": float("nan")}, {"$toDecimal": "$a"}, D("NaN")),
    ({"a": "x1"}, {"$toDecimal": "$a"}, None, "cannot convert"),
]


def test_decimal_conversions(spark):
    """``$toString`` of a decimal is MongoDB's ``Decimal128::toString``; ``$toDecimal`` as
    Decimal128 (was DECIMAL(38,18): a string's 22nd fractional digit lost, ``"1E+30"`` refused)."""
    for c in CONVERSION_CASES:
        validate_expression(c[1], "case")
    check_cases(spark, CONVERSION_CASES)


COMPARISON_CASES = [
    # expression comparisons of decimals with decimals and integers are exact (they compared the
    # doubles, then DECIMAL(38,18): digits past the 18th fractional place did not count)
    ({"a": D("1.0000000000000000000001"), "b": D("1")}, {"$eq": ["$a", "$b"]}, False),
    ({"a": D("1.0000000000000000000001"), "b": D("1")}, {"$gt": ["$a", "$b"]}, True),
    ({"a": D("1.0000000000000000000001"), "b": 1}, {"$cmp": ["$a", "$b"]}, 1),
    ({"a": D("-1.0000000000000000000001"), "b": -1}, {"$cmp": ["$a", "$b"]}, -1),
    ({"a": D("123456789012345678901234567890"), "b": D("123456789012345678901234567891")},
     {"$cmp": ["$a", "$b"]}, -1),
    ({"a": D("9007199254740993"), "b": 9007199254740992}, {"$gt": ["$a", "$b"]}, True),
    ({"a": D("1.50"), "b": D("1.5")}, {"$eq": ["$a", "$b"]}, True),
    ({"a": D("1"), "b": 1}, {"$eq": ["$a", "$b"]}, True),
    ({"a": D("0"), "b": D("-0")}, {"$eq": ["$a", "$b"]}, True),
    ({"a": D("-2E-30"), "b": D("-1E-30")}, {"$lt": ["$a", "$b"]}, True),
    ({"a": D("1.0000000000000000000001"), "b": [D("1"), 2]}, {"$in": ["$a", "$b"]}, False),
    ({"a": [D("1"), D("1.0000000000000000000001"), D("0.9999999999999999999999")]}, {"$max": "$a"},
     D("1.0000000000000000000001")),
]


def test_decimal_comparisons(spark):
    for c in COMPARISON_CASES:
        validate_expression(c[1], "case")
    check_cases(spark, COMPARISON_CASES)


def test_query_comparisons_with_decimal_constants(spark):
    """``$match`` against a decimal or integer constant decides double ties exactly for decimal
    and integer values (``1.0000000000000000000001 > 1``; ``1 == NumberDecimal("1.0")``)."""
    from headrace.testing import run_pipeline

    docs = [{"i": 1, "a": D("1.0000000000000000000001")}, {"i": 2, "a": D("1")}, {"i": 3, "a": 1},
            {"i": 4, "a": D("0.9999999999999999999999")}, {"i": 5, "a": 1.0}]
    got = {}
    for name, q in {"gt": {"$gt": D("1")}, "eq": {"$eq": D("1.0")}, "lt": {"$lt": 1}, "gte_dec": {"$gte": D("1.0000000000000000000001")}}.items():
        res = run_pipeline([{"$match": {"a": q}}], docs, strip_meta=True)
        got[name] = sorted(d["i"] for d in res.outputs)
    assert got == {"gt": [1], "eq": [2, 3, 5], "lt": [4], "gte_dec": [1]}


A = "0.9272952180016122324285124629224288"      # the manual's angle of the 3-4-5 triangle
TRANSCENDENTAL_CASES = [
    ({"a": D(A)}, {"$sin": "$a"}, D("0.8000000000000000000000000000000000")),
    ({"a": D(A)}, {"$tan": "$a"}, D("1.333333333333333333333333333333333")),
    ({"a": D(A), "h": D("5")}, {"$multiply": [{"$cos": "$a"}, "$h"]}, D("3.000000000000000000000000000000000")),
    ({"y": D("4"), "x": D("3")}, {"$atan2": ["$y", "$x"]}, D("0.9272952180016122324285124629224287")),
    # one decimal operand: the other converted (an int exactly, a double to 15 digits)
    ({"y": 4, "x": D("3")}, {"$atan2": ["$y", "$x"]}, D("0.9272952180016122324285124629224287")),
    ({"y": D("4"), "x": 3.0}, {"$atan2": ["$y", "$x"]}, D("0.9272952180016122324285124629224287")),
    ({"a": D("2")}, {"$sqrt": "$a"}, D("1.414213562373095048801688724209698")),
    ({"a": D("10")}, {"$ln": "$a"}, D("2.302585092994045684017991454684364")),
    ({"a": D("1000")}, {"$log10": "$a"}, D("3")),
    ({"a": D("1E-30")}, {"$asinh": "$a"}, D("1.000000000000000000000000000000000E-30")),
    ({"a": D("20000")}, {"$sinh": "$a"}, D("Infinity")),
    ({"a": D("-1")}, {"$acos": "$a"}, D("3.141592653589793238462643383279503")),
    # outside the domain by less than a double sees
    ({"a": D("1.0000000000000000000000001")}, {"$acos": "$a"}, None, "out of its domain"),
    ({"a": D("-1E-40")}, {"$sqrt": "$a"}, None, "$sqrt"),
    # doubles stay doubles
    ({"a": 0.5}, {"$sin": "$a"}, 0.479425538604203),
    ({"a": None}, {"$sin": "$a"}, None),
]


def test_transcendental_operators_of_decimals(spark):
    """``$sin`` ... ``$atanh``, ``$atan2``, ``$sqrt $exp $ln $log10`` of a decimal: Decimal128's
    34 digits (headrace.mql.decimal_math, computed per Arrow batch) where a stage hoists."""
    check_cases(spark, TRANSCENDENTAL_CASES)


def test_transcendental_operators_without_a_hoister(spark):
    """Inside a lambda body (and where no stage hoists: windows) Python cannot run: the double
    result as a decimal of 15 digits, as before."""
    check_cases(spark, [
        ({"a": [D(A)]}, {"$map": {"input": "$a", "in": {"$tan": "$$this"}}}, [D("1.33333333333333")]),
        ({"a": D("1.0000000000000000000000001")}, {"$map": {"input": [1], "in": {"$acos": "$a"}}}, [D("0")]),
    ])
    check_cases(spark, [({"a": D(A)}, {"$tan": "$a"}, D("1.33333333333333"))], hoist=False)


def test_pow_and_log_of_decimals(spark):
    """``$pow`` and ``$log`` with a decimal operand: Decimal128's result (they gave the double's
    binary artefacts as DECIMAL(38,18): 1.1 squared was 1.210000000000000200)."""
    check_cases(spark, [
        ({"a": D("1.1")}, {"$pow": ["$a", 2]}, D("1.21")),
        ({"a": D("2")}, {"$pow": ["$a", 0.5]}, D("1.414213562373095048801688724209698")),
        ({"a": 10}, {"$pow": ["$a", D("-2")]}, D("0.01")),
        ({"a": D("100")}, {"$log": ["$a", 10]}, D("2")),
        ({"a": D("8")}, {"$log": ["$a", D("2")]}, D("3.000000000000000000000000000000000")),
        ({"a": D("0")}, {"$pow": ["$a", -1]}, None, "base of 0"),
        ({"a": 2, "b": 3}, {"$pow": ["$a", "$b"]}, 8),
    ])
