"""What follows from a value's BSON encoding: MongoDB's hashed index key
(:func:`hashed_index_key`, an MD5 of the canonical type and bytes) and the encoded size of a
document (:func:`bson_size`, ``$bsonSize``). Part of :mod:`headrace.mql.bson`, which
re-exports it.
"""
from __future__ import annotations

import datetime as _dt
import decimal
import hashlib
import math
import struct
from typing import Any

from .. import ejson
from ..ejson import MAXKEY, MINKEY, ObjectId
from .bson_types import _INT64_MAX, _INT64_MIN, MISSING, NUMBER_TYPES, is_nan, type_name


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
