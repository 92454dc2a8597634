"""``compile_expression``: one MQL expression to a Catalyst column (see :mod:`headrace.spark.expr`);
the operators themselves are in the family modules, found through ``registry.EXPRESSIONS``."""
from __future__ import annotations

from typing import Any

from pyspark.sql import functions as F

from ...mql.expressions import is_constant
from .. import values as V
from ..registry import EXPRESSIONS, Compiled, Ctx, first_error

__all__ = ["compile_expression", "current"]


def current(ctx: Ctx) -> Compiled:
    """``$$CURRENT``: the document, unless a stage rebinds it."""
    cur = ctx.variables.get("CURRENT")
    return cur if cur is not None else Compiled(ctx.root)


def _variable(name: str, ctx: Ctx) -> Compiled:
    if name == "ROOT":
        return Compiled(ctx.root)
    if name == "CURRENT":
        return current(ctx)
    if name == "NOW":
        return Compiled(F.current_timestamp().cast("variant"))
    if name == "REMOVE":
        return Compiled(V.MISSING)
    var = ctx.variables.get(name)
    if var is None:  # validation refuses undefined variables; stay total anyway
        return Compiled(V.MISSING, F.lit(f"use of undefined variable: {name}"))
    return var


def _hoisted(name: str, ctx: Ctx) -> bool:
    """Whether ``$$name.path`` is a path of the stage's input document that ``ctx.hoist`` holds."""
    return ctx.hoist is not None and (name == "ROOT" or (name == "CURRENT" and "CURRENT" not in ctx.variables))


def compile_expression(expr: Any, ctx: Ctx) -> Compiled:
    """Compile one MQL expression (see the module docstring)."""
    if isinstance(expr, str):
        if expr.startswith("$$"):
            name, _, rest = expr[2:].partition(".")
            if rest and _hoisted(name, ctx):
                return Compiled(ctx.hoist.path(rest))
            base = _variable(name, ctx)
            return Compiled(V.get_path(base.value, rest, name not in ("ROOT", "CURRENT")), base.error) if rest else base
        if expr.startswith("$"):
            if _hoisted("CURRENT", ctx):
                return Compiled(ctx.hoist.path(expr[1:]))
            cur = current(ctx)
            return Compiled(V.get_path(cur.value, expr[1:]), cur.error)
        return Compiled(V.lit_value(expr))
    if isinstance(expr, list):
        if is_constant(expr):
            return Compiled(V.lit_value(expr))
        parts = [compile_expression(x, ctx.at(f"{ctx.where}.{i}")) for i, x in enumerate(expr)]
        return Compiled(V.make_array([p.value for p in parts]), first_error(*[p.error for p in parts]))
    if isinstance(expr, dict):
        if len(expr) == 1:
            (op, arg), = expr.items()
            if isinstance(op, str) and op.startswith("$") and op != "$regularExpression":
                fn = EXPRESSIONS.get(op)
                if fn is None:
                    raise NotImplementedError(f"expression operator {op} has no Spark compiler")
                return fn(arg, ctx)
        if is_constant(expr):
            return Compiled(V.lit_value(expr))
        parts = {k: compile_expression(x, ctx.at(f"{ctx.where}.{k}")) for k, x in expr.items()}
        return Compiled(V.make_object([(k, p.value) for k, p in parts.items()]),
                        first_error(*[p.error for p in parts.values()]))
    return Compiled(V.lit_value(expr))
