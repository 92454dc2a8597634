"""The other query operators on one value: ``$regex`` (:func:`regex_pred`, a Java regex
translated from PCRE), ``$in`` (:func:`in_pred`, with :func:`eq_or_regex` for one item),
``$type`` (:func:`type_test`, :func:`type_pred`), ``$mod`` (:func:`mod_pred`) and ``$size``
(:func:`size_pred`). Part of :mod:`headrace.spark.predicates`, which re-exports it.
"""
from __future__ import annotations

from typing import Any

from pyspark.sql import Column
from pyspark.sql import functions as F

from .. import ejson
from ..mql.bson import NUMBER_TYPES, type_set
from ..mql.catalogue import mod_args
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


def type_test(x: Column, spec: Any, code: Column | None = None) -> Column:
    """Whether ``x`` has one of the types named by a ``$type`` / ``bsonType`` value (``code``:
    ``values.type_code(x)`` when already at hand)."""
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
