"""``$jsonSchema`` compiled to native Spark boolean columns.

``compile_schema(schema, doc)`` recurses over the (validated) schema at compile time and returns
a BOOLEAN column, never NULL, with MongoDB's semantics as implemented by
:mod:`headrace.mql.jsonschema` (the oracle): a keyword about one type holds for values of other
types; ``properties`` checks present fields; arrays are checked with ``forall`` / ``exists`` /
``filter`` over ``values.array_elems``; ``patternProperties`` / ``additionalProperties`` iterate
over the document's entries (``values.object_entries``); ``enum`` and ``uniqueItems`` compare
documents regardless of field order. At the top level the value is the document, an object.
"""
from __future__ import annotations

from typing import Any

from pyspark.sql import Column
from pyspark.sql import functions as F

from ..mql.regex import translate_regex
from ..mql.jsonschema import JSON_TYPES, decimal15
from . import values as V
from .predicates import all_of, any_of, cmp_pred, eq_value, false, field, nn, raw_double, true, type_test

__all__ = ["compile_schema"]


def compile_schema(schema: dict, doc: Column) -> Column:
    """Whether document ``doc`` (VARIANT object) satisfies ``schema``."""
    return nn(_rules(doc, schema, True, None))


_TYPED = frozenset({"type", "bsonType", "minimum", "maximum", "multipleOf", "minLength", "maxLength",
                    "pattern", "minItems", "maxItems", "uniqueItems", "items", "additionalItems",
                    "properties", "required", "patternProperties", "additionalProperties",
                    "minProperties", "maxProperties", "dependencies"})


def _typed_keywords(s: dict) -> bool:
    if _TYPED & set(s):
        return True
    return any(_typed_keywords(sub) for kw in ("allOf", "anyOf", "oneOf") for sub in s.get(kw, [])) or (
        "not" in s and _typed_keywords(s["not"]))


def _schema(v: Column, s: dict) -> Column:
    """``s`` on a value below the top level (``v`` a simple column); its type code is computed
    once when keywords need it."""
    if not _typed_keywords(s):
        return nn(_rules(v, s, False, None))
    return nn(V.let(V.type_code(v), lambda code: _rules(v, s, False, code)))


def _type_test(v: Column, spec: Any, json_types: bool, code: Column | None) -> Column:
    names = [JSON_TYPES.get(n, n) if json_types else n for n in ([spec] if isinstance(spec, str) else spec)]
    if code is None:  # the top-level document is an object
        return true() if "object" in names else false()
    return type_test(v, names, code)


def _regex(s: Column, pattern: str) -> Column:
    return s.rlike(translate_regex(pattern, "", "java"))


def _multiple_of(v: Column, code: Column, m: Any) -> Column:
    md = decimal15(m)
    xd = raw_double(v)
    # doubles as Decimal128 sees them: 15 significant digits
    dec = F.when(code == V.CODE["double"], F.format_string("%.14e", xd).try_cast("decimal(38,18)")
                 ).otherwise(F.try_variant_get(v, "$", "decimal(38,18)"))
    exact = (dec % F.lit(md).cast("decimal(38,18)")) == 0
    approx = ~F.isnan(xd) & (F.abs(xd) != F.lit(float("inf"))) & ((xd % F.lit(float(m))) == 0)
    return nn(F.when(dec.isNotNull(), exact).otherwise(approx))


def _rules(v: Column, s: dict, top: bool, code: Column | None) -> Column:  # noqa: C901 - one keyword each
    """``s`` on ``v``; ``code`` is v's type code (None at the top level, where v is the document)."""
    conds: list[Column] = []
    for kw in ("type", "bsonType"):
        if kw in s:
            conds.append(_type_test(v, s[kw], kw == "type", None if top else code))
    if not top:
        num = []
        for kw, excl, ops in (("minimum", "exclusiveMinimum", ("$gt", "$gte")),
                              ("maximum", "exclusiveMaximum", ("$lt", "$lte"))):
            if kw in s:
                num.append(cmp_pred(ops[0] if s.get(excl) else ops[1], s[kw]).coded(v, code))
        if "multipleOf" in s:
            num.append(_multiple_of(v, code, s["multipleOf"]))
        if num:
            conds.append(~code.isin(*V.NUMBER_CODES) | all_of(num))
        strs = []
        sv = F.try_variant_get(v, "$", "string")
        if "minLength" in s:
            strs.append(F.length(sv) >= F.lit(int(s["minLength"])))
        if "maxLength" in s:
            strs.append(F.length(sv) <= F.lit(int(s["maxLength"])))
        if "pattern" in s:
            strs.append(_regex(sv, s["pattern"]))
        if strs:
            conds.append((code != V.CODE["string"]) | nn(all_of(strs)))
        arr = _array_rules(v, s)
        if arr:
            conds.append((code != V.CODE["array"]) | nn(all_of(arr)))
    obj = _object_rules(v, s, top, code)
    if obj:
        conds.append(nn(all_of(obj)) if top else ((code != V.CODE["object"]) | nn(all_of(obj))))
    if "allOf" in s:
        conds.extend(_rules(v, sub, top, code) for sub in s["allOf"])
    if "anyOf" in s:
        conds.append(any_of([_rules(v, sub, top, code) for sub in s["anyOf"]]))
    if "oneOf" in s:
        hits = [F.when(_rules(v, sub, top, code), F.lit(1)).otherwise(F.lit(0)) for sub in s["oneOf"]]
        total = hits[0]
        for h in hits[1:]:
            total = total + h
        conds.append(total == 1)
    if "not" in s:
        conds.append(~_rules(v, s["not"], top, code))
    if "enum" in s:
        values = [e for e in s["enum"] if isinstance(e, dict)] if top else s["enum"]
        conds.append(any_of([eq_value(e)(v, code) if code is not None else eq_value(e)(v) for e in values]))
    return nn(all_of(conds))


def _absent_or(sub: dict):
    def check(f: Column) -> Column:
        return f.isNull() | _schema(f, sub)
    return check


def _array_rules(v: Column, s: dict) -> list[Column]:
    elems = V.array_elems(v)
    out = []
    size = F.size(elems)
    if "minItems" in s:
        out.append(size >= F.lit(int(s["minItems"])))
    if "maxItems" in s:
        out.append(size <= F.lit(int(s["maxItems"])))
    if s.get("uniqueItems") is True:
        keys = F.transform(elems, lambda e: V.sort_key(e))
        out.append(F.size(F.array_distinct(keys)) == size)
    items = s.get("items")
    if isinstance(items, dict):
        out.append(F.forall(elems, lambda e: _schema(e, items)))
    elif isinstance(items, list):
        for i, sub in enumerate(items):
            out.append((size <= F.lit(i)) | V.let(F.try_element_at(elems, F.lit(i + 1)), _absent_or(sub)))
        add = s.get("additionalItems", True)
        n = len(items)
        if add is False:
            out.append(size <= F.lit(n))
        elif isinstance(add, dict):
            rest = F.filter(elems, lambda e, i: i >= F.lit(n))
            out.append(F.forall(rest, lambda e: _schema(e, add)))
    return out


def _object_rules(v: Column, s: dict, top: bool, code: Column | None) -> list[Column]:
    out = []
    props = s.get("properties", {})
    for name, sub in props.items():
        out.append(V.let(field(v, name), _absent_or(sub)))
    for name in s.get("required", []):
        out.append(field(v, name).isNotNull())
    if "patternProperties" in s or "additionalProperties" in s:
        pp = s.get("patternProperties", {})
        add = s.get("additionalProperties", True)
        if pp or add is not True:
            entries = F.map_entries(F.try_variant_get(v, "$", "map<string,variant>"))

            def allowed(kv: Column) -> Column:
                k, x = kv["key"], kv["value"]
                tests = [~_regex(k, p) | V.let(x, lambda y, sub=sub: _schema(y, sub)) for p, sub in pp.items()]
                if add is not True:
                    known = [k.isin(*props)] if props else []
                    known += [_regex(k, p) for p in pp]
                    other = false() if add is False else V.let(x, lambda y: _schema(y, add))
                    tests.append(any_of(known) | other if known else other)
                return nn(all_of(tests))
            out.append(nn(F.forall(entries, allowed)))
    if "minProperties" in s or "maxProperties" in s:
        n = F.size(F.try_variant_get(v, "$", "map<string,variant>"))
        if "minProperties" in s:
            out.append(n >= F.lit(int(s["minProperties"])))
        if "maxProperties" in s:
            out.append(n <= F.lit(int(s["maxProperties"])))
    for name, dep in s.get("dependencies", {}).items():
        if isinstance(dep, list):
            then = all_of([field(v, d).isNotNull() for d in dep])
        else:
            then = _rules(v, dep, top, code)
        out.append(field(v, name).isNull() | then)
    return out
