"""Query documents (``$match``, ``$validate``) compiled to native Spark boolean columns.

``compile_query(query, ctx)`` returns a :class:`Compiled` whose ``value`` is a BOOLEAN column,
never NULL, true when the document ``ctx.root`` (VARIANT) matches; ``error`` is the STRING error
column of the ``$expr`` parts (None when there are none). The query must have been validated
(:func:`headrace.mql.query.validate_query`). Semantics are MongoDB's, exactly as the reference
implementation :mod:`headrace.mql.match` (the test oracle):

- A field path is walked at compile time, component by component; at run time arrays on the
  way are searched with ``exists`` over ``values.array_elems`` (documents in the array, and the
  element at a numeric component), an array at the end offers its elements and itself; ``$size``
  and ``$elemMatch`` see the array only. A path test is "some offered value satisfies the
  operator"; ``$ne $nin $not`` and ``$exists: false`` negate a whole path test.
- Comparisons are specialised on the constant's type at compile time (type bracketing,
  ``null`` matching missing, MinKey/MaxKey bounds, NaN rules); numbers compare as doubles with
  exact ties broken as integers / decimals; equality with an array or document constant is
  checked element by element; ``$gt``/``$lt`` on arrays and documents use ``values.compare``.
- Expressions stay small: each path level reads its field once (``values.let``) and a test
  receives a simple column; Spark's analyzer pays per level of lambda nesting, so values are
  bound only where they are expensive.
- ``$regex`` runs as a Java regex translated from PCRE (:func:`headrace.mql.regex.translate_regex`).
- Value tests come from :mod:`headrace.spark.predicates`.
- ``$expr`` compiles through ``headrace.spark.expr.compile_expression``; ``$jsonSchema``
  through :mod:`headrace.spark.jsonschema`.

Registered operators (``@query_operator``, ``fn(path, arg, ctx) -> Compiled``): the field
operators take the dotted path; ``$regex`` takes ``{"$regex": pattern, "$options": options}``;
``$options`` is a no-op (read by ``$regex``); the top-level ``$and $or $nor $expr $jsonSchema
$comment`` take ``path=None``.

Field order: equality with a document (``$eq``, ``$ne``, ``$in``, ``$nin``, ``$all``) is in
MongoDB's field order where the value at the path is still the source record's and the stage
runs on source records (``Ctx.text``, :mod:`.predicates_order`); golden cases
``match_embedded_doc_*`` and ``match_array_elem_doc_*``.

Deviations (from the VARIANT encoding, see ``headrace.spark.docs`` / ``values``): elsewhere
(computed fields, inside windows and ``$elemMatch``) documents are equal and compare regardless
of field order (fields are stored sorted); ``$gt``/``$lt`` between
arrays or documents compare nested containers below the first level by JSON text; a decimal
beyond DECIMAL(38,18) breaks exact ties as a double; a document whose only field is ``$oid`` /
``$minKey`` / ``$maxKey`` / ``$numberDecimal`` reads as that BSON type; an ``Int64`` within 32
bits reads as ``int``.

Golden cases (``tests/golden/cases/<name>.json``): ``$all`` match_all; ``$and`` match_and;
``$comment`` match_comment; ``$elemMatch`` match_elemmatch; ``$eq`` match_eq_field; ``$exists``
match_exists_false; ``$expr`` match_expr; ``$gt`` match_not; ``$gte`` match_or_range; ``$in``
match_in; ``$jsonSchema`` validate_dlq; ``$lt`` match_nor; ``$lte`` match_lte; ``$mod`` match_mod;
``$ne`` match_ne; ``$nin`` match_nin; ``$nor`` match_nor; ``$not`` match_not; ``$options``
match_regex_options; ``$or`` match_or_range; ``$regex`` match_regex_suffix; ``$size`` match_size;
``$type`` match_type_number; ``$bitsAllSet`` match_bitsallset_positions; ``$bitsAnySet``
match_bitsanyset_int; ``$bitsAllClear`` match_bitsallclear_bindata; ``$bitsAnyClear``
match_bitsanyclear_positions.
"""
from __future__ import annotations

import dataclasses
from typing import Any

from pyspark.sql import Column
from pyspark.sql import functions as F

from ..mql.bson import true_value
from ..mql.bson_types import type_set
from ..mql.catalogue import BIT_OPERATORS, is_all_elem_match, is_elem_match_value, is_operator_doc, operator_error, regex_of
from ..mql.regex import regex_literal
from . import values as V
from .expr import compile_expression
from .jsonschema import compile_schema
from .predicates import (
    Pred, all_of, any_of, bits_pred, cmp_pred, eq_or_regex, false, in_pred, mod_pred, nn, path_test, regex_pred,
    size_pred, true, type_pred, type_test,
)
from .predicates_order import eq_in_order, order_matters, ordered_path_test
from .source_text import is_long_text, record_text
from .registry import QUERY_OPERATORS, Compiled, Ctx, first_error, query_operator

__all__ = ["compile_query", "value_predicate", "elem_match_pred"]


def value_predicate(op: str, val: Any, opdoc: dict, ctx: Ctx) -> Pred:
    """One operator applied to one value (MongoDB's ``matchesSingleElement``)."""
    if op in ("$eq", "$gt", "$gte", "$lt", "$lte"):
        return cmp_pred(op, val)
    if op == "$ne":
        p = cmp_pred("$eq", val)
        return Pred(lambda x: ~p(x), not p.missing)
    if op == "$in":
        return in_pred(val)
    if op == "$nin":
        p = in_pred(val)
        return Pred(lambda x: ~p(x), not p.missing)
    if op == "$exists":
        want = true_value(val)
        return Pred((lambda x: x.isNotNull()) if want else (lambda x: x.isNull()), not want)
    if op == "$type":
        return type_pred(val)
    if op == "$regex":
        return regex_pred(*regex_of(opdoc))
    if op == "$options":
        return Pred(lambda x: true(), True)
    if op == "$size":
        return size_pred(val)
    if op == "$mod":
        return mod_pred(val)
    if op in BIT_OPERATORS:
        return bits_pred(op, val)
    if op == "$elemMatch":
        return elem_match_pred(val, ctx)
    if op == "$all":
        if not val:
            return Pred(lambda x: false(), False)
        if is_all_elem_match(val):
            preds = [elem_match_pred(item["$elemMatch"], ctx) for item in val]
        else:
            preds = [eq_or_regex(item) for item in val]
        return Pred(lambda x: all_of([p(x) for p in preds]), all(p.missing for p in preds))
    if op == "$not":
        rx = regex_literal(val)
        if rx is not None:
            p = regex_pred(*rx)
            return Pred(lambda x: ~p(x), True)
        preds = [value_predicate(o, a, val, ctx) for o, a in val.items()]
        return Pred(lambda x: ~all_of([p(x) for p in preds]), not all(p.missing for p in preds))
    raise operator_error(op, "field")


def elem_match_pred(sub: dict, ctx: Ctx) -> Pred:
    """``$elemMatch`` on one value: an array with an element matching ``sub``."""
    if is_elem_match_value(sub):
        preds = [value_predicate(op, a, sub, ctx) for op, a in sub.items()]
        return Pred(lambda x: nn(F.exists(V.array_elems(x), lambda e: all_of([p(e) for p in preds]))), False)

    def on_elem(e: Column) -> Column:
        inner = _compile_doc(sub, dataclasses.replace(ctx, root=e, hoist=None, text=None)).value
        return (V.is_object(e) | V.is_array(e)) & inner
    return Pred(lambda x: nn(F.exists(V.array_elems(x), on_elem)), False)


# ------------------------------------------------------------------------------------ compile


def compile_query(query: dict, ctx: Ctx) -> Compiled:
    """The query as a BOOLEAN column over ``ctx.root`` (never NULL) and ``$expr`` errors."""
    return _compile_doc(query, ctx)


def _compile_doc(query: dict, ctx: Ctx) -> Compiled:
    values, errors = [], []
    for key, arg in query.items():
        if key.startswith("$"):
            fn = QUERY_OPERATORS.get(key)
            if fn is None or key not in _TOP:
                raise operator_error(key, "top")
            c = fn(None, arg, ctx)
        else:
            c = _compile_field(key, arg, ctx)
        values.append(c.value)
        errors.append(c.error)
    return Compiled(nn(all_of(values)), first_error(*errors))


def _compile_field(path: str, arg: Any, ctx: Ctx) -> Compiled:
    if is_operator_doc(arg):
        parts = []
        for op, val in arg.items():
            fn = QUERY_OPERATORS.get(op)
            if fn is None or op in _TOP:
                raise operator_error(op, "field")
            if op == "$regex":
                val = {"$regex": val, "$options": arg.get("$options", "")}
            parts.append(fn(path, val, ctx).value)
        return Compiled(nn(all_of(parts)))
    rx = regex_literal(arg)
    if rx is not None:
        return QUERY_OPERATORS["$regex"](path, {"$regex": arg}, ctx)
    return QUERY_OPERATORS["$eq"](path, arg, ctx)


def _positive(op: str):
    def fn(path: str, arg: Any, ctx: Ctx) -> Compiled:
        opdoc = arg if op == "$regex" else {op: arg}
        pred = value_predicate(op, arg, opdoc, ctx)
        return Compiled(path_test(ctx.root, path, pred, op not in ("$size", "$elemMatch")))
    fn.__name__ = "q_" + op[1:]
    fn.__doc__ = f"``{{path: {{{op}: arg}}}}``: some value at the path satisfies {op}."
    return fn


for _op in ("$gt", "$gte", "$lt", "$lte", "$regex", "$size", "$mod", "$elemMatch", *sorted(BIT_OPERATORS)):
    query_operator(_op)(_positive(_op))
_q_type_by_value = _positive("$type")


@query_operator("$type")
def q_type(path: str, arg: Any, ctx: Ctx) -> Compiled:
    """Some value at the path has one of the types ``arg`` names; where ``int`` and ``long`` are
    told apart and the path's value is still the source record's, a small NumberLong is a long
    (read from the record's text, :mod:`.source_text`)."""
    text = ctx.text(path) if ctx.text is not None else None
    names = set(type_set(arg))
    if text is None or "number" in names or ("int" in names) == ("long" in names):
        return _q_type_by_value(path, arg, ctx)
    return Compiled(ordered_path_test(ctx.root, text, path,
                                      lambda v, t: type_test(v, arg, long_text=is_long_text(t))))


def _equal_to_any(path: str, items: list, ctx: Ctx) -> Column:
    """Some value at the path equals (or, for a regex item, matches) one of ``items``: ``$in``'s
    test; a document or array item is compared in field order where ``ctx.text`` has the source
    record's text for the path (:mod:`.predicates_order`)."""
    text = ctx.text(path) if ctx.text is not None else None
    ordered, rest = [], []
    for c in items:
        (ordered if text is not None and order_matters(c) else rest).append(c)
    tests = [path_test(ctx.root, path, in_pred(rest))] if rest or not ordered else []
    if ordered:
        tests.append(ordered_path_test(ctx.root, text, path, eq_in_order(ordered)))
    return any_of(tests)


@query_operator("$eq")
def q_eq(path: str, arg: Any, ctx: Ctx) -> Compiled:
    """Some value at the path equals ``arg`` (documents in field order, :func:`_equal_to_any`)."""
    if ctx.text is not None and order_matters(arg):     # a regex is never a document
        return Compiled(_equal_to_any(path, [arg], ctx))
    return Compiled(path_test(ctx.root, path, cmp_pred("$eq", arg)))


@query_operator("$in")
def q_in(path: str, arg: list, ctx: Ctx) -> Compiled:
    """Some value at the path is in ``arg``."""
    return Compiled(_equal_to_any(path, arg, ctx))


@query_operator("$ne")
def q_ne(path: str, arg: Any, ctx: Ctx) -> Compiled:
    """No value at the path equals ``arg`` (missing fields match)."""
    return Compiled(~q_eq(path, arg, ctx).value)


@query_operator("$nin")
def q_nin(path: str, arg: list, ctx: Ctx) -> Compiled:
    """No value at the path is in ``arg``."""
    return Compiled(~_equal_to_any(path, arg, ctx))


@query_operator("$exists")
def q_exists(path: str, arg: Any, ctx: Ctx) -> Compiled:
    """The path reaches some value (or, with a false argument, none)."""
    found = path_test(ctx.root, path, Pred(lambda x: x.isNotNull(), False))
    return Compiled(found if true_value(arg) else ~found)


@query_operator("$all")
def q_all(path: str, arg: list, ctx: Ctx) -> Compiled:
    """Every item matches at the path (equality, regex, or ``$elemMatch`` items)."""
    if not arg:
        return Compiled(false())
    if is_all_elem_match(arg):
        tests = [path_test(ctx.root, path, elem_match_pred(item["$elemMatch"], ctx), False) for item in arg]
    else:
        tests = [_equal_to_any(path, [item], ctx) for item in arg]
    return Compiled(all_of(tests))


@query_operator("$not")
def q_not(path: str, arg: Any, ctx: Ctx) -> Compiled:
    """The negation of the operator document (or regex) at the path."""
    rx = regex_literal(arg)
    if rx is not None:
        return Compiled(~path_test(ctx.root, path, regex_pred(*rx)))
    return Compiled(~_compile_field(path, arg, ctx).value)


@query_operator("$options")
def q_options(path: str, arg: Any, ctx: Ctx) -> Compiled:
    """No test of its own: ``$regex`` reads its options."""
    return Compiled(true())


def _clauses(op: str, arg: list, ctx: Ctx) -> list[Compiled]:
    """Each clause of a logical operator, under its own path (``$match.$and.1``: error messages
    name it, and two ``$rand`` in two clauses draw apart)."""
    base = f"{ctx.where}.{op}" if ctx.where else op
    return [_compile_doc(q, ctx.at(f"{base}.{i}")) for i, q in enumerate(arg)]


@query_operator("$and")
def q_and(path: None, arg: list, ctx: Ctx) -> Compiled:
    cs = _clauses("$and", arg, ctx)
    return Compiled(all_of([c.value for c in cs]), first_error(*[c.error for c in cs]))


@query_operator("$or")
def q_or(path: None, arg: list, ctx: Ctx) -> Compiled:
    cs = _clauses("$or", arg, ctx)
    return Compiled(any_of([c.value for c in cs]), first_error(*[c.error for c in cs]))


@query_operator("$nor")
def q_nor(path: None, arg: list, ctx: Ctx) -> Compiled:
    cs = _clauses("$nor", arg, ctx)
    return Compiled(~any_of([c.value for c in cs]), first_error(*[c.error for c in cs]))


@query_operator("$comment")
def q_comment(path: None, arg: Any, ctx: Ctx) -> Compiled:
    return Compiled(true())


@query_operator("$expr")
def q_expr(path: None, arg: Any, ctx: Ctx) -> Compiled:
    """An aggregation expression's truthiness; its errors are the query's errors."""
    where = f"{ctx.where}.$expr" if ctx.where else "$expr"
    c = compile_expression(arg, ctx.at(where))
    return Compiled(nn(V.truthy(c.value)), c.error)


@query_operator("$jsonSchema")
def q_json_schema(path: None, arg: dict, ctx: Ctx) -> Compiled:
    return Compiled(compile_schema(arg, ctx.root, record_text(ctx)))


_TOP = frozenset({"$and", "$or", "$nor", "$comment", "$expr", "$jsonSchema"})
