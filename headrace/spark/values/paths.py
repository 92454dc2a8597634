"""Field paths over VARIANT documents: ``get_path`` (aggregation semantics), ``set_fields``
(``$addFields``), ``unset_fields``, ``project_value`` (``$project`` inclusion) (part of
:mod:`headrace.spark.values`)."""
from __future__ import annotations

from typing import Callable, Iterable, Mapping

from pyspark.sql import Column
from pyspark.sql import functions as F

from .base import CODE, _const, _get, let, let_many, variant_path
from .build import array_elems, make_array, make_object
from .facts import read_path
from .types import _code_of, _is_array_raw, is_object_raw

_ARRAY_DEPTH = 2  # arrays on a path, and arrays nested one level deeper, are traversed
_PATH_DEPTH = _ARRAY_DEPTH


def _step(x: Column, key: str, depth: int) -> Column:
    """One field-path step over a bound value: the field of a document; over an array, the
    array of the step applied to each element (missing results skipped)."""
    field = F.when(is_object_raw(x), _get(x, key))
    if depth <= 0:
        return field
    mapped = F.filter(F.transform(array_elems(x), lambda e: _step(e, key, depth - 1)),
                      lambda e: e.isNotNull())
    return F.coalesce(field, F.when(_is_array_raw(x), make_array(mapped)))


def get_path(v: Column, path: str, maybe_array: bool = False) -> Column:
    """Aggregation field-path semantics for ``"a.b.c"`` over value ``v``.

    A direct lookup answers documents without arrays on the way; otherwise arrays are
    traversed (and arrays nested one level deeper). ``maybe_array``: ``v`` itself may be an
    array (a variable's value: ``$$value.a`` of ``[]`` is ``[]``), not only a document."""
    keys = path.split(".") if path else []
    if not keys:
        return v
    fast = read_path(v, path)      # a path the batch's facts know (the typed fast path)
    if fast is not None:
        return fast

    def body(x: Column) -> Column:
        fast = _get(x, *keys)
        if len(keys) == 1:
            return F.coalesce(fast, _step(x, keys[0], _PATH_DEPTH)) if maybe_array else fast
        slow = x
        for k in keys:
            slow = let(slow, lambda s, k=k: _step(s, k, _PATH_DEPTH))
        return F.coalesce(fast, slow)

    return let(v, body)


def _set_top(doc: Column, key: str, value: Column) -> Column:
    """doc (an object) with field ``key`` = value, or without it when value is missing."""
    path = F.lit(variant_path(key))
    return F.when(value.isNull(), F.variant_delete(doc, path)).otherwise(F.variant_set(doc, path, value))


def _set_path(doc: Column, keys: list[str], value: Column, depth: int) -> Column:
    """``$addFields`` semantics for one dotted path; ``doc`` (bound) must be an object."""
    if len(keys) == 1:
        return _set_top(doc, keys[0], value)
    head, rest = keys[0], keys[1:]
    return _set_top(doc, head, let(_get(doc, head), lambda sub: _apply_sub(sub, rest, value, depth)))


def _apply_sub(sub: Column, rest: list[str], value: Column, depth: int) -> Column:
    # a document: recurse; an array: apply to each element; anything else is replaced by a
    # new document holding the computed fields
    base = F.when(_code_of(sub) == CODE["object"], sub).otherwise(_const("_EMPTY_OBJECT"))
    as_doc = let(base, lambda d: _set_path(d, rest, value, depth))
    if depth <= 0:
        return as_doc
    over_array = make_array(F.transform(array_elems(sub), lambda e: _apply_sub(e, rest, value, depth - 1)))
    return F.when(_is_array_raw(sub), over_array).otherwise(as_doc)


def set_fields(doc: Column, fields: "Mapping[str, Column] | Iterable[tuple[str, Column]]",
               bind: "Callable[[Column], Column] | None" = None) -> Column:
    """doc with fields set in order (``$addFields`` semantics: dotted paths create
    sub-documents, apply to each element of an array on the way, and replace non-documents;
    a missing value removes the field).

    ``bind``: how a value and each intermediate document are made single (e.g. a stage's
    :func:`~headrace.spark.hoist.shared`: a column of their own, so no lambda binds them);
    values and documents not made simple by it are bound with :func:`~.base.let_many`."""
    items = list(fields.items()) if isinstance(fields, Mapping) else list(fields)
    out = doc
    for path, value in items:
        keys = path.split(".")
        if bind is not None:
            out, value = bind(out), bind(value)
        out = let_many([out, value], lambda d, val, keys=keys: _set_path(d, keys, val, _ARRAY_DEPTH))
    return bind(out) if bind is not None else out


def _unset_path(doc: Column, keys: list[str], depth: int) -> Column:
    if len(keys) == 1:
        return F.variant_delete(doc, F.lit(variant_path(keys[0])))
    head, rest = keys[0], keys[1:]

    def with_sub(sub: Column) -> Column:
        new_sub = F.when(_code_of(sub) == CODE["object"], _unset_path(sub, rest, depth))
        if depth > 0:
            new_sub = new_sub.when(_is_array_raw(sub), make_array(F.transform(
                array_elems(sub), lambda e: F.when(_code_of(e) == CODE["object"], _unset_path(e, rest, depth - 1)).otherwise(e))))
        new_sub = new_sub.otherwise(sub)
        return F.when(sub.isNull(), doc).otherwise(F.variant_set(doc, F.lit(variant_path(head)), new_sub))

    return let(_get(doc, head), with_sub)


def unset_fields(doc: Column, paths: Iterable[str]) -> Column:
    """doc without the given (dotted) fields; arrays of documents on the way are traversed."""
    out = doc
    for p in paths:
        out = let(out, lambda d, p=p: _unset_path(d, p.split("."), _ARRAY_DEPTH))
    return out


def project_value(v: Column, paths: Iterable[str], computed: Iterable[str] = ()) -> Column:
    """MongoDB's inclusion projection of the dotted ``paths`` (relative to ``v``) from ``v``, the
    first of ``$project``'s two passes: a document keeps the included fields it has (an empty
    document when it has none); an array projects each element and drops those that are neither
    documents nor arrays (arrays nested one level deeper too); anything else (missing, a scalar)
    is missing.

    ``computed``: the paths (relative to ``v``) that the second pass computes. Their parents are
    projected too, and in arrays on their way the elements that would be dropped are kept as
    nulls, for the second pass (:func:`set_fields`) to turn into documents of the computed
    fields, as MongoDB does."""
    tree: dict = {}
    for p in paths:
        node = tree
        keys = p.split(".")
        for k in keys[:-1]:
            node = node.setdefault(k, {})
        node[keys[-1]] = True
    for p in computed:
        node = tree
        node[None] = True
        for k in p.split(".")[:-1]:
            node = node.setdefault(k, {})
            if node is True:       # a path collision (refused when the pipeline is parsed)
                break
            node[None] = True
    return let(v, lambda x: _project(x, tree, _ARRAY_DEPTH))


def _project(x: Column, tree: dict, depth: int) -> Column:
    pairs = []
    for k, sub in tree.items():
        if k is None:
            continue
        field = _get(x, k)
        pairs.append((k, field if sub is True else let(field, lambda s, sub=sub: _project(s, sub, _ARRAY_DEPTH))))
    out = F.when(_code_of(x) == CODE["object"], make_object(pairs))
    if depth > 0:
        elems = F.transform(array_elems(x), lambda e: _project(e, tree, depth - 1))
        elems = F.transform(elems, lambda e: F.coalesce(e, _const("NULL"))) if tree.get(None) else \
            F.filter(elems, lambda e: e.isNotNull())
        out = out.when(_is_array_raw(x), make_array(elems))
    return out
