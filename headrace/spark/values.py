"""MQL values over Spark VARIANT columns: the shared vocabulary of every compiler module.

Conventions (all functions take and return ``pyspark.sql.Column``):
- A value is a VARIANT column. SQL NULL means *missing*; a VARIANT null (``is_variant_null``)
  means BSON ``null``. Encoding of BSON types in VARIANT: see ``headrace.spark.docs``.
- Integers: a VARIANT integer is MQL ``int`` when it fits in 32 bits, else ``long``.
- Nothing here raises per record: functions return SQL NULL where MQL has no value.

API (stable; other modules import these names):
  MISSING, NULL                         -- literal columns
  lit_value(python_value) -> Column     -- a constant (headrace.ejson model) as VARIANT
  to_variant(col, spark_type=None)      -- a typed Spark column as VARIANT (null stays missing)
  type_name(v)                          -- MQL $type name: "missing","null","int","long","double",
                                           "decimal","string","object","array","binData",
                                           "objectId","bool","date","minKey","maxKey"
  type_rank(v)                          -- BSON comparison-order rank (int) of v's type
  is_missing(v), is_null_or_missing(v), is_number(v), is_string(v), is_date(v),
  is_array(v), is_object(v), is_bool(v)
  as_double(v), as_long(v), as_string(v), as_bool_raw(v), as_timestamp(v)
                                        -- typed value when v has that MQL type, else NULL
  truthy(v)                             -- MQL truthiness as a Spark boolean (false for
                                           missing, null, false, 0; true otherwise)
  get_path(v, "a.b.c")                  -- aggregation field-path semantics (arrays traversed:
                                           "$a.b" over an array of documents gives the array of
                                           their b values, missing ones skipped)
  array_elems(v)                        -- ARRAY<VARIANT> of an array value, else NULL
  make_array(cols) / make_object(pairs) -- build VARIANT arrays / objects
  set_fields(doc, {path: value_col})    -- doc with fields set (dotted paths create sub-docs;
                                           a missing value removes the field)
  unset_fields(doc, [paths])
  compare(a, b)                         -- -1/0/1 in MongoDB's total order (type rank, then value;
                                           missing sorts as null)
  equal(a, b)                           -- MQL equality (numbers by value across int/long/double)
  sort_key(v)                           -- an orderable Spark column (struct) realising compare()

Extras used by the expression compiler:
  let(col, fn), let_many(cols, fn)      -- evaluate a column once and use it many times (a
                                           one-element ``transform``; skipped for cheap columns)
  type_code(v), TYPE_NAMES, CODE        -- the MQL type as an INT code (integers: CODE["int"])
  rank_of_code(code)                    -- BSON order rank of a type code
  sort_key_coded(x, c), compare_coded(a, b, ca, cb) -- sort_key / compare with known codes
  as_decimal(v)                         -- DECIMAL(38,18) of a number (NULL when out of range)
  as_integral(v)                        -- BIGINT of a number with an integral value, else NULL
  is_integer(v)                         -- MQL int or long
  is_object_raw(v)                      -- any VARIANT object (incl. $oid / $minKey wrappers)
  object_entries(v)                     -- MAP<STRING,VARIANT> of a document, else NULL
  oid_hex(v)                            -- the hex string of an ObjectId value, else NULL
  variant_path(*keys)                   -- a ``variant_get`` path for literal keys
  from_double(c), from_long(c)          -- a DOUBLE / BIGINT column as VARIANT
  const_of(col)                         -- the Python value of a ``lit_value`` column, if any

Cost model: Spark's analyzer makes about one pass over the whole plan per level of lambda
nesting, so helpers avoid nesting lambdas and repeat small expressions instead of binding them.
Type tests never cast strings to numbers (a failing cast is slow); they read the VARIANT type.

Deviations (accepted): ``Int64`` values that fit in 32 bits read back as ``int``; object fields
are stored sorted by name, so object comparison follows sorted field order; ``compare`` and
``sort_key`` compare the elements of arrays and documents by value and containers nested deeper
by their JSON text; field paths (``get_path``, ``set_fields``, ``unset_fields``) traverse
arrays and arrays nested one level deeper, not deeper.

Field order (not kept; what keeping it would take). VARIANT sorts only an object's field-id and
offset lists by name; the value bytes may lie in any order, and both builders (pyspark's
``VariantBuilder`` and the JVM's ``finishWritingObject``: ``parse_json``, ``to_variant_object``)
append values in the order given, so insertion order is readable from the offsets right after a
build. But the JVM's ``VariantBuilder.appendVariant``, used whenever an object is copied into
another (a nested object in ``to_variant_object``, an array cast to VARIANT, ...), writes the
fields in id-list (sorted) order, and ``toJson``/``toPython`` read in that order: offsets are not
a sound carrier. A sound design: a reserved field in every object (a name users cannot write,
sorting first) holding the array of its field names in insertion order: an ordinary field, so
it survives every copy. Written by ``docs._Builder`` and the JVM parse path; maintained by
``make_object`` (pairs' order), ``set_fields`` (existing order, new names appended, a replaced
name keeps its place), ``unset_fields``, ``$project`` (``_id`` first), ``$group`` output
(``_id`` first, then the accumulators in spec order) and the object operators
(``$mergeObjects $setField $unsetField $arrayToObject $objectToArray``); skipped by every
reader of object entries (``object_entries``, ``$jsonSchema``'s property keywords); used by
``compare``/``equal`` on documents (order-sensitive ``$eq``, as MongoDB) and by the sinks and
``docs.from_variant`` to print fields in order.
"""
from __future__ import annotations

import datetime as _dt
import decimal
import re
from typing import Any, Callable, Iterable, Mapping

from pyspark.sql import Column
from pyspark.sql import functions as F

from .. import ejson

__all__ = [
    "MISSING", "NULL", "lit_value", "to_variant", "type_name", "type_rank", "is_missing",
    "is_null_or_missing", "is_number", "is_string", "is_date", "is_array", "is_object",
    "is_bool", "as_double", "as_long", "as_string", "as_bool_raw", "as_timestamp", "truthy",
    "get_path", "array_elems", "make_array", "make_object", "set_fields", "unset_fields",
    "compare", "equal", "sort_key", "as_decimal", "as_integral", "is_integer", "is_object_raw",
    "object_entries", "oid_hex", "variant_path", "from_double", "from_long", "RANKS",
    "let", "let_many", "is_simple", "type_code", "TYPE_NAMES", "CODE", "NUMBER_CODES", "rank_of_code",
    "sort_key_coded", "compare_coded", "const_of",
]

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1

#: BSON comparison order of type names.
RANKS = {
    "minKey": 1, "missing": 2, "null": 2, "int": 3, "long": 3, "double": 3, "decimal": 3,
    "string": 4, "object": 5, "array": 6, "binData": 7, "objectId": 8, "bool": 9, "date": 10,
    "timestamp": 11, "regex": 12, "maxKey": 13,
}

_SPECIAL_KEYS = ("$oid", "$minKey", "$maxKey", "$numberDecimal")


_CONSTANTS = {
    "MISSING": lambda: F.lit(None).cast("variant"),
    "NULL": lambda: F.parse_json(F.lit("null")),
    "_EMPTY_ARRAY": lambda: F.parse_json(F.lit("[]")),
    "_EMPTY_OBJECT": lambda: F.parse_json(F.lit("{}")),
}


def __getattr__(name: str) -> Column:
    # MISSING / NULL are built on first use (a Column needs a running SparkContext);
    if name in _CONSTANTS:
        col = _CONSTANTS[name]()
        globals()[name] = col
        return col
    raise AttributeError(name)


def _const(name: str) -> Column:
    return globals()[name] if name in globals() else __getattr__(name)


def variant_path(*keys: str) -> str:
    """A VARIANT path selecting object keys ``keys`` in turn (quoted, so any name works)."""
    parts = ["$"]
    for k in keys:
        if "'" in k:
            parts.append('["' + k + '"]')
        else:
            parts.append("['" + k + "']")
    return "".join(parts)


def _get(v: Column, *keys: str, type_: str | None = None) -> Column:
    path = variant_path(*keys)
    if type_ is None:
        return F.variant_get(v, path, "variant")
    return F.try_variant_get(v, path, type_)


def _try_cast(c: Column, type_: str) -> Column:
    return c.try_cast(type_)


def _tvg(v: Column, type_: str) -> Column:
    return derived(v, type_, lambda x: F.try_variant_get(x, "$", type_))


# ---------------------------------------------------------------------------------------------
# constants and conversions


def from_double(c: Column) -> Column:
    return c.cast("double").cast("variant")


def from_long(c: Column) -> Column:
    return c.cast("bigint").cast("variant")


def _mark(col: Column, name: str) -> Any:
    """A marker this module set on ``col`` (or None). Read from ``__dict__``: ``getattr`` of a
    missing name on a Column builds a field-access Column, several py4j round trips each."""
    return getattr(col, "__dict__", {}).get(name)


class _Const:
    __slots__ = ("value",)

    def __init__(self, value: Any):
        self.value = value


def const_of(col: Column) -> "tuple[bool, Any]":
    """(True, value) when ``col`` came from :func:`lit_value`, else (False, None); lets
    helpers fold constants at compile time instead of testing them per row."""
    c = _mark(col, "_mql_const")
    return (True, c.value) if isinstance(c, _Const) else (False, None)


class _Hoisted:
    __slots__ = ("code", "derive")

    def __init__(self, code: Callable[[], Column], derive: Callable[..., Column]):
        self.code, self.derive = code, derive


def hoisted_ref(col: Column, code: Callable[[], Column], derive: Callable[..., Column]) -> Column:
    """``col``, a column a stage computes once per row (:mod:`headrace.spark.hoist`), marked so
    that :func:`_code_of` answers ``code()`` (a column holding its type code) and
    :func:`derived` ``derive(key, build)`` (a column holding ``build(col)``)."""
    col._mql_code = _Hoisted(code, derive)
    return col


def derived(x: Column, key: str, build: Callable[[Column], Column]) -> Column:
    """``build(x)``; a column computed once per row when ``x`` is a hoisted column (typed
    values of a field path: its DOUBLE, its STRING ...), so that operators reading it in
    several branches repeat a reference, not the conversion."""
    m = _mark(x, "_mql_code")
    return m.derive(key, build) if isinstance(m, _Hoisted) else build(x)


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
    if t in (bytes, bytearray):
        return CODE["binData"]
    if t is ejson.ObjectId:
        return CODE["objectId"]
    if value is ejson.MINKEY:
        return CODE["minKey"]
    if value is ejson.MAXKEY:
        return CODE["maxKey"]
    if isinstance(value, dict):
        return CODE["object"]
    return CODE["array"]


def lit_value(value: Any) -> Column:
    """A constant of the ``headrace.ejson`` value model as a VARIANT column."""
    col = _lit_value(value)
    try:
        col._mql_const = _Const(value)
    except AttributeError:  # a Column implementation without instance attributes
        pass
    return col


def _const_object(pairs: list[tuple[str, Column]]) -> Column:
    """A VARIANT object of constant fields (never missing): no per-row filter, so the
    optimizer folds it to a literal (:func:`make_object` filters out missing values)."""
    dedup = dict(pairs)
    if not dedup:
        return _const("_EMPTY_OBJECT")
    return F.to_variant_object(F.create_map(*[c for k, x in dedup.items() for c in (F.lit(k), x)]))


def _lit_value(value: Any) -> Column:
    t = type(value)
    if value is None:
        return _const("NULL")
    if t is bool:
        return F.lit(value).cast("variant")
    if isinstance(value, int) and t is not bool:
        return F.lit(int(value)).cast("bigint").cast("variant")
    if t is float:
        return F.lit(value).cast("double").cast("variant")
    if t is str:
        return F.lit(value).cast("variant")
    if t is decimal.Decimal:
        if value.is_finite():
            _, digits, exp = value.as_tuple()
            scale = max(0, -exp)
            prec = max(len(digits) + max(exp, 0), scale, 1)
            if prec <= 38:
                return F.lit(str(value)).cast(f"decimal({prec},{scale})").cast("variant")
        return _const_object([("$numberDecimal", F.lit(str(value)).cast("variant"))])
    if isinstance(value, _dt.datetime):
        d = value if value.tzinfo else value.replace(tzinfo=ejson.UTC)
        micros = ejson.datetime_to_millis(d) * 1000 + d.microsecond % 1000
        return F.timestamp_micros(F.lit(micros)).cast("variant")
    if t is bytes or t is bytearray:
        return F.lit(bytearray(value)).cast("binary").cast("variant")
    if t is ejson.ObjectId:
        return _const_object([("$oid", F.lit(str(value)).cast("variant"))])
    if value is ejson.MINKEY:
        return _const_object([("$minKey", F.lit(1).cast("variant"))])
    if value is ejson.MAXKEY:
        return _const_object([("$maxKey", F.lit(1).cast("variant"))])
    if isinstance(value, dict):
        return _const_object([(k, lit_value(x)) for k, x in value.items()])
    if isinstance(value, (list, tuple)):
        return make_array([lit_value(x) for x in value])
    raise ValueError(f"cannot use a {t.__name__} as a constant")


def to_variant(col: Column, spark_type: Any = None) -> Column:
    """A typed Spark column as VARIANT; SQL NULL stays NULL (missing).

    Structs and maps become objects (NULL fields are left out), arrays become arrays, other
    primitives keep their type (TIMESTAMP_NTZ is read as UTC).
    """
    from pyspark.sql import types as T

    if spark_type is None:
        return col.cast("variant")
    if isinstance(spark_type, T.VariantType):
        return col
    if isinstance(spark_type, T.StructType):
        pairs = [(f.name, to_variant(col.getField(f.name), f.dataType)) for f in spark_type.fields]
        return F.when(col.isNull(), _const("MISSING")).otherwise(make_object(pairs))
    if isinstance(spark_type, T.MapType):
        m = F.transform_values(col, lambda k, x: to_variant(x, spark_type.valueType))
        return F.when(col.isNull(), _const("MISSING")).otherwise(make_object(m))
    if isinstance(spark_type, T.ArrayType):
        arr = F.transform(col, lambda x: F.coalesce(to_variant(x, spark_type.elementType), _const("NULL")))
        return F.when(col.isNull(), _const("MISSING")).otherwise(make_array(arr))
    if isinstance(spark_type, T.TimestampNTZType):
        return _ntz_to_ts(col).cast("variant")
    if isinstance(spark_type, T.DateType):
        return _ntz_to_ts(col.cast("timestamp_ntz")).cast("variant")
    if isinstance(spark_type, (T.IntegerType, T.ShortType, T.ByteType)):
        return col.cast("bigint").cast("variant")
    if isinstance(spark_type, T.FloatType):
        return col.cast("double").cast("variant")
    return col.cast("variant")


_NTZ_EPOCH = "TIMESTAMP_NTZ'1970-01-01 00:00:00'"


def _ntz_to_ts(ntz: Column) -> Column:
    """A TIMESTAMP_NTZ read as UTC wall time, as an instant (independent of the session zone)."""
    secs = (ntz - F.expr(_NTZ_EPOCH)).cast("decimal(38,6)")
    return F.timestamp_micros((secs * 1_000_000).cast("bigint"))


# ---------------------------------------------------------------------------------------------
# let-binding: a value used several times is evaluated once


_SIMPLE = re.compile(r"^Column<'[\w.`$]*(\['\w+'\])*'>$")


def is_simple(c: Column) -> bool:
    """True for expressions cheaper to repeat than to bind: column references, lambda
    variables, literals and small lambda-free expressions such as ``variant_get(doc, '$.a')``.

    Binding costs a lambda level, and Spark's analyzer needs about one pass over the whole plan
    per level of lambda nesting, so small expressions are repeated instead."""
    s = str(c)
    if _SIMPLE.match(s):
        return True
    return len(s) <= 300 and "lambda" not in s and "namedlambdavariable" not in s


def let(c: Column, fn: Callable[[Column], Column]) -> Column:
    """``fn(x)`` with ``x`` bound to ``c`` evaluated once (a one-element ``transform``).

    Not a hoisted column (:func:`shared`): ``fn`` may read ``x`` only on rows where a condition
    holds, and ``c`` may raise on the others (e.g. ``floor`` of 1e300 under ANSI)."""
    if is_simple(c):
        return fn(c)
    return F.transform(F.array(c), lambda x: fn(x)).getItem(0)


def let_many(cols: list[Column], fn: Callable[..., Column]) -> Column:
    """``fn(*xs)`` with each ``xs[i]`` bound to ``cols[i]`` evaluated once."""
    if all(is_simple(c) for c in cols):
        return fn(*cols)
    if len(cols) == 1:
        return let(cols[0], fn)
    s = F.struct(*[c.alias(f"_{i}") for i, c in enumerate(cols)])
    return F.transform(F.array(s), lambda x: fn(*[x[f"_{i}"] for i in range(len(cols))])).getItem(0)


# ---------------------------------------------------------------------------------------------
# type tests

#: type codes (INT) returned by :func:`type_code`, indexed into these names
TYPE_NAMES = ["missing", "null", "int", "long", "double", "decimal", "string", "object", "array",
              "binData", "objectId", "bool", "date", "minKey", "maxKey"]
CODE = {n: i for i, n in enumerate(TYPE_NAMES)}
NUMBER_CODES = (CODE["int"], CODE["long"], CODE["double"], CODE["decimal"])

_SCHEMA_CODES = {"BIGINT": CODE["int"], "DOUBLE": CODE["double"], "FLOAT": CODE["double"],
                 "DECIMAL": CODE["decimal"], "STRING": CODE["string"], "BOOLEAN": CODE["bool"],
                 "TIMESTAMP": CODE["date"], "TIMESTAMP_NTZ": CODE["date"], "DATE": CODE["date"],
                 "BINARY": CODE["binData"], "VOID": CODE["null"]}


def _const_map(d: Mapping) -> Column:
    args = []
    for k, x in d.items():
        args += [F.lit(k), F.lit(x)]
    return F.create_map(*args)


def _const_array(xs: list) -> Column:
    return F.array(*[F.lit(x) for x in xs])


def is_object_raw(v: Column) -> Column:
    """Any VARIANT object (including the ``$oid`` / ``$minKey`` wrappers); false for missing."""
    return _tvg(v, "struct<>").isNotNull()


def _is_array_raw(v: Column) -> Column:
    return _tvg(v, "array<struct<>>").isNotNull()


def _code_of(x: Column) -> Column:
    """The type code of a bound (cheap to repeat) value; integers are all ``CODE["int"]``
    here (``type_name`` tells int from long by magnitude)."""
    is_const, value = const_of(x)
    if is_const:
        return F.lit(_py_code(value))
    known = _mark(x, "_mql_code")
    if isinstance(known, _Hoisted):
        return known.code()
    prim = F.coalesce(F.try_element_at(_const_map(_SCHEMA_CODES),
                                       F.substring_index(F.schema_of_variant(x), "(", 1)),
                      F.lit(CODE["string"]))
    return (
        F.when(x.isNull(), F.lit(CODE["missing"]))
        .when(F.is_variant_null(x), F.lit(CODE["null"]))
        .when(is_object_raw(x),
              F.when(_get(x, "$oid").isNotNull(), F.lit(CODE["objectId"]))
              .when(_get(x, "$minKey").isNotNull(), F.lit(CODE["minKey"]))
              .when(_get(x, "$maxKey").isNotNull(), F.lit(CODE["maxKey"]))
              .when(_get(x, "$numberDecimal").isNotNull(), F.lit(CODE["decimal"]))
              .otherwise(F.lit(CODE["object"])))
        .when(_is_array_raw(x), F.lit(CODE["array"]))
        .otherwise(prim)
    )


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
    return derived(x, "number double", lambda x: F.coalesce(
        F.try_variant_get(x, "$", "double"), _try_cast(_get(x, "$numberDecimal", type_="string"), "double")))


def as_double(v: Column) -> Column:
    """DOUBLE of a number (int, long, double, decimal), else NULL."""
    return let(v, lambda x: F.when(_code_of(x).isin(*NUMBER_CODES), _num_double(x)))


def as_decimal(v: Column) -> Column:
    """DECIMAL(38,18) of a number, else NULL (also NULL when out of that range or NaN/inf)."""
    return let(v, lambda x: F.when(_code_of(x).isin(*NUMBER_CODES), _tvg(x, "decimal(38,18)")))


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
        dec = _tvg(x, "decimal(38,18)")
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


# ---------------------------------------------------------------------------------------------
# arrays, objects and paths


def array_elems(v: Column) -> Column:
    """ARRAY<VARIANT> of an array value (JSON null elements are VARIANT nulls), else NULL."""
    return _tvg(v, "array<variant>")


def object_entries(v: Column) -> Column:
    """MAP<STRING, VARIANT> of a document (not of ObjectId & co. wrappers), else NULL."""
    return let(v, lambda x: F.when(_code_of(x) == CODE["object"], _tvg(x, "map<string,variant>")))


def make_array(cols: "Iterable[Column] | Column") -> Column:
    """A VARIANT array of the given VARIANT columns (missing elements become null), or of an
    ARRAY<VARIANT> column (SQL NULL elements become null; a NULL array stays missing)."""
    if isinstance(cols, Column):
        return let(cols, lambda a: F.when(F.size(a) == 0, _const("_EMPTY_ARRAY")).otherwise(
            F.transform(a, lambda e: F.coalesce(e, _const("NULL"))).cast("variant")))
    cols = list(cols)
    if not cols:
        return _const("_EMPTY_ARRAY")
    return F.array(*[F.coalesce(c, _const("NULL")) for c in cols]).cast("variant")


def make_object(pairs: "Iterable[tuple[str, Column]] | Mapping[str, Column] | Column") -> Column:
    """A VARIANT object from (name, VARIANT column) pairs, a dict, or a MAP<STRING,VARIANT>
    column; missing (SQL NULL) values are left out; with literal names the last one wins."""
    if isinstance(pairs, Column):
        return let(F.map_filter(pairs, lambda k, x: x.isNotNull()), lambda m: F.when(
            F.size(m) == 0, _const("_EMPTY_OBJECT")).otherwise(F.to_variant_object(m)))
    if isinstance(pairs, Mapping):
        pairs = list(pairs.items())
    dedup: dict[str, Column] = {}
    for k, c in pairs:
        dedup.pop(k, None)
        dedup[k] = c
    if not dedup:
        return _const("_EMPTY_OBJECT")
    args = []
    for k, c in dedup.items():
        args += [F.lit(k), c]
    m = F.map_filter(F.create_map(*args), lambda k, x: x.isNotNull())
    return let(m, lambda m: F.when(F.size(m) == 0, _const("_EMPTY_OBJECT")).otherwise(F.to_variant_object(m)))


_ARRAY_DEPTH = 2  # arrays on a path, and arrays nested one level deeper, are traversed
_PATH_DEPTH = _ARRAY_DEPTH


def _step(x: Column, key: str, depth: int) -> Column:
    """One field-path step over a bound value: the field of a document; over an array, the
    array of the step applied to each element (missing results skipped)."""
    field = F.when(is_object_raw(x), _get(x, key))
    if depth <= 0:
        return field
    mapped = F.filter(F.transform(array_elems(x), lambda e: _step(e, key, depth - 1)),
                      lambda e: e.isNotNull())
    return F.coalesce(field, F.when(_is_array_raw(x), make_array(mapped)))


def get_path(v: Column, path: str) -> Column:
    """Aggregation field-path semantics for ``"a.b.c"`` over value ``v``.

    A direct lookup answers documents without arrays on the way; otherwise arrays are
    traversed (and arrays nested one level deeper)."""
    keys = path.split(".") if path else []
    if not keys:
        return v

    def body(x: Column) -> Column:
        fast = _get(x, *keys)
        if len(keys) == 1:
            return fast
        slow = x
        for k in keys:
            slow = let(slow, lambda s, k=k: _step(s, k, _PATH_DEPTH))
        return F.coalesce(fast, slow)

    return let(v, body)


def _set_top(doc: Column, key: str, value: Column) -> Column:
    """doc (an object) with field ``key`` = value, or without it when value is missing."""
    path = F.lit(variant_path(key))
    return F.when(value.isNull(), F.variant_delete(doc, path)).otherwise(F.variant_set(doc, path, value))


def _set_path(doc: Column, keys: list[str], value: Column, depth: int) -> Column:
    """``$addFields`` semantics for one dotted path; ``doc`` (bound) must be an object."""
    if len(keys) == 1:
        return _set_top(doc, keys[0], value)
    head, rest = keys[0], keys[1:]
    return _set_top(doc, head, let(_get(doc, head), lambda sub: _apply_sub(sub, rest, value, depth)))


def _apply_sub(sub: Column, rest: list[str], value: Column, depth: int) -> Column:
    # a document: recurse; an array: apply to each element; anything else is replaced by a
    # new document holding the computed fields
    base = F.when(_code_of(sub) == CODE["object"], sub).otherwise(_const("_EMPTY_OBJECT"))
    as_doc = let(base, lambda d: _set_path(d, rest, value, depth))
    if depth <= 0:
        return as_doc
    over_array = make_array(F.transform(array_elems(sub), lambda e: _apply_sub(e, rest, value, depth - 1)))
    return F.when(_is_array_raw(sub), over_array).otherwise(as_doc)


def set_fields(doc: Column, fields: "Mapping[str, Column] | Iterable[tuple[str, Column]]") -> Column:
    """doc with fields set in order (``$addFields`` semantics: dotted paths create
    sub-documents, apply to each element of an array on the way, and replace non-documents;
    a missing value removes the field)."""
    items = list(fields.items()) if isinstance(fields, Mapping) else list(fields)
    out = doc
    for path, value in items:
        keys = path.split(".")
        out = let_many([out, value], lambda d, val, keys=keys: _set_path(d, keys, val, _ARRAY_DEPTH))
    return out


def _unset_path(doc: Column, keys: list[str], depth: int) -> Column:
    if len(keys) == 1:
        return F.variant_delete(doc, F.lit(variant_path(keys[0])))
    head, rest = keys[0], keys[1:]

    def with_sub(sub: Column) -> Column:
        new_sub = F.when(_code_of(sub) == CODE["object"], _unset_path(sub, rest, depth))
        if depth > 0:
            new_sub = new_sub.when(_is_array_raw(sub), make_array(F.transform(
                array_elems(sub), lambda e: F.when(_code_of(e) == CODE["object"], _unset_path(e, rest, depth - 1)).otherwise(e))))
        new_sub = new_sub.otherwise(sub)
        return F.when(sub.isNull(), doc).otherwise(F.variant_set(doc, F.lit(variant_path(head)), new_sub))

    return let(_get(doc, head), with_sub)


def unset_fields(doc: Column, paths: Iterable[str]) -> Column:
    """doc without the given (dotted) fields; arrays of documents on the way are traversed."""
    out = doc
    for p in paths:
        out = let(out, lambda d, p=p: _unset_path(d, p.split("."), _ARRAY_DEPTH))
    return out


# ---------------------------------------------------------------------------------------------
# comparison

_TWO53 = float(2**53)


def _leaf_fields(x: Column, c: Column) -> list[Column]:
    num = c.isin(*NUMBER_CODES)
    d = _num_double(x)
    # a double beyond 2**53 is an integer: compare it exactly with longs
    exact_big = F.when((c == CODE["double"]) & (F.abs(d) >= _TWO53) & (F.abs(d) < 9.2e18),
                       d.cast("bigint").cast("decimal(38,18)"))
    return [
        rank_of_code(c).alias("r"),
        F.when(num, ~F.isnan(d)).alias("nn"),           # NaN sorts below every number
        F.when(num & ~F.isnan(d), d).alias("n"),
        F.when(num, F.coalesce(exact_big, _tvg(x, "decimal(38,18)"))).alias("dec"),
        F.when(c == CODE["string"], _tvg(x, "string"))
         .when(c == CODE["objectId"], _get(x, "$oid", type_="string")).alias("s"),
        F.when(c == CODE["binData"], _tvg(x, "binary")).alias("bin"),
        F.when(c == CODE["bool"], _tvg(x, "boolean")).alias("b"),
        F.when(c == CODE["date"], F.unix_micros(_tvg(x, "timestamp"))).alias("t"),
    ]


def _leaf_key(x: Column, c: Column) -> Column:
    """The key of a bound value with bound code; containers by their JSON text."""
    fields = _leaf_fields(x, c)
    fields.append(F.when(c.isin(CODE["object"], CODE["array"]), F.to_json(x)).alias("j"))
    return F.struct(*fields)


_NULL_KEY_NAME = "CAST(NULL AS STRING)"


def _key_items(x: Column, c: Column) -> Column:
    """Keys of the elements of an array, or of the (rank, name, value) fields of a document."""
    def elem(e: Column, name: Column) -> Column:
        return let(_code_of(e), lambda ce: F.struct(rank_of_code(ce).alias("r"), name.alias("k"),
                                                    _leaf_key(e, ce).alias("v")))
    return (F.when(c == CODE["array"],
                   F.transform(array_elems(x), lambda e: elem(e, F.lit(None).cast("string"))))
            .when(c == CODE["object"],
                  F.transform(F.map_entries(_tvg(x, "map<string,variant>")),
                              lambda e: elem(e["value"], e["key"]))))


def sort_key_coded(x: Column, c: Column) -> Column:
    """:func:`sort_key` of a bound value whose type code ``c`` is known."""
    return F.struct(*_leaf_fields(x, c), _key_items(x, c).alias("items"))


def sort_key(v: Column) -> Column:
    """An orderable struct: ``sort_key(a) < sort_key(b)`` iff ``compare(a, b) == -1``.

    Missing sorts as null; the elements of arrays and documents are compared by type and
    value, containers nested deeper by their JSON text."""
    return let(v, lambda x: let(_code_of(x), lambda c: sort_key_coded(x, c)))


def compare_coded(a: Column, b: Column, ca: Column, cb: Column) -> Column:
    """:func:`compare` of bound values with known type codes."""
    return let_many([sort_key_coded(a, ca), sort_key_coded(b, cb)], lambda ka, kb: F.when(
        ka < kb, F.lit(-1)).when(ka > kb, F.lit(1)).otherwise(F.lit(0)))


def compare(a: Column, b: Column) -> Column:
    """-1, 0 or 1 (INT) in MongoDB's total order of values; missing compares as null."""
    return let_many([a, b], lambda x, y: let_many(
        [_code_of(x), _code_of(y)], lambda cx, cy: compare_coded(x, y, cx, cy)))


def equal(a: Column, b: Column) -> Column:
    """MQL equality as a Spark boolean (missing equals null, 1 == 1.0 == NumberLong(1))."""
    return sort_key(a) == sort_key(b)
