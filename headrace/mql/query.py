"""Validation of query documents (``$match``, ``$validate.validator``) before anything runs.

``validate_query(query, path)`` raises :class:`~headrace.errors.PipelineError` with:

- ``QUERY_UNKNOWN_OPERATOR``: an operator MongoDB does not have (``{a: {$foo: 1}}``), or a field
  operator mixed with field names (``{a: {$gt: 1, b: 2}}``).
- ``QUERY_NOT_SUPPORTED_YET``: a real MongoDB query operator headrace does not implement
  (``$text``, ``$where``, geospatial operators, ...).
- ``QUERY_BAD_ARGS``: a supported operator with a wrong argument, saying what was expected and
  what was found (``$in`` needs an array, ``$size`` a non-negative integer, ``$mod``
  ``[divisor, remainder]``, the ``$bits*`` tests a non-negative bitmask, bit positions or
  binData, ``$regex`` a valid pattern, ``$type`` known type aliases ...).

``path`` is where the query sits in the stage (e.g. ``"$match"``); error paths extend it with
field and operator names (``"$match.age.$gt"``, ``"$match.$or.1.qty"``).

Supported: ``$eq $ne $gt $gte $lt $lte $in $nin $and $or $nor $not $exists $type $regex
$options $expr $elemMatch $size $all $mod $bitsAllSet $bitsAnySet $bitsAllClear $bitsAnyClear
$jsonSchema $comment``.
"""
from __future__ import annotations

import decimal
import math
from typing import Any

from ..errors import PipelineError
from .bson import TYPE_ALIASES, TYPE_CODES, is_number
from .catalogue import (
    BIT_OPERATORS, FIELD_OPERATORS, is_all_elem_match, is_elem_match_value, is_operator_doc, operator_error,
)
from .expressions import validate_expression
from .jsonschema import validate_schema
from .regex import RegexError, compile_regex, regex_literal

__all__ = ["validate_query"]

_INT64 = 2**63


def _join(path: str, key: Any) -> str:
    return f"{path}.{key}" if path else str(key)


def _bad(path: str, msg: str, expected: str, found: Any) -> PipelineError:
    return PipelineError("QUERY_BAD_ARGS", msg, path=path, expected=expected, found=found)


def validate_query(query: Any, path: str = "", *, _sub: bool = False) -> None:
    """Raise :class:`PipelineError` unless ``query`` is a query document headrace can run."""
    if not isinstance(query, dict):
        raise _bad(path, "a query must be a document", "a query document", query)
    for key, arg in query.items():
        p = _join(path, key)
        if not isinstance(key, str) or key == "":
            raise _bad(p, "empty field name in query", "a field path", key)
        if key.startswith("$"):
            _validate_top(key, arg, p, _sub)
        else:
            _validate_field(arg, p)


def _validate_top(op: str, arg: Any, p: str, sub: bool) -> None:
    if op in ("$and", "$or", "$nor"):
        if not isinstance(arg, list) or not arg:
            raise _bad(p, f"{op} must be a non-empty array", "a non-empty array of query documents", arg)
        for i, q in enumerate(arg):
            if not isinstance(q, dict):
                raise _bad(_join(p, i), f"{op} entries need to be query documents", "a query document", q)
            validate_query(q, _join(p, i), _sub=sub)
        return
    if op == "$comment":
        return
    if op == "$expr":
        if sub:
            raise _bad(p, "$expr can only be applied to the top-level document",
                       "$expr at the top level of the query", op)
        validate_expression(arg, p)
        return
    if op == "$jsonSchema":
        if sub:
            raise PipelineError("QUERY_NOT_SUPPORTED_YET", "$jsonSchema inside $elemMatch is not supported yet",
                                path=p)
        validate_schema(arg, p)
        return
    raise operator_error(op, "top", p)


def _validate_field(arg: Any, p: str) -> None:
    if is_operator_doc(arg):
        _validate_ops(arg, p)
        return
    lit = regex_literal(arg)
    if lit is not None:
        _check_regex(lit[0], lit[1], p)
    elif isinstance(arg, dict) and "$regularExpression" in arg:
        raise _bad(p, "malformed $regularExpression", '{"$regularExpression": {"pattern": <string>, '
                   '"options": <string>}}', arg)


def _validate_ops(ops: dict, p: str) -> None:
    """An operator document: every key an operator."""
    for op, val in ops.items():
        q = _join(p, op)
        if not op.startswith("$"):
            raise PipelineError("QUERY_UNKNOWN_OPERATOR", f"unknown operator: {op} (an operator document "
                                "cannot mix operators and field names)", path=q,
                                expected="only operators in an operator document", found=op)
        if op not in FIELD_OPERATORS:
            raise operator_error(op, "field", q)
        _validate_op(op, val, ops, q)


def _is_regex_arg(v: Any) -> bool:
    return regex_literal(v) is not None


def _validate_op(op: str, val: Any, ops: dict, q: str) -> None:  # noqa: C901 - one operator each
    if op in ("$gt", "$gte", "$lt", "$lte", "$ne") and _is_regex_arg(val):
        raise _bad(q, f"can't have a regular expression as argument to {op}", "a value that is not a regex", val)
    if op in ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte"):
        return
    if op in ("$in", "$nin"):
        if not isinstance(val, list):
            raise _bad(q, f"{op} needs an array", "an array", val)
        for i, x in enumerate(val):
            if is_operator_doc(x):
                raise _bad(_join(q, i), f"cannot nest $ operators under {op}", "a value", x)
            lit = regex_literal(x)
            if lit is not None:
                _check_regex(lit[0], lit[1], _join(q, i))
        return
    if op == "$exists":
        return
    if op == "$type":
        _validate_type(val, q)
        return
    if op == "$regex":
        lit = regex_literal(val)
        if lit is not None:
            pattern, options = lit
            extra = ops.get("$options")
            if options and extra:
                raise _bad(q, "options set in both $regex and $options", "options in one place only", val)
        elif isinstance(val, str):
            pattern, options = val, ""
        else:
            raise _bad(q, "$regex has to be a string", "a string (regular expression)", val)
        extra = ops.get("$options", "")
        if not isinstance(extra, str):
            raise _bad(_join(q.rsplit(".", 1)[0], "$options"), "$options has to be a string",
                       "a string of regex options (i, m, s, x, u)", extra)
        _check_regex(pattern, options + extra, q)
        return
    if op == "$options":
        if "$regex" not in ops:
            raise _bad(q, "$options needs a $regex", "$regex next to $options", ops)
        if not isinstance(val, str):
            raise _bad(q, "$options has to be a string", "a string of regex options (i, m, s, x, u)", val)
        return
    if op == "$size":
        if not is_number(val) or _nan_or_inf(val):
            raise _bad(q, "$size needs a number", "a non-negative integer", val)
        if val != int(val):
            raise _bad(q, "$size must be a whole number", "a non-negative integer", val)
        if val < 0:
            raise _bad(q, "$size may not be negative", "a non-negative integer", val)
        if int(val) > 2**31 - 1:
            raise _bad(q, "$size must be representable as a 32-bit integer", "a non-negative integer", val)
        return
    if op == "$mod":
        _validate_mod(val, q)
        return
    if op in BIT_OPERATORS:
        _validate_bits(op, val, q)
        return
    if op == "$all":
        if not isinstance(val, list):
            raise _bad(q, "$all needs an array", "an array", val)
        if is_all_elem_match(val):
            for i, x in enumerate(val):
                if not (isinstance(x, dict) and x and next(iter(x)) == "$elemMatch"):
                    raise _bad(_join(q, i), "$all/$elemMatch has to be consistent",
                               "every element a {$elemMatch: ...}", x)
                _validate_elem_match(x["$elemMatch"], _join(_join(q, i), "$elemMatch"))
            return
        for i, x in enumerate(val):
            if is_operator_doc(x):
                raise _bad(_join(q, i), "no $ expressions in $all", "a value", x)
            lit = regex_literal(x)
            if lit is not None:
                _check_regex(lit[0], lit[1], _join(q, i))
        return
    if op == "$elemMatch":
        _validate_elem_match(val, q)
        return
    if op == "$not":
        lit = regex_literal(val)
        if lit is not None:
            _check_regex(lit[0], lit[1], q)
            return
        if not isinstance(val, dict):
            raise _bad(q, "$not needs a regex or a document", "an operator document or a regex", val)
        if not val:
            raise _bad(q, "$not cannot be empty", "a non-empty operator document", val)
        _validate_ops(val, q)
        return
    raise operator_error(op, "field", q)  # pragma: no cover - FIELD_OPERATORS is exhaustive


def _validate_elem_match(val: Any, q: str) -> None:
    if not isinstance(val, dict):
        raise _bad(q, "$elemMatch needs an object", "a query or an operator document", val)
    if is_elem_match_value(val):
        _validate_ops(val, q)
    else:
        validate_query(val, q, _sub=True)


def _nan_or_inf(v: Any) -> bool:
    if isinstance(v, float):
        return not math.isfinite(v)
    if isinstance(v, decimal.Decimal):
        return not v.is_finite()
    return False


def _validate_mod(val: Any, q: str) -> None:
    expected = "[divisor, remainder] (two numbers, divisor not 0)"
    if not isinstance(val, list):
        raise _bad(q, "malformed mod, needs to be an array", expected, val)
    if len(val) < 2:
        raise _bad(q, "malformed mod, not enough elements", expected, val)
    if len(val) > 2:
        raise _bad(q, "malformed mod, too many elements", expected, val)
    for i, (x, what) in enumerate(zip(val, ("divisor", "remainder"))):
        if not is_number(x):
            raise _bad(_join(q, i), f"malformed mod, {what} not a number", expected, val)
        if _nan_or_inf(x):
            raise _bad(_join(q, i), f"malformed mod, {what} value is invalid: NaN/Infinity", expected, val)
        if not -_INT64 <= int(x) < _INT64:
            raise _bad(_join(q, i), f"malformed mod, {what} value is out of the 64-bit integer range", expected, val)
    if int(val[0]) == 0:
        raise _bad(_join(q, 0), "divisor cannot be 0", expected, val)


def _validate_bits(op: str, val: Any, q: str) -> None:
    expected = "a non-negative integer bitmask, an array of bit positions or binData"
    if isinstance(val, (bytes, bytearray)):
        return
    if isinstance(val, list):
        for i, p in enumerate(val):
            if not is_number(p) or _nan_or_inf(p) or p != int(p):
                raise _bad(_join(q, i), f"{op}: bit positions must be integers", "a non-negative integer", p)
            if p < 0:
                raise _bad(_join(q, i), f"{op}: bit positions cannot be negative", "a non-negative integer", p)
            if int(p) > 2**31 - 1:
                raise _bad(_join(q, i), f"{op}: bit positions cannot be represented by a 32-bit signed integer",
                           "a non-negative integer", p)
        return
    if not is_number(val) or isinstance(val, bool):
        raise _bad(q, f"{op} takes an array, a number or binData", expected, val)
    if _nan_or_inf(val) or val != int(val):
        raise _bad(q, f"{op}: the bitmask must be an integer", expected, val)
    if val < 0:
        raise _bad(q, f"{op}: the bitmask must be non-negative", expected, val)
    if int(val) >= _INT64:
        raise _bad(q, f"{op}: the bitmask must be representable as a 64-bit integer", expected, val)


def _validate_type(val: Any, q: str) -> None:
    items = val if isinstance(val, list) else [val]
    if isinstance(val, list) and not val:
        raise _bad(q, "$type must match at least one type", "a type alias, a type number or an array of them", val)
    codes = set(TYPE_CODES.values())
    for x in items:
        if isinstance(x, str):
            if x not in TYPE_ALIASES:
                raise _bad(q, f"unknown type name alias: {x}", "a BSON type alias such as \"string\", \"int\", "
                           "\"number\"", x)
        elif is_number(x) and not _nan_or_inf(x) and x == int(x):
            if int(x) not in codes:
                raise _bad(q, f"invalid numerical type code: {x}", "a BSON type number (1-19, -1, 127)", x)
        else:
            raise _bad(q, "type must be represented as a number or a string",
                       "a type alias, a type number or an array of them", x)


def _check_regex(pattern: Any, options: str, q: str) -> None:
    try:
        compile_regex(pattern, options)
    except RegexError as exc:
        raise _bad(q, str(exc), "a valid regular expression (PCRE) with options i, m, s, x, u",
                   pattern if not options else {"$regex": pattern, "$options": options}) from None
