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

The keywords are in :mod:`.jsonschema_keywords`, the validation of a schema in
:mod:`.jsonschema_validate` and the evaluator in :mod:`.jsonschema_eval`; this module re-exports
them.
"""
from __future__ import annotations

from .jsonschema_eval import decimal15, multiple_of, schema_failure_details, schema_matches, type_matches
from .jsonschema_keywords import JSON_TYPES, KEYWORDS, NOT_YET, OMITTED
from .jsonschema_validate import validate_schema

__all__ = ["validate_schema", "schema_matches", "schema_failure_details", "KEYWORDS", "OMITTED", "NOT_YET",
           "JSON_TYPES", "type_matches", "decimal15", "multiple_of"]
