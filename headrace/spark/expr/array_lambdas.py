"""Arrays through an expression per element: ``$filter $map $reduce``. ``$filter`` / ``$map``
bind ``as`` (default ``this``), ``$reduce`` binds ``value`` and ``this``; a null or missing
input gives null, another non-array an error naming the operator and what was found; errors of
the per-element expression are the row's error.

Golden cases (``tests/golden/cases/<name>.json``): ``$filter`` project_filter; ``$map``
project_map; ``$reduce`` project_reduce_value_fields.
"""
from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F

from .. import values as V
from ..registry import Compiled, Ctx, expression, first_error
from ._common import compile_child, nullish, with_codes
from .arrays import ARRAY, _elems, _not_array


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
