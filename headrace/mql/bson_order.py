"""BSON's total order on values: :func:`compare_values` (a comparison), :func:`values_equal`,
:func:`sort_key` (the same order as a Python sort key) and :func:`compare_single` (one query
comparison within a type bracket), all ranking values by MongoDB's canonical type first. Part of
:mod:`headrace.mql.bson`, which re-exports it.
"""
from __future__ import annotations

import datetime as _dt
import decimal
import re
from typing import Any

from .. import ejson
from ..ejson import MAXKEY, MINKEY, ObjectId
from .bson_types import MISSING, is_nan


# canonical type ranks (MongoDB's canonicalizeBSONType); missing is 0, like undefined
_R_MINKEY, _R_MISSING, _R_NULL, _R_NUMBER, _R_STRING = -1, 0, 5, 10, 15
_R_OBJECT, _R_ARRAY, _R_BINDATA, _R_OID, _R_BOOL, _R_DATE, _R_TIMESTAMP = 20, 25, 30, 35, 40, 45, 47
_R_REGEX, _R_MAXKEY = 50, 127


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
