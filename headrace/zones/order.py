"""MongoDB's comparison order for shard-key values, and shard-key extraction.

Order: BSON type first, then value within the type::

    MinKey < null < numbers < strings < objects < arrays < binary < ObjectId < booleans
           < dates < regular expressions < MaxKey

Numbers of any kind (int, long, double, decimal) compare by numeric value; NaN is below every
other number. Strings compare by code point (MongoDB's simple binary order). Objects compare
field by field (value type, then field name, then value), a prefix first. Binary compares by
length, then bytes.
"""
from __future__ import annotations

import datetime as _dt
import decimal
import math
import re
from typing import Any

from .. import ejson

_MISSING = object()


def type_rank(v: Any) -> int:
    if v is ejson.MINKEY:
        return 1
    if v is None:
        return 2
    if isinstance(v, bool):
        return 9
    if isinstance(v, (int, float, decimal.Decimal)):
        return 3
    if isinstance(v, str):
        return 4
    if isinstance(v, dict):
        return 5
    if isinstance(v, (list, tuple)):
        return 6
    if isinstance(v, (bytes, bytearray)):
        return 7
    if isinstance(v, ejson.ObjectId):
        return 8
    if isinstance(v, _dt.datetime):
        return 10
    if isinstance(v, re.Pattern):
        return 12
    if v is ejson.MAXKEY:
        return 13
    raise TypeError(f"no BSON comparison order for {type(v).__name__}")


def sort_key(v: Any) -> tuple:
    """A Python-comparable key that orders values as MongoDB does."""
    r = type_rank(v)
    if r == 3:
        nan = (isinstance(v, float) and math.isnan(v)) or (isinstance(v, decimal.Decimal) and v.is_nan())
        return (r, (0,) if nan else (1, v))
    if r == 4:
        return (r, v)
    if r == 5:
        return (r, tuple((type_rank(x), k, sort_key(x)) for k, x in v.items()))
    if r == 6:
        return (r, tuple(sort_key(x) for x in v))
    if r == 7:
        return (r, len(v), bytes(v))
    if r == 8:
        return (r, v.binary)
    if r == 9:
        return (r, bool(v))
    if r == 10:
        return (r, ejson.datetime_to_millis(v))
    if r == 12:
        return (r, v.pattern, v.flags)
    return (r,)


def get_path(doc: Any, path: str, default: Any = _MISSING) -> Any:
    cur = doc
    for part in path.split("."):
        if isinstance(cur, dict) and part in cur:
            cur = cur[part]
        else:
            return default
    return cur


def set_path(doc: dict, path: str, value: Any) -> dict:
    """A copy of ``doc`` with ``path`` set (intermediate documents copied, created when missing)."""
    out = dict(doc)
    parts = path.split(".")
    cur = out
    for part in parts[:-1]:
        nxt = cur.get(part)
        nxt = dict(nxt) if isinstance(nxt, dict) else {}
        cur[part] = nxt
        cur = nxt
    cur[parts[-1]] = value
    return out


def has_path(doc: Any, path: str) -> bool:
    return get_path(doc, path) is not _MISSING


class ShardKeyError(ValueError):
    """A document's shard key cannot be read: ``field`` names the missing or invalid field."""

    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field = field


def shard_key(doc: dict, fields: tuple[str, ...]) -> tuple[tuple, tuple]:
    """``(values, comparable key)`` of a document's shard key; :class:`ShardKeyError` names a
    missing field, or one holding an array or a value with no BSON order."""
    vals, keys = [], []
    for f in fields:
        v = get_path(doc, f)
        if v is _MISSING:
            raise ShardKeyError(f, f"shard key field {f!r} is missing from the document")
        if isinstance(v, (list, tuple)):
            raise ShardKeyError(f, f"shard key field {f!r} is an array; shard key values cannot be arrays")
        try:
            keys.append(sort_key(v))
        except TypeError as exc:
            raise ShardKeyError(f, f"shard key field {f!r}: {exc}") from exc
        vals.append(v)
    return tuple(vals), tuple(keys)


def shard_key_values(doc: dict, fields: tuple[str, ...]) -> tuple:
    """The document's shard-key values in key order (see :func:`shard_key`)."""
    return shard_key(doc, fields)[0]


def key_of(values: tuple) -> tuple:
    """The comparable key of a tuple of shard-key values (compound keys compare field by field)."""
    return tuple(sort_key(v) for v in values)
