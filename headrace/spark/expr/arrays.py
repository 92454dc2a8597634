"""Arrays: ``$size $arrayElemAt $first $last $in $filter $map $reduce $concatArrays $slice
$reverseArray $isArray $range $indexOfArray $arrayToObject $objectToArray $zip`` and the array
forms of ``$sum $avg $min $max``.

MongoDB semantics: a null or missing array gives null (``$size`` and ``$in`` refuse it); other
non-arrays are errors naming the operator and what was found. ``$arrayElemAt`` counts negative
indexes from the end and is missing out of range; ``$filter`` / ``$map`` bind ``as`` (default
``this``), ``$reduce`` binds ``value`` and ``this``; ``$in`` and ``$indexOfArray`` use MQL
equality (``1 == 1.0``); ``$range`` excludes its end; ``$arrayToObject`` takes ``[k, v]`` pairs or
``{k, v}`` documents (a repeated name keeps the last value). ``$sum``/``$avg`` ignore
non-numbers (``$sum`` of none is 0, ``$avg`` null), ``$min``/``$max`` ignore null and missing;
with one argument that is an array they work on its elements, with several on the arguments.

Deviation: ``$objectToArray`` lists fields in name order (documents store fields sorted).

Golden cases (``tests/golden/cases/<name>.json``): ``$arrayElemAt`` project_arrayelemat;
``$arrayToObject`` project_arraytoobject; ``$avg`` project_switch_avg; ``$concatArrays``
addfields_concat_arrays; ``$filter`` project_filter; ``$in`` match_in; ``$indexOfArray``
project_indexofarray; ``$isArray`` project_size_isarray; ``$map`` project_map; ``$max``
tumbling_group; ``$min`` session_group; ``$range`` project_range; ``$reduce``
project_reduce_value_fields; ``$reverseArray`` project_reversearray; ``$size`` match_size;
``$slice`` project_slice; ``$sum`` set_scores; ``$zip`` project_zip_transpose; ``$first``
addfields_first_array; ``$last`` addfields_last_array; ``$objectToArray`` project_objecttoarray
(a known difference: field order).
"""
from __future__ import annotations

from typing import Any

from pyspark.sql import Column
from pyspark.sql import functions as F

from .. import values as V
from ..registry import Compiled, Ctx, expression, first_error
from ._common import (
    CODE, INT_CODES, code, compile_args, compile_child, dbl, dec, errors_of, found, is_num, lng,
    nullish, operands, v_decimal, v_double, v_long, with_codes,
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


# ------------------------------------------------------------------- filter / map / reduce

def _var(arg: dict) -> str:
    return arg.get("as", "this")


@expression("$filter")
def filter_(arg: dict, ctx: Ctx) -> Compiled:
    inp = compile_child(arg["input"], ctx, "$filter", "input")
    name = _var(arg)
    lim = compile_child(arg["limit"], ctx, "$filter", "limit") if "limit" in arg else None

    def cond_of(e: Column) -> Compiled:
        return compile_child(arg["cond"], ctx.with_vars(**{name: Compiled(e)}), "$filter", "cond")

    probe = cond_of(F.lit(None).cast("variant"))
    vals = [inp.value] + ([lim.value] if lim else [])

    def value(xs, cs):
        kept = F.filter(_elems(xs[0]), lambda e: V.truthy(cond_of(e).value))
        if lim is not None:
            n = V.as_integral(xs[1])
            kept = F.when(nullish(cs[1]), kept).when(n >= 1, F.slice(kept, 1, F.least(n, F.size(kept).cast("bigint") + 1).try_cast("int")))
        return F.when(nullish(cs[0]), V.NULL).when(cs[0] == ARRAY, V.make_array(kept))

    def error(xs, cs):
        e = F.when(~nullish(cs[0]) & (cs[0] != ARRAY),
                   _not_array("input to $filter must be an array, not ", xs[0], cs[0]))
        if lim is not None:
            n = V.as_integral(xs[1])
            e = F.coalesce(e, F.when(~nullish(cs[1]) & (n.isNull() | (n < 1)),
                                     _not_array("$filter: limit must be a positive integer, found ", xs[1], cs[1])))
        if probe.error is not None:
            inner = F.filter(F.transform(_elems(xs[0]), lambda el: cond_of(el).error), lambda m: m.isNotNull())
            e = F.coalesce(e, F.when(cs[0] == ARRAY, F.get(inner, 0)))
        return e

    return Compiled(with_codes(vals, value), first_error(inp.error, lim.error if lim else None,
                                                         with_codes(vals, error)))


@expression("$map")
def map_(arg: dict, ctx: Ctx) -> Compiled:
    inp = compile_child(arg["input"], ctx, "$map", "input")
    name = _var(arg)

    def body(e: Column) -> Compiled:
        return compile_child(arg["in"], ctx.with_vars(**{name: Compiled(e)}), "$map", "in")

    probe = body(F.lit(None).cast("variant"))

    def value(xs, cs):
        return F.when(nullish(cs[0]), V.NULL).when(
            cs[0] == ARRAY, V.make_array(F.transform(_elems(xs[0]), lambda e: body(e).value)))

    def error(xs, cs):
        e = F.when(~nullish(cs[0]) & (cs[0] != ARRAY),
                   _not_array("input to $map must be an array, not ", xs[0], cs[0]))
        if probe.error is not None:
            inner = F.filter(F.transform(_elems(xs[0]), lambda el: body(el).error), lambda m: m.isNotNull())
            e = F.coalesce(e, F.when(cs[0] == ARRAY, F.get(inner, 0)))
        return e

    return Compiled(with_codes([inp.value], value), first_error(inp.error, with_codes([inp.value], error)))


@expression("$reduce")
def reduce_(arg: dict, ctx: Ctx) -> Compiled:
    inp = compile_child(arg["input"], ctx, "$reduce", "input")
    init = compile_child(arg["initialValue"], ctx, "$reduce", "initialValue")

    def body(acc: Column, e: Column) -> Compiled:
        return compile_child(arg["in"], ctx.with_vars(value=Compiled(acc), this=Compiled(e)), "$reduce", "in")

    probe = body(F.lit(None).cast("variant"), F.lit(None).cast("variant"))
    acc0 = F.struct(init.value.cast("variant").alias("v"), F.lit(None).cast("string").alias("e"))

    def step(acc: Column, e: Column) -> Column:
        b = body(acc["v"], e)
        err = F.coalesce(acc["e"], b.error) if b.error is not None else acc["e"]
        return F.struct(b.value.cast("variant").alias("v"), err.alias("e"))

    def folded(xs):
        return F.aggregate(_elems(xs[0]), acc0, step)

    def value(xs, cs):
        return F.when(nullish(cs[0]), V.NULL).when(cs[0] == ARRAY, folded(xs)["v"])

    def error(xs, cs):
        e = F.when(~nullish(cs[0]) & (cs[0] != ARRAY),
                   _not_array("$reduce requires an array as input, found: ", xs[0], cs[0]))
        if probe.error is not None:
            e = F.coalesce(e, F.when(cs[0] == ARRAY, folded(xs)["e"]))
        return e

    return Compiled(with_codes([inp.value], value), first_error(inp.error, init.error, with_codes([inp.value], error)))


# ----------------------------------------------------------------------- array building

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
        start, end = V.as_integral(xs[0]), V.as_integral(xs[1])
        step = V.as_integral(xs[2]) if len(xs) > 2 else F.lit(1).cast("bigint")
        up = (step > 0) & (start < end)
        down = (step < 0) & (start > end)
        seq = (F.when(up, F.sequence(start, end - 1, step))
               .when(down, F.sequence(start, end + 1, step))
               .otherwise(F.array().cast("array<bigint>")))
        ok = start.between(INT32_MIN, INT32_MAX) & end.between(INT32_MIN, INT32_MAX) & (step != 0)
        return F.when(ok, V.make_array(F.transform(seq, lambda i: i.cast("variant"))))

    def error(xs, cs):
        errs = []
        for i, (x, c) in enumerate(zip(xs, cs)):
            v = V.as_integral(x)
            errs.append(F.when(~is_num(c), _not_array(f"$range requires a numeric {names[i]}, found ", x, c)))
            errs.append(F.when(~v.between(INT32_MIN, INT32_MAX) | v.isNull(),
                               _not_array(f"$range requires a {names[i]} that is a 32-bit integer, found ", x, c)))
        if len(xs) > 2:
            errs.append(F.when(V.as_integral(xs[2]) == 0, F.lit("$range requires a non-zero step value")))
        return F.coalesce(*errs)

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


# ------------------------------------------------------------------ objects and arrays

def entries_object(entries: Column) -> Column:
    """A VARIANT object from an array of struct<k: string, v: variant> (last key wins)."""
    kept = F.filter(entries, lambda e, i: e["k"].isNotNull() & ~F.exists(
        F.slice(entries, i + 2, F.greatest(F.size(entries), F.lit(1))), lambda o: o["k"] == e["k"]))
    return V.make_object(F.map_from_entries(F.transform(kept, lambda e: F.struct(e["k"].alias("key"),
                                                                                  e["v"].alias("value")))))


@expression("$arrayToObject")
def array_to_object(arg: Any, ctx: Ctx) -> Compiled:
    a = compile_args(operands(arg), ctx, "$arrayToObject")[0]

    def entry(e: Column) -> Column:
        pair_k = F.get(_elems(e), 0)
        pair_v = F.get(_elems(e), 1)
        is_pair = V.is_array(e) & (F.size(_elems(e)) == 2)
        obj = V.object_entries(e)
        is_kv = obj.isNotNull() & (F.size(obj) == 2) & obj["k"].isNotNull() & obj["v"].isNotNull()
        k = F.when(is_pair, V.as_string(pair_k)).when(is_kv, V.as_string(obj["k"]))
        v = F.when(is_pair, pair_v).when(is_kv, obj["v"])
        return F.struct(k.alias("k"), v.alias("v"))

    def value(xs, cs):
        entries = F.transform(_elems(xs[0]), entry)
        return F.when(nullish(cs[0]), V.NULL).when(cs[0] == ARRAY, entries_object(entries))

    def error(xs, cs):
        bad = F.filter(_elems(xs[0]), lambda e: entry(e)["k"].isNull())
        return (F.when(nullish(cs[0]), F.lit(None).cast("string"))
                .when(cs[0] != ARRAY, _not_array("$arrayToObject requires an array input, found: ", xs[0], cs[0]))
                .when(F.size(bad) > 0, F.concat(
                    F.lit("$arrayToObject requires [name, value] pairs with a string name or {k, v} documents, found "),
                    F.coalesce(F.to_json(F.get(bad, 0)), F.lit("")))))

    return Compiled(with_codes([a.value], value), first_error(a.error, with_codes([a.value], error)))


@expression("$objectToArray")
def object_to_array(arg: Any, ctx: Ctx) -> Compiled:
    a = compile_args(operands(arg), ctx, "$objectToArray")[0]

    def value(xs, cs):
        entries = F.map_entries(V.object_entries(xs[0]))
        arr = F.transform(entries, lambda e: V.make_object([("k", e["key"].cast("variant")), ("v", e["value"])]))
        return F.when(nullish(cs[0]), V.NULL).when(cs[0] == CODE["object"], V.make_array(arr))

    def error(xs, cs):
        return F.when(~nullish(cs[0]) & (cs[0] != CODE["object"]),
                      _not_array("$objectToArray requires a document input, found: ", xs[0], cs[0]))
    return Compiled(with_codes([a.value], value), first_error(a.error, with_codes([a.value], error)))


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


# ------------------------------------------------------------- $sum $avg $min $max forms

def _values_array(arg: Any, ctx: Ctx, op: str) -> tuple[Column, list[Compiled]]:
    """The ARRAY<VARIANT> the accumulator-style operator works on, and the compiled args."""
    ops = operands(arg)
    args = compile_args(ops, ctx, op)
    if len(ops) == 1 and not isinstance(arg, list) or len(args) == 1:
        v = args[0].value
        return V.let(v, lambda x: F.when(V.is_array(x), _elems(x)).otherwise(F.array(x))), args
    return F.array(*[a.value for a in args]), args


_SUM_T = "struct<l:bigint,ovf:boolean,d:double,m:decimal(38,18),hd:boolean,hm:boolean,n:bigint>"


def _sum_struct(arr: Column) -> Column:
    """Fold numbers: long sum (with overflow flag), double sum, decimal sum, kinds, count."""
    zero = F.struct(F.lit(0).cast("bigint").alias("l"), F.lit(False).alias("ovf"), F.lit(0.0).alias("d"),
                    F.lit(0).cast("decimal(38,18)").alias("m"), F.lit(False).alias("hd"), F.lit(False).alias("hm"),
                    F.lit(0).cast("bigint").alias("n"))

    def step(acc: Column, e: Column) -> Column:
        def with_code(c: Column) -> Column:
            num = is_num(c)
            l_add = F.try_add(acc["l"], F.when(c.isin(*INT_CODES), lng(e)).otherwise(F.lit(0).cast("bigint")))
            return F.struct(
                F.when(num & c.isin(*INT_CODES), F.coalesce(l_add, acc["l"])).otherwise(acc["l"]).alias("l"),
                (acc["ovf"] | (num & c.isin(*INT_CODES) & l_add.isNull())).alias("ovf"),
                F.when(num, acc["d"] + dbl(e)).otherwise(acc["d"]).alias("d"),
                F.when(num, F.coalesce(F.try_add(acc["m"], F.coalesce(dec(e), F.lit(0).cast("decimal(38,18)")))
                                       .try_cast("decimal(38,18)"), acc["m"]))
                 .otherwise(acc["m"]).alias("m"),
                (acc["hd"] | (c == CODE["double"])).alias("hd"),
                (acc["hm"] | (c == CODE["decimal"])).alias("hm"),
                F.when(num, acc["n"] + 1).otherwise(acc["n"]).alias("n"))
        return V.let(code(e), with_code)

    return F.aggregate(arr, zero, step)


def _sum_value(s: Column) -> Column:
    return (F.when(s["hm"], v_decimal(s["m"]))
            .when(s["hd"] | s["ovf"], v_double(s["d"]))
            .otherwise(v_long(s["l"])))


@expression("$sum")
def sum_(arg: Any, ctx: Ctx) -> Compiled:
    arr, args = _values_array(arg, ctx, "$sum")
    return Compiled(V.let(_sum_struct(arr), _sum_value), errors_of(args))


@expression("$avg")
def avg(arg: Any, ctx: Ctx) -> Compiled:
    arr, args = _values_array(arg, ctx, "$avg")

    def value(s: Column) -> Column:
        return (F.when(s["n"] == 0, V.NULL)
                .when(s["hm"], v_decimal(F.try_divide(s["m"].try_cast("decimal(28,14)"), s["n"].cast("decimal(20,0)"))))
                .otherwise(v_double(s["d"] / s["n"])))
    return Compiled(V.let(_sum_struct(arr), value), errors_of(args))


def _min_max(op: str, sign: int):
    def impl(arg: Any, ctx: Ctx) -> Compiled:
        arr, args = _values_array(arg, ctx, op)

        def step(acc: Column, e: Column) -> Column:
            def with_codes_(ce: Column, ca: Column) -> Column:
                better = compare3(e, acc, ce, ca) == sign
                return F.when(nullish(ce), acc).when(acc.isNull() | V.is_null_or_missing(acc), e) \
                    .when(better, e).otherwise(acc)
            return V.let_many([code(e), code(acc)], with_codes_)

        out = F.aggregate(arr, F.lit(None).cast("variant"), step)
        return Compiled(F.coalesce(out, V.NULL), errors_of(args))
    return impl


expression("$min")(_min_max("$min", -1))
expression("$max")(_min_max("$max", 1))
