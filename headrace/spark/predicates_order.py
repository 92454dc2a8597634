"""Query equality with embedded documents in MongoDB's field order.

MongoDB compares documents field by field, in order: ``{size: {w: 21, h: 14, uom: "cm"}}`` does
not match a document whose ``size`` is ``{h: 14, uom: "cm", w: 21}``. VARIANT stores an object's
fields sorted by name, so :func:`~.predicates_compare.cmp_pred` alone cannot tell. Where the
value at the path is still the source record's (:mod:`headrace.mql.source_fields`), the record's
raw text keeps the order: :func:`ordered_path_test` walks the path over the document and over
that text side by side (MongoDB's element iteration, as :mod:`.predicates_paths`), and an offered
value matches an item when it is equal (VARIANT) and its objects' keys, read from its text with
``json_object_keys``, come in the item's order at every level where the item has a document of
two or more fields. Text Spark's JSON functions cannot read (NULL) leaves the order unchecked.
Part of :mod:`headrace.spark.predicates`.
"""
from __future__ import annotations

from typing import Any, Callable

from pyspark.sql import Column
from pyspark.sql import functions as F

from . import values as V
from .predicates_base import _is_index, all_of, any_of, field, nn, true
from .predicates_compare import cmp_pred

Test2 = Callable[[Column, Column], Column]      # (value, its JSON text) -> BOOLEAN, never NULL


def is_document(c: Any) -> bool:
    """A document constant (not an Extended JSON or operator form)."""
    return type(c) is dict and not any(str(k).startswith("$") for k in c)


def order_matters(c: Any) -> bool:
    """Whether equality with constant ``c`` depends on field order (a document of two or more
    fields somewhere in it)."""
    if is_document(c):
        return len(c) > 1 or any(order_matters(v) for v in c.values())
    if isinstance(c, list):
        return any(order_matters(v) for v in c)
    return False


def text_key(name: str) -> str | None:
    """The JSON path of field ``name`` for ``get_json_object``, None when it cannot say it."""
    return None if "'" in name or "]" in name or "\\" in name else f"$['{name}']"


def order_ok(t: Column, c: Any) -> Column:
    """Whether the value with JSON text ``t``, known equal to ``c`` but for field order, has
    ``c``'s field order (true where ``t`` is NULL)."""
    checks = []
    if is_document(c):
        if len(c) > 1:
            checks.append(F.json_object_keys(t) == F.array(*[F.lit(str(k)) for k in c]))
        for k, v in c.items():
            path = text_key(str(k))
            if path is not None and order_matters(v):
                checks.append(order_ok(F.get_json_object(t, path), v))
    elif isinstance(c, list):
        checks += [order_ok(F.get_json_object(t, f"$[{i}]"), v) for i, v in enumerate(c) if order_matters(v)]
    return F.coalesce(all_of(checks), true())


def eq_in_order(items: list) -> Test2:
    """Equal to one of ``items`` (documents and arrays), field order included."""
    preds = [(cmp_pred("$eq", c), c) for c in items]
    return lambda x, t: nn(any_of([p(x) & order_ok(t, c) for p, c in preds]))


def ordered_path_test(root: Column, text: Column, path: str, test: Test2) -> Column:
    """Whether some value that ``path`` offers in document ``root`` (JSON text ``text``)
    satisfies ``test``, which is false on a missing value (as :func:`~.predicates_paths.path_test`)."""
    return nn(_any_obj(root, text, path.split("."), test))


def _field_text(obj: Column, t: Column, name: str) -> Column:
    path = text_key(name)
    got = F.get_json_object(t, path) if path is not None else F.lit(None).cast("string")
    if _is_index(name):
        got = F.when(V.is_array(obj), F.get_json_object(t, f"$[{int(name)}]")).otherwise(got)
    return got


def _pairs(arr: Column, t: Column) -> Column:
    """The elements of array ``arr`` with their JSON texts, as structs ``(v, t)``."""
    return F.zip_with(V.array_elems(arr), F.from_json(t, "array<string>"),
                      lambda v, s: F.struct(v.alias("v"), s.alias("t")))


def _any_obj(obj: Column, t: Column, parts: list[str], test: Test2) -> Column:
    f, ft = field(obj, parts[0]), _field_text(obj, t, parts[0])
    is_arr = V.is_array(f)
    if len(parts) == 1:     # an array at the end offers its elements, then itself
        itself = F.array(F.struct(f.alias("v"), ft.alias("t")))
        offered = F.when(is_arr, F.concat(_pairs(f, ft), itself)).otherwise(itself)
        return nn(F.exists(offered, lambda p: test(p["v"], p["t"])))
    rest = parts[1:]
    below = (V.is_object(f) & _any_obj(f, ft, rest, test)) | \
        (is_arr & nn(F.exists(_pairs(f, ft), lambda p: V.is_object(p["v"]) & _any_obj(p["v"], p["t"], rest, test))))
    if _is_index(rest[0]):
        below = below | (is_arr & _at_offset(f, ft, rest, test))
    return nn(below)


def _at_offset(arr: Column, t: Column, rest: list[str], test: Test2) -> Column:
    """The element at index ``rest[0]`` of array ``arr`` and what the rest of the path offers in it."""
    i = int(rest[0])
    e = F.try_element_at(V.array_elems(arr), F.lit(i + 1))
    et = F.get_json_object(t, f"$[{i}]")
    if len(rest) == 1:
        return nn(e.isNotNull() & test(e, et))
    after = rest[1:]
    in_doc = V.is_object(e) & _any_obj(e, et, after, test)
    in_arr = V.is_array(e) & nn(F.exists(_pairs(e, et), lambda p: V.is_object(p["v"]) & _any_obj(p["v"], p["t"], after, test)))
    if _is_index(after[0]):
        in_arr = in_arr | (V.is_array(e) & _at_offset(e, et, after, test))
    return nn(in_doc | in_arr)


__all__ = ["is_document", "order_matters", "order_ok", "eq_in_order", "ordered_path_test"]
