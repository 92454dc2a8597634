"""Arrays: ``$size $isArray $arrayElemAt $first $last $slice $in $indexOfArray``, and the helpers
the other array modules share. Building arrays is in :mod:`.array_build`, ``$filter $map
$reduce`` in :mod:`.array_lambdas`, ``$arrayToObject $objectToArray`` in :mod:`.array_objects`,
the array forms of ``$sum $avg $min $max`` in :mod:`.array_accumulators`.

MongoDB semantics: a null or missing array gives null (``$size`` and ``$in`` refuse it); other
non-arrays are errors naming the operator and what was found. ``$arrayElemAt`` counts negative
indexes from the end and is missing out of range; ``$in`` and ``$indexOfArray`` use MQL
equality (``1 == 1.0``).

Golden cases (``tests/golden/cases/<name>.json``): ``$arrayElemAt`` project_arrayelemat; ``$in``
match_in; ``$indexOfArray`` project_indexofarray; ``$isArray`` project_size_isarray; ``$size``
match_size; ``$slice`` project_slice; ``$first`` addfields_first_array; ``$last``
addfields_last_array.
"""
from __future__ import annotations

from typing import Any

from pyspark.sql import Column
from pyspark.sql import functions as F

from .. import values as V
from ..registry import Compiled, Ctx, expression, first_error
from ._common import (
    CODE, code, compile_args, errors_of, found, is_num, nullish, operands, v_long, with_codes,
)
from .comparison import compare3

ARRAY = CODE["array"]
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1


def _elems(x: Column) -> Column:
    return V.array_elems(x)


def _not_array(prefix: str, x: Column, c: Column) -> Column:
    return F.concat(F.lit(prefix), found(x, c))


def _eq(e: Column, x: Column, cx: Column, containers: bool = True) -> Column:
    """MQL equality of an element (lambda variable) and a bound value with known code."""
    return V.let(code(e), lambda ce: compare3(e, x, ce, cx, containers) == 0)


def _may_be_container(expr: Any) -> bool:
    from .comparison import _may_be_container as m

    return m(expr)


# ---------------------------------------------------------------------- simple accessors

@expression("$size")
def size(arg: Any, ctx: Ctx) -> Compiled:
    a = compile_args(operands(arg), ctx, "$size")[0]
    value = with_codes([a.value], lambda xs, cs: F.when(cs[0] == ARRAY, v_long(F.size(_elems(xs[0])))))
    err = with_codes([a.value], lambda xs, cs: F.when(
        cs[0] != ARRAY, _not_array("The argument to $size must be an array, found ", xs[0], cs[0])))
    return Compiled(value, first_error(a.error, err))


@expression("$isArray")
def is_array(arg: Any, ctx: Ctx) -> Compiled:
    a = compile_args(operands(arg), ctx, "$isArray")[0]
    return Compiled(V.is_array(a.value).cast("variant"), a.error)


def _element(x: Column, i: Column) -> Column:
    """Element ``i`` (negative from the end) of a bound array, missing when out of range."""
    n = F.size(_elems(x))
    j = F.when(i < 0, i + n).otherwise(i)
    return F.when((j >= 0) & (j < n), F.get(_elems(x), j.cast("int")))


@expression("$arrayElemAt")
def array_elem_at(arg: Any, ctx: Ctx) -> Compiled:
    args = compile_args(arg, ctx, "$arrayElemAt")
    vals = [a.value for a in args]

    def value(xs, cs):
        i = V.as_integral(xs[1])
        return (F.when(nullish(cs[0]) | nullish(cs[1]), V.NULL)
                .when((cs[0] == ARRAY) & i.between(INT32_MIN, INT32_MAX), _element(xs[0], i)))

    def error(xs, cs):
        i = V.as_integral(xs[1])
        return (F.when(nullish(cs[0]) | nullish(cs[1]), F.lit(None).cast("string"))
                .when(cs[0] != ARRAY, _not_array("$arrayElemAt's first argument must be an array, but is ", xs[0], cs[0]))
                .when(~is_num(cs[1]), _not_array("$arrayElemAt's second argument must be a numeric value, but is ",
                                                 xs[1], cs[1]))
                .when(i.isNull() | ~i.between(INT32_MIN, INT32_MAX),
                      _not_array("$arrayElemAt's second argument must be representable as a 32-bit integer, but is ",
                                 xs[1], cs[1])))
    return Compiled(with_codes(vals, value), errors_of(args, with_codes(vals, error)))


def _first_last(op: str, last: bool):
    def impl(arg: Any, ctx: Ctx) -> Compiled:
        a = compile_args(operands(arg), ctx, op)[0]
        idx = F.lit(-1) if last else F.lit(0)
        value = with_codes([a.value], lambda xs, cs: F.when(nullish(cs[0]), V.NULL).when(
            cs[0] == ARRAY, _element(xs[0], idx)))
        err = with_codes([a.value], lambda xs, cs: F.when(
            ~nullish(cs[0]) & (cs[0] != ARRAY), _not_array(f"{op}'s argument must be an array, but is ", xs[0], cs[0])))
        return Compiled(value, first_error(a.error, err))
    return impl


expression("$first")(_first_last("$first", False))
expression("$last")(_first_last("$last", True))


@expression("$in")
def in_(arg: Any, ctx: Ctx) -> Compiled:
    args = compile_args(arg, ctx, "$in")
    vals = [a.value for a in args]
    containers = _may_be_container(arg[0])

    def value(xs, cs):
        x, cx = xs[0], cs[0]
        return F.when(cs[1] == ARRAY, F.exists(_elems(xs[1]), lambda e: _eq(e, x, cx, containers)).cast("variant"))

    def error(xs, cs):
        return F.when(cs[1] != ARRAY, _not_array("$in requires an array as a second argument, found: ", xs[1], cs[1]))
    return Compiled(with_codes(vals, value), errors_of(args, with_codes(vals, error)))


# ------------------------------------------------------------------ slices and positions

@expression("$slice")
def slice_(arg: Any, ctx: Ctx) -> Compiled:
    args = compile_args(arg, ctx, "$slice")
    vals = [a.value for a in args]
    three = len(args) == 3

    def value(xs, cs):
        arr = _elems(xs[0])
        n_el = F.size(arr)
        if three:
            pos, n = V.as_integral(xs[1]), V.as_integral(xs[2])
            start = F.when(pos >= 0, pos).otherwise(F.greatest(n_el + pos, F.lit(0)))
            out = F.when(start >= n_el, F.array().cast("array<variant>")).otherwise(
                F.slice(arr, (start + 1).try_cast("int"), F.least(n, F.lit(2**31 - 1)).try_cast("int")))
            ok = pos.isNotNull() & n.isNotNull() & (n > 0)
        else:
            n = V.as_integral(xs[1])
            start = F.when(n >= 0, F.lit(0)).otherwise(F.greatest(n_el + n, F.lit(0)))
            length = F.when(n >= 0, n).otherwise(n_el)
            out = F.when(n_el == 0, arr).otherwise(
                F.slice(arr, (start + 1).try_cast("int"), F.least(length, n_el.cast("bigint")).try_cast("int")))
            ok = n.isNotNull()
        null = nullish(cs[0])
        for c in cs[1:]:
            null = null | nullish(c)
        return F.when(null, V.NULL).when((cs[0] == ARRAY) & ok, V.make_array(out))

    def error(xs, cs):
        null = nullish(cs[0])
        for c in cs[1:]:
            null = null | nullish(c)
        e = (F.when(null, F.lit(None).cast("string"))
             .when(cs[0] != ARRAY, _not_array("First argument to $slice must be an array, but is ", xs[0], cs[0])))
        for i in range(1, len(xs)):
            v = V.as_integral(xs[i])
            e = e.when(v.isNull(), _not_array(f"Argument {i + 1} of $slice must be an integer, found ", xs[i], cs[i]))
        if three:
            e = e.when(V.as_integral(xs[2]) <= 0,
                       _not_array("Third argument to $slice must be positive, found ", xs[2], cs[2]))
        return e

    return Compiled(with_codes(vals, value), errors_of(args, with_codes(vals, error)))


@expression("$indexOfArray")
def index_of_array(arg: Any, ctx: Ctx) -> Compiled:
    args = compile_args(arg, ctx, "$indexOfArray")
    vals = [a.value for a in args]
    containers = _may_be_container(arg[1])

    def value(xs, cs):
        x, cx = xs[1], cs[1]
        start = V.as_integral(xs[2]) if len(xs) > 2 else F.lit(0).cast("bigint")
        end = V.as_integral(xs[3]) if len(xs) > 3 else F.lit(2**31).cast("bigint")
        hits = F.filter(F.transform(_elems(xs[0]), lambda e, i: F.when(
            (i >= start) & (i < end) & _eq(e, x, cx, containers), i)), lambda i: i.isNotNull())
        return F.when(nullish(cs[0]), V.NULL).when(
            cs[0] == ARRAY, v_long(F.coalesce(F.get(hits, 0), F.lit(-1))))

    def error(xs, cs):
        errs = [F.when(~nullish(cs[0]) & (cs[0] != ARRAY),
                       _not_array("$indexOfArray requires an array as a first argument, found: ", xs[0], cs[0]))]
        for i in (2, 3):
            if len(xs) > i:
                v = V.as_integral(xs[i])
                errs.append(F.when(~nullish(cs[0]) & (v.isNull() | (v < 0)), _not_array(
                    "$indexOfArray requires a non-negative integral index, found ", xs[i], cs[i])))
        return F.coalesce(*errs)

    return Compiled(with_codes(vals, value), errors_of(args, with_codes(vals, error)))
