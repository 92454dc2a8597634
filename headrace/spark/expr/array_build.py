"""Arrays built from arrays or numbers: ``$concatArrays $reverseArray $range $zip``. A null or
missing array gives null, another non-array an error naming the operator and what was found;
``$range`` excludes its end.

Golden cases (``tests/golden/cases/<name>.json``): ``$concatArrays`` addfields_concat_arrays;
``$range`` project_range; ``$reverseArray`` project_reversearray; ``$zip``
project_zip_transpose.
"""
from __future__ import annotations

from typing import Any

from pyspark.sql import Column
from pyspark.sql import functions as F

from .. import values as V
from ..registry import Compiled, Ctx, expression, first_error
from ._common import compile_args, compile_child, errors_of, is_num, nullish, operands, with_codes
from .arrays import ARRAY, INT32_MAX, INT32_MIN, _elems, _not_array


@expression("$concatArrays")
def concat_arrays(arg: Any, ctx: Ctx) -> Compiled:
    args = compile_args(operands(arg), ctx, "$concatArrays")
    if not args:
        return Compiled(V.lit_value([]))
    vals = [a.value for a in args]

    def value(xs, cs):
        any_null = F.lit(False)
        all_arr = F.lit(True)
        for c in cs:
            any_null = any_null | nullish(c)
            all_arr = all_arr & (c == ARRAY)
        joined = F.concat(*[_elems(x) for x in xs]) if len(xs) > 1 else _elems(xs[0])
        return F.when(any_null, V.NULL).when(all_arr, V.make_array(joined))

    def error(xs, cs):
        err, seen_null = None, F.lit(False)
        for x, c in zip(xs, cs):
            e = F.when(~seen_null & ~nullish(c) & (c != ARRAY),
                       _not_array("$concatArrays only supports arrays, not ", x, c))
            err = e if err is None else F.coalesce(err, e)
            seen_null = seen_null | nullish(c)
        return err

    return Compiled(with_codes(vals, value), errors_of(args, with_codes(vals, error)))


@expression("$reverseArray")
def reverse_array(arg: Any, ctx: Ctx) -> Compiled:
    a = compile_args(operands(arg), ctx, "$reverseArray")[0]
    value = with_codes([a.value], lambda xs, cs: F.when(nullish(cs[0]), V.NULL).when(
        cs[0] == ARRAY, V.make_array(F.reverse(_elems(xs[0])))))
    err = with_codes([a.value], lambda xs, cs: F.when(~nullish(cs[0]) & (cs[0] != ARRAY), _not_array(
        "The argument to $reverseArray must be an array, but was ", xs[0], cs[0])))
    return Compiled(value, first_error(a.error, err))


@expression("$range")
def range_(arg: Any, ctx: Ctx) -> Compiled:
    args = compile_args(arg, ctx, "$range")
    vals = [a.value for a in args]
    names = ("starting value", "ending value", "step value")

    def value(xs, cs):
        def build(start: Column, end: Column, step: Column) -> Column:    # each bound once
            up = (step > 0) & (start < end)
            down = (step < 0) & (start > end)
            seq = (F.when(up, F.sequence(start, end - 1, step))
                   .when(down, F.sequence(start, end + 1, step))
                   .otherwise(F.array().cast("array<bigint>")))
            ok = start.between(INT32_MIN, INT32_MAX) & end.between(INT32_MIN, INT32_MAX) & (step != 0)
            return F.when(ok, V.make_array(F.transform(seq, lambda i: i.cast("variant"))))
        step = V.as_integral(xs[2]) if len(xs) > 2 else F.lit(1).cast("bigint")
        return V.let_many([V.as_integral(xs[0]), V.as_integral(xs[1]), step], build)

    def error(xs, cs):
        def build(*ints: Column) -> Column:     # the arguments as BIGINT, bound once
            errs = []
            for i, (x, c, v) in enumerate(zip(xs, cs, ints)):
                errs.append(F.when(~is_num(c), _not_array(f"$range requires a numeric {names[i]}, found ", x, c)))
                errs.append(F.when(~v.between(INT32_MIN, INT32_MAX) | v.isNull(),
                                   _not_array(f"$range requires a {names[i]} that is a 32-bit integer, found ", x, c)))
            if len(xs) > 2:
                errs.append(F.when(ints[2] == 0, F.lit("$range requires a non-zero step value")))
            return F.coalesce(*errs)
        return V.let_many([V.as_integral(x) for x in xs], build)

    return Compiled(with_codes(vals, value), errors_of(args, with_codes(vals, error)))


@expression("$zip")
def zip_(arg: dict, ctx: Ctx) -> Compiled:
    inputs = compile_args(arg["inputs"], ctx, "$zip.inputs")
    longest = bool(arg.get("useLongestLength", False))
    defaults = None
    if "defaults" in arg:
        if isinstance(arg["defaults"], list):
            defaults = [compile_child(d, ctx, "$zip", "defaults", i) for i, d in enumerate(arg["defaults"])]
        else:
            dc = compile_child(arg["defaults"], ctx, "$zip", "defaults")
            defaults = [Compiled(F.get(V.array_elems(dc.value), i), dc.error) for i in range(len(inputs))]
    vals = [c.value for c in inputs]

    def value(xs, cs):
        if not xs:
            return V.lit_value([])
        sizes = [F.size(_elems(x)) for x in xs]
        n = (F.greatest(*sizes) if longest else F.least(*sizes)) if len(sizes) > 1 else sizes[0]
        idx = F.when(n > 0, F.sequence(F.lit(0), n - 1)).otherwise(F.array().cast("array<int>"))

        def row(i: Column) -> Column:
            cells = []
            for j, x in enumerate(xs):
                d = defaults[j].value if defaults and j < len(defaults) else V.NULL
                cells.append(F.when(i < F.size(_elems(x)), F.get(_elems(x), i)).otherwise(d))
            return V.make_array(cells)

        any_null = F.lit(False)
        all_arr = F.lit(True)
        for c in cs:
            any_null = any_null | nullish(c)
            all_arr = all_arr & (c == ARRAY)
        return F.when(any_null, V.NULL).when(all_arr, V.make_array(F.transform(idx, row)))

    def error(xs, cs):
        if not xs:
            return None
        return F.coalesce(*[F.when(~nullish(c) & (c != ARRAY), _not_array(
            "$zip found a non-array expression in input: ", x, c)) for x, c in zip(xs, cs)])

    errs = [e.error for e in (defaults or [])]
    return Compiled(with_codes(vals, value) if vals else V.lit_value([]),
                    first_error(*[c.error for c in inputs], *errs, with_codes(vals, error) if vals else None))
