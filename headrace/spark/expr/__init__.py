"""Aggregation expressions compiled to Catalyst columns over VARIANT documents.

``compile_expression(expr, ctx) -> Compiled``: ``expr`` is a validated MQL expression
(:func:`headrace.mql.expressions.validate_expression`); ``ctx.root`` the document. The result's
``value`` is a VARIANT column (SQL NULL = missing) and ``error`` a STRING column (or None when the
expression cannot fail) naming the operator and what it found, for rows that go to the DLQ.

- ``"$a.b"``: a field path of ``$$CURRENT`` (the document unless rebound); arrays on the way are
  traversed (``values.get_path``).
- ``"$$ROOT"``, ``"$$CURRENT"``, ``"$$NOW"`` (the batch's time), ``"$$REMOVE"`` (missing),
  ``"$$name.path"`` for ``$let`` / ``$map`` / ``$filter`` / ``$reduce`` variables.
- Constants (no ``$`` anywhere) become VARIANT literals; documents and arrays of expressions
  are built field by field (a field whose value is missing is left out; a missing array
  element becomes null); ``{$literal: v}`` is ``v`` unevaluated.
- ``{$op: args}``: dispatched to the family modules (arithmetic, comparison, boolean,
  conditional, strings, dates, types, arrays, objects, variables, meta) through
  ``registry.EXPRESSIONS``.
"""
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


def compile_expression(expr: Any, ctx: Ctx) -> Compiled:
    """Compile one MQL expression (see the module docstring)."""
    if isinstance(expr, str):
        if expr.startswith("$$"):
            name, _, rest = expr[2:].partition(".")
            base = _variable(name, ctx)
            return Compiled(V.get_path(base.value, rest), base.error) if rest else base
        if expr.startswith("$"):
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


# importing the families registers their operators
from . import (  # noqa: E402,F401
    arithmetic, array_stats, arrays, bits, boolean, comparison, conditional, dates, literal, meta, objects,
    sets, strings, trig, types, variables,
)
