"""MQL in pure Python (no pyspark): validation of expressions, queries and accumulators, and the
reference semantics used as test oracles.

- :mod:`headrace.mql.expressions`: aggregation expression operators and ``validate_expression``.
- :mod:`headrace.mql.query`: query documents (``$match``, ``$validate``) and ``validate_query``.
- :mod:`headrace.mql.match`: MongoDB's matcher and BSON comparison order.
- :mod:`headrace.mql.accumulators`: accumulator validation.
- :mod:`headrace.mql.jsonschema`: ``$jsonSchema``.
"""
