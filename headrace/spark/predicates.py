"""Tests of one value in a document (VARIANT) as native Spark boolean columns: the building
blocks that queries (:mod:`headrace.spark.query`) and ``$jsonSchema``
(:mod:`headrace.spark.jsonschema`) are compiled from.

- :class:`Pred`: a test of one value that never returns NULL, with its result on a missing value.
- :func:`path_test`: whether some value a dotted path offers satisfies a test (MongoDB's element
  iteration: arrays on the way are searched, an array at the end offers its elements and itself).
- Comparisons (:func:`cmp_pred`, :func:`eq_value`) are specialised on the constant's type at
  compile time (type bracketing, ``null`` matching missing, MinKey/MaxKey bounds, NaN rules);
  numbers compare as doubles with exact ties broken as integers / decimals; equality with an
  array or document constant is checked element by element; ``$gt``/``$lt`` on arrays and
  documents use ``values.compare``.
- :func:`regex_pred` runs a Java regex translated from PCRE
  (:func:`headrace.mql.regex.translate_regex`); :func:`in_pred`, :func:`type_pred`,
  :func:`mod_pred`, :func:`size_pred` are ``$in``, ``$type``, ``$mod`` and ``$size``.
"""
from __future__ import annotations

import decimal
from typing import Any, Callable

from pyspark.sql import Column
from pyspark.sql import functions as F

from .. import ejson
from ..mql.bson import MISSING, NUMBER_TYPES, compare_single, is_nan, type_name, type_set
from ..mql.catalogue import mod_args
from ..mql.paths import is_index
from ..mql.regex import regex_literal, translate_regex
from . import values as V

__all__ = [
    "true", "false", "Pred", "nn", "all_of", "any_of", "field", "raw_double", "path_test",
    "cmp_pred", "eq_value", "eq_or_regex", "regex_pred", "in_pred", "type_test", "type_pred",
    "mod_pred", "size_pred",
]



def true() -> Column:
    """The literal ``true`` (built on use: a Column needs a running SparkContext, and this module
    is imported before one exists)."""
    return F.lit(True)


def false() -> Column:
    """The literal ``false`` (built on use, as :func:`true`)."""
    return F.lit(False)

_DEC_MAX = decimal.Decimal("1e20")
_WIDE = decimal.Context(prec=60)
_TWO53 = 2**53
_C = V.CODE


class Pred:
    """A test of one value (a simple column: a lambda variable or a field read) that never
    returns NULL; ``missing`` is its result on a missing value (known at compile time).
    Comparison tests also take the value's type code when it is at hand (:meth:`coded`)."""

    __slots__ = ("fn", "missing")

    def __init__(self, fn: Callable[..., Column], missing: bool):
        self.fn, self.missing = fn, missing

    def __call__(self, x: Column) -> Column:  # one parameter: Spark lambdas count them
        return self.fn(x)

    def coded(self, x: Column, code: Column) -> Column:
        """The test with ``values.type_code(x)`` already at hand (comparison tests only)."""
        return self.fn(x, code)


def nn(c: Column) -> Column:
    """A boolean that is never NULL (NULL reads as false)."""
    return F.coalesce(c, false())


def all_of(cols: list[Column]) -> Column:
    if not cols:
        return true()
    out = cols[0]
    for c in cols[1:]:
        out = out & c
    return out


def any_of(cols: list[Column]) -> Column:
    if not cols:
        return false()
    out = cols[0]
    for c in cols[1:]:
        out = out | c
    return out


def field(obj: Column, name: str) -> Column:
    """Field ``name`` of a document (SQL NULL when missing); a numeric name also indexes an
    array (an array is a document with fields "0", "1", ... inside ``$elemMatch``)."""
    got = F.try_variant_get(obj, V.variant_path(name), "variant")
    if _is_index(name):
        got = F.coalesce(got, F.try_variant_get(obj, f"$[{int(name)}]", "variant"))
    return got


def raw_double(x: Column) -> Column:
    """DOUBLE of a value known to be a number (decimals stored as text included)."""
    return F.coalesce(F.try_variant_get(x, "$", "double"),
                      F.try_variant_get(x, "$['$numberDecimal']", "string").try_cast("double"))


def _code(x: Column) -> Column:
    return V.type_code(x)


# ------------------------------------------------------------------------------------ paths


def path_test(root: Column, path: str, pred: Pred, traverse_leaf: bool = True) -> Column:
    """Whether some value that ``path`` offers in document ``root`` satisfies ``pred``
    (MongoDB's element iteration)."""
    return nn(_any_obj(root, path.split("."), pred, traverse_leaf))


def _is_index(name: str) -> bool:
    return is_index(name) and int(name) <= 2**31 - 2


def _any_obj(obj: Column, parts: list[str], pred: Pred, tl: bool) -> Column:
    """Some value offered by ``parts`` under document ``obj`` satisfies ``pred``."""
    def at(f: Column) -> Column:
        is_arr = V.is_array(f)
        if len(parts) == 1:
            if not tl:
                return pred(f)
            # an array at the end offers its elements, then itself
            offered = F.when(is_arr, F.concat(V.array_elems(f), F.array(f))).otherwise(F.array(f))
            return nn(F.exists(offered, pred))
        rest = parts[1:]
        # continue in f itself, or in the documents of the array f; anything else offers
        # "missing" (a scalar on the way) or nothing (a non-document in an array)
        docs = F.when(is_arr, V.array_elems(f)).otherwise(F.array(f))
        if pred.missing or _is_index(rest[0]):
            below = nn(F.exists(docs, lambda d: V.is_object(d) & _any_obj(d, rest, pred, tl)))
        else:  # below a non-document the path only offers "missing", which fails pred
            below = nn(F.exists(docs, lambda d: _any_obj(d, rest, pred, tl)))
        offset = _at_offset(f, rest, pred, tl)
        if offset is not None:
            below = below | (is_arr & offset)
        if pred.missing:
            return F.when(is_arr | V.is_object(f), below).otherwise(true())
        return below
    return V.let(field(obj, parts[0]), at)


def _at_offset(arr: Column, rest: list[str], pred: Pred, tl: bool) -> Column | None:
    """For a numeric component ``rest[0]``: the array element at that index and what the rest
    of the path offers in it (None when ``rest[0]`` is not an index)."""
    nxt = rest[0]
    if not _is_index(nxt):
        return None

    def at(e: Column) -> Column:
        if len(rest) == 1:
            return e.isNotNull() & pred(e)
        after = rest[1:]
        inner = F.when(V.is_object(e), _any_obj(e, after, pred, tl))
        nested = _in_array(e, after, pred, tl)
        return nn(inner.when(V.is_array(e), nested).otherwise(false()))
    return nn(V.let(F.try_element_at(V.array_elems(arr), F.lit(int(nxt) + 1)), at))


def _in_array(arr: Column, rest: list[str], pred: Pred, tl: bool) -> Column:
    """What ``rest`` offers in the documents of array ``arr`` (and at an index in it)."""
    below = nn(F.exists(V.array_elems(arr), lambda d: V.is_object(d) & _any_obj(d, rest, pred, tl)))
    offset = _at_offset(arr, rest, pred, tl)
    return below if offset is None else below | offset


# ------------------------------------------------------------------------------------ values


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

    def tie(x: Column, xd: Column, code: Column | None) -> Column:
        """``op`` when ``x`` equals ``c`` as a double."""
        out = None
        if big:  # longs and doubles beyond 2**53 compare as integers
            out = F.when(_code_of(x, code).isin(_C["int"], _C["long"]),
                         _direct(F.try_variant_get(x, "$", "bigint"), F.lit(c_int), op))
            out = out.when((_code_of(x, code) == _C["double"]) & (F.abs(xd) < F.lit(9.2e18)),
                           _direct(xd.cast("bigint"), F.lit(c_int), op))
        if cdec is not None:  # a decimal may differ below a double's precision
            is_dec = _code_of(x, code) == _C["decimal"]
            dx = _direct(F.try_variant_get(x, "$", "decimal(38,18)"), cdec, op)
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
