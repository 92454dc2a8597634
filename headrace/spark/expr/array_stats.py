"""Array expressions that rank or summarise: ``$sortArray $firstN $lastN $maxN $minN $median
$percentile $stdDevPop $stdDevSamp``.

- ``$sortArray {input, sortBy}``: ``sortBy`` ``1``/``-1`` sorts the elements in MongoDB's order
  of values; a document ``{field: 1|-1, ...}`` sorts documents by those fields. Stable.
- ``$firstN``/``$lastN {n, input}``: the first / last ``n`` elements. ``$maxN``/``$minN {n,
  input}``: the ``n`` largest / smallest elements (null and missing elements ignored), largest
  (smallest) first. ``n`` must be a positive integer (else an error); null or missing
  ``input`` gives null, another non-array an error.
- ``$median {input, method}`` / ``$percentile {input, p, method}``: over the numeric elements of
  ``input`` (an array, or a single number), as doubles; the ``approximate`` method returns the
  element of rank ``ceil(p * n)`` of the sorted values (MongoDB's result for small inputs);
  no numbers give null (``$percentile``: an array of nulls).
- ``$stdDevPop``/``$stdDevSamp``: one array argument (its elements) or several arguments; non
  numbers are ignored; no numbers (fewer than two for the sample) give null.

Golden cases (``tests/golden/cases/<name>.json``): ``$firstN`` addfields_firstn_array; ``$lastN``
addfields_lastn_array; ``$maxN`` addfields_maxn_array; ``$median`` project_median_expression;
``$minN`` addfields_minn_array; ``$percentile`` project_percentile_expression; ``$sortArray``
project_sortarray_integers; ``$stdDevPop`` project_stddevpop_expression. No golden case yet:
``$stdDevSamp``.
"""
from __future__ import annotations

from typing import Any

from pyspark.sql import Column
from pyspark.sql import functions as F

from .. import values as V
from ..registry import Compiled, Ctx, expression, first_error
from ._common import CODE, compile_args, compile_child, dbl, errors_of, found, is_num, nullish, operands, \
    v_double, with_codes

ARRAY = CODE["array"]


def _elems(x: Column) -> Column:
    return V.array_elems(x)


def _cmp_fn(sort_by: Any):
    if isinstance(sort_by, dict):
        keys = list(sort_by.items())

        def cmp(l: Column, r: Column) -> Column:
            out = F.lit(0)
            for path, d in reversed(keys):
                c = V.compare(V.get_path(l, path), V.get_path(r, path)) * F.lit(int(d))
                out = F.when(c != 0, c).otherwise(out)
            return out
        return cmp
    return lambda l, r: V.compare(l, r) * F.lit(int(sort_by))


@expression("$sortArray")
def sort_array(arg: dict, ctx: Ctx) -> Compiled:
    inp = compile_child(arg["input"], ctx, "$sortArray", "input")
    cmp = _cmp_fn(arg["sortBy"])

    def value(xs, cs):
        return F.when(nullish(cs[0]), V.NULL).when(
            cs[0] == ARRAY, V.make_array(F.array_sort(_elems(xs[0]), cmp)))

    def error(xs, cs):
        return F.when(~nullish(cs[0]) & (cs[0] != ARRAY),
                      F.concat(F.lit("$sortArray requires an array as input, found: "), found(xs[0], cs[0])))

    return Compiled(with_codes([inp.value], value), first_error(inp.error, with_codes([inp.value], error)))


def _n_op(op: str, pick):
    def impl(arg: dict, ctx: Ctx) -> Compiled:
        inp = compile_child(arg["input"], ctx, op, "input")
        n = compile_child(arg["n"], ctx, op, "n")

        def n_long(x: Column, c: Column) -> Column:
            d = dbl(x)
            return F.when(is_num(c) & (d == F.floor(d)) & (d > 0), d.cast("bigint"))

        def value(xs, cs):
            k = n_long(xs[1], cs[1])
            return F.when(k.isNotNull(), F.when(nullish(cs[0]), V.NULL).when(
                cs[0] == ARRAY, V.make_array(pick(_elems(xs[0]), k))))

        def error(xs, cs):
            k = n_long(xs[1], cs[1])
            return F.coalesce(
                F.when(k.isNull(), F.concat(F.lit(f"{op}: 'n' must be a positive integer, found "), found(xs[1], cs[1]))),
                F.when(~nullish(cs[0]) & (cs[0] != ARRAY),
                       F.concat(F.lit(f"{op}: 'input' must be an array, found "), found(xs[0], cs[0]))))

        vals = [inp.value, n.value]
        return Compiled(with_codes(vals, value), first_error(inp.error, n.error, with_codes(vals, error)))
    return impl


def _ranked(desc: bool):
    def pick(a: Column, k: Column) -> Column:
        kept = F.filter(a, lambda e: ~V.is_null_or_missing(e))
        s = F.array_sort(kept, lambda l, r: V.compare(l, r) * F.lit(-1 if desc else 1))
        return F.slice(s, 1, F.least(k, F.lit(2**31 - 1)).cast("int"))
    return pick


expression("$firstN")(_n_op("$firstN", lambda a, k: F.slice(a, 1, F.least(k, F.lit(2**31 - 1)).cast("int"))))
expression("$lastN")(_n_op("$lastN", lambda a, k: F.slice(
    a, F.greatest(F.size(a) - F.least(k, F.size(a).cast("bigint")).cast("int") + 1, F.lit(1)),
    F.least(k, F.lit(2**31 - 1)).cast("int"))))
expression("$maxN")(_n_op("$maxN", _ranked(True)))
expression("$minN")(_n_op("$minN", _ranked(False)))


def _numbers(x: Column, c: Column) -> Column:
    """ARRAY<DOUBLE> of the numeric elements of an array (or of a single number)."""
    arr = F.when(c == ARRAY, _elems(x)).when(is_num(c), F.array(x))
    return F.filter(F.transform(arr, lambda e: V.as_double(e)), lambda d: d.isNotNull())


def _rank_value(sorted_: Column, p: Column) -> Column:
    n = F.size(sorted_)
    idx = F.greatest(F.least(F.ceil(p * n).cast("int"), n), F.lit(1))
    return F.when(n > 0, v_double(F.element_at(sorted_, idx)))


def _quantile_input(arg: dict, ctx: Ctx, op: str) -> Compiled:
    return compile_child(arg["input"], ctx, op, "input")


@expression("$median")
def median(arg: dict, ctx: Ctx) -> Compiled:
    inp = _quantile_input(arg, ctx, "$median")
    return Compiled(with_codes([inp.value], lambda xs, cs: F.coalesce(
        _rank_value(F.array_sort(_numbers(xs[0], cs[0])), F.lit(0.5)), V.NULL)), inp.error)


@expression("$percentile")
def percentile(arg: dict, ctx: Ctx) -> Compiled:
    inp = _quantile_input(arg, ctx, "$percentile")
    ps = arg["p"] if isinstance(arg["p"], list) else [arg["p"]]
    pcs = [compile_child(p, ctx, "$percentile", "p", i) for i, p in enumerate(ps)]

    def value(xs, cs):
        s = F.array_sort(_numbers(xs[0], cs[0]))
        return V.let(s, lambda srt: V.make_array([F.coalesce(_rank_value(srt, V.as_double(p.value)), V.NULL)
                                                 for p in pcs]))

    return Compiled(with_codes([inp.value], value), errors_of([inp, *pcs]))


def _std(op: str, sample: bool):
    def impl(arg: Any, ctx: Ctx) -> Compiled:
        args = compile_args(operands(arg), ctx, op)
        vals = [a.value for a in args]

        def value(xs, cs):
            if len(xs) == 1:
                nums = _numbers(xs[0], cs[0])
            else:
                nums = F.filter(F.array(*[F.when(is_num(c), dbl(x)) for x, c in zip(xs, cs)]),
                                lambda d: d.isNotNull())

            def stats(a: Column) -> Column:
                n = F.size(a)
                mean = F.aggregate(a, F.lit(0.0), lambda acc, d: acc + d) / n
                ss = F.aggregate(a, F.lit(0.0), lambda acc, d: acc + (d - mean) * (d - mean))
                denom = n - 1 if sample else n
                return F.when(denom > 0, v_double(F.sqrt(ss / denom))).otherwise(V.NULL)
            return V.let(nums, stats)

        return Compiled(with_codes(vals, value), errors_of(args))
    return impl


expression("$stdDevPop")(_std("$stdDevPop", False))
expression("$stdDevSamp")(_std("$stdDevSamp", True))
