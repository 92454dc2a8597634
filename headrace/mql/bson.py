"""BSON values as MQL sees them: type names, the comparison order, equality and truthiness.

``compare_values(a, b)`` is BSON's total order (MinKey < null < numbers < strings < objects <
arrays < binData < ObjectId < bool < date < regex < MaxKey), used for sorting, as the oracle of
``headrace.spark.values.compare``, and (through :func:`sort_key`) for shard keys in
:mod:`headrace.zones`. Numbers of any kind compare by value (NaN lowest); strings by code point;
documents field by field (value type, then field name, then value), a prefix first; binData by
length, then bytes.

``compare_single(v, op, c)`` is one query comparison (``$eq $gt $gte $lt $lte``), which only
applies within a type bracket. ``MISSING`` is the value of an absent field; it sorts as null.

The types are in :mod:`.bson_types`, the order in :mod:`.bson_order`, hashed index keys and
``$bsonSize`` in :mod:`.bson_encoding`; this module re-exports them.
"""
from __future__ import annotations

from .bson_encoding import bson_size, hashed_index_key
from .bson_order import compare_single, compare_values, sort_key, values_equal
from .bson_types import (
    INT64_MAX, INT64_MIN, MISSING, NUMBER_TYPES, TYPE_ALIASES, TYPE_CODES, is_nan, is_number, true_value,
    type_name, type_set,
)

__all__ = [
    "MISSING", "TYPE_CODES", "TYPE_ALIASES", "NUMBER_TYPES", "INT64_MIN", "INT64_MAX", "type_name",
    "is_number", "is_nan", "compare_values", "values_equal", "sort_key", "compare_single",
    "true_value", "type_set", "hashed_index_key", "bson_size",
]
