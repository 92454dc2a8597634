"""Shard keys: extraction from documents and their comparison order.

The order is MongoDB's BSON comparison order, :func:`headrace.mql.bson.sort_key` (BSON type
first, then value within the type; numbers of any kind by value with NaN lowest; strings by code
point; objects field by field; binary by length, subtype, then bytes; timestamps after dates). Dotted paths are
:mod:`headrace.mql.paths` (through embedded documents only, as shard keys are read).
"""
from __future__ import annotations


from ..mql.bson import MISSING, sort_key
from ..mql.paths import get_path, has_path, set_path

__all__ = ["sort_key", "get_path", "has_path", "set_path", "ShardKeyError", "shard_key",
           "shard_key_values", "key_of"]


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
        if v is MISSING:
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
