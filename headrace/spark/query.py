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
  exact ties broken as integers / decimals; documents and arrays use ``values.compare``.
- ``$regex`` runs as a Java regex translated from PCRE (:func:`headrace.mql.match.translate_regex`).
- ``$expr`` compiles through ``headrace.spark.expr.compile_expression``; ``$jsonSchema``
  through :mod:`headrace.spark.jsonschema`.

Registered operators (``@query_operator``, ``fn(path, arg, ctx) -> Compiled``): the field
operators take the dotted path; ``$regex`` takes ``{"$regex": pattern, "$options": options}``;
``$options`` is a no-op (read by ``$regex``); the top-level ``$and $or $nor $expr $jsonSchema
$comment`` take ``path=None``.

Deviations (from ``values``): documents compare and are equal regardless of field order (VARIANT
sorts fields); containers compare exactly three levels deep, then by JSON text; a decimal
beyond DECIMAL(38,18) compares as a double.
"""
from __future__ import annotations

import dataclasses
import datetime as _dt
import decimal
from typing import Any, Callable

from pyspark.sql import Column
from pyspark.sql import functions as F

from .. import ejson
from ..mql import match as M
from ..mql.query import operator_error
from . import values as V
from .registry import QUERY_OPERATORS, Compiled, Ctx, first_error, query_operator

__all__ = ["compile_query", "value_predicate", "path_test", "field", "nn", "let", "cmp_pred"]

Pred = Callable[[Column], Column]
TRUE = F.lit(True)
FALSE = F.lit(False)
_DEC_MAX = decimal.Decimal("1e20")


def nn(c: Column) -> Column:
    """A boolean that is never NULL (NULL reads as false)."""
    return F.coalesce(c, FALSE)


def _and(cols: list[Column]) -> Column:
    if not cols:
        return TRUE
    out = cols[0]
    for c in cols[1:]:
        out = out & c
    return out


def _or(cols: list[Column]) -> Column:
    if not cols:
        return FALSE
    out = cols[0]
    for c in cols[1:]:
        out = out | c
    return out


def let(value: Column, body: Callable[[Column], Column]) -> Column:
    """``body(x)`` with ``x`` bound once to ``value``: a one-element ``transform`` keeps the
    expression tree linear where a value is used many times."""
    return F.transform(F.array(value), body).getItem(0)


def field(obj: Column, name: str) -> Column:
    """Field ``name`` of a document (SQL NULL when missing); a numeric name also indexes an
    array (an array is a document with fields "0", "1", ... inside ``$elemMatch``)."""
    got = F.try_variant_get(obj, V.variant_path(name), "variant")
    if M._DIGITS.match(name) and str(int(name)) == name and int(name) < 2**31 - 1:
        got = F.coalesce(got, F.try_variant_get(obj, f"$[{int(name)}]", "variant"))
    return got


_NOTHING = F.lit(None).cast("variant")

# ------------------------------------------------------------------------------------ paths


def path_test(root: Column, path: str, pred: Pred, traverse_leaf: bool = True) -> Column:
    """Whether some value that ``path`` offers in document ``root`` satisfies ``pred``
    (MongoDB's element iteration; ``pred`` receives SQL NULL for missing and must not return
    NULL)."""
    return nn(_any_obj(root, path.split("."), pred, traverse_leaf))


def _any_obj(obj: Column, parts: list[str], pred: Pred, tl: bool) -> Column:
    def at(f: Column) -> Column:
        if len(parts) == 1:
            if not tl:
                return pred(f)
            return pred(f) | nn(V.is_array(f) & F.exists(V.array_elems(f), pred))
        rest = parts[1:]
        return (F.when(V.is_object(f), _any_obj(f, rest, pred, tl))
                .when(V.is_array(f), _any_array(f, rest, pred, tl))
                .otherwise(pred(_NOTHING)))
    return let(field(obj, parts[0]), at)


def _any_array(arr: Column, rest: list[str], pred: Pred, tl: bool) -> Column:
    elems = V.array_elems(arr)
    in_docs = nn(F.exists(elems, lambda e: V.is_object(e) & _any_obj(e, rest, pred, tl)))
    nxt = rest[0]
    if not M._DIGITS.match(nxt) or str(int(nxt)) != nxt or int(nxt) > 2**31 - 2:
        return in_docs

    def at(e: Column) -> Column:
        if len(rest) == 1:
            return e.isNotNull() & pred(e)
        return (F.when(V.is_object(e), _any_obj(e, rest[1:], pred, tl))
                .when(V.is_array(e), _any_array(e, rest[1:], pred, tl))
                .otherwise(FALSE))
    return in_docs | nn(let(F.try_element_at(elems, F.lit(int(nxt) + 1)), at))


# ------------------------------------------------------------------------------------ values

_OPS = {"$eq": (False, True, False), "$gt": (False, False, True), "$gte": (False, True, True),
        "$lt": (True, False, False), "$lte": (True, True, False)}  # result when <, ==, >


def _direct(a: Column, b: Column, op: str) -> Column:
    """``a op b`` for two values of one type (NULL when ``a`` is NULL)."""
    return {"$eq": a == b, "$gt": a > b, "$gte": a >= b, "$lt": a < b, "$lte": a <= b}[op]


def _three_way(a: Column, b: Column) -> Column:
    return F.when(a < b, F.lit(-1)).when(a > b, F.lit(1)).otherwise(F.lit(0))


def _dec_lit(c: Any) -> Column | None:
    """A number constant as DECIMAL(38,18), None when out of that range."""
    try:
        d = decimal.Decimal(c) if not isinstance(c, decimal.Decimal) else c
    except (ValueError, decimal.InvalidOperation):
        return None
    if not d.is_finite() or abs(d) >= _DEC_MAX:
        return None
    return F.lit(d.quantize(decimal.Decimal("1e-18"), rounding=decimal.ROUND_HALF_EVEN)).cast("decimal(38,18)")


def _num_pred(op: str, c: Any) -> Pred:
    """Numeric comparison with a constant number (NaN equals NaN only)."""
    if M._is_nan(c):
        if op in ("$eq", "$lte", "$gte"):
            return lambda x: nn(F.isnan(V.as_double(x)))
        return lambda x: FALSE
    cd = F.lit(float(c))
    cdec = _dec_lit(c)
    c_int = c if isinstance(c, int) else (int(c) if isinstance(c, float) and c.is_integer()
                                          and -2**63 <= c < 2**63 else None)
    lt, eq, gt = _OPS[op]

    def tie(x: Column, xd: Column) -> Column:
        # equal as doubles: decide exactly where a double cannot
        def decide(tn: Column) -> Column:
            out = None
            if c_int is not None:
                out = F.when(tn.isin("int", "long"), _direct(V.as_long(x), F.lit(c_int), op))
                out = out.when((tn == "double") & (F.abs(xd) < F.lit(9.2e18)), _direct(xd.cast("bigint"), F.lit(c_int), op))
            if cdec is not None:
                dx = V.as_decimal(x)
                out = (F.when(dx.isNotNull(), _direct(dx, cdec, op)) if out is None
                       else out.when(dx.isNotNull(), _direct(dx, cdec, op)))
            return F.lit(eq) if out is None else out.otherwise(F.lit(eq))
        if c_int is None and cdec is None:
            return F.lit(eq)
        return let(V.type_name(x), decide)

    def pred(x: Column) -> Column:
        return let(V.as_double(x), lambda xd: nn(
            xd.isNotNull() & ~F.isnan(xd)
            & F.when(xd < cd, F.lit(lt)).when(xd > cd, F.lit(gt)).otherwise(tie(x, xd))))

    return pred


def _bound_pred(op: str, c: Any) -> Pred:
    name = "minKey" if c is ejson.MINKEY else "maxKey"

    def is_it(x: Column) -> Column:
        return nn(V.type_name(x) == name)

    if c is ejson.MINKEY:
        table = {"$eq": is_it, "$lte": is_it, "$gte": lambda x: TRUE, "$gt": lambda x: ~is_it(x),
                 "$lt": lambda x: FALSE}
    else:
        table = {"$eq": is_it, "$gte": is_it, "$lte": lambda x: TRUE, "$lt": lambda x: ~is_it(x),
                 "$gt": lambda x: FALSE}
    return table[op]


def cmp_pred(op: str, c: Any) -> Pred:
    """``$eq $gt $gte $lt $lte`` with constant ``c`` on one value (ComparisonMatchExpression)."""
    if M.regex_literal(c) is not None:
        return lambda x: FALSE  # only a stored regex equals a regex; documents hold none
    if c is None:
        if op in ("$eq", "$lte", "$gte"):
            return lambda x: nn(V.is_null_or_missing(x))
        return lambda x: FALSE
    if c is ejson.MINKEY or c is ejson.MAXKEY:
        return _bound_pred(op, c)
    tn = M.type_name(c)
    if tn in M.NUMBER_TYPES:
        return _num_pred(op, c)
    if tn == "string":
        return lambda x: nn(_direct(V.as_string(x), F.lit(c), op))
    if tn == "bool":
        return lambda x: nn(_direct(V.as_bool_raw(x), F.lit(c), op))
    if tn == "date":
        d = c if c.tzinfo else c.replace(tzinfo=ejson.UTC)
        delta = d - ejson.EPOCH
        micros = (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
        return lambda x: nn(_direct(V.as_timestamp(x), F.timestamp_micros(F.lit(micros)), op))
    if tn == "objectId":
        return lambda x: nn((V.type_name(x) == "objectId") & _direct(V.oid_hex(x), F.lit(str(c)), op))
    if tn == "binData":
        lit = F.struct(F.lit(len(c)).alias("n"), F.lit(bytearray(c)).cast("binary").alias("b"))

        def bin_pred(x: Column) -> Column:
            b = F.when(V.type_name(x) == "binData", F.try_variant_get(x, "$", "binary"))
            return nn(let(b, lambda bv: _direct(F.struct(F.length(bv).alias("n"), bv.alias("b")), lit, op)
                          & bv.isNotNull()))
        return bin_pred
    lit = V.lit_value(c)
    is_kind = V.is_array if tn == "array" else V.is_object
    if op == "$eq":
        return lambda x: nn(is_kind(x) & V.equal(x, lit))
    return lambda x: nn(is_kind(x) & _direct(V.compare(x, lit), F.lit(0), op))


def regex_pred(pattern: str, options: str) -> Pred:
    java = M.translate_regex(pattern, options, "java")
    return lambda x: nn(V.as_string(x).rlike(java))


def _eq_or_regex(item: Any) -> Pred:
    rx = M.regex_literal(item)
    return regex_pred(*rx) if rx is not None else cmp_pred("$eq", item)


def in_pred(items: list) -> Pred:
    """``$in``: equal to one of the values, or matching one of the regexes."""
    strings = [x for x in items if isinstance(x, str)]
    others = [_eq_or_regex(x) for x in items if not isinstance(x, str)]

    def pred(x: Column) -> Column:
        tests = [f(x) for f in others]
        if strings:
            tests.insert(0, nn(V.is_string(x) & V.as_string(x).isin(strings)))
        return nn(_or(tests))
    return pred


def type_pred(spec: Any) -> Pred:
    names = M.type_set(spec)
    plain = sorted(n for n in names if n != "number")

    def pred(x: Column) -> Column:
        tests = []
        if plain:
            tests.append(V.type_name(x).isin(plain))
        if "number" in names:
            tests.append(V.is_number(x))
        return nn(_or(tests))
    return pred


def mod_pred(arg: list) -> Pred:
    d, r = M.mod_args(arg)

    def with_type(x: Column, tn: Column) -> Column:
        xd = V.as_double(x)
        t = F.coalesce(
            V.as_long(x),
            F.when((tn == "double") & (xd >= F.lit(-9.223372036854775808e18)) & (xd < F.lit(9.223372036854775808e18)),
                   xd.cast("bigint")),
            F.when(tn == "decimal", V.as_decimal(x).try_cast("bigint")),
        )
        if d == -1:
            return nn(t.isNotNull() & F.lit(r == 0))
        return nn(t % F.lit(d) == F.lit(r))

    return lambda x: let(V.type_name(x), lambda tn: with_type(x, tn))


def size_pred(n: Any) -> Pred:
    return lambda x: nn(V.is_array(x) & (F.size(V.array_elems(x)) == F.lit(int(n))))


def value_predicate(op: str, val: Any, opdoc: dict, ctx: Ctx) -> Pred:
    """One operator applied to one value (MongoDB's ``matchesSingleElement``)."""
    if op in ("$eq", "$gt", "$gte", "$lt", "$lte"):
        return cmp_pred(op, val)
    if op == "$ne":
        p = cmp_pred("$eq", val)
        return lambda x: ~p(x)
    if op == "$in":
        return in_pred(val)
    if op == "$nin":
        p = in_pred(val)
        return lambda x: ~p(x)
    if op == "$exists":
        want = M._true_value(val)
        return lambda x: x.isNotNull() if want else x.isNull()
    if op == "$type":
        return type_pred(val)
    if op == "$regex":
        return regex_pred(*M.regex_of(opdoc))
    if op == "$options":
        return lambda x: TRUE
    if op == "$size":
        return size_pred(val)
    if op == "$mod":
        return mod_pred(val)
    if op == "$elemMatch":
        return elem_match_pred(val, ctx)
    if op == "$all":
        if not val:
            return lambda x: FALSE
        if M.is_all_elem_match(val):
            preds = [elem_match_pred(item["$elemMatch"], ctx) for item in val]
        else:
            preds = [_eq_or_regex(item) for item in val]
        return lambda x: _and([p(x) for p in preds])
    if op == "$not":
        rx = M.regex_literal(val)
        if rx is not None:
            p = regex_pred(*rx)
            return lambda x: ~p(x)
        preds = [value_predicate(o, a, val, ctx) for o, a in val.items()]
        return lambda x: ~_and([p(x) for p in preds])
    raise operator_error(op, "field")


def elem_match_pred(sub: dict, ctx: Ctx) -> Pred:
    """``$elemMatch`` on one value: an array with an element matching ``sub``."""
    if M.is_elem_match_value(sub):
        preds = [value_predicate(op, a, sub, ctx) for op, a in sub.items()]
        return lambda x: nn(V.is_array(x) & F.exists(V.array_elems(x), lambda e: _and([p(e) for p in preds])))

    def pred(x: Column) -> Column:
        def on_elem(e: Column) -> Column:
            inner = _compile_doc(sub, dataclasses.replace(ctx, root=e)).value
            return (V.is_object(e) | V.is_array(e)) & inner
        return nn(V.is_array(x) & F.exists(V.array_elems(x), on_elem))
    return pred


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
    return Compiled(nn(_and(values)), first_error(*errors))


def _compile_field(path: str, arg: Any, ctx: Ctx) -> Compiled:
    if M.is_operator_doc(arg):
        parts = []
        for op, val in arg.items():
            fn = QUERY_OPERATORS.get(op)
            if fn is None or op in _TOP:
                raise operator_error(op, "field")
            if op == "$regex":
                val = {"$regex": val, "$options": arg.get("$options", "")}
            parts.append(fn(path, val, ctx).value)
        return Compiled(nn(_and(parts)))
    rx = M.regex_literal(arg)
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


for _op in ("$eq", "$gt", "$gte", "$lt", "$lte", "$in", "$type", "$regex", "$size", "$mod", "$elemMatch"):
    query_operator(_op)(_positive(_op))


@query_operator("$ne")
def q_ne(path: str, arg: Any, ctx: Ctx) -> Compiled:
    """No value at the path equals ``arg`` (missing fields match)."""
    return Compiled(~path_test(ctx.root, path, cmp_pred("$eq", arg)))


@query_operator("$nin")
def q_nin(path: str, arg: list, ctx: Ctx) -> Compiled:
    """No value at the path is in ``arg``."""
    return Compiled(~path_test(ctx.root, path, in_pred(arg)))


@query_operator("$exists")
def q_exists(path: str, arg: Any, ctx: Ctx) -> Compiled:
    """The path reaches some value (or, with a false argument, none)."""
    found = path_test(ctx.root, path, lambda x: x.isNotNull())
    return Compiled(found if M._true_value(arg) else ~found)


@query_operator("$all")
def q_all(path: str, arg: list, ctx: Ctx) -> Compiled:
    """Every item matches at the path (equality, regex, or ``$elemMatch`` items)."""
    if not arg:
        return Compiled(FALSE)
    if M.is_all_elem_match(arg):
        tests = [path_test(ctx.root, path, elem_match_pred(item["$elemMatch"], ctx), False) for item in arg]
    else:
        tests = [path_test(ctx.root, path, _eq_or_regex(item)) for item in arg]
    return Compiled(_and(tests))


@query_operator("$not")
def q_not(path: str, arg: Any, ctx: Ctx) -> Compiled:
    """The negation of the operator document (or regex) at the path."""
    rx = M.regex_literal(arg)
    if rx is not None:
        return Compiled(~path_test(ctx.root, path, regex_pred(*rx)))
    return Compiled(~_compile_field(path, arg, ctx).value)


@query_operator("$options")
def q_options(path: str, arg: Any, ctx: Ctx) -> Compiled:
    """No test of its own: ``$regex`` reads its options."""
    return Compiled(TRUE)


@query_operator("$and")
def q_and(path: None, arg: list, ctx: Ctx) -> Compiled:
    cs = [_compile_doc(q, ctx) for q in arg]
    return Compiled(_and([c.value for c in cs]), first_error(*[c.error for c in cs]))


@query_operator("$or")
def q_or(path: None, arg: list, ctx: Ctx) -> Compiled:
    cs = [_compile_doc(q, ctx) for q in arg]
    return Compiled(_or([c.value for c in cs]), first_error(*[c.error for c in cs]))


@query_operator("$nor")
def q_nor(path: None, arg: list, ctx: Ctx) -> Compiled:
    cs = [_compile_doc(q, ctx) for q in arg]
    return Compiled(~_or([c.value for c in cs]), first_error(*[c.error for c in cs]))


@query_operator("$comment")
def q_comment(path: None, arg: Any, ctx: Ctx) -> Compiled:
    return Compiled(TRUE)


@query_operator("$expr")
def q_expr(path: None, arg: Any, ctx: Ctx) -> Compiled:
    """An aggregation expression's truthiness; its errors are the query's errors."""
    from .expr import compile_expression

    where = f"{ctx.where}.$expr" if ctx.where else "$expr"
    c = compile_expression(arg, ctx.at(where))
    return Compiled(nn(V.truthy(c.value)), c.error)


@query_operator("$jsonSchema")
def q_json_schema(path: None, arg: dict, ctx: Ctx) -> Compiled:
    from .jsonschema import compile_schema

    return Compiled(compile_schema(arg, ctx.root))


_TOP = frozenset({"$and", "$or", "$nor", "$comment", "$expr", "$jsonSchema"})
