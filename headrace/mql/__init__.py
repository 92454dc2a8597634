"""MQL in pure Python (no pyspark): validation of expressions, queries and accumulators, and the
reference semantics used as test oracles. One module per concern:

- :mod:`headrace.mql.bson`: BSON values: ``$type`` names, the comparison order
  (``compare_values``, ``sort_key``), query comparisons within a type bracket, truthiness
  (parts: ``bson_types``, ``bson_order``, ``bson_encoding``).
- :mod:`headrace.mql.paths`: dotted field paths (the matcher's array traversal; plain paths).
- :mod:`headrace.mql.regex`: PCRE patterns translated to Python and Java.
- :mod:`headrace.mql.catalogue`: which query operators exist where, and their argument shapes.
- :mod:`headrace.mql.match`: MongoDB's matcher (``matches``).
- :mod:`headrace.mql.explain`: why a document does not match (``errInfo.details``).
- :mod:`headrace.mql.query`: ``validate_query`` (``$match``, ``$validate``).
- :mod:`headrace.mql.expressions`: aggregation expression operators and ``validate_expression``
  (parts: ``expr_operators``, the operator table; ``expr_validate``).
- :mod:`headrace.mql.accumulators`: accumulator validation.
- :mod:`headrace.mql.jsonschema`: ``$jsonSchema`` (parts: ``jsonschema_keywords``,
  ``jsonschema_validate``, ``jsonschema_eval``).

Imports go one way: ``bson`` and ``regex`` import nothing of mql; ``paths`` imports ``bson``;
``catalogue`` ``regex``; ``jsonschema`` ``bson`` and ``regex``; ``match`` those; ``explain``
``match``; ``expressions`` ``regex``; ``query`` and ``accumulators`` ``expressions``
(``tests/unit/test_import_cycles.py`` keeps the repository free of cycles).
"""
