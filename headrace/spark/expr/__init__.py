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
  conditional, strings, dates, types, arrays, objects, variables, meta, rand, hashing,
  python_ops ...)
  through ``registry.EXPRESSIONS``.
"""
from __future__ import annotations

from .compiler import compile_expression, current

__all__ = ["compile_expression", "current"]

# importing the families registers their operators
from . import (  # noqa: E402,F401
    arithmetic, array_stats, arrays, bits, boolean, comparison, conditional, dates, hashed_key, hashing, literal,
    meta, objects, python_ops, rand, sets, strings, trig, types, variables,
    arithmetic_exp_log, arithmetic_round, array_accumulators, array_build, array_lambdas, array_objects,
    string_regex, string_search,
)
