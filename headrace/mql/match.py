"""MongoDB query semantics in pure Python: the reference implementation and test oracle.

``matches(doc, query)`` answers whether a document (``headrace.ejson`` value model) matches a
query (``$match`` / ``$validate`` syntax) the way MongoDB's matcher does:

- ``{path: value}`` is ``{path: {$eq: value}}``; a regular expression literal
  (``{"$regularExpression": {"pattern": ..., "options": ...}}``) is ``$regex``.
- Paths are dotted (:func:`headrace.mql.paths.iter_path`). A path walks through embedded
  documents; at an array it looks into every element that is a document and, for a numeric
  component (``"a.0"``), at that array index too; at the end of the path an array offers each of
  its elements and then itself (``{tags: "red"}`` matches ``tags: ["red", "blank"]``). ``$size``
  and ``$elemMatch`` see the array itself only. A missing field offers "missing" (and ``null`` /
  ``$exists: false`` match it).
- Comparisons (``$eq $gt $gte $lt $lte``) apply only within a type bracket
  (:func:`headrace.mql.bson.compare_single`): numbers with numbers, strings with strings, ...,
  except ``null`` which also matches missing and ``MinKey`` / ``MaxKey`` which bound everything.
  NaN equals NaN and is neither above nor below anything.
- ``$ne $nin $not`` and ``$exists: false`` are negations of the whole path test.
- ``$regex`` uses PCRE syntax (:mod:`headrace.mql.regex`).
- ``$expr`` needs an evaluator: ``matches(doc, query, expr=fn)`` with ``fn(doc, expression)``
  returning the expression's value; without one it raises ``NotImplementedError``.
- ``$jsonSchema``: see :mod:`headrace.mql.jsonschema`.

The query must be valid (:func:`headrace.mql.query.validate_query`); unknown operators raise
:class:`~headrace.errors.PipelineError`. Why a document fails: :mod:`headrace.mql.explain`.

Golden cases: ``tests/golden/cases/match_*.json``.
"""
from __future__ import annotations

import decimal
import math
from typing import Any, Callable

from .bson import (
    INT64_MAX, INT64_MIN, MISSING, NUMBER_TYPES, compare_single, is_number, true_value, type_name,
    type_set,
)
from .catalogue import (
    BIT_OPERATORS, bit_positions, bits_match, c_mod, is_all_elem_match, is_elem_match_value, is_operator_doc, mod_args, operator_error, regex_of,
)
from .jsonschema import schema_matches
from .paths import iter_path
from .regex import compile_regex, regex_literal

__all__ = ["matches", "Env", "NOT_EVALUATED", "match_query", "match_top", "match_field", "path_op"]


class _NotEvaluated:
    """The value of an ``$expr`` that could not be evaluated (no evaluator): counts as false."""

    def __repr__(self) -> str:
        return "NOT_EVALUATED"


NOT_EVALUATED = _NotEvaluated()












class Env:
    __slots__ = ("expr",)

    def __init__(self, expr: Callable[[Any, Any], Any] | None):
        self.expr = expr


def matches(doc: dict, query: dict, *, expr: Callable[[Any, Any], Any] | None = None) -> bool:
    """True when ``doc`` matches ``query`` under MongoDB's query semantics.

    ``expr(doc, expression)`` evaluates ``$expr`` expressions; without it ``$expr`` raises
    ``NotImplementedError``."""
    return match_query(doc, query, Env(expr))


def match_query(doc: Any, query: dict, env: Env) -> bool:
    for key, arg in query.items():
        if key.startswith("$"):
            if not match_top(doc, key, arg, env):
                return False
        elif not match_field(doc, key, arg, env):
            return False
    return True


def _unknown(op: str, where: str) -> Exception:
    return operator_error(op, where)


def match_top(doc: Any, op: str, arg: Any, env: Env) -> bool:
    if op == "$and":
        return all(match_query(doc, q, env) for q in arg)
    if op == "$or":
        return any(match_query(doc, q, env) for q in arg)
    if op == "$nor":
        return not any(match_query(doc, q, env) for q in arg)
    if op == "$comment":
        return True
    if op == "$jsonSchema":
        return schema_matches(doc, arg)
    if op == "$expr":
        if env.expr is None:
            raise NotImplementedError("$expr needs an expression evaluator: matches(..., expr=fn)")
        return _expr_true(env.expr(doc, arg))
    raise _unknown(op, "top")


def _expr_true(v: Any) -> bool:
    """Aggregation truthiness: false for false, null, missing, 0; true otherwise (arrays too)."""
    return v is not NOT_EVALUATED and true_value(v)


def match_field(doc: Any, path: str, arg: Any, env: Env) -> bool:
    if is_operator_doc(arg):
        return all(path_op(doc, path, op, val, arg, env) for op, val in arg.items())
    rx = regex_literal(arg)
    if rx is not None:
        return any(_regex_single(v, rx) for v in iter_path(doc, path))
    return any(compare_single(v, "$eq", arg) for v in iter_path(doc, path))


def path_op(doc: Any, path: str, op: str, val: Any, opdoc: dict, env: Env) -> bool:
    """One operator applied to a field path (with its array traversal and negations)."""
    if op == "$not":
        rx = regex_literal(val)
        if rx is not None:
            return not any(_regex_single(v, rx) for v in iter_path(doc, path))
        return not all(path_op(doc, path, o, a, val, env) for o, a in val.items())
    if op == "$ne":
        return not any(compare_single(v, "$eq", val) for v in iter_path(doc, path))
    if op == "$nin":
        return not any(_in_single(v, val) for v in iter_path(doc, path))
    if op == "$exists":
        found = any(v is not MISSING for v in iter_path(doc, path))
        return found if true_value(val) else not found
    if op == "$all":
        if not val:
            return False
        if is_all_elem_match(val):
            return all(path_op(doc, path, "$elemMatch", item["$elemMatch"], item, env) for item in val)
        return all(any(_eq_or_regex(v, item) for v in iter_path(doc, path)) for item in val)
    if op == "$options":
        return True
    traverse = op not in ("$size", "$elemMatch")
    return any(_single(v, op, val, opdoc, env) for v in iter_path(doc, path, traverse))


def _eq_or_regex(v: Any, item: Any) -> bool:
    rx = regex_literal(item)
    return _regex_single(v, rx) if rx is not None else compare_single(v, "$eq", item)


def _single(v: Any, op: str, val: Any, opdoc: dict, env: Env) -> bool:
    """One operator applied to one value (``matchesSingleElement``)."""
    if op in ("$eq", "$gt", "$gte", "$lt", "$lte"):
        if regex_literal(val) is not None:
            return False  # only a stored regex equals a regex; documents hold none
        return compare_single(v, op, val)
    if op == "$in":
        return _in_single(v, val)
    if op == "$ne":
        return not compare_single(v, "$eq", val)
    if op == "$nin":
        return not _in_single(v, val)
    if op == "$exists":
        return (v is not MISSING) == true_value(val)
    if op == "$type":
        return _type_single(v, val)
    if op == "$regex":
        return _regex_single(v, regex_of(opdoc))
    if op == "$options":
        return True
    if op == "$size":
        return isinstance(v, list) and len(v) == int(val)
    if op == "$mod":
        return _mod_single(v, val)
    if op in BIT_OPERATORS:
        return _bits_single(v, op, val)
    if op == "$elemMatch":
        return _elem_match_single(v, val, env)
    if op == "$all":
        if not val:
            return False
        if is_all_elem_match(val):
            return all(_elem_match_single(v, item["$elemMatch"], env) for item in val)
        return all(_eq_or_regex(v, item) for item in val)
    if op == "$not":
        rx = regex_literal(val)
        if rx is not None:
            return not _regex_single(v, rx)
        return not all(_single(v, o, a, val, env) for o, a in val.items())
    raise _unknown(op, "field")




def _in_single(v: Any, items: list) -> bool:
    for item in items:
        rx = regex_literal(item)
        if rx is not None:
            if _regex_single(v, rx):
                return True
        elif compare_single(v, "$eq", item):
            return True
    return False




def _type_single(v: Any, spec: Any) -> bool:
    if v is MISSING:
        return False
    names = type_set(spec)
    tn = type_name(v)
    return tn in names or ("number" in names and tn in NUMBER_TYPES)




def _regex_single(v: Any, rx: tuple[str, str]) -> bool:
    if not isinstance(v, str):
        return False
    return compile_regex(rx[0], rx[1]).search(v) is not None








def _bits_single(v: Any, op: str, arg: Any) -> bool:
    """A number that is an integer within 64 bits, or binData, tested bit by bit; else no match."""
    if isinstance(v, (bytes, bytearray)):
        return bits_match(op, bytes(v), bit_positions(arg))
    if not is_number(v) or isinstance(v, bool):
        return False
    if isinstance(v, float) and not math.isfinite(v) or isinstance(v, decimal.Decimal) and not v.is_finite():
        return False
    if v != int(v) or not INT64_MIN <= int(v) <= INT64_MAX:
        return False
    return bits_match(op, int(v), bit_positions(arg))


def _mod_single(v: Any, arg: list) -> bool:
    if not is_number(v):
        return False
    d, r = mod_args(arg)
    if isinstance(v, float):
        if not math.isfinite(v):
            return False
        t = math.trunc(v)
    elif isinstance(v, decimal.Decimal):
        if not v.is_finite():
            return False
        t = int(v)
    else:
        t = int(v)
    if not INT64_MIN <= t <= INT64_MAX:
        return False
    return c_mod(t, d) == r


def _elem_match_single(v: Any, sub: dict, env: Env) -> bool:
    if not isinstance(v, list):
        return False
    if is_elem_match_value(sub):
        return any(all(_single(e, op, a, sub, env) for op, a in sub.items()) for e in v)
    return any(isinstance(e, (dict, list)) and match_query(e, sub, env) for e in v)
