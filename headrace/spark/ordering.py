"""Grouping and ordering by struct-typed keys without Spark's per-comparison cost.

Spark 4.3 builds a new interpreted ordering (expression objects and all) every time it
compares two STRUCT values in interpreted mode (``PhysicalStructType.ordering`` is a method, not
a cached value), and a micro-batch below ``CODEGEN_MIN_ROWS`` runs interpreted. The window
stages group and order by structs (the window ``_w``, group keys, ``$sort`` keys), so a sort or
a sort-based aggregate over them spent most of its time making those objects (PROFILE.md,
2026-11-28, 11:45-13:20 UTC). Two ways around it, with the same results:

- :func:`hash_hint`: an aggregate that makes Spark pick its object hash aggregate (grouping keys
  compared as bytes) instead of a sort-based one, which it picks when a buffer holds a VARIANT
  (``min_by`` of a document) and no typed imperative aggregate is present;
- :func:`flat`: a struct key as its leaf fields (each struct level's null-ness first), so
  sorts compare plain values in the same order; :func:`window_parts` the same for ``_w``.

Only for interpreted batches (:data:`INTERPRETED`): with generated code Spark compares structs
fast, and its sort-based aggregate over a generated sort drained 100,000-line q5 batches faster
than the object hash aggregate (12.5 against 17.4 s per batch).
"""
from __future__ import annotations

import contextvars

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as T

#: Whether the plans being built run without generated code (set per micro-batch by
#: :meth:`headrace.spark.session.CodegenSwitch.set`).
INTERPRETED: contextvars.ContextVar[bool] = contextvars.ContextVar("headrace_interpreted", default=False)


def hash_hint(agg: Column) -> Column:
    """The aggregate ``agg`` (a number); when interpreted, plus the size of an empty list
    collected per group: the same value, and Spark picks its object hash aggregate (a hint in
    a column of its own would be pruned away, as nothing reads it)."""
    return agg + F.size(F.collect_list(F.lit(None).cast("int"))) if INTERPRETED.get() else agg


def window_parts() -> list[Column]:
    """The window ``_w`` to partition by; when interpreted, as its three plain fields."""
    return [F.col("_w.start"), F.col("_w.end"), F.col("_w.key")] if INTERPRETED.get() else [F.col("_w")]


def flat(col: Column, t: T.DataType, ascending: bool) -> list[Column]:
    """Sort orders over the leaves of ``col`` (of type ``t``) that order rows as ``col`` itself
    ascending (nulls first, as Spark orders structs and their fields) or descending (nulls last).
    A struct contributes whether it is null, then its fields in order; other types are leaves.
    With generated code: ``col`` itself."""
    if not isinstance(t, T.StructType) or not INTERPRETED.get():
        return [col.asc_nulls_first() if ascending else col.desc_nulls_last()]
    out = [col.isNotNull().asc() if ascending else col.isNotNull().desc()]
    for f in t.fields:
        out += flat(col[f.name], f.dataType, ascending)
    return out
