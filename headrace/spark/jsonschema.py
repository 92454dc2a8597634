"""``$jsonSchema`` compiled to native Spark boolean columns.

``compile_schema(schema, doc)`` recurses over the (validated) schema at compile time and returns
a BOOLEAN column, never NULL, with MongoDB's semantics as implemented by
:mod:`headrace.mql.jsonschema` (the oracle): a keyword about one type holds for values of other
types; ``properties`` checks present fields; arrays are checked with ``forall`` / ``exists`` /
``filter`` over ``values.array_elems``; ``patternProperties`` / ``additionalProperties`` iterate
over the document's entries (``values.object_entries``); ``enum`` and ``uniqueItems`` compare
documents regardless of field order. At the top level the value is the document, an object.
Where the document is still the source record's (``text``: ``Ctx.text``), ``bsonType`` of a
property reads the record's text too, so a small NumberLong (``{"$numberLong": "5"}``, an int in
VARIANT) is a ``long`` and not an ``int``, as in MongoDB (:mod:`.source_text`).
"""
from __future__ import annotations

from typing import Any

from pyspark.sql import Column
from pyspark.sql import functions as F

from ..mql.regex import translate_regex
from ..mql.jsonschema import JSON_TYPES, decimal15
from . import values as V
from .predicates import all_of, any_of, cmp_pred, eq_value, false, field, nn, raw_double, true, type_test
from .source_text import is_long_text, text_at

__all__ = ["compile_schema"]


def compile_schema(schema: dict, doc: Column, text: Any = None) -> Column:
    """Whether document ``doc`` (VARIANT object) satisfies ``schema`` (``text``: for a dotted
    path, the source record's JSON text where the path's value is still the record's, else None)."""
    return nn(_rules(doc, schema, True, None, _At(text, ()) if text is not None else None))


class _At:
    """Where a value is in the source record (its property names from the top), to read its text."""

    def __init__(self, text: Any, names: tuple):
        self.text, self.names = text, names

    def child(self, name: str) -> "_At | None":
        return None if "." in name or name.startswith("$") else _At(self.text, self.names + (name,))

    def long_text(self) -> Column | None:
        """Whether the record's text writes the value as a ``$numberLong`` (None: not at hand)."""
        t = text_at(self.text, self.names)
        return None if t is None else is_long_text(t)


_TYPED = frozenset({"type", "bsonType", "minimum", "maximum", "multipleOf", "minLength", "maxLength",
                    "pattern", "minItems", "maxItems", "uniqueItems", "items", "additionalItems",
                    "properties", "required", "patternProperties", "additionalProperties",
                    "minProperties", "maxProperties", "dependencies"})


def _typed_keywords(s: dict) -> bool:
    if _TYPED & set(s):
        return True
    return any(_typed_keywords(sub) for kw in ("allOf", "anyOf", "oneOf") for sub in s.get(kw, [])) or (
        "not" in s and _typed_keywords(s["not"]))


def _schema(v: Column, s: dict, at: _At | None = None) -> Column:
    """``s`` on a value below the top level (``v`` a simple column); its type code is computed
    once when keywords need it."""
    if not _typed_keywords(s):
        return nn(_rules(v, s, False, None, at))
    return nn(V.let(V.type_code(v), lambda code: _rules(v, s, False, code, at)))


def _type_test(v: Column, spec: Any, json_types: bool, code: Column | None, at: _At | None = None) -> Column:
    names = [JSON_TYPES.get(n, n) if json_types else n for n in ([spec] if isinstance(spec, str) else spec)]
    if code is None:  # the top-level document is an object
        return true() if "object" in names else false()
    long_text = at.long_text() if at is not None and ("int" in names) != ("long" in names) else None
    return type_test(v, names, code, long_text=long_text)


def _regex(s: Column, pattern: str) -> Column:
    return s.rlike(translate_regex(pattern, "", "java"))


def _multiple_of(v: Column, code: Column, m: Any) -> Column:
    md = decimal15(m)
    xd = raw_double(v)
    # doubles as Decimal128 sees them: 15 significant digits
    dec = F.when(code == V.CODE["double"], F.format_string("%.14e", xd).try_cast("decimal(38,18)")
                 ).otherwise(V.num_decimal(v))
    exact = (dec % F.lit(md).cast("decimal(38,18)")) == 0
    approx = ~F.isnan(xd) & (F.abs(xd) != F.lit(float("inf"))) & ((xd % F.lit(float(m))) == 0)
    return nn(F.when(dec.isNotNull(), exact).otherwise(approx))


def _rules(v: Column, s: dict, top: bool, code: Column | None,  # noqa: C901 - one keyword each
           at: _At | None = None) -> Column:
    """``s`` on ``v``; ``code`` is v's type code (None at the top level, where v is the document);
    ``at``: where ``v`` is in the source record, when its text can be read."""
    conds: list[Column] = []
    for kw in ("type", "bsonType"):
        if kw in s:
            conds.append(_type_test(v, s[kw], kw == "type", None if top else code, at if kw == "bsonType" else None))
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
    obj = _object_rules(v, s, top, code, at)
    if obj:
        conds.append(nn(all_of(obj)) if top else ((code != V.CODE["object"]) | nn(all_of(obj))))
    if "allOf" in s:
        conds.extend(_rules(v, sub, top, code, at) for sub in s["allOf"])
    if "anyOf" in s:
        conds.append(any_of([_rules(v, sub, top, code, at) for sub in s["anyOf"]]))
    if "oneOf" in s:
        hits = [F.when(_rules(v, sub, top, code, at), F.lit(1)).otherwise(F.lit(0)) for sub in s["oneOf"]]
        total = hits[0]
        for h in hits[1:]:
            total = total + h
        conds.append(total == 1)
    if "not" in s:
        conds.append(~_rules(v, s["not"], top, code, at))
    if "enum" in s:
        values = [e for e in s["enum"] if isinstance(e, dict)] if top else s["enum"]
        conds.append(any_of([eq_value(e)(v, code) if code is not None else eq_value(e)(v) for e in values]))
    return nn(all_of(conds))


def _absent_or(sub: dict, at: _At | None = None):
    def check(f: Column) -> Column:
        return f.isNull() | _schema(f, sub, at)
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


def _object_rules(v: Column, s: dict, top: bool, code: Column | None, at: _At | None = None) -> list[Column]:
    out = []
    props = s.get("properties", {})
    for name, sub in props.items():
        out.append(V.let(field(v, name), _absent_or(sub, at.child(name) if at is not None else None)))
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
            then = _rules(v, dep, top, code, at)
        out.append(field(v, name).isNull() | then)
    return out
