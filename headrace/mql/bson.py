"""BSON values as MQL sees them: type names, the comparison order, equality and truthiness.

``compare_values(a, b)`` is BSON's total order (MinKey < null < numbers < strings < objects <
arrays < binData < ObjectId < bool < date < regex < MaxKey), used for sorting, as the oracle of
``headrace.spark.values.compare``, and (through :func:`sort_key`) for shard keys in
:mod:`headrace.zones`. Numbers of any kind compare by value (NaN lowest); strings by code point;
documents field by field (value type, then field name, then value), a prefix first; binData by
length, then bytes.

``compare_single(v, op, c)`` is one query comparison (``$eq $gt $gte $lt $lte``), which only
applies within a type bracket. ``MISSING`` is the value of an absent field; it sorts as null.
"""
from __future__ import annotations

import datetime as _dt
import decimal
import hashlib
import math
import re
import struct
from typing import Any

from .. import ejson
from ..ejson import MAXKEY, MINKEY, ObjectId

__all__ = [
    "MISSING", "TYPE_CODES", "TYPE_ALIASES", "NUMBER_TYPES", "INT64_MIN", "INT64_MAX", "type_name",
    "is_number", "is_nan", "compare_values", "values_equal", "sort_key", "compare_single",
    "true_value", "type_set", "hashed_index_key",
]


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


# canonical type ranks (MongoDB's canonicalizeBSONType); missing is 0, like undefined
_R_MINKEY, _R_MISSING, _R_NULL, _R_NUMBER, _R_STRING = -1, 0, 5, 10, 15
_R_OBJECT, _R_ARRAY, _R_BINDATA, _R_OID, _R_BOOL, _R_DATE, _R_TIMESTAMP = 20, 25, 30, 35, 40, 45, 47
_R_REGEX, _R_MAXKEY = 50, 127

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


INT64_MIN, INT64_MAX = _INT64_MIN, _INT64_MAX


# ------------------------------------------------------------------------------------ types


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


#: MongoDB's canonical type numbers (``canonicalizeBSONType``), which hashed index keys hash
_CANONICAL = {"minKey": -1, "null": 5, "double": 10, "int": 10, "long": 10, "decimal": 10, "string": 15,
              "object": 20, "array": 25, "binData": 30, "objectId": 35, "bool": 40, "date": 45, "timestamp": 47,
              "maxKey": 127}


def hashed_index_key(value: Any) -> int:
    """MongoDB's hashed index key of a value (``$toHashedIndexKey``, ``convertShardKeyToHashed``):
    the first 8 bytes, little-endian, of the MD5 of seed 0 and the value's canonical type and
    bytes, numbers squashed to 64-bit integers, documents and arrays hashed field by field.
    A missing value hashes as null."""
    h = hashlib.md5(struct.pack("<i", 0))
    _hash_into(h, None if value is MISSING else value, None)
    return struct.unpack("<q", h.digest()[:8])[0]


def _safe_long(v: Any) -> int:
    if is_nan(v):
        return 0
    if isinstance(v, float) and math.isinf(v) or isinstance(v, decimal.Decimal) and v.is_infinite():
        return _INT64_MAX if v > 0 else _INT64_MIN
    if isinstance(v, decimal.Decimal):
        n = int(v.to_integral_value(rounding=decimal.ROUND_HALF_EVEN))
    else:
        n = int(v)
    return max(_INT64_MIN, min(_INT64_MAX, n))


def _hash_into(h: Any, v: Any, name: "str | None") -> None:
    t = type_name(v)
    h.update(struct.pack("<i", _CANONICAL[t]))
    if name is not None:
        h.update(name.encode("utf-8") + b"\x00")
    if t in ("object", "array"):
        items = v.items() if t == "object" else ((str(i), x) for i, x in enumerate(v))
        for k, x in items:
            _hash_into(h, x, str(k))
        h.update(struct.pack("<i", 0))      # the end-of-object element: type 0, no name
    elif t in NUMBER_TYPES:
        h.update(struct.pack("<q", _safe_long(v)))
    elif t == "string":
        b = v.encode("utf-8")
        h.update(struct.pack("<i", len(b) + 1) + b + b"\x00")
    elif t == "binData":
        h.update(struct.pack("<iB", len(v), ejson.binary_subtype(v)) + bytes(v))
    elif t == "objectId":
        h.update(v.binary)
    elif t == "bool":
        h.update(b"\x01" if v else b"\x00")
    elif t == "date":
        h.update(struct.pack("<q", ejson.datetime_to_millis(v)))
    elif t == "timestamp":
        h.update(struct.pack("<II", v.i, v.t))       # the 8 bytes as stored: increment, then seconds


def is_number(v: Any) -> bool:
    return type(v) is not bool and isinstance(v, (int, float, decimal.Decimal))


def _rank(v: Any) -> int:
    if v is MISSING:
        return _R_MISSING
    if v is None:
        return _R_NULL
    if type(v) is bool:
        return _R_BOOL
    if isinstance(v, (int, float, decimal.Decimal)):
        return _R_NUMBER
    if isinstance(v, str):
        return _R_STRING
    if isinstance(v, dict):
        return _R_OBJECT
    if isinstance(v, (list, tuple)):
        return _R_ARRAY
    if isinstance(v, (bytes, bytearray)):
        return _R_BINDATA
    if isinstance(v, ObjectId):
        return _R_OID
    if isinstance(v, _dt.datetime):
        return _R_DATE
    if isinstance(v, ejson.Timestamp):
        return _R_TIMESTAMP
    if v is MINKEY:
        return _R_MINKEY
    if v is MAXKEY:
        return _R_MAXKEY
    if isinstance(v, re.Pattern):
        return _R_REGEX
    raise TypeError(f"not a document value: {type(v).__name__}")


def is_nan(v: Any) -> bool:
    """A double or decimal NaN."""
    if type(v) is float:
        return math.isnan(v)
    if type(v) is decimal.Decimal:
        return v.is_nan()
    return False


def _sign(x: Any) -> int:
    return (x > 0) - (x < 0)


def _num_cmp(a: Any, b: Any) -> int:
    an, bn = is_nan(a), is_nan(b)
    if an or bn:  # NaN sorts below every other number and equals itself
        return 0 if an and bn else (-1 if an else 1)
    if a < b:
        return -1
    return 1 if a > b else 0


def _utc(d: _dt.datetime) -> _dt.datetime:
    return d if d.tzinfo else d.replace(tzinfo=ejson.UTC)


def compare_values(a: Any, b: Any, *, unordered_fields: bool = False) -> int:
    """-1, 0 or 1: BSON comparison order (missing sorts as null).

    Numbers compare by value across int/long/double/decimal (NaN lowest); strings by UTF-8
    bytes; documents field by field (type, then name, then value); arrays element by element;
    binData by length, then subtype, then bytes; timestamps by seconds, then ordinal. ``unordered_fields`` compares documents as if their fields
    were sorted by name (MongoDB's rule for ``$jsonSchema`` ``enum`` and ``uniqueItems``).
    """
    if a is MISSING:
        a = None
    if b is MISSING:
        b = None
    ra, rb = _rank(a), _rank(b)
    if ra != rb:
        return -1 if ra < rb else 1
    if ra == _R_NUMBER:
        return _num_cmp(a, b)
    if ra == _R_STRING:
        return _sign((a > b) - (a < b))
    if ra == _R_OBJECT:
        ia, ib = list(a.items()), list(b.items())
        if unordered_fields:
            ia.sort(key=lambda kv: kv[0].encode("utf-8", "surrogatepass"))
            ib.sort(key=lambda kv: kv[0].encode("utf-8", "surrogatepass"))
        return _cmp_pairs(ia, ib, unordered_fields)
    if ra == _R_ARRAY:
        return _cmp_pairs([(str(i), x) for i, x in enumerate(a)],
                          [(str(i), x) for i, x in enumerate(b)], unordered_fields)
    if ra == _R_BINDATA:
        ka, kb = _bin_key(a), _bin_key(b)
        return (ka > kb) - (ka < kb)
    if ra == _R_OID:
        return (a.binary > b.binary) - (a.binary < b.binary)
    if ra == _R_BOOL:
        return (a > b) - (a < b)
    if ra == _R_DATE:
        x, y = _utc(a), _utc(b)
        return (x > y) - (x < y)
    if ra == _R_TIMESTAMP:
        return (a > b) - (a < b)
    if ra == _R_REGEX:
        return _sign((a.pattern > b.pattern) - (a.pattern < b.pattern)) or _sign((a.flags > b.flags) - (a.flags < b.flags))
    return 0  # null, MinKey, MaxKey


def _bin_key(v: bytes) -> tuple:
    return (len(v), ejson.binary_subtype(v), bytes(v))


def _cmp_pairs(ia: list, ib: list, unordered: bool) -> int:
    for (ka, va), (kb, vb) in zip(ia, ib):
        ra, rb = _rank(va), _rank(vb)
        if ra != rb:
            return -1 if ra < rb else 1
        if ka != kb:
            return -1 if ka < kb else 1
        c = compare_values(va, vb, unordered_fields=unordered)
        if c:
            return c
    return (len(ia) > len(ib)) - (len(ia) < len(ib))


def values_equal(a: Any, b: Any, *, unordered_fields: bool = False) -> bool:
    """MQL equality (``compare_values(a, b) == 0``; missing equals null)."""
    return compare_values(a, b, unordered_fields=unordered_fields) == 0


def sort_key(v: Any) -> tuple:
    """A Python-comparable key that orders values as :func:`compare_values` does
    (``sort_key(a) < sort_key(b)`` exactly when ``compare_values(a, b) < 0``; equal keys for
    equal values, so ``1``, ``1.0`` and ``Decimal("1")`` share one). Raises ``TypeError`` for a
    value with no BSON order."""
    if v is MISSING:
        v = None
    r = _rank(v)
    if r == _R_NUMBER:
        return (r, (0,) if is_nan(v) else (1, v))
    if r == _R_STRING:
        return (r, v)
    if r == _R_OBJECT:
        return (r, tuple((_rank(x), k, sort_key(x)) for k, x in v.items()))
    if r == _R_ARRAY:
        return (r, tuple(sort_key(x) for x in v))
    if r == _R_BINDATA:
        return (r, *_bin_key(v))
    if r == _R_TIMESTAMP:
        return (r, v.t, v.i)
    if r == _R_OID:
        return (r, v.binary)
    if r == _R_BOOL:
        return (r, bool(v))
    if r == _R_DATE:
        return (r, _utc(v))
    if r == _R_REGEX:
        return (r, v.pattern, v.flags)
    return (r,)


def compare_single(v: Any, op: str, c: Any) -> bool:
    """``{$eq|$gt|$gte|$lt|$lte: c}`` on one value (``MISSING`` allowed): MongoDB's
    ComparisonMatchExpression::matchesSingleElement."""
    rv, rc = _rank(v), _rank(c)
    if rv != rc:
        if rv + rc == _R_MISSING + _R_NULL:  # missing vs null
            return op in ("$eq", "$lte", "$gte")
        if c is MINKEY or c is MAXKEY:
            if op in ("$lt", "$lte"):
                return c is MAXKEY
            if op == "$eq":
                return False
            return c is MINKEY
        return False
    if op != "$eq" and (is_nan(v) or is_nan(c)):
        both = is_nan(v) and is_nan(c)
        return both if op in ("$lte", "$gte") else False
    x = compare_values(v, c)
    if op == "$eq":
        return x == 0
    if op == "$gt":
        return x > 0
    if op == "$gte":
        return x >= 0
    if op == "$lt":
        return x < 0
    return x <= 0


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


_INT32 = (-(2**31), 2**31 - 1)


def bson_size(value: dict) -> int:
    """The size in bytes of a document encoded as BSON (``$bsonSize``): a length, the elements
    (type byte, field name, value), a terminator. Integers take 4 bytes when they fit 32 bits
    (an ``Int64`` 8); a document read back from VARIANT keeps no int/long distinction for small
    values, so a small NumberLong counts 4 bytes, not 8."""
    return 5 + sum(2 + len(str(k).encode("utf-8")) + _value_size(v) for k, v in value.items())


def _value_size(v: Any) -> int:  # noqa: C901 - one dispatch
    if v is None or v is MINKEY or v is MAXKEY:
        return 0
    if isinstance(v, bool):
        return 1
    if isinstance(v, ejson.Int64):
        return 8
    if isinstance(v, int):
        return 4 if _INT32[0] <= v <= _INT32[1] else 8
    if isinstance(v, float):
        return 8
    if isinstance(v, decimal.Decimal):
        return 16
    if isinstance(v, str):
        return 5 + len(v.encode("utf-8"))
    if isinstance(v, (_dt.datetime, _dt.date, ejson.Timestamp)):
        return 8
    if isinstance(v, ObjectId):
        return 12
    if isinstance(v, (bytes, bytearray)):
        return 5 + len(v)
    if isinstance(v, dict):
        return bson_size(v)
    if isinstance(v, (list, tuple)):
        return bson_size({str(i): x for i, x in enumerate(v)})
    raise TypeError(f"no BSON size for {type(v).__name__}")
