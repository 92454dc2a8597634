"""Decimal128 transcendental results (headrace.mql.decimal_math), without Spark.

Expected values: the MongoDB manual's printed outputs (a unit in the 34th digit apart at most,
where MongoDB's library is not correctly rounded) and values known to many digits."""
from __future__ import annotations

from decimal import Decimal

import pytest

from headrace.mql.decimal_math import compute

A = "0.9272952180016122324285124629224288"     # the manual's angle of the 3-4-5 triangle


def _ulps(got: str, want: str) -> Decimal:
    g, w = Decimal(got), Decimal(want)
    return abs(g - w).scaleb(33 - w.adjusted())


@pytest.mark.parametrize(("op", "args", "want"), [
    # the manual's examples (operator pages, Decimal128 tabs)
    ("$sin", (A,), "0.8000000000000000000000000000000000"),
    ("$cos", (A,), "0.6000000000000000000000000000000000"),
    ("$tan", (A,), "1.333333333333333333333333333333333"),
    ("$atan2", ("4", "3"), "0.9272952180016122324285124629224287"),
    ("$atan", ("1.333333333333333333333333333333333",), "0.9272952180016122324285124629224287"),
    ("$acos", ("0.8",), "0.6435011087932843868028092287173226"),
    ("$asin", ("0.6",), "0.6435011087932843868028092287173226"),
    ("$acosh", ("3",), "1.762747174039086050465218649959585"),
    ("$atanh", ("0.5",), "0.5493061443340548456976226184612628"),
    ("$cosh", ("1.6301023541559787031443874490659",), "2.650153334504361016712328539738000"),
    ("$sinh", ("1.6301023541559787031443874490659",), "2.454243813557362033961729701069671"),
    ("$tanh", ("1.6301023541559787031443874490659",), "0.9260761562750713360156803177935379"),
    # known to many digits
    ("$asinh", ("1",), "0.8813735870195430252326093249797923"),
    ("$sin", ("1E+22",), "-0.8522008497671888017727058937530294"),
    ("$sqrt", ("2",), "1.414213562373095048801688724209698"),
    ("$exp", ("1",), "2.718281828459045235360287471352662"),
    ("$ln", ("10",), "2.302585092994045684017991454684364"),
    ("$acos", ("-1",), "3.141592653589793238462643383279503"),
    ("$atan2", ("0", "-1"), "3.141592653589793238462643383279503"),
    ("$atan2", ("-1", "-1"), "-2.356194490192344928846982537459627"),
])
def test_within_a_unit_of_the_34th_digit(op, args, want):
    got = compute(op, *args)
    assert _ulps(got, want) <= 1, (got, want)


def test_small_and_large_arguments():
    assert compute("$sin", "1E-30") == "1.000000000000000000000000000000000E-30"
    assert compute("$tanh", "-200") == "-1"
    assert compute("$sinh", "20000") == "Infinity"          # beyond Decimal128's range
    assert compute("$atanh", "1") == "Infinity"
    assert Decimal(compute("$asinh", "1E+6000")) == Decimal("13816.20370514483404941736596022764")
    # a multiple of pi/2 to 34 digits: the remainder keeps its digits
    assert Decimal(compute("$sin", "3.141592653589793238462643383279503")).adjusted() == -34


@pytest.mark.parametrize(("op", "arg"), [("$acos", "1.0000000000000000000000001"), ("$asin", "-1.5"),
                                         ("$acosh", "0.5"), ("$atanh", "1.01"), ("$ln", "0"),
                                         ("$log10", "-1"), ("$sqrt", "-0.1")])
def test_outside_the_domain_is_none(op, arg):
    assert compute(op, arg) is None
