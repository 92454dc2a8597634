"""BSON value types as MQL names them: :data:`MISSING` (the value of an absent field), the
``$type`` codes and aliases, :func:`type_name`, the number tests :func:`is_number` and
:func:`is_nan`, :func:`true_value` and :func:`type_set`. Part of :mod:`headrace.mql.bson`,
which re-exports it; the comparison order is in :mod:`.bson_order`.
"""
from __future__ import annotations

import datetime as _dt
import decimal
import math
from typing import Any

from .. import ejson
from ..ejson import MAXKEY, MINKEY, ObjectId


class _Missing:
    """The value of a field that is not there (BSON EOO)."""

    _instance = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "MISSING"

    def __bool__(self) -> bool:
        return False

    def __reduce__(self):
        return (_Missing, ())


MISSING = _Missing()


#: ``$type`` numeric codes by alias.
TYPE_CODES: dict[str, int] = {
    "double": 1, "string": 2, "object": 3, "array": 4, "binData": 5, "undefined": 6,
    "objectId": 7, "bool": 8, "date": 9, "null": 10, "regex": 11, "dbPointer": 12,
    "javascript": 13, "symbol": 14, "javascriptWithScope": 15, "int": 16, "timestamp": 17,
    "long": 18, "decimal": 19, "minKey": -1, "maxKey": 127,
}
#: Every ``$type`` / ``bsonType`` alias (``"number"`` means any numeric type).
TYPE_ALIASES = frozenset(TYPE_CODES) | {"number"}
NUMBER_TYPES = frozenset({"int", "long", "double", "decimal"})


_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


INT64_MIN, INT64_MAX = _INT64_MIN, _INT64_MAX


def type_name(v: Any) -> str:
    """The MQL ``$type`` name of a value (``"missing"`` for :data:`MISSING`)."""
    if v is MISSING:
        return "missing"
    if v is None:
        return "null"
    t = type(v)
    if t is bool:
        return "bool"
    if isinstance(v, ejson.Int64):
        return "long"
    if isinstance(v, int):
        if ejson.INT32_MIN <= v <= ejson.INT32_MAX:
            return "int"
        return "long" if _INT64_MIN <= v <= _INT64_MAX else "double"
    if t is float:
        return "double"
    if t is decimal.Decimal:
        return "decimal"
    if isinstance(v, str):
        return "string"
    if isinstance(v, dict):
        return "object"
    if isinstance(v, (list, tuple)):
        return "array"
    if isinstance(v, (bytes, bytearray)):
        return "binData"
    if isinstance(v, ObjectId):
        return "objectId"
    if isinstance(v, _dt.datetime):
        return "date"
    if isinstance(v, ejson.Timestamp):
        return "timestamp"
    if v is MINKEY:
        return "minKey"
    if v is MAXKEY:
        return "maxKey"
    raise TypeError(f"not a document value: {type(v).__name__}")


def is_number(v: Any) -> bool:
    return type(v) is not bool and isinstance(v, (int, float, decimal.Decimal))


def is_nan(v: Any) -> bool:
    """A double or decimal NaN."""
    if type(v) is float:
        return math.isnan(v)
    if type(v) is decimal.Decimal:
        return v.is_nan()
    return False


def true_value(v: Any) -> bool:
    """BSON ``trueValue``: false for false, 0, null, missing; true otherwise."""
    if v is None or v is MISSING or v is False:
        return False
    if is_number(v):
        return not (v == 0)
    return True


def type_set(spec: Any) -> frozenset[str]:
    """The type aliases named by a ``$type`` argument (alias, number, or array of them)."""
    items = spec if isinstance(spec, list) else [spec]
    names = set()
    codes = {c: n for n, c in TYPE_CODES.items()}
    for t in items:
        if isinstance(t, str):
            names.add(t)
        else:
            names.add(codes[int(t)])
    return frozenset(names)
