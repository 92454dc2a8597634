"""What a source record's raw text says that its VARIANT document forgot: a small NumberLong,
the order of a document's fields.

VARIANT keeps an integer in its smallest width, so ``{"$numberLong": "71"}`` in the input reads
back as an int. Where the value at a path is still the source record's
(:mod:`headrace.mql.source_fields`, ``Ctx.text``), the record's JSON text still has the wrapper:
``$type`` (the expression and the query operator) reads it there, so a NumberLong is ``"long"``
whatever its size, as in MongoDB (golden case ``project_type``), and ``$convert`` to binData
gives it 8 bytes. Elsewhere (a value a stage computed, a window's documents) a NumberLong within
32 bits is an int. ``$objectToArray`` of such a path lists the fields in the record's order
(VARIANT sorts them by name), so what an expression or a later stage does with the array
(``$arrayElemAt``, ``$map``, ``$unwind``...) sees MongoDB's order.
"""
from __future__ import annotations

from typing import Any

from pyspark.sql import Column
from pyspark.sql import functions as F

from .predicates_order import text_key
from .registry import Ctx

_LONG = '{"$numberLong"'     # how get_json_object writes the wrapper (compact)


def is_long_text(t: Column) -> Column:
    """Whether JSON text ``t`` (as Spark's JSON functions write a value) is a ``$numberLong``."""
    return F.coalesce(F.startswith(t, F.lit(_LONG)), F.lit(False))


def record_text(ctx: Ctx):
    """``ctx.text`` (for a dotted path, the source record's JSON text where the path's value is
    still the record's), or None when it cannot be used (none, or ``$$CURRENT`` rebound)."""
    return None if ctx.text is None or "CURRENT" in ctx.variables else ctx.text


def text_at(text: Any, names: tuple | list) -> Column | None:
    """The JSON text of the value at field ``names`` in the source record (NULL where they offer
    no single value), ``text`` being :func:`record_text`; None when it is not at hand."""
    keys = [text_key(k) for k in names]
    if not names or None in keys:
        return None
    t = text(".".join(names))
    return None if t is None else F.get_json_object(t, "$" + "".join(k[1:] for k in keys))


def source_value_text(expr: Any, ctx: Ctx) -> Column | None:
    """For a field path expression (``"$a.b"``) whose value is still the source record's: the
    value's JSON text in the record (NULL where the path offers no single value); None when the
    record's text is not at hand for it."""
    if not (isinstance(expr, str) and expr.startswith("$") and not expr.startswith("$$")):
        return None
    text = record_text(ctx)
    return None if text is None or not expr[1:] else text_at(text, expr[1:].split("."))


def source_long(expr: Any, ctx: Ctx) -> Column | None:
    """Whether the source record's text holds a ``$numberLong`` at field path ``expr``
    (:func:`source_value_text`); None when that cannot be read."""
    t = source_value_text(expr, ctx)
    return None if t is None else is_long_text(t)
