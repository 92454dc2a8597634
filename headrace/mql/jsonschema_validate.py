"""Validation of a ``$jsonSchema`` before anything runs: :func:`validate_schema` refuses keywords
MongoDB omits or headrace does not support yet, unknown keywords and bad keyword arguments
(wrong types, duplicates, invalid regular expressions), recursing into sub-schemas. Part of
:mod:`headrace.mql.jsonschema`, which re-exports it.
"""
from __future__ import annotations

import decimal
from typing import Any

from ..errors import PipelineError
from .bson import TYPE_ALIASES, is_number, values_equal
from .jsonschema_keywords import JSON_TYPES, KEYWORDS, NOT_YET, OMITTED
from .regex import RegexError, compile_regex


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
