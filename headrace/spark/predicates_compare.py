"""Comparisons of one value with a constant (``$eq $gt $gte $lt $lte``): :func:`cmp_pred` and
:func:`eq_value`, specialised on the constant's type at compile time (type bracketing, ``null``
matching missing, MinKey/MaxKey bounds, NaN rules); numbers compare as doubles with exact ties
broken as integers / decimals; equality with an array or document constant is checked element
by element, and ``$gt``/``$lt`` on arrays and documents use ``values.compare``. Part of
:mod:`headrace.spark.predicates`, which re-exports it.
"""
from __future__ import annotations

import decimal
from typing import Any, Callable

from pyspark.sql import Column
from pyspark.sql import functions as F

from .. import ejson
from ..mql.bson import MISSING, NUMBER_TYPES, compare_single, is_nan, type_name
from ..mql.regex import regex_literal
from . import values as V
from .expr import decimal128 as D
from .predicates_base import _C, Pred, _code, all_of, false, field, nn, raw_double, true


_DEC_MAX = decimal.Decimal("1e20")
_WIDE = decimal.Context(prec=60)
_TWO53 = 2**53


def _direct(a: Column, b: Column, op: str) -> Column:
    """``a op b`` for two values of one type (NULL when ``a`` is NULL)."""
    return {"$eq": a == b, "$gt": a > b, "$gte": a >= b, "$lt": a < b, "$lte": a <= b}[op]


def _dec_lit(c: Any) -> Column | None:
    """A number constant as DECIMAL(38,18), None when out of that range."""
    try:
        d = decimal.Decimal(int(c)) if isinstance(c, int) else decimal.Decimal(c)
    except (ValueError, decimal.InvalidOperation):
        return None
    if not d.is_finite() or abs(d) >= _DEC_MAX:
        return None
    q = d.quantize(decimal.Decimal("1e-18"), rounding=decimal.ROUND_HALF_EVEN, context=_WIDE)
    return F.lit(q).cast("decimal(38,18)")


Test = Callable[..., Column]  # fn(x, code=None): code is values.type_code(x) when at hand


def _code_of(x: Column, code: Column | None) -> Column:
    return _code(x) if code is None else code


def _num(op: str, c: Any) -> Test:
    """Numeric comparison with a constant number (NaN equals NaN only; exact when doubles tie)."""
    if is_nan(c):
        if op in ("$eq", "$lte", "$gte"):
            return lambda x, code=None: nn(_code_of(x, code).isin(*V.NUMBER_CODES) & F.isnan(raw_double(x)))
        return lambda x, code=None: false()
    cd = F.lit(float(c))
    cdec = _dec_lit(c)
    c_int = int(c) if isinstance(c, int) else (int(c) if isinstance(c, float) and c.is_integer()
                                               and -2**63 <= c < 2**63 else None)
    big = c_int is not None and abs(c_int) >= _TWO53
    strict = op in ("$gt", "$lt")

    exact = None           # the constant as an exact decimal, when it is an integer or a finite decimal
    if isinstance(c, int) and not isinstance(c, bool):
        exact = D.constant(str(int(c)))
    elif isinstance(c, decimal.Decimal) and c.is_finite():
        exact = D.constant(str(c))

    def tie(x: Column, xd: Column, code: Column | None) -> Column:
        """``op`` when ``x`` equals ``c`` as a double."""
        out = None
        # a decimal against an integer constant, or a number against a decimal constant: exactly
        # (an integer or a double against an integer constant is decided below, as before)
        dec_const = isinstance(c, decimal.Decimal)
        if exact is not None and (dec_const or D.possible([x])):
            kind = _code_of(x, code)
            sign = D.compare(D.read_exact(x, kind), exact)
            which = kind.isin(_C["int"], _C["long"], _C["decimal"], _C["double"]) if dec_const \
                else kind == _C["decimal"]
            out = F.when(which, {"$eq": sign == 0, "$gt": sign > 0, "$gte": sign >= 0, "$lt": sign < 0,
                                 "$lte": sign <= 0}[op])
        if big:  # longs and doubles beyond 2**53 compare as integers
            ints = _code_of(x, code).isin(_C["int"], _C["long"])
            direct = _direct(F.try_variant_get(x, "$", "bigint"), F.lit(c_int), op)
            out = F.when(ints, direct) if out is None else out.when(ints, direct)
            out = out.when((_code_of(x, code) == _C["double"]) & (F.abs(xd) < F.lit(9.2e18)),
                           _direct(xd.cast("bigint"), F.lit(c_int), op))
        if cdec is not None:  # a decimal may differ below a double's precision
            is_dec = _code_of(x, code) == _C["decimal"]
            dx = _direct(V.num_decimal(x), cdec, op)
            out = F.when(is_dec, dx) if out is None else out.when(is_dec, dx)
        return F.lit(not strict) if out is None else nn(out.otherwise(F.lit(not strict)))

    def test(x: Column, code: Column | None = None) -> Column:
        xd = raw_double(x)
        first = {"$eq": F.lit(False), "$gt": xd > cd, "$gte": xd > cd, "$lt": xd < cd, "$lte": xd < cd}[op]
        return nn(_code_of(x, code).isin(*V.NUMBER_CODES) & ~F.isnan(xd)
                  & (first | ((xd == cd) & tie(x, xd, code))))
    return test


def _bound(op: str, c: Any) -> Test:
    name = _C["minKey"] if c is ejson.MINKEY else _C["maxKey"]

    def is_it(x: Column, code: Column | None = None) -> Column:
        return _code_of(x, code) == name

    def is_not(x: Column, code: Column | None = None) -> Column:
        return _code_of(x, code) != name

    def always(x: Column, code: Column | None = None) -> Column:
        return true()

    def never(x: Column, code: Column | None = None) -> Column:
        return false()

    if c is ejson.MINKEY:
        return {"$eq": is_it, "$lte": is_it, "$gte": always, "$gt": is_not, "$lt": never}[op]
    return {"$eq": is_it, "$gte": is_it, "$lte": always, "$lt": is_not, "$gt": never}[op]


def _typed_value(x: Column, code: Column | None, kind: str, spark_type: str) -> Column:
    """x read as ``spark_type`` when it has MQL type ``kind``, else NULL."""
    return F.when(_code_of(x, code) == _C[kind], F.try_variant_get(x, "$", spark_type))


def _cmp(op: str, c: Any) -> Test:
    if regex_literal(c) is not None:
        return lambda x, code=None: false()  # only a stored regex equals a regex; documents hold none
    if c is None:
        if op in ("$eq", "$lte", "$gte"):
            return lambda x, code=None: (V.is_null_or_missing(x) if code is None
                                         else code.isin(_C["null"], _C["missing"]))
        return lambda x, code=None: false()
    if c is ejson.MINKEY or c is ejson.MAXKEY:
        return _bound(op, c)
    kind = type_name(c)
    if kind in NUMBER_TYPES:
        return _num(op, c)
    simple = {}
    if kind in ("string", "bool"):
        simple[kind] = ("string" if kind == "string" else "boolean", F.lit(c))
    if kind == "date":
        d = c if c.tzinfo else c.replace(tzinfo=ejson.UTC)
        delta = d - ejson.EPOCH
        micros = (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
        simple["date"] = ("timestamp", F.timestamp_micros(F.lit(micros)))
    if kind in simple:
        spark_type, lit = simple[kind]
        return lambda x, code=None: nn(_direct(_typed_value(x, code, kind, spark_type), lit, op))
    if kind == "objectId":
        return lambda x, code=None: nn((_code_of(x, code) == _C["objectId"]) & _direct(
            F.try_variant_get(x, "$['$oid']", "string"), F.lit(str(c)), op))
    if kind == "binData":
        lit = F.struct(F.lit(len(c)).alias("n"), F.lit(ejson.binary_subtype(c)).alias("st"),
                       F.lit(bytearray(c)).cast("binary").alias("b"))

        def bin_test(x: Column, code: Column | None = None) -> Column:
            return nn((_code_of(x, code) == _C["binData"]) & _direct(V.bin_key(x), lit, op))
        return bin_test
    if op == "$eq":
        return _eq_container(c)
    lit = V.lit_value(c)
    return lambda x, code=None: nn((_code_of(x, code) == _C[kind]) & _direct(V.compare(x, lit), F.lit(0), op))


def eq_value(c: Any) -> Test:
    """Equality with a constant for a value that exists (an element or a present field)."""
    if c is None:
        return lambda x, code=None: nn(F.is_variant_null(x))
    if isinstance(c, (list, dict)) and regex_literal(c) is None:
        return _eq_container(c)
    return _cmp("$eq", c)


def _eq_container(c: Any) -> Test:
    """Equality with an array or document constant, element by element (documents regardless
    of field order: VARIANT keeps fields sorted)."""
    if isinstance(c, list):
        tests = [eq_value(e) for e in c]

        def arr(x: Column, code: Column | None = None) -> Column:
            elems = V.array_elems(x)
            parts = [F.size(elems) == F.lit(len(c))]
            parts += [V.let(F.try_element_at(elems, F.lit(i + 1)), t) for i, t in enumerate(tests)]
            is_arr = V.is_array(x) if code is None else code == _C["array"]
            return nn(is_arr & all_of(parts))
        return arr
    tests = {k: eq_value(v) for k, v in c.items()}

    def obj(x: Column, code: Column | None = None) -> Column:
        parts = [F.size(F.try_variant_get(x, "$", "map<string,variant>")) == F.lit(len(c))]
        for k, t in tests.items():
            parts.append(V.let(field(x, k), lambda f, t=t: f.isNotNull() & t(f)))
        return nn((_code_of(x, code) == _C["object"]) & all_of(parts))
    return obj


def cmp_pred(op: str, c: Any) -> Pred:
    """``$eq $gt $gte $lt $lte`` with constant ``c`` on one value (ComparisonMatchExpression)."""
    return Pred(_cmp(op, c), compare_single(MISSING, op, c) if regex_literal(c) is None else False)
