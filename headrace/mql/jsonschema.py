"""``$jsonSchema``: validation of a schema and a pure-Python evaluator (MongoDB semantics).

MongoDB implements JSON Schema draft 4 with extensions and omissions:

- Keywords: ``bsonType`` (the ``$type`` aliases, including ``"number"``), ``type`` (``object
  array number boolean string null``), ``required``, ``properties``, ``patternProperties``,
  ``additionalProperties``, ``minProperties`` / ``maxProperties``, ``dependencies``,
  ``minimum`` / ``maximum`` with ``exclusiveMinimum`` / ``exclusiveMaximum`` (booleans),
  ``multipleOf``, ``minLength`` / ``maxLength`` (code points), ``pattern`` (PCRE, unanchored),
  ``enum``, ``items`` (a schema, or an array of schemas with ``additionalItems``),
  ``minItems`` / ``maxItems``, ``uniqueItems``, ``allOf`` / ``anyOf`` / ``oneOf`` / ``not``,
  ``title`` / ``description`` (no effect).
- Omitted by MongoDB and refused here as not supported: ``$ref``, ``$schema``, ``default``,
  ``definitions``, ``format``, ``id`` and ``type: "integer"``; ``encrypt`` /
  ``encryptMetadata`` are not supported yet. Unknown keywords are refused.
- A keyword that concerns one type (``minimum`` for numbers, ``items`` for arrays, ...) is
  satisfied by values of any other type; absent properties are only checked by ``required``.
- Values are checked as they are: arrays are not traversed implicitly (unlike queries).
- ``enum`` and ``uniqueItems`` compare documents regardless of field order; numbers compare by
  value (1 == 1.0). ``multipleOf`` works on decimals, doubles rounded to 15 digits.
"""
from __future__ import annotations

import decimal
from typing import Any

from ..errors import PipelineError
from .bson import NUMBER_TYPES, TYPE_ALIASES, compare_single, is_number, type_name, values_equal
from .regex import RegexError, compile_regex

__all__ = ["validate_schema", "schema_matches", "schema_failure_details", "KEYWORDS"]

KEYWORDS = frozenset({
    "additionalItems", "additionalProperties", "allOf", "anyOf", "bsonType", "dependencies",
    "description", "enum", "exclusiveMaximum", "exclusiveMinimum", "items", "maximum",
    "maxItems", "maxLength", "maxProperties", "minimum", "minItems", "minLength",
    "minProperties", "multipleOf", "not", "oneOf", "pattern", "patternProperties",
    "properties", "required", "title", "type", "uniqueItems",
})
OMITTED = frozenset({"$ref", "$schema", "default", "definitions", "format", "id"})
NOT_YET = frozenset({"encrypt", "encryptMetadata"})
JSON_TYPES = {"object": "object", "array": "array", "string": "string", "null": "null",
              "boolean": "bool", "number": "number"}


# ------------------------------------------------------------------------------------ validation


def _bad(path: str, msg: str, expected: str, found: Any) -> PipelineError:
    return PipelineError("QUERY_BAD_ARGS", msg, path=path, expected=expected, found=found)


def _join(path: str, key: Any) -> str:
    return f"{path}.{key}" if path else str(key)


def _non_negative_int(v: Any, path: str, kw: str) -> None:
    ok = is_number(v)
    if ok:
        try:
            ok = v == int(v) and int(v) >= 0 and int(v) < 2**63
        except (ValueError, OverflowError, decimal.InvalidOperation):
            ok = False
    if not ok:
        raise _bad(path, f"$jsonSchema keyword '{kw}' must be a non-negative integer",
                   "a non-negative integer", v)


def validate_schema(schema: Any, path: str = "$jsonSchema") -> None:
    """Raise :class:`PipelineError` unless ``schema`` is a ``$jsonSchema`` MongoDB accepts.

    Codes: ``QUERY_NOT_SUPPORTED_YET`` (keywords MongoDB omits, ``type: "integer"``,
    encryption), ``QUERY_UNKNOWN_OPERATOR`` (unknown keywords), ``QUERY_BAD_ARGS``."""
    if not isinstance(schema, dict):
        raise _bad(path, "$jsonSchema must be an object", "a JSON Schema object", schema)
    for kw in schema:
        p = _join(path, kw)
        if kw in OMITTED:
            raise PipelineError("QUERY_NOT_SUPPORTED_YET",
                                f"$jsonSchema keyword '{kw}' is not supported (MongoDB omits it)", path=p)
        if kw in NOT_YET:
            raise PipelineError("QUERY_NOT_SUPPORTED_YET",
                                f"$jsonSchema keyword '{kw}' is not supported yet", path=p)
        if kw not in KEYWORDS:
            raise PipelineError("QUERY_UNKNOWN_OPERATOR", f"unknown $jsonSchema keyword '{kw}'", path=p,
                                expected="a JSON Schema keyword MongoDB supports", found=kw)
    s = schema
    if "type" in s and "bsonType" in s:
        raise _bad(path, "cannot specify both $jsonSchema keywords 'type' and 'bsonType'",
                   "only one of 'type' and 'bsonType'", sorted(["type", "bsonType"]))
    for kw in ("type", "bsonType"):
        if kw in s:
            _validate_types(s[kw], _join(path, kw), kw)
    for kw in ("description", "title"):
        if kw in s and not isinstance(s[kw], str):
            raise _bad(_join(path, kw), f"$jsonSchema keyword '{kw}' must be a string", "a string", s[kw])
    for kw in ("minimum", "maximum"):
        if kw in s and not is_number(s[kw]):
            raise _bad(_join(path, kw), f"$jsonSchema keyword '{kw}' must be a number", "a number", s[kw])
    for kw, base in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
        if kw in s:
            if not isinstance(s[kw], bool):
                raise _bad(_join(path, kw), f"$jsonSchema keyword '{kw}' must be a boolean", "true or false", s[kw])
            if base not in s:
                raise _bad(_join(path, kw), f"$jsonSchema keyword '{base}' must be present if {kw} is present",
                           f"'{base}' next to '{kw}'", s[kw])
    if "multipleOf" in s:
        m = s["multipleOf"]
        if not is_number(m) or not (m > 0):
            raise _bad(_join(path, "multipleOf"), "$jsonSchema keyword 'multipleOf' must have a positive value",
                       "a positive number", m)
    for kw in ("minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties"):
        if kw in s:
            _non_negative_int(s[kw], _join(path, kw), kw)
    if "pattern" in s:
        pat = s["pattern"]
        if not isinstance(pat, str):
            raise _bad(_join(path, "pattern"), "$jsonSchema keyword 'pattern' must be a string", "a string", pat)
        _check_regex(pat, _join(path, "pattern"))
    if "uniqueItems" in s and not isinstance(s["uniqueItems"], bool):
        raise _bad(_join(path, "uniqueItems"), "$jsonSchema keyword 'uniqueItems' must be a boolean",
                   "true or false", s["uniqueItems"])
    if "required" in s:
        _validate_names(s["required"], _join(path, "required"), "required")
    if "enum" in s:
        e = s["enum"]
        if not isinstance(e, list) or not e:
            raise _bad(_join(path, "enum"), "$jsonSchema keyword 'enum' must be a non-empty array",
                       "a non-empty array", e)
        for i, x in enumerate(e):
            if any(values_equal(x, y, unordered_fields=True) for y in e[:i]):
                raise _bad(_join(path, "enum"), "$jsonSchema keyword 'enum' array cannot contain duplicate values",
                           "distinct values", x)
    if "properties" in s:
        props = s["properties"]
        if not isinstance(props, dict):
            raise _bad(_join(path, "properties"), "$jsonSchema keyword 'properties' must be an object",
                       "an object of schemas", props)
        for name, sub in props.items():
            validate_schema(sub, _join(_join(path, "properties"), name))
    if "patternProperties" in s:
        pp = s["patternProperties"]
        if not isinstance(pp, dict):
            raise _bad(_join(path, "patternProperties"), "$jsonSchema keyword 'patternProperties' must be an object",
                       "an object of schemas", pp)
        for pat, sub in pp.items():
            _check_regex(pat, _join(_join(path, "patternProperties"), pat))
            validate_schema(sub, _join(_join(path, "patternProperties"), pat))
    for kw in ("additionalProperties", "additionalItems"):
        if kw in s:
            a = s[kw]
            if isinstance(a, dict):
                validate_schema(a, _join(path, kw))
            elif not isinstance(a, bool):
                raise _bad(_join(path, kw), f"$jsonSchema keyword '{kw}' must be an object or a boolean",
                           "an object or a boolean", a)
    if "items" in s:
        it = s["items"]
        if isinstance(it, dict):
            validate_schema(it, _join(path, "items"))
        elif isinstance(it, list):
            for i, sub in enumerate(it):
                if not isinstance(sub, dict):
                    raise _bad(_join(_join(path, "items"), i), "each element of 'items' must be a schema object",
                               "an object", sub)
                validate_schema(sub, _join(_join(path, "items"), i))
        else:
            raise _bad(_join(path, "items"), "$jsonSchema keyword 'items' must be an array or an object",
                       "a schema or an array of schemas", it)
    for kw in ("allOf", "anyOf", "oneOf"):
        if kw in s:
            lst = s[kw]
            if not isinstance(lst, list) or not lst:
                raise _bad(_join(path, kw), f"$jsonSchema keyword '{kw}' must be a non-empty array",
                           "a non-empty array of schemas", lst)
            for i, sub in enumerate(lst):
                if not isinstance(sub, dict):
                    raise _bad(_join(_join(path, kw), i), f"$jsonSchema keyword '{kw}' must be an array of objects",
                               "an object", sub)
                validate_schema(sub, _join(_join(path, kw), i))
    if "not" in s:
        if not isinstance(s["not"], dict):
            raise _bad(_join(path, "not"), "$jsonSchema keyword 'not' must be an object", "a schema object", s["not"])
        validate_schema(s["not"], _join(path, "not"))
    if "dependencies" in s:
        deps = s["dependencies"]
        if not isinstance(deps, dict):
            raise _bad(_join(path, "dependencies"), "$jsonSchema keyword 'dependencies' must be an object",
                       "an object", deps)
        for name, dep in deps.items():
            p = _join(_join(path, "dependencies"), name)
            if isinstance(dep, dict):
                validate_schema(dep, p)
            elif isinstance(dep, list):
                _validate_names(dep, p, f"dependencies.{name}")
            else:
                raise _bad(p, f"property '{name}' in $jsonSchema keyword 'dependencies' must be either an "
                           "object or an array", "a schema or an array of field names", dep)


def _validate_types(t: Any, path: str, kw: str) -> None:
    items = [t] if isinstance(t, str) else t
    if not isinstance(items, list) or not all(isinstance(x, str) for x in items):
        raise _bad(path, f"$jsonSchema keyword '{kw}' must be either a string or an array of strings",
                   "a type name or an array of type names", t)
    if not items:
        raise _bad(path, f"$jsonSchema keyword '{kw}' must name at least one type", "at least one type", t)
    if len(set(items)) != len(items):
        raise _bad(path, f"$jsonSchema keyword '{kw}' has duplicate values", "distinct type names", t)
    for x in items:
        if kw == "type":
            if x == "integer":
                raise PipelineError("QUERY_NOT_SUPPORTED_YET",
                                    "$jsonSchema type 'integer' is not supported (MongoDB omits it); "
                                    "use bsonType 'int' or 'long'", path=path)
            if x not in JSON_TYPES:
                raise _bad(path, f"unknown type name alias: {x}",
                           "one of " + ", ".join(JSON_TYPES), x)
        elif x not in TYPE_ALIASES:
            raise _bad(path, f"unknown type name alias: {x}", "a BSON type alias (e.g. \"string\", \"int\")", x)


def _validate_names(v: Any, path: str, kw: str) -> None:
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
        raise _bad(path, f"$jsonSchema keyword '{kw}' must be an array of strings", "an array of field names", v)
    if not v:
        raise _bad(path, f"$jsonSchema keyword '{kw}' cannot be an empty array", "a non-empty array", v)
    if len(set(v)) != len(v):
        raise _bad(path, f"$jsonSchema keyword '{kw}' array cannot contain duplicate values",
                   "distinct field names", v)


def _check_regex(pattern: str, path: str) -> None:
    try:
        compile_regex(pattern, "")
    except RegexError as exc:
        raise _bad(path, f"invalid regular expression: {exc}", "a valid regular expression", pattern) from None


# ------------------------------------------------------------------------------------ evaluation


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
