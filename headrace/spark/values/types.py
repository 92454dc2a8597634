"""MQL types of VARIANT values: type codes and names, type tests, typed accessors, truthiness
(part of :mod:`headrace.spark.values`, which documents the API)."""
from __future__ import annotations

import datetime as _dt
import decimal
from typing import Any

from pyspark.sql import Column
from pyspark.sql import functions as F

from ... import ejson
from .base import (CODE, INT32_MAX, INT32_MIN, NUMBER_CODES, RANKS, TYPE_NAMES, _const_array, _const_map, _get,
                   _Hoisted, _Known, _mark, _try_cast, _tvg, const_of, derived, is_known, let)

_SCHEMA_CODES = {"BIGINT": CODE["int"], "DOUBLE": CODE["double"], "FLOAT": CODE["double"],
                 "DECIMAL": CODE["decimal"], "STRING": CODE["string"], "BOOLEAN": CODE["bool"],
                 "TIMESTAMP": CODE["date"], "TIMESTAMP_NTZ": CODE["date"], "DATE": CODE["date"],
                 "BINARY": CODE["binData"], "VOID": CODE["null"]}



def _py_code(value: Any) -> int:
    t = type(value)
    if value is None:
        return CODE["null"]
    if t is bool:
        return CODE["bool"]
    if isinstance(value, int):
        return CODE["int"]
    if t is float:
        return CODE["double"]
    if t is decimal.Decimal:
        return CODE["decimal"]
    if t is str:
        return CODE["string"]
    if isinstance(value, _dt.datetime):
        return CODE["date"]
    if t in (bytes, bytearray, ejson.Binary):
        return CODE["binData"]
    if t is ejson.Timestamp:
        return CODE["timestamp"]
    if t is ejson.ObjectId:
        return CODE["objectId"]
    if value is ejson.MINKEY:
        return CODE["minKey"]
    if value is ejson.MAXKEY:
        return CODE["maxKey"]
    if isinstance(value, dict):
        return CODE["object"]
    return CODE["array"]


def is_object_raw(v: Column) -> Column:
    """Any VARIANT object (including the ``$oid`` / ``$minKey`` wrappers); false for missing."""
    return _tvg(v, "struct<>").isNotNull()


def _is_array_raw(v: Column) -> Column:
    return _tvg(v, "array<struct<>>").isNotNull()


#: one-field objects that stand for BSON types (:mod:`headrace.spark.docs`), by their field
_WRAPPERS = (("$oid", "objectId"), ("$minKey", "minKey"), ("$maxKey", "maxKey"), ("$numberDecimal", "decimal"),
             ("$timestamp", "timestamp"), ("$binary", "binData"))
_WRAPPER_STRUCT = "struct<" + ",".join(f"`{k}`:variant" for k, _ in _WRAPPERS) + ">"


def _wrapper_code(x: Column) -> Column:
    """The type code of a bound object value: a wrapper's type, else ``object`` (one read of
    the wrapper fields as a struct keeps the expression small)."""
    w = F.try_variant_get(x, "$", _WRAPPER_STRUCT)
    out = None
    for k, name in _WRAPPERS:
        test = w.getField(k).isNotNull()
        out = F.when(test, F.lit(CODE[name])) if out is None else out.when(test, F.lit(CODE[name]))
    return out.otherwise(F.lit(CODE["object"]))


def _code_of(x: Column) -> Column:
    """The type code of a bound (cheap to repeat) value; integers are all ``CODE["int"]``
    here (``type_name`` tells int from long by magnitude)."""
    is_const, value = const_of(x)
    if is_const:
        return F.lit(_py_code(value))
    known = _mark(x, "_mql_code")
    if isinstance(known, _Hoisted):
        return known.code()
    if isinstance(known, _Known):
        return known_code(x, known.code)
    prim = F.coalesce(F.try_element_at(_const_map(_SCHEMA_CODES),
                                       F.substring_index(F.schema_of_variant(x), "(", 1)),
                      F.lit(CODE["string"]))
    return (
        F.when(x.isNull(), F.lit(CODE["missing"]))
        .when(F.is_variant_null(x), F.lit(CODE["null"]))
        .when(is_object_raw(x), _wrapper_code(x))
        .when(_is_array_raw(x), F.lit(CODE["array"]))
        .otherwise(prim)
    )


def known_code(x: Column, code: int) -> Column:
    """The type code of ``x``, known to be missing, null or of type ``code`` on every row."""
    if code in (CODE["missing"], CODE["null"]):     # (a copy of a missing value may be a null)
        return F.when(x.isNull(), F.lit(CODE["missing"])).otherwise(F.lit(code))
    return F.when(x.isNull(), F.lit(CODE["missing"])).when(F.is_variant_null(x), F.lit(CODE["null"])).otherwise(
        F.lit(code))


def type_code(v: Column) -> Column:
    """The MQL type of v as an INT code (see ``TYPE_NAMES``; 0 = missing)."""
    return let(v, _code_of)


def type_name(v: Column) -> Column:
    """The MQL ``$type`` name of v (``"missing"`` for SQL NULL)."""
    def body(x: Column) -> Column:
        name = F.element_at(_const_array(TYPE_NAMES), _code_of(x) + 1)
        small = _tvg(x, "bigint").between(INT32_MIN, INT32_MAX)
        return F.when(name == "int", F.when(small, F.lit("int")).otherwise(F.lit("long"))).otherwise(name)
    return let(v, body)


_RANK_BY_CODE = [RANKS[n] for n in TYPE_NAMES]


def rank_of_code(code: Column) -> Column:
    return F.element_at(_const_array(_RANK_BY_CODE), code + 1)


def type_rank(v: Column) -> Column:
    """BSON comparison-order rank; missing ranks as null."""
    return rank_of_code(type_code(v))


def is_missing(v: Column) -> Column:
    return v.isNull()


def is_null_or_missing(v: Column) -> Column:
    return let(v, lambda x: x.isNull() | F.is_variant_null(x))


def _code_in(v: Column, codes: tuple[int, ...]) -> Column:
    c = type_code(v)
    return c.isin(*codes) if len(codes) > 1 else c == codes[0]


def is_number(v: Column) -> Column:
    return _code_in(v, NUMBER_CODES)


def is_integer(v: Column) -> Column:
    """MQL int or long."""
    return _code_in(v, (CODE["int"], CODE["long"]))


def is_string(v: Column) -> Column:
    return _code_in(v, (CODE["string"],))


def is_date(v: Column) -> Column:
    return _code_in(v, (CODE["date"],))


def is_bool(v: Column) -> Column:
    return _code_in(v, (CODE["bool"],))


def is_array(v: Column) -> Column:
    return F.coalesce(_is_array_raw(v), F.lit(False))


def is_object(v: Column) -> Column:
    """An MQL document (not an ObjectId / MinKey / MaxKey wrapper)."""
    return _code_in(v, (CODE["object"],))


# ---------------------------------------------------------------------------------------------
# typed accessors


def _num_double(x: Column) -> Column:
    if is_known(x):     # never a {$numberDecimal} wrapper
        return _tvg(x, "double")
    return derived(x, "number double", lambda x: F.coalesce(
        F.try_variant_get(x, "$", "double"), _try_cast(_get(x, "$numberDecimal", type_="string"), "double")))


def _num_decimal(x: Column) -> Column:
    """DECIMAL(38,18) of a bound number, a ``{$numberDecimal}`` wrapper's from its text (a decimal
    whose exponent a VARIANT decimal would lose, or out of its range:
    :func:`headrace.spark.expr.decimal_variant.to_variant`)."""
    if is_known(x):     # never a {$numberDecimal} wrapper
        return _tvg(x, "decimal(38,18)")
    return derived(x, "number decimal", lambda x: F.coalesce(
        F.try_variant_get(x, "$", "decimal(38,18)"), _try_cast(_get(x, "$numberDecimal", type_="string"), "decimal(38,18)")))


def as_double(v: Column) -> Column:
    """DOUBLE of a number (int, long, double, decimal), else NULL."""
    return let(v, lambda x: F.when(_code_of(x).isin(*NUMBER_CODES), _num_double(x)))


def as_decimal(v: Column) -> Column:
    """DECIMAL(38,18) of a number, else NULL (also NULL when out of that range or NaN/inf)."""
    return let(v, lambda x: F.when(_code_of(x).isin(*NUMBER_CODES), _num_decimal(x)))


def as_long(v: Column) -> Column:
    """BIGINT of an MQL int or long, else NULL."""
    return let(v, lambda x: F.when(_code_of(x).isin(CODE["int"], CODE["long"]), _tvg(x, "bigint")))


def as_integral(v: Column) -> Column:
    """BIGINT of a number whose value is integral and fits in 64 bits, else NULL."""
    is_const, value = const_of(v)
    if is_const:
        ok = isinstance(value, (int, float, decimal.Decimal)) and not isinstance(value, bool)
        try:
            ok = ok and value == int(value) and -(2**63) <= int(value) < 2**63
        except (ValueError, OverflowError):
            ok = False
        return F.lit(int(value) if ok else None).cast("bigint")

    def body(x: Column) -> Column:
        c = _code_of(x)
        d = _num_double(x)
        dec = _num_decimal(x)
        return (
            F.when(c.isin(CODE["int"], CODE["long"]), _tvg(x, "bigint"))
            .when(c == CODE["decimal"], F.when(F.floor(dec) == dec, _try_cast(dec, "bigint")))
            .when(c == CODE["double"],
                  F.when((F.floor(d) == d) & (F.abs(d) < F.lit(9.2e18)), d.cast("bigint")))
        )
    return let(v, body)


def as_string(v: Column) -> Column:
    is_const, value = const_of(v)
    if is_const:
        return F.lit(value if isinstance(value, str) else None).cast("string")
    return let(v, lambda x: F.when(_code_of(x) == CODE["string"], _tvg(x, "string")))


def as_bool_raw(v: Column) -> Column:
    return let(v, lambda x: F.when(_code_of(x) == CODE["bool"], _tvg(x, "boolean")))


def as_timestamp(v: Column) -> Column:
    """TIMESTAMP (an instant) of a date, else NULL."""
    return let(v, lambda x: F.when(_code_of(x) == CODE["date"], _tvg(x, "timestamp")))


def bin_bytes(x: Column) -> Column:
    """BINARY of a bound binData value (plain, or the ``$binary`` wrapper of another subtype)."""
    return F.coalesce(_tvg(x, "binary"), _get(x, "$binary", "data", type_="binary"))


def bin_subtype(x: Column) -> Column:
    """INT subtype of a bound binData value (0 for plain binary)."""
    return F.when(_tvg(x, "binary").isNotNull(), F.lit(0)).otherwise(_get(x, "$binary", "subType", type_="int"))


def bin_key(x: Column) -> Column:
    """MongoDB's order of binData: length, then subtype, then bytes (a struct; NULL otherwise)."""
    b = bin_bytes(x)
    return F.when(b.isNotNull(), F.struct(F.length(b).alias("n"), bin_subtype(x).alias("st"), b.alias("b")))


def ts_parts(x: Column) -> tuple[Column, Column]:
    """(seconds, ordinal) BIGINTs of a bound Timestamp value, else NULLs."""
    return (_get(x, "$timestamp", "t", type_="bigint"), _get(x, "$timestamp", "i", type_="bigint"))


def oid_hex(v: Column) -> Column:
    return let(v, lambda x: F.when(is_object_raw(x), _get(x, "$oid", type_="string")))


def truthy(v: Column) -> Column:
    """MQL truthiness: false for missing, null, false and zero; true otherwise (NaN too)."""
    is_const, value = const_of(v)
    if is_const:
        falsy = value is None or value is False or (
            isinstance(value, (int, float, decimal.Decimal)) and not isinstance(value, bool) and value == 0)
        return F.lit(not falsy)
    def body(x: Column) -> Column:
        return (
            F.when(x.isNull(), F.lit(False))
            .when(F.is_variant_null(x), F.lit(False))
            .when(is_object_raw(x),
                  F.coalesce(_try_cast(_get(x, "$numberDecimal", type_="string"), "double") != 0,
                             F.lit(True)))
            .when(_is_array_raw(x), F.lit(True))
            .when(F.schema_of_variant(x) == "STRING", F.lit(True))
            # booleans and numbers cast to their truth value; dates and binData do not cast
            .otherwise(F.coalesce(_tvg(x, "boolean"), F.lit(True)))
        )
    return let(v, body)
