"""Conditionals: ``$cond`` (``[if, then, else]`` or ``{if, then, else}``), ``$ifNull`` (the
first operand that is neither null nor missing, else the last operand as is), ``$switch``
(the first branch whose ``case`` is true, else ``default``; no match and no default is an
error). Only the chosen branch's errors count.

Golden cases (``tests/golden/cases/<name>.json``): ``$cond`` project_cond; ``$ifNull``
project_ifnull; ``$switch`` project_switch_avg.
"""
from __future__ import annotations

from typing import Any

from pyspark.sql import Column
from pyspark.sql import functions as F

from .. import values as V
from ..registry import Compiled, Ctx, expression, first_error
from ._common import compile_child


def _pick(cond: Column, then: Column | None, other: Column | None) -> Column | None:
    if then is None and other is None:
        return None
    t = then if then is not None else F.lit(None).cast("string")
    o = other if other is not None else F.lit(None).cast("string")
    return F.when(cond, t).otherwise(o)


@expression("$cond")
def cond(arg: Any, ctx: Ctx) -> Compiled:
    if isinstance(arg, list):
        if_, then, else_ = arg
    else:
        if_, then, else_ = arg["if"], arg["then"], arg["else"]
    c = compile_child(if_, ctx, "$cond", "if")
    t = compile_child(then, ctx, "$cond", "then")
    e = compile_child(else_, ctx, "$cond", "else")
    test = V.truthy(c.value)
    return Compiled(F.when(test, t.value).otherwise(e.value),
                    first_error(c.error, _pick(test, t.error, e.error)))


@expression("$ifNull")
def if_null(arg: Any, ctx: Ctx) -> Compiled:
    parts = [compile_child(x, ctx, "$ifNull", i) for i, x in enumerate(arg)]
    *inputs, repl = parts
    value: Column = repl.value
    err = repl.error
    for p in reversed(inputs):
        present = ~V.is_null_or_missing(p.value)
        value = F.when(present, p.value).otherwise(value)
        err = first_error(p.error, _pick(present, None, err))
    return Compiled(value, err)


@expression("$switch")
def switch(arg: dict, ctx: Ctx) -> Compiled:
    branches = [(compile_child(b["case"], ctx, "$switch", "branches", i, "case"),
                 compile_child(b["then"], ctx, "$switch", "branches", i, "then"))
                for i, b in enumerate(arg["branches"])]
    if "default" in arg:
        default = compile_child(arg["default"], ctx, "$switch", "default")
    else:
        default = Compiled(V.MISSING, F.lit("$switch could not find a matching branch for an input, "
                                            "and no default was specified"))
    value, err = default.value, default.error
    for c, t in reversed(branches):
        test = V.truthy(c.value)
        value = F.when(test, t.value).otherwise(value)
        err = first_error(c.error, _pick(test, t.error, err))
    return Compiled(value, err)
