"""The ``$jsonSchema`` vocabulary: the keywords MongoDB supports (:data:`KEYWORDS`), those it
omits (``OMITTED``) or headrace does not support yet (``NOT_YET``), and the JSON ``type`` names
with the BSON type each means (``JSON_TYPES``). Part of :mod:`headrace.mql.jsonschema`, which
re-exports it.
"""
from __future__ import annotations


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
