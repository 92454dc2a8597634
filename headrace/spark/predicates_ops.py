"""The other query operators on one value: ``$regex`` (:func:`regex_pred`, a Java regex
translated from PCRE), ``$in`` (:func:`in_pred`, with :func:`eq_or_regex` for one item),
``$type`` (:func:`type_test`, :func:`type_pred`), ``$mod`` (:func:`mod_pred`), ``$size``
(:func:`size_pred`) and the bit tests ``$bitsAllSet $bitsAnySet $bitsAllClear $bitsAnyClear``
(:func:`bits_pred`). Part of :mod:`headrace.spark.predicates`, which re-exports it.
"""
from __future__ import annotations

from typing import Any

from pyspark.sql import Column
from pyspark.sql import functions as F

from .. import ejson
from ..mql.bson import NUMBER_TYPES, type_set
from ..mql.catalogue import bit_positions, mod_args
from ..mql.regex import regex_literal, translate_regex
from . import values as V
from .predicates_base import _C, Pred, _code, any_of, nn
from .predicates_compare import cmp_pred


def regex_pred(pattern: str, options: str) -> Pred:
    java = translate_regex(pattern, options, "java")
    return Pred(lambda x: nn(V.as_string(x).rlike(java)), False)


def eq_or_regex(item: Any) -> Pred:
    rx = regex_literal(item)
    return regex_pred(*rx) if rx is not None else cmp_pred("$eq", item)


def in_pred(items: list) -> Pred:
    """``$in``: equal to one of the values, or matching one of the regexes."""
    strings = [x for x in items if isinstance(x, str)]
    others = [eq_or_regex(x) for x in items if not isinstance(x, str)]

    def test(x: Column) -> Column:
        tests = [f(x) for f in others]
        if strings:
            tests.insert(0, nn(V.as_string(x).isin(strings)))
        return nn(any_of(tests))
    return Pred(test, any(p.missing for p in others))


def type_test(x: Column, spec: Any, code: Column | None = None, long_text: Column | None = None) -> Column:
    """Whether ``x`` has one of the types named by a ``$type`` / ``bsonType`` value (``code``:
    ``values.type_code(x)`` when already at hand; ``long_text``: whether the source record's text
    wrote ``x`` as a ``$numberLong``, :mod:`.source_text`)."""
    names = set(type_set(spec))
    if "number" in names:
        names |= NUMBER_TYPES
    codes = sorted(_C[n] for n in names if n in _C and n not in ("int", "long"))
    tests = []
    if codes:
        tests.append((_code(x) if code is None else code).isin(*codes))
    if "int" in names or "long" in names:
        is_int = (_code(x) if code is None else code).isin(_C["int"], _C["long"])
        if not ("int" in names and "long" in names):
            small = F.try_variant_get(x, "$", "bigint").between(ejson.INT32_MIN, ejson.INT32_MAX)
            if long_text is not None:
                small = small & ~long_text
            is_int = is_int & (small if "int" in names else ~small)
        tests.append(is_int)
    return nn(any_of(tests))


def type_pred(spec: Any) -> Pred:
    return Pred(lambda x: type_test(x, spec), False)


def mod_pred(arg: list) -> Pred:
    d, r = mod_args(arg)

    def with_code(x: Column, code: Column) -> Column:
        xd = F.try_variant_get(x, "$", "double")
        t = (F.when(code.isin(_C["int"], _C["long"]), F.try_variant_get(x, "$", "bigint"))
             .when((code == _C["double"]) & (xd >= F.lit(-9.223372036854775808e18))
                   & (xd < F.lit(9.223372036854775808e18)), xd.cast("bigint"))
             .when(code == _C["decimal"], F.try_variant_get(x, "$", "decimal(38,18)").try_cast("bigint")))
        if d == -1:
            return nn(t.isNotNull() & F.lit(r == 0))
        return nn(t % F.lit(d) == F.lit(r))
    return Pred(lambda x: V.let(_code(x), lambda code: with_code(x, code)), False)


def size_pred(n: Any) -> Pred:
    return Pred(lambda x: nn(F.size(V.array_elems(x)) == F.lit(int(n))), False)


def _int64(x: Column, code: Column) -> Column:
    """A number's value as a BIGINT when it is an integer within 64 bits (a double or decimal
    without a fraction), else NULL."""
    xd = F.try_variant_get(x, "$", "double")
    dec = V.num_decimal(x)
    return (F.when(code.isin(_C["int"], _C["long"]), F.try_variant_get(x, "$", "bigint"))
            .when((code == _C["double"]) & (xd == F.rint(xd)) & (xd >= F.lit(-9.223372036854775808e18))
                  & (xd < F.lit(9.223372036854775808e18)), xd.cast("bigint"))
            .when((code == _C["decimal"]) & (dec % F.lit(1) == F.lit(0)), dec.try_cast("bigint")))


def bits_pred(op: str, arg: Any) -> Pred:
    """``$bitsAllSet``/``$bitsAnySet``/``$bitsAllClear``/``$bitsAnyClear`` at the positions
    ``arg`` names (:func:`headrace.mql.catalogue.bit_positions`): an integer within 64 bits as
    two's complement (past bit 63 a negative number's bits are set), binData byte by byte (bit
    ``8 i + j`` is bit ``j`` of byte ``i``; clear past its end); other values never match."""
    positions = bit_positions(arg)
    every = op in ("$bitsAllSet", "$bitsAllClear")
    want_set = op in ("$bitsAllSet", "$bitsAnySet")
    low = sum(1 << p for p in positions if p < 64)
    high = any(p >= 64 for p in positions)
    mask = F.lit(low - (1 << 64) if low >= 1 << 63 else low).cast("bigint")
    by_byte: dict[int, int] = {}
    for p in positions:
        by_byte[p // 8] = by_byte.get(p // 8, 0) | 1 << (p % 8)

    def combine(tests: list[Column]) -> Column:
        out = tests[0]
        for t in tests[1:]:
            out = (out & t) if every else (out | t)
        return out

    def number(t: Column) -> Column:
        anded = t.bitwiseAND(mask)
        tests = [(anded == mask) if want_set else (anded == 0)] if every else [
            (anded != 0) if want_set else (anded != mask)]
        if high:
            tests.append((t < 0) if want_set else (t >= 0))
        return combine(tests)

    def binary(b: Column) -> Column:
        tests = []
        for i, m in sorted(by_byte.items()):
            v = F.when(F.length(b) > i, F.conv(F.hex(F.substring(b, i + 1, 1)), 16, 10).cast("int")).otherwise(0)
            anded = v.bitwiseAND(F.lit(m))
            tests.append((anded == m if want_set else anded == 0) if every else
                         (anded != 0 if want_set else anded != m))
        return combine(tests)

    def with_code(x: Column, code: Column) -> Column:
        if not positions:      # no bit to test: "all" holds, "any" does not
            ok = F.lit(every)
            return nn(F.when(code.isin(_C["binData"]) | _int64(x, code).isNotNull(), ok))
        return nn(F.when(code == _C["binData"], binary(V.bin_bytes(x)))
                  .otherwise(V.let(_int64(x, code), lambda t: F.when(t.isNotNull(), number(t)))))
    return Pred(lambda x: V.let(_code(x), lambda code: with_code(x, code)), False)
