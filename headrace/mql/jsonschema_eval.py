"""The pure-Python ``$jsonSchema`` evaluator (the oracle of :mod:`headrace.spark.jsonschema`):
:func:`schema_matches` tests a value against a validated schema and
:func:`schema_failure_details` gives MongoDB's ``errInfo.details`` of a failure (the rules not
satisfied); :func:`type_matches`, :func:`decimal15` and :func:`multiple_of` are the shared value
tests. Part of :mod:`headrace.mql.jsonschema`, which re-exports it.
"""
from __future__ import annotations

import decimal
from typing import Any

from .bson import NUMBER_TYPES, compare_single, is_number, type_name, values_equal
from .jsonschema_keywords import JSON_TYPES
from .regex import compile_regex


def type_matches(v: Any, spec: Any, json_types: bool) -> bool:
    """Whether ``v`` has one of the types named by a ``type`` / ``bsonType`` value."""
    tn = type_name(v)
    for n in ([spec] if isinstance(spec, str) else spec):
        if json_types:
            n = JSON_TYPES.get(n, n)
        if n == tn or (n == "number" and tn in NUMBER_TYPES):
            return True
    return False


_DEC = decimal.Context(prec=34)


def decimal15(x: Any) -> decimal.Decimal:
    """A number as Decimal128 sees it: doubles rounded to 15 significant digits."""
    if isinstance(x, float):
        return decimal.Decimal(format(x, ".15g")) if x == x and abs(x) != float("inf") else decimal.Decimal(repr(x))
    if isinstance(x, decimal.Decimal):
        return x
    return decimal.Decimal(int(x))


def multiple_of(v: Any, m: Any) -> bool:
    try:
        with decimal.localcontext(_DEC) as ctx:
            ctx.traps[decimal.InvalidOperation] = True
            r = decimal15(v) % decimal15(m)
            return r == 0
    except (decimal.InvalidOperation, decimal.DivisionByZero):
        return False


def schema_matches(value: Any, schema: dict) -> bool:
    """True when ``value`` (a document at the top level) satisfies ``schema``."""
    return not _check(value, schema, False)


def schema_failure_details(value: Any, schema: dict) -> dict:
    """MongoDB-like ``errInfo.details`` of a ``$jsonSchema`` failure."""
    return {"operatorName": "$jsonSchema", "schemaRulesNotSatisfied": _check(value, schema, True)}


def _rule(kw: str, s: dict, reason: str, value: Any = ..., **extra: Any) -> dict:
    out: dict = {"operatorName": kw, "specifiedAs": {kw: s[kw]}}
    if reason:
        out["reason"] = reason
    if value is not ...:
        out["consideredValue"] = value
    out.update(extra)
    return out


def _check(v: Any, s: dict, explain: bool) -> list[dict]:  # noqa: C901 - one keyword each
    """The rules of ``s`` that ``v`` does not satisfy (only the first unless ``explain``)."""
    fails: list[dict] = []

    def fail(d: dict) -> bool:
        fails.append(d)
        return not explain

    for kw in ("type", "bsonType"):
        if kw in s and not type_matches(v, s[kw], kw == "type"):
            if fail(_rule(kw, s, "type did not match", v, consideredType=type_name(v))):
                return fails
    if is_number(v):
        for kw, excl in (("minimum", "exclusiveMinimum"), ("maximum", "exclusiveMaximum")):
            if kw in s:
                op = ("$gt" if s.get(excl) else "$gte") if kw == "minimum" else ("$lt" if s.get(excl) else "$lte")
                if not compare_single(v, op, s[kw]):
                    if fail(_rule(kw, s, "comparison failed", v)):
                        return fails
        if "multipleOf" in s and not multiple_of(v, s["multipleOf"]):
            if fail(_rule("multipleOf", s, "considered value is not a multiple of the specified value", v)):
                return fails
    if isinstance(v, str):
        n = len(v)
        if "minLength" in s and n < s["minLength"]:
            if fail(_rule("minLength", s, "specified string length was not satisfied", v)):
                return fails
        if "maxLength" in s and n > s["maxLength"]:
            if fail(_rule("maxLength", s, "specified string length was not satisfied", v)):
                return fails
        if "pattern" in s and compile_regex(s["pattern"], "").search(v) is None:
            if fail(_rule("pattern", s, "regular expression did not match", v)):
                return fails
    if isinstance(v, list):
        if "minItems" in s and len(v) < s["minItems"]:
            if fail(_rule("minItems", s, "array did not match specified length", v)):
                return fails
        if "maxItems" in s and len(v) > s["maxItems"]:
            if fail(_rule("maxItems", s, "array did not match specified length", v)):
                return fails
        if s.get("uniqueItems") is True:
            dup = _first_duplicate(v)
            if dup is not ...:
                if fail(_rule("uniqueItems", s, "found a duplicate item", v, duplicatedValue=dup)):
                    return fails
        items = s.get("items")
        if isinstance(items, dict):
            for i, e in enumerate(v):
                sub = _check(e, items, explain)
                if sub:
                    if fail({"operatorName": "items", "reason": "At least one item did not match the sub-schema",
                             "itemIndex": i, "details": sub}):
                        return fails
                    break
        elif isinstance(items, list):
            for i, (e, sch) in enumerate(zip(v, items)):
                sub = _check(e, sch, explain)
                if sub:
                    if fail({"operatorName": "items", "reason": "An item did not match its sub-schema",
                             "itemIndex": i, "details": sub}):
                        return fails
                    break
            if "additionalItems" in s and len(v) > len(items):
                add = s["additionalItems"]
                if add is False:
                    if fail(_rule("additionalItems", s, "found additional items", v)):
                        return fails
                elif isinstance(add, dict):
                    for i in range(len(items), len(v)):
                        sub = _check(v[i], add, explain)
                        if sub:
                            if fail({"operatorName": "additionalItems", "reason": "At least one additional "
                                     "item did not match the sub-schema", "itemIndex": i, "details": sub}):
                                return fails
                            break
    if isinstance(v, dict):
        props = s.get("properties", {})
        not_ok = []
        for name, sub in props.items():
            if name in v:
                d = _check(v[name], sub, explain)
                if d:
                    entry = {"propertyName": name, "details": d}
                    if "description" in sub:
                        entry["description"] = sub["description"]
                    not_ok.append(entry)
                    if not explain:
                        break
        if not_ok and fail({"operatorName": "properties", "propertiesNotSatisfied": not_ok}):
            return fails
        if "required" in s:
            missing = [n for n in s["required"] if n not in v]
            if missing and fail(_rule("required", s, "", missingProperties=missing)):
                return fails
        if "patternProperties" in s or "additionalProperties" in s:
            pp = s.get("patternProperties", {})
            add = s.get("additionalProperties", True)
            extra, pat_fail = [], []
            for name, x in v.items():
                matched = False
                for pat, sub in pp.items():
                    if compile_regex(pat, "").search(name) is not None:
                        matched = True
                        d = _check(x, sub, explain)
                        if d:
                            pat_fail.append({"propertyName": name, "regex": pat, "details": d})
                if not matched and name not in props:
                    if add is False or (isinstance(add, dict) and _check(x, add, False)):
                        extra.append(name)
                if (pat_fail or extra) and not explain:
                    break
            if pat_fail and fail({"operatorName": "patternProperties", "details": pat_fail}):
                return fails
            if extra and fail(_rule("additionalProperties", s, "", additionalProperties=extra)):
                return fails
        if "minProperties" in s and len(v) < s["minProperties"]:
            if fail(_rule("minProperties", s, "specified number of properties was not satisfied",
                          numberOfProperties=len(v))):
                return fails
        if "maxProperties" in s and len(v) > s["maxProperties"]:
            if fail(_rule("maxProperties", s, "specified number of properties was not satisfied",
                          numberOfProperties=len(v))):
                return fails
        for name, dep in s.get("dependencies", {}).items():
            if name not in v:
                continue
            if isinstance(dep, list):
                missing = [n for n in dep if n not in v]
                if missing and fail({"operatorName": "dependencies", "failingDependencies": [
                        {"conditionalProperty": name, "missingProperties": missing}]}):
                    return fails
            else:
                d = _check(v, dep, explain)
                if d and fail({"operatorName": "dependencies", "failingDependencies": [
                        {"conditionalProperty": name, "details": d}]}):
                    return fails
    if "allOf" in s:
        bad = [{"index": i, "details": d} for i, sch in enumerate(s["allOf"]) if (d := _check(v, sch, explain))]
        if bad and fail({"operatorName": "allOf", "schemasNotSatisfied": bad}):
            return fails
    if "anyOf" in s:
        res = [_check(v, sch, explain) for sch in s["anyOf"]]
        if all(res) and fail({"operatorName": "anyOf", "schemasNotSatisfied": [
                {"index": i, "details": d} for i, d in enumerate(res)]}):
            return fails
    if "oneOf" in s:
        res = [_check(v, sch, explain) for sch in s["oneOf"]]
        ok = [i for i, d in enumerate(res) if not d]
        if len(ok) != 1:
            d = ({"operatorName": "oneOf", "reason": "more than one subschema matched", "matchingSchemaIndexes": ok}
                 if ok else {"operatorName": "oneOf", "schemasNotSatisfied": [
                     {"index": i, "details": x} for i, x in enumerate(res)]})
            if fail(d):
                return fails
    if "not" in s and not _check(v, s["not"], False):
        if fail({"operatorName": "not", "reason": "child schema matched", "childSchema": s["not"]}):
            return fails
    if "enum" in s and not any(values_equal(v, e, unordered_fields=True) for e in s["enum"]):
        if fail(_rule("enum", s, "value was not found in enum", v)):
            return fails
    return fails


def _first_duplicate(items: list) -> Any:
    for i, x in enumerate(items):
        for y in items[:i]:
            if values_equal(x, y, unordered_fields=True):
                return x
    return ...
