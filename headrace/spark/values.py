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
  as_decimal(v)                         -- DECIMAL(38,18) of a number (NULL when out of range)
  as_integral(v)                        -- BIGINT of a number with an integral value, else NULL
  is_integer(v)                         -- MQL int or long
  is_object_raw(v)                      -- any VARIANT object (incl. $oid / $minKey wrappers)
  object_entries(v)                     -- MAP<STRING,VARIANT> of an object, else NULL
  oid_hex(v)                            -- the hex string of an ObjectId value, else NULL
  variant_path(*keys)                   -- a ``variant_get`` path for literal keys
  from_double(c), from_long(c)          -- a DOUBLE / BIGINT column as VARIANT

Deviations (accepted): ``Int64`` values that fit in 32 bits read back as ``int``; object fields
are stored sorted by name, so object comparison follows sorted field order; ``compare`` and
``sort_key`` look three container levels deep and compare deeper levels by their JSON text.
"""
from __future__ import annotations

import datetime as _dt
import decimal
from typing import Any, Iterable, Mapping

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
]

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1

#: BSON comparison order of type names.
RANKS = {
    "minKey": 1, "missing": 2, "null": 2, "int": 3, "long": 3, "double": 3, "decimal": 3,
    "string": 4, "object": 5, "array": 6, "binData": 7, "objectId": 8, "bool": 9, "date": 10,
    "timestamp": 11, "regex": 12, "maxKey": 13,
}

_SPECIAL_KEYS = ("$oid", "$minKey", "$maxKey", "$numberDecimal")


def _sql(expr: str) -> Column:
    return F.expr(expr)


MISSING: Column = F.lit(None).cast("variant")
NULL: Column = F.parse_json(F.lit("null"))
_EMPTY_ARRAY: Column = F.parse_json(F.lit("[]"))
_EMPTY_OBJECT: Column = F.parse_json(F.lit("{}"))


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
    return F.try_variant_get(v, "$", type_)


# ---------------------------------------------------------------------------------------------
# constants and conversions


def from_double(c: Column) -> Column:
    return c.cast("double").cast("variant")


def from_long(c: Column) -> Column:
    return c.cast("bigint").cast("variant")


def lit_value(value: Any) -> Column:
    """A constant of the ``headrace.ejson`` value model as a VARIANT column."""
    t = type(value)
    if value is None:
        return NULL
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
        return make_object([("$numberDecimal", F.lit(str(value)).cast("variant"))])
    if isinstance(value, _dt.datetime):
        d = value if value.tzinfo else value.replace(tzinfo=ejson.UTC)
        micros = ejson.datetime_to_millis(d) * 1000 + d.microsecond % 1000
        return F.timestamp_micros(F.lit(micros)).cast("variant")
    if t is bytes or t is bytearray:
        return F.lit(bytearray(value)).cast("binary").cast("variant")
    if t is ejson.ObjectId:
        return make_object([("$oid", F.lit(str(value)).cast("variant"))])
    if value is ejson.MINKEY:
        return make_object([("$minKey", F.lit(1).cast("variant"))])
    if value is ejson.MAXKEY:
        return make_object([("$maxKey", F.lit(1).cast("variant"))])
    if isinstance(value, dict):
        return make_object([(k, lit_value(x)) for k, x in value.items()])
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
        return F.when(col.isNull(), MISSING).otherwise(make_object(pairs))
    if isinstance(spark_type, T.MapType):
        m = F.transform_values(col, lambda k, x: to_variant(x, spark_type.valueType))
        return F.when(col.isNull(), MISSING).otherwise(make_object(m))
    if isinstance(spark_type, T.ArrayType):
        arr = F.transform(col, lambda x: F.coalesce(to_variant(x, spark_type.elementType), NULL))
        return F.when(col.isNull(), MISSING).otherwise(make_array(arr))
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
    micros = F.timestampdiff("MICROSECOND", F.expr(_NTZ_EPOCH), ntz)
    return F.timestamp_micros(micros)


# ---------------------------------------------------------------------------------------------
# type tests


def is_missing(v: Column) -> Column:
    return v.isNull()


def is_null_or_missing(v: Column) -> Column:
    return v.isNull() | F.coalesce(F.is_variant_null(v), F.lit(True))


def is_object_raw(v: Column) -> Column:
    """Any VARIANT object (including the ``$oid`` / ``$minKey`` wrappers); false for missing."""
    return _tvg(v, "struct<>").isNotNull()


def _special(v: Column) -> Column:
    """The wrapper key of an ObjectId / MinKey / MaxKey / out-of-range decimal object, else NULL.

    Only meaningful on objects."""
    expr = F.when(_get(v, "$oid").isNotNull(), F.lit("objectId"))
    expr = expr.when(_get(v, "$minKey").isNotNull(), F.lit("minKey"))
    expr = expr.when(_get(v, "$maxKey").isNotNull(), F.lit("maxKey"))
    expr = expr.when(_get(v, "$numberDecimal").isNotNull(), F.lit("decimal"))
    return expr


def is_object(v: Column) -> Column:
    """An MQL document (a VARIANT object that is not an ObjectId / MinKey / MaxKey wrapper)."""
    return F.when(is_object_raw(v), _special(v).isNull()).otherwise(F.lit(False))


def is_array(v: Column) -> Column:
    # the element probe answers most arrays without materialising them
    return F.when(F.variant_get(v, "$[0]", "variant").isNotNull(), F.lit(True)).otherwise(
        _tvg(v, "array<struct<>>").isNotNull())


def _schema(v: Column) -> Column:
    """schema_of_variant of a non-container, non-null value (cheap for primitives)."""
    return F.schema_of_variant(v)


def _prim_name(v: Column, schema: Column) -> Column:
    """The MQL type name of a primitive from its VARIANT schema string."""
    big = _tvg(v, "bigint")
    return (
        F.when(schema == "BIGINT",
               F.when(big.between(INT32_MIN, INT32_MAX), F.lit("int")).otherwise(F.lit("long")))
        .when(schema.isin("DOUBLE", "FLOAT"), F.lit("double"))
        .when(schema == "STRING", F.lit("string"))
        .when(schema == "BOOLEAN", F.lit("bool"))
        .when(schema.isin("TIMESTAMP", "TIMESTAMP_NTZ", "DATE"), F.lit("date"))
        .when(schema == "BINARY", F.lit("binData"))
        .when(schema.startswith("DECIMAL"), F.lit("decimal"))
        .when(schema == "VOID", F.lit("null"))
        .otherwise(F.lit("string"))
    )


def type_name(v: Column) -> Column:
    """The MQL ``$type`` name of v (``"missing"`` for SQL NULL)."""
    return (
        F.when(v.isNull(), F.lit("missing"))
        .when(F.is_variant_null(v), F.lit("null"))
        .when(is_object_raw(v), F.coalesce(_special(v), F.lit("object")))
        .when(is_array(v), F.lit("array"))
        .otherwise(_prim_name(v, _schema(v)))
    )


def _is_container(v: Column) -> Column:
    return is_object_raw(v) | is_array(v)


def _prim_test(v: Column, pred) -> Column:
    """pred(schema) for primitives; false for missing, null and containers."""
    return (
        F.when(v.isNull(), F.lit(False))
        .when(F.is_variant_null(v), F.lit(False))
        .when(is_object_raw(v), F.lit(False))
        .when(is_array(v), F.lit(False))
        .otherwise(pred(_schema(v)))
    )


def is_number(v: Column) -> Column:
    num = _prim_test(v, lambda s: s.isin("BIGINT", "DOUBLE", "FLOAT") | s.startswith("DECIMAL"))
    # an out-of-range decimal is stored as {"$numberDecimal": "..."}
    return num | F.coalesce(_get(v, "$numberDecimal", type_="string").isNotNull() & is_object_raw(v),
                            F.lit(False))


def is_integer(v: Column) -> Column:
    """MQL int or long."""
    return _prim_test(v, lambda s: s == "BIGINT")


def is_string(v: Column) -> Column:
    return _prim_test(v, lambda s: s == "STRING")


def is_date(v: Column) -> Column:
    return _prim_test(v, lambda s: s.isin("TIMESTAMP", "TIMESTAMP_NTZ", "DATE"))


def is_bool(v: Column) -> Column:
    return _prim_test(v, lambda s: s == "BOOLEAN")


def type_rank(v: Column) -> Column:
    """BSON comparison-order rank; missing ranks as null."""
    name = type_name(v)
    expr = None
    for n, r in RANKS.items():
        expr = F.when(name == n, F.lit(r)) if expr is None else expr.when(name == n, F.lit(r))
    return expr.otherwise(F.lit(2))


# ---------------------------------------------------------------------------------------------
# typed accessors


def as_double(v: Column) -> Column:
    """DOUBLE of a number (int, long, double, decimal), else NULL."""
    dec_obj = _try_cast(_get(v, "$numberDecimal", type_="string"), "double")
    return F.when(is_number(v), F.coalesce(_tvg(v, "double"), dec_obj))


def as_decimal(v: Column) -> Column:
    """DECIMAL(38,18) of a number, else NULL (also NULL when out of that range or NaN/inf)."""
    return F.when(is_number(v), _tvg(v, "decimal(38,18)"))


def as_long(v: Column) -> Column:
    """BIGINT of an MQL int or long, else NULL."""
    return F.when(is_integer(v), _tvg(v, "bigint"))


def as_integral(v: Column) -> Column:
    """BIGINT of a number whose value is integral and fits in 64 bits, else NULL."""
    d = _tvg(v, "double")
    dec = _tvg(v, "decimal(38,18)")
    return (
        F.when(is_integer(v), _tvg(v, "bigint"))
        .when(is_number(v) & (F.floor(dec) == dec), _try_cast(dec, "bigint"))
        .when(is_number(v) & (F.floor(d) == d) & (F.abs(d) < F.lit(9.2e18)), d.cast("bigint"))
    )


def as_string(v: Column) -> Column:
    return F.when(is_string(v), _tvg(v, "string"))


def as_bool_raw(v: Column) -> Column:
    return F.when(is_bool(v), _tvg(v, "boolean"))


def as_timestamp(v: Column) -> Column:
    """TIMESTAMP (an instant) of a date, else NULL."""
    return F.when(is_date(v), _tvg(v, "timestamp"))


def oid_hex(v: Column) -> Column:
    return F.when(is_object_raw(v), _get(v, "$oid", type_="string"))


def truthy(v: Column) -> Column:
    schema = _schema(v)
    return (
        F.when(v.isNull(), F.lit(False))
        .when(F.is_variant_null(v), F.lit(False))
        .when(is_object_raw(v),
              F.coalesce(_try_cast(_get(v, "$numberDecimal", type_="string"), "double") != 0,
                         F.lit(True)))
        .when(is_array(v), F.lit(True))
        .when(schema == "BOOLEAN", _tvg(v, "boolean"))
        .when(schema.isin("BIGINT", "DOUBLE", "FLOAT") | schema.startswith("DECIMAL"),
              _tvg(v, "double") != 0)
        .otherwise(F.lit(True))
    )


# ---------------------------------------------------------------------------------------------
# arrays, objects and paths


def array_elems(v: Column) -> Column:
    """ARRAY<VARIANT> of an array value (JSON null elements are VARIANT nulls), else NULL."""
    return _tvg(v, "array<variant>")


def object_entries(v: Column) -> Column:
    """MAP<STRING, VARIANT> of a document (not of ObjectId & co. wrappers), else NULL."""
    return F.when(is_object(v), _tvg(v, "map<string,variant>"))


def make_array(cols: "Iterable[Column] | Column") -> Column:
    """A VARIANT array of the given VARIANT columns (missing elements become null), or of an
    ARRAY<VARIANT> column (a NULL array stays missing)."""
    if isinstance(cols, Column):
        return F.when(F.size(cols) == 0, _EMPTY_ARRAY).otherwise(
            F.transform(cols, lambda e: F.coalesce(e, NULL)).cast("variant"))
    cols = list(cols)
    if not cols:
        return _EMPTY_ARRAY
    return F.array(*[F.coalesce(c, NULL) for c in cols]).cast("variant")


def make_object(pairs: "Iterable[tuple[str, Column]] | Mapping[str, Column] | Column") -> Column:
    """A VARIANT object from (name, VARIANT column) pairs, a dict, or a MAP<STRING,VARIANT>
    column; missing (SQL NULL) values are left out; with literal names the last one wins."""
    if isinstance(pairs, Column):
        kept = F.map_filter(pairs, lambda k, x: x.isNotNull())
        return F.when(pairs.isNull(), MISSING).otherwise(
            F.when(F.size(kept) == 0, _EMPTY_OBJECT).otherwise(F.to_variant_object(kept)))
    if isinstance(pairs, Mapping):
        pairs = list(pairs.items())
    dedup: dict[str, Column] = {}
    for k, c in pairs:
        dedup.pop(k, None)
        dedup[k] = c
    if not dedup:
        return _EMPTY_OBJECT
    args = []
    for k, c in dedup.items():
        args += [F.lit(k), c]
    m = F.map_filter(F.create_map(*args), lambda k, x: x.isNotNull())
    return F.when(F.size(m) == 0, _EMPTY_OBJECT).otherwise(F.to_variant_object(m))


_ARRAY_DEPTH = 3


def _step(x: Column, key: str, depth: int) -> Column:
    """One field-path step: the field of a document; over an array, the array of the step
    applied to each element (documents and nested arrays; missing results skipped)."""
    arr_branch = None
    if depth > 0:
        elems = array_elems(x)
        mapped = F.filter(F.transform(elems, lambda e: _step(e, key, depth - 1)), lambda e: e.isNotNull())
        arr_branch = make_array(mapped)
    field = F.when(is_object_raw(x), _get(x, key))
    if arr_branch is None:
        return field
    return F.coalesce(field, F.when(is_array(x), arr_branch))


def get_path(v: Column, path: str) -> Column:
    """Aggregation field-path semantics for ``"a.b.c"`` over value ``v``."""
    keys = path.split(".") if path else []
    if not keys:
        return v
    fast = _get(v, *keys)
    if len(keys) == 1:
        return fast
    cur = v
    for k in keys:
        cur = _step(cur, k, _ARRAY_DEPTH)
    return F.coalesce(fast, cur)


def _set_top(doc: Column, key: str, value: Column) -> Column:
    """doc (an object) with field ``key`` = value, or without it when value is missing."""
    path = variant_path(key)
    return F.when(value.isNull(), F.variant_delete(doc, F.lit(path))).otherwise(
        F.variant_set(doc, F.lit(path), value))


def _set_path(doc: Column, keys: list[str], value: Column, depth: int = _ARRAY_DEPTH) -> Column:
    """MQL ``$addFields`` semantics for one dotted path; ``doc`` must be an object."""
    if len(keys) == 1:
        return _set_top(doc, keys[0], value)
    head, rest = keys[0], keys[1:]
    sub = _get(doc, head)
    return _set_top(doc, head, _apply_sub(sub, rest, value, depth))


def _apply_sub(sub: Column, rest: list[str], value: Column, depth: int) -> Column:
    # a document: recurse; an array: apply to each element; anything else is replaced by a
    # new document holding the computed fields
    as_doc = _set_path(F.when(is_object(sub), sub).otherwise(_EMPTY_OBJECT), rest, value, depth)
    if depth <= 0:
        return as_doc
    over_array = make_array(F.transform(array_elems(sub),
                                        lambda e: _apply_sub(e, rest, value, depth - 1)))
    return F.when(is_array(sub), over_array).otherwise(as_doc)


def set_fields(doc: Column, fields: "Mapping[str, Column] | Iterable[tuple[str, Column]]") -> Column:
    """doc with fields set in order (``$addFields`` semantics: dotted paths create
    sub-documents, apply to each element of an array on the way, and replace non-documents;
    a missing value removes the field)."""
    items = list(fields.items()) if isinstance(fields, Mapping) else list(fields)
    out = doc
    for path, value in items:
        out = _set_path(out, path.split("."), value, _ARRAY_DEPTH)
    return out


def _unset_path(doc: Column, keys: list[str], depth: int = _ARRAY_DEPTH) -> Column:
    if len(keys) == 1:
        return F.variant_delete(doc, F.lit(variant_path(keys[0])))
    head, rest = keys[0], keys[1:]
    sub = _get(doc, head)
    new_sub = F.when(is_object(sub), _unset_path(sub, rest, depth))
    if depth > 0:
        new_sub = new_sub.when(is_array(sub), make_array(F.transform(
            array_elems(sub),
            lambda e: F.when(is_object(e), _unset_path(e, rest, depth - 1)).otherwise(e))))
    new_sub = new_sub.otherwise(sub)
    return F.when(sub.isNull(), doc).otherwise(F.variant_set(doc, F.lit(variant_path(head)), new_sub))


def unset_fields(doc: Column, paths: Iterable[str]) -> Column:
    """doc without the given (dotted) fields; arrays of documents on the way are traversed."""
    out = doc
    for p in paths:
        out = _unset_path(out, p.split("."))
    return out


# ---------------------------------------------------------------------------------------------
# comparison


def _leaf_fields(v: Column, name: Column) -> list[Column]:
    rank = F.coalesce(*[F.when(name == n, F.lit(r)) for n, r in RANKS.items()], F.lit(2))
    num = name.isin("int", "long", "double", "decimal")
    d = F.coalesce(_tvg(v, "double"), _try_cast(_get(v, "$numberDecimal", type_="string"), "double"))
    return [
        rank.alias("r"),
        F.when(num, ~F.isnan(d)).alias("nn"),           # NaN sorts below every number
        F.when(num & ~F.isnan(d), d).alias("n"),
        F.when(num, _tvg(v, "decimal(38,18)")).alias("dec"),
        F.when(name == "string", _tvg(v, "string"))
         .when(name == "objectId", _get(v, "$oid", type_="string")).alias("s"),
        F.when(name == "binData", _tvg(v, "binary")).alias("bin"),
        F.when(name == "bool", _tvg(v, "boolean")).alias("b"),
        F.when(name == "date", F.unix_micros(_tvg(v, "timestamp"))).alias("t"),
    ]


def _key(v: Column, depth: int) -> Column:
    name = type_name(v)
    fields = _leaf_fields(v, name)
    if depth <= 0:
        fields.append(F.when(name.isin("object", "array"), F.to_json(v)).alias("j"))
        return F.struct(*fields)
    fields.append(F.when(name == "array",
                         F.transform(array_elems(v), lambda e: _key(e, depth - 1))).alias("arr"))
    entries = F.map_entries(_tvg(v, "map<string,variant>"))
    fields.append(F.when(name == "object", F.transform(
        entries, lambda e: F.struct(
            type_rank(e["value"]).alias("r"), e["key"].alias("k"),
            _key(e["value"], depth - 1).alias("v")))).alias("obj"))
    return F.struct(*fields)


def sort_key(v: Column) -> Column:
    """An orderable struct: ``sort_key(a) < sort_key(b)`` iff ``compare(a, b) == -1``.

    Missing sorts as null; containers are compared three levels deep, then by JSON text."""
    return _key(v, 2)


def compare(a: Column, b: Column) -> Column:
    """-1, 0 or 1 (INT) in MongoDB's total order of values; missing compares as null."""
    ka, kb = sort_key(a), sort_key(b)
    return F.when(ka < kb, F.lit(-1)).when(ka > kb, F.lit(1)).otherwise(F.lit(0))


def equal(a: Column, b: Column) -> Column:
    """MQL equality as a Spark boolean (missing equals null, 1 == 1.0 == NumberLong(1))."""
    return sort_key(a) == sort_key(b)
