"""Set expressions: ``$setUnion $setIntersection $setDifference $setEquals $setIsSubset
$allElementsTrue $anyElementTrue``.

Arrays are sets: duplicates (by MQL equality: ``1`` equals ``1.0``; numbers nested inside
arrays or documents compare by their text, documents ignore field order) are ignored, results keep
the first occurrence of each element in argument order (MongoDB leaves the order
unspecified). ``$setUnion``, ``$setIntersection`` and ``$setDifference`` give null when an
argument is null or missing; ``$setEquals``, ``$setIsSubset``, ``$allElementsTrue`` and
``$anyElementTrue`` need arrays. A non-array argument is an error (the row goes to the DLQ).

Golden cases (``tests/golden/cases/<name>.json``): ``$allElementsTrue`` project_allelementstrue;
``$anyElementTrue`` project_anyelementtrue; ``$setEquals`` project_set_is_subset_equals;
``$setIsSubset`` project_set_is_subset_equals; ``$setDifference`` project_setdifference;
``$setIntersection`` project_setintersection; ``$setUnion`` project_setunion (these two keep the
manual's outputs as known differences: MongoDB lists a union or an intersection in the order of
its hash set, e.g. ``["orchid", "rose", "jasmine"]``, which no rule over the inputs gives).
"""
from __future__ import annotations

from typing import Any

from pyspark.sql import Column
from pyspark.sql import functions as F

from .. import values as V
from ..registry import Compiled, Ctx, expression
from ._common import (
    CODE, all_, any_, code, compile_args, dbl, errors_of, found, is_num, nullish, operands, v_bool, with_codes,
)

ARRAY = CODE["array"]


def _key(e: Column) -> Column:
    """A STRING equal for MQL-equal values: numbers by their double value, anything else by
    type and JSON text (so numbers nested in arrays or documents compare by their text)."""
    def k(x: Column) -> Column:
        return V.let(code(x), lambda c: F.when(is_num(c), F.concat(F.lit("n:"), dbl(x).cast("string"))).otherwise(
            F.concat(c.cast("string"), F.lit(":"), F.coalesce(F.to_json(x), F.lit("")))))
    return V.let(e, k)


def _has(arr: Column, e: Column) -> Column:
    """Whether ``arr`` (ARRAY<VARIANT>) holds an element MQL-equal to ``e``."""
    return V.let(_key(e), lambda k: F.exists(arr, lambda p: _key(p) == k))


def distinct(arr: Column) -> Column:
    """First occurrences of the elements of ``arr`` (ARRAY<VARIANT>)."""
    return F.filter(arr, lambda e, i: ~_has(F.slice(arr, 1, i), e))


def _set_op(op: str, nulls: bool, fn):
    """``fn(elems)`` over the arguments' element arrays; ``nulls``: null/missing gives null
    (else it is an error like any non-array)."""
    def impl(arg: Any, ctx: Ctx) -> Compiled:
        args = compile_args(operands(arg), ctx, op)
        vals = [a.value for a in args]

        def value(xs, cs):
            elems = [F.coalesce(V.array_elems(x), F.array().cast("array<variant>")) for x in xs]
            ok = all_([c == ARRAY for c in cs])
            out = F.when(ok, fn(elems))
            if nulls:
                out = F.when(any_([nullish(c) for c in cs]), V.NULL).otherwise(out)
            return out

        def error(xs, cs):
            bad = [F.when(c != ARRAY if not nulls else (~nullish(c) & (c != ARRAY)),
                          F.concat(F.lit(f"All operands of {op} must be arrays. One argument is of type: "),
                                   found(x, c))) for x, c in zip(xs, cs)]
            e = F.coalesce(*bad) if len(bad) > 1 else bad[0]
            return F.when(~any_([nullish(c) for c in cs]), e) if nulls else e

        return Compiled(with_codes(vals, value), errors_of(args, with_codes(vals, error)))
    return impl


def _union(arrs: list[Column]) -> Column:
    if not arrs:
        return V.lit_value([])
    return V.make_array(distinct(F.concat(*arrs) if len(arrs) > 1 else arrs[0]))


def _intersection(arrs: list[Column]) -> Column:
    if not arrs:
        return V.lit_value([])
    first, rest = arrs[0], arrs[1:]
    kept = F.filter(first, lambda e: all_([_has(a, e) for a in rest]) if rest else F.lit(True))
    return V.make_array(distinct(kept))


def _difference(arrs: list[Column]) -> Column:
    a, b = arrs
    return V.make_array(distinct(F.filter(a, lambda e: ~_has(b, e))))


def _subset(a: Column, b: Column) -> Column:
    return F.forall(a, lambda e: _has(b, e))


def _equals(arrs: list[Column]) -> Column:
    first = arrs[0]
    return v_bool(all_([_subset(first, a) & _subset(a, first) for a in arrs[1:]]))


expression("$setUnion")(_set_op("$setUnion", True, _union))
expression("$setIntersection")(_set_op("$setIntersection", True, _intersection))
expression("$setDifference")(_set_op("$setDifference", True, _difference))
expression("$setEquals")(_set_op("$setEquals", False, _equals))
expression("$setIsSubset")(_set_op("$setIsSubset", False, lambda arrs: v_bool(_subset(arrs[0], arrs[1]))))
expression("$allElementsTrue")(_set_op("$allElementsTrue", False,
                                       lambda arrs: v_bool(F.forall(arrs[0], lambda e: V.truthy(e)))))
expression("$anyElementTrue")(_set_op("$anyElementTrue", False,
                                      lambda arrs: v_bool(F.exists(arrs[0], lambda e: V.truthy(e)))))
