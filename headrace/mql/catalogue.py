"""The catalogue of query operators and the shapes of their arguments (no evaluation here).

Which operators a query may use where (:data:`TOP_OPERATORS`, :data:`FIELD_OPERATORS`, the
ones MongoDB has that headrace refuses: :data:`NOT_SUPPORTED_TOP`, :data:`NOT_SUPPORTED_FIELD`),
the error for one used where it cannot be (:func:`operator_error`), and how an argument is read:
an operator document or a literal, ``$elemMatch`` on values or on documents, ``$regex`` with
``$options``, ``$mod``'s divisor and remainder. Shared by validation
(:mod:`headrace.mql.query`), the reference matcher (:mod:`headrace.mql.match`) and the Spark
compiler (:mod:`headrace.spark.query`).
"""
from __future__ import annotations

import decimal
from typing import Any

from ..errors import PipelineError
from .regex import regex_literal

__all__ = [
    "TOP_LEVEL_OPERATORS", "TOP_OPERATORS", "FIELD_OPERATORS", "NOT_SUPPORTED_TOP",
    "NOT_SUPPORTED_FIELD", "operator_error", "is_operator_doc", "is_elem_match_value",
    "is_all_elem_match", "regex_of", "mod_args", "c_mod",
]

#: Operators that stand for a whole document rather than a field (MongoDB's pathless parsers).
TOP_LEVEL_OPERATORS = frozenset({
    "$and", "$or", "$nor", "$expr", "$jsonSchema", "$comment", "$where", "$text",
    "$alwaysTrue", "$alwaysFalse", "$sampleRate", "$ref", "$id", "$db", "$atomic", "$isolated",
})

TOP_OPERATORS = frozenset({"$and", "$or", "$nor", "$expr", "$jsonSchema", "$comment"})
FIELD_OPERATORS = frozenset({
    "$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin", "$not", "$exists", "$type",
    "$regex", "$options", "$elemMatch", "$size", "$all", "$mod",
    "$bitsAllSet", "$bitsAllClear", "$bitsAnySet", "$bitsAnyClear",
})
BIT_OPERATORS = frozenset({"$bitsAllSet", "$bitsAllClear", "$bitsAnySet", "$bitsAnyClear"})
NOT_SUPPORTED_TOP = frozenset({"$text", "$where", "$sampleRate", "$alwaysTrue", "$alwaysFalse",
                               "$ref", "$id", "$db", "$atomic", "$isolated"})
NOT_SUPPORTED_FIELD = frozenset({
    "$geoWithin", "$geoIntersects", "$near", "$nearSphere", "$within", "$box", "$center",
    "$centerSphere", "$geometry", "$maxDistance", "$minDistance", "$polygon", "$uniqueDocs",
})


def operator_error(op: str, where: str, path: str | None = None) -> PipelineError:
    """The error for an operator that cannot be used where it is (``where``: "top" or "field")."""
    if where == "top":
        if op in NOT_SUPPORTED_TOP:
            return PipelineError("QUERY_NOT_SUPPORTED_YET", f"query operator {op} is not supported yet",
                                 path=path)
        if op in FIELD_OPERATORS or op in NOT_SUPPORTED_FIELD:
            return PipelineError("QUERY_UNKNOWN_OPERATOR",
                                 f"unknown top level operator: {op} (it applies to a field: {{<field>: {{{op}: ...}}}})",
                                 path=path, expected="a top-level operator ($and, $or, $nor, $expr, $jsonSchema)",
                                 found=op)
        return PipelineError("QUERY_UNKNOWN_OPERATOR", f"unknown top level operator: {op}", path=path,
                             expected="a top-level operator ($and, $or, $nor, $expr, $jsonSchema)", found=op)
    if op in NOT_SUPPORTED_FIELD:
        return PipelineError("QUERY_NOT_SUPPORTED_YET", f"query operator {op} is not supported yet", path=path)
    if op in TOP_LEVEL_OPERATORS:
        return PipelineError("QUERY_UNKNOWN_OPERATOR",
                             f"unknown operator: {op} ({op} applies to the whole document, not to a field)",
                             path=path, expected="a field operator ($eq, $gt, $in, $regex, ...)", found=op)
    return PipelineError("QUERY_UNKNOWN_OPERATOR", f"unknown operator: {op}", path=path,
                         expected="a field operator ($eq, $gt, $in, $regex, ...)", found=op)


def is_operator_doc(v: Any) -> bool:
    """True when ``v`` is an operator document (``{$gt: 1, ...}``) rather than a literal."""
    if not isinstance(v, dict) or not v:
        return False
    first = next(iter(v))
    if not first.startswith("$") or regex_literal(v) is not None:
        return False
    return not ("$ref" in v and "$id" in v)  # a DBRef is a literal


def is_elem_match_value(sub: dict) -> bool:
    """``$elemMatch`` on values (``{$gte: 80, $lt: 85}``) rather than on documents."""
    if not isinstance(sub, dict) or not sub:
        return False
    first = next(iter(sub))
    if not first.startswith("$") or any(k in sub for k in ("$ref", "$id", "$db")):
        return False
    return first not in TOP_LEVEL_OPERATORS


def is_all_elem_match(items: list) -> bool:
    return bool(items) and isinstance(items[0], dict) and bool(items[0]) and next(iter(items[0])) == "$elemMatch"


def regex_of(opdoc: dict) -> tuple[str, str]:
    """``(pattern, options)`` of an operator document holding ``$regex`` (and ``$options``)."""
    r = opdoc["$regex"]
    lit = regex_literal(r)
    if lit is not None:
        pattern, options = lit
    else:
        pattern, options = r, ""
    extra = opdoc.get("$options", "")
    return pattern, options + (extra if isinstance(extra, str) else "")


def mod_args(arg: list) -> tuple[int, int]:
    """``$mod`` divisor and remainder as integers (doubles and decimals truncated)."""
    return _to_long(arg[0]), _to_long(arg[1])


def _to_long(x: Any) -> int:
    if isinstance(x, float) or isinstance(x, decimal.Decimal):
        return int(x)  # truncates toward zero
    return int(x)


def c_mod(a: int, b: int) -> int:
    """C++ ``%`` (the remainder has the dividend's sign); ``x % -1`` is 0."""
    if b == -1:
        return 0
    r = abs(a) % abs(b)
    return -r if a < 0 else r


def bit_positions(arg: Any) -> list[int]:
    """The bit positions a (validated) ``$bitsAllSet``/``$bitsAnySet``/``$bitsAllClear``/
    ``$bitsAnyClear`` argument names: a non-negative integer bitmask (its set bits), an array of
    positions, or binData (bit ``8 * i + j`` is bit ``j`` of byte ``i``)."""
    if isinstance(arg, list):
        return sorted({int(p) for p in arg})
    if isinstance(arg, (bytes, bytearray)):
        return [8 * i + j for i, byte in enumerate(bytes(arg)) for j in range(8) if byte >> j & 1]
    mask = int(arg)
    return [j for j in range(mask.bit_length()) if mask >> j & 1]


def bits_match(op: str, bits: "int | bytes", positions: list[int]) -> bool:
    """Whether a value's bits (a 64-bit integer, two's complement, or binData's bytes) satisfy
    ``op`` at ``positions``: beyond 64 bits a negative integer's bits are set, binData's past its
    end clear."""
    def is_set(p: int) -> bool:
        if isinstance(bits, int):
            return bits < 0 if p >= 64 else bool(bits >> p & 1)
        return p // 8 < len(bits) and bool(bits[p // 8] >> (p % 8) & 1)
    states = [is_set(p) for p in positions]
    return {"$bitsAllSet": all(states), "$bitsAnySet": any(states),
            "$bitsAllClear": not any(states), "$bitsAnyClear": not all(states)}[op]
