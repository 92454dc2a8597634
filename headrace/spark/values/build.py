"""Building MQL values as VARIANT columns: constants, typed Spark columns, arrays and objects
(part of :mod:`headrace.spark.values`, which documents the API)."""
from __future__ import annotations

import datetime as _dt
import decimal
from typing import Any, Iterable, Mapping

from pyspark.sql import Column
from pyspark.sql import functions as F

from ... import ejson
from ..docs import variant_holds
from .base import CODE, _Const, _const, _tvg, let
from .types import _code_of

def lit_value(value: Any) -> Column:
    """A constant of the ``headrace.ejson`` value model as a VARIANT column. An integer beyond
    64 bits is a double, as in a document (:mod:`headrace.spark.docs`) and in MongoDB's shell."""
    if type(value) is int and not -(2**63) <= value < 2**63:
        value = float(value)
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
        if variant_holds(value):
            _, digits, exp = value.as_tuple()
            scale = -exp
            return F.lit(str(value)).cast(f"decimal({max(len(digits), scale, 1)},{scale})").cast("variant")
        return _const_object([("$numberDecimal", F.lit(str(value)).cast("variant"))])
    if isinstance(value, _dt.datetime):
        d = value if value.tzinfo else value.replace(tzinfo=ejson.UTC)
        micros = ejson.datetime_to_millis(d) * 1000 + d.microsecond % 1000
        return F.timestamp_micros(F.lit(micros)).cast("variant")
    if t is bytes or t is bytearray:
        return F.lit(bytearray(value)).cast("binary").cast("variant")
    if t is ejson.Binary:
        return _const_object([("$binary", _const_object([
            ("data", F.lit(bytearray(value)).cast("binary").cast("variant")),
            ("subType", F.lit(value.subtype).cast("bigint").cast("variant"))]))])
    if t is ejson.Timestamp:
        return _const_object([("$timestamp", _const_object([
            ("t", F.lit(value.t).cast("bigint").cast("variant")),
            ("i", F.lit(value.i).cast("bigint").cast("variant"))]))])
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
