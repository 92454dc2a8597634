"""Path iteration for value tests: :func:`path_test` tells whether some value a dotted path
offers in a document satisfies a :class:`~.predicates_base.Pred` (MongoDB's element iteration:
arrays on the way are searched, a numeric component also indexes an array, an array at the end
offers its elements and itself). Part of :mod:`headrace.spark.predicates`, which re-exports it.
"""
from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F

from . import values as V
from .values.facts import read_path
from .predicates_base import Pred, _is_index, false, field, nn, true


def path_test(root: Column, path: str, pred: Pred, traverse_leaf: bool = True) -> Column:
    """Whether some value that ``path`` offers in document ``root`` satisfies ``pred``
    (MongoDB's element iteration). Where the batch's facts know the path's type (no array on
    the way, a scalar at the end: :mod:`.values.facts`) the one value the path offers is tested."""
    fast = read_path(root, path)
    if fast is not None:
        return nn(pred(fast))
    return nn(_any_obj(root, path.split("."), pred, traverse_leaf))


def _any_obj(obj: Column, parts: list[str], pred: Pred, tl: bool) -> Column:
    """Some value offered by ``parts`` under document ``obj`` satisfies ``pred``."""
    def at(f: Column) -> Column:
        is_arr = V.is_array(f)
        if len(parts) == 1:
            if not tl:
                return pred(f)
            # an array at the end offers its elements, then itself
            offered = F.when(is_arr, F.concat(V.array_elems(f), F.array(f))).otherwise(F.array(f))
            return nn(F.exists(offered, pred))
        rest = parts[1:]
        # continue in f itself, or in the documents of the array f; anything else offers
        # "missing" (a scalar on the way) or nothing (a non-document in an array)
        docs = F.when(is_arr, V.array_elems(f)).otherwise(F.array(f))
        if pred.missing or _is_index(rest[0]):
            below = nn(F.exists(docs, lambda d: V.is_object(d) & _any_obj(d, rest, pred, tl)))
        else:  # below a non-document the path only offers "missing", which fails pred
            below = nn(F.exists(docs, lambda d: _any_obj(d, rest, pred, tl)))
        offset = _at_offset(f, rest, pred, tl)
        if offset is not None:
            below = below | (is_arr & offset)
        if pred.missing:
            return F.when(is_arr | V.is_object(f), below).otherwise(true())
        return below
    return V.let(field(obj, parts[0]), at)


def _at_offset(arr: Column, rest: list[str], pred: Pred, tl: bool) -> Column | None:
    """For a numeric component ``rest[0]``: the array element at that index and what the rest
    of the path offers in it (None when ``rest[0]`` is not an index)."""
    nxt = rest[0]
    if not _is_index(nxt):
        return None

    def at(e: Column) -> Column:
        if len(rest) == 1:
            return e.isNotNull() & pred(e)
        after = rest[1:]
        inner = F.when(V.is_object(e), _any_obj(e, after, pred, tl))
        nested = _in_array(e, after, pred, tl)
        return nn(inner.when(V.is_array(e), nested).otherwise(false()))
    return nn(V.let(F.try_element_at(V.array_elems(arr), F.lit(int(nxt) + 1)), at))


def _in_array(arr: Column, rest: list[str], pred: Pred, tl: bool) -> Column:
    """What ``rest`` offers in the documents of array ``arr`` (and at an index in it)."""
    below = nn(F.exists(V.array_elems(arr), lambda d: V.is_object(d) & _any_obj(d, rest, pred, tl)))
    offset = _at_offset(arr, rest, pred, tl)
    return below if offset is None else below | offset
