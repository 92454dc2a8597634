"""Aggregation expressions: the supported operators and their validation (pure Python).

``validate_expression(expr, path, variables=())`` checks an expression completely before
anything runs and raises :class:`~headrace.errors.PipelineError`:

- ``EXPR_UNKNOWN_OPERATOR``: ``{$foo: ...}``, which MongoDB does not have either.
- ``EXPR_NOT_SUPPORTED_YET``: a real MongoDB expression operator (or system variable) headrace
  does not implement (``NOT_SUPPORTED``), e.g. ``$sin``, ``$setUnion``, ``$function``.
- ``EXPR_BAD_ARGS``: a supported operator with the wrong number or shape of arguments, an
  unknown or missing option, or a constant argument MongoDB would refuse (a bad ``unit``,
  ``timezone``, ``to`` type, regex, ``$meta`` name ...); says what was expected and what was found.
- ``EXPR_INVALID_FIELD_PATH``: ``"$"``, ``"$a..b"``, ``"$a.$b"``.
- ``EXPR_UNDEFINED_VARIABLE``: ``"$$x"`` where no ``$let`` / ``$map`` / ``$filter`` / ``$reduce``
  defines ``x`` (``$$this`` and ``$$value`` exist only inside the array operators). An invalid
  variable name in ``$let`` / ``as`` is ``EXPR_BAD_ARGS``.
- ``EXPR_INVALID_OBJECT``: an object mixing an operator with other fields, or a field name
  containing ``.`` or starting with ``$``.

``path`` is the expression's field path in the stage (e.g. ``"$addFields.total"``); errors
extend it with operator names and argument positions (``"$addFields.total.$add.1"``).

``OPERATORS`` maps each supported operator to its :class:`Spec` (argument shape);
:func:`operands` gives the argument list of a list-form operator as MongoDB reads it (a single
non-array argument is a one-element list). The shapes, constants and shared predicates are in
:mod:`.expr_spec`, the checks of constant arguments in :mod:`.expr_checks`; this module holds the
operator table and the validation walk.
"""
from __future__ import annotations

import re
from typing import Any, Iterable

from ..errors import PipelineError
from .expr_spec import (CONVERT_TYPES, DATE_UNITS, META_NAMES, SYSTEM_VARIABLES, Spec,  # noqa: F401 (__all__)
                        _SYSTEM_NOT_YET, _bad, _const_value, _list, _obj, is_constant, is_field_path, is_variable,
                        operands, valid_timezone)
from .expr_checks import (NotYet, _check_convert, _check_date_add, _check_date_common, _check_date_from_parts,
                          _check_date_trunc, _check_dfs, _check_get_field, _check_hash, _check_meta,
                          _check_method, _check_percentile, _check_range, _check_regex, _check_round,
                          _check_sort_by, _check_switch, _check_timezone, _check_trunc_date_to_string)


__all__ = [
    "validate_expression", "operands", "OPERATORS", "NOT_SUPPORTED", "SYSTEM_VARIABLES",
    "Spec", "is_field_path", "is_variable", "valid_timezone", "DATE_UNITS", "CONVERT_TYPES",
    "META_NAMES", "is_constant",
]

# -------------------------------------------------------------------------------- the table

A, N = "arithmetic", None
OPERATORS: dict[str, Spec] = {
    # arithmetic
    "$add": _list(0, N, A), "$subtract": _list(2, 2, A), "$multiply": _list(0, N, A),
    "$divide": _list(2, 2, A), "$mod": _list(2, 2, A), "$abs": _list(1, 1, A),
    "$ceil": _list(1, 1, A), "$floor": _list(1, 1, A), "$round": _list(1, 2, A, _check_round),
    "$trunc": _list(1, 2, A, _check_round), "$sqrt": _list(1, 1, A), "$pow": _list(2, 2, A),
    "$exp": _list(1, 1, A), "$ln": _list(1, 1, A), "$log": _list(2, 2, A), "$log10": _list(1, 1, A),
    "$sigmoid": _list(1, 1, A),
    # comparison
    **{op: _list(2, 2, "comparison") for op in ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$cmp")},
    # boolean
    "$and": _list(0, N, "boolean"), "$or": _list(0, N, "boolean"), "$not": _list(1, 1, "boolean"),
    # conditional
    "$cond": Spec("list_or_object", (3, 3), frozenset({"if", "then", "else"}), family="conditional"),
    "$ifNull": _list(2, N, "conditional"),
    "$switch": _obj({"branches"}, {"default"}, "conditional", _check_switch),
    # strings
    "$concat": _list(0, N, "strings"), "$substrCP": _list(3, 3, "strings"),
    "$substrBytes": _list(3, 3, "strings"), "$substr": _list(3, 3, "strings"),
    "$toLower": _list(1, 1, "strings"), "$toUpper": _list(1, 1, "strings"),
    "$split": _list(2, 2, "strings"), "$strLenCP": _list(1, 1, "strings"),
    "$strLenBytes": _list(1, 1, "strings"),
    "$trim": _obj({"input"}, {"chars"}, "strings"), "$ltrim": _obj({"input"}, {"chars"}, "strings"),
    "$rtrim": _obj({"input"}, {"chars"}, "strings"), "$indexOfCP": _list(2, 4, "strings"),
    "$indexOfBytes": _list(2, 4, "strings"),
    "$regexMatch": _obj({"input", "regex"}, {"options"}, "strings", _check_regex),
    "$regexFind": _obj({"input", "regex"}, {"options"}, "strings", _check_regex),
    "$regexFindAll": _obj({"input", "regex"}, {"options"}, "strings", _check_regex),
    "$replaceOne": _obj({"input", "find", "replacement"}, (), "strings"),
    "$replaceAll": _obj({"input", "find", "replacement"}, (), "strings"),
    "$strcasecmp": _list(2, 2, "strings"),
    # dates
    "$toDate": _list(1, 1, "dates"),
    "$dateFromString": _obj({"dateString"}, {"format", "timezone", "onError", "onNull"}, "dates", _check_dfs),
    "$dateToString": _obj({"date"}, {"format", "timezone", "onNull"}, "dates", _check_trunc_date_to_string),
    "$dateTrunc": _obj({"date", "unit"}, {"binSize", "timezone", "startOfWeek"}, "dates", _check_date_trunc),
    "$dateAdd": _obj({"startDate", "unit", "amount"}, {"timezone"}, "dates", _check_date_add),
    "$dateSubtract": _obj({"startDate", "unit", "amount"}, {"timezone"}, "dates", _check_date_add),
    "$dateDiff": _obj({"startDate", "endDate", "unit"}, {"timezone", "startOfWeek"}, "dates", _check_date_common),
    **{op: Spec("date_part", family="dates") for op in (
        "$year", "$month", "$dayOfMonth", "$dayOfWeek", "$dayOfYear", "$hour", "$minute", "$second",
        "$millisecond", "$week", "$isoWeek", "$isoWeekYear", "$isoDayOfWeek")},
    "$dateToParts": _obj({"date"}, {"timezone", "iso8601"}, "dates", _check_date_common),
    "$dateFromParts": _obj((), {"year", "month", "day", "hour", "minute", "second", "millisecond",
                                "isoWeekYear", "isoWeek", "isoDayOfWeek", "timezone"}, "dates",
                           _check_date_from_parts),
    # types
    "$convert": _obj({"input", "to"}, {"onError", "onNull", "format", "byteOrder"}, "types", _check_convert),
    **{op: _list(1, 1, "types") for op in ("$toInt", "$toLong", "$toDouble", "$toDecimal", "$toString",
                                           "$toBool", "$toObjectId", "$type", "$isNumber", "$binarySize",
                                           "$tsSecond", "$tsIncrement", "$toUUID",
                                           "$toObject", "$toArray",
                                           "$toHashedIndexKey", "$bsonSize")},
    # arrays
    "$size": _list(1, 1, "arrays"), "$arrayElemAt": _list(2, 2, "arrays"),
    "$first": _list(1, 1, "arrays"), "$last": _list(1, 1, "arrays"), "$in": _list(2, 2, "arrays"),
    "$filter": _obj({"input", "cond"}, {"as", "limit"}, "arrays"),
    "$map": _obj({"input", "in"}, {"as"}, "arrays"),
    "$reduce": _obj({"input", "initialValue", "in"}, (), "arrays"),
    "$concatArrays": _list(0, N, "arrays"), "$slice": _list(2, 3, "arrays"),
    "$reverseArray": _list(1, 1, "arrays"), "$isArray": _list(1, 1, "arrays"),
    "$range": _list(2, 3, "arrays", _check_range), "$indexOfArray": _list(2, 4, "arrays"),
    "$arrayToObject": _list(1, 1, "arrays"), "$objectToArray": _list(1, 1, "arrays"),
    "$zip": _obj({"inputs"}, {"useLongestLength", "defaults"}, "arrays"),
    "$sum": _list(0, N, "arrays"), "$avg": _list(0, N, "arrays"), "$min": _list(0, N, "arrays"),
    "$max": _list(0, N, "arrays"),
    # sets
    "$setUnion": _list(0, N, "sets"), "$setIntersection": _list(0, N, "sets"),
    "$setDifference": _list(2, 2, "sets"), "$setEquals": _list(2, N, "sets"),
    "$setIsSubset": _list(2, 2, "sets"), "$allElementsTrue": _list(1, 1, "sets"),
    "$anyElementTrue": _list(1, 1, "sets"),
    # ranking and statistics over arrays
    "$sortArray": _obj({"input", "sortBy"}, (), "array_stats", _check_sort_by),
    **{op: _obj({"input", "n"}, (), "array_stats") for op in ("$firstN", "$lastN", "$maxN", "$minN")},
    "$median": _obj({"input", "method"}, (), "array_stats", _check_method),
    "$percentile": _obj({"input", "p", "method"}, (), "array_stats", _check_percentile),
    "$stdDevPop": _list(0, N, "array_stats"), "$stdDevSamp": _list(0, N, "array_stats"),
    # trigonometry
    **{op: _list(1, 1, "trig") for op in (
        "$sin", "$cos", "$tan", "$asin", "$acos", "$atan", "$sinh", "$cosh", "$tanh", "$asinh", "$acosh",
        "$atanh", "$degreesToRadians", "$radiansToDegrees")},
    "$atan2": _list(2, 2, "trig"),
    # bits
    **{op: _list(0, N, "bits") for op in ("$bitAnd", "$bitOr", "$bitXor")},
    "$bitNot": _list(1, 1, "bits"),
    # objects
    "$mergeObjects": _list(0, N, "objects"),
    "$getField": Spec("get_field", family="objects", check=_check_get_field),
    "$setField": _obj({"field", "input", "value"}, (), "objects", _check_get_field),
    "$unsetField": _obj({"field", "input"}, (), "objects", _check_get_field),
    # variables, literals, metadata
    "$let": _obj({"vars", "in"}, (), "variables"),
    "$literal": Spec("any", family="literal"),
    "$meta": Spec("string", family="meta", check=_check_meta),
    # replay-stable random values
    "$rand": _obj((), (), "rand"), "$createObjectId": _obj((), (), "rand"),
    # digests
    "$hash": _obj({"input", "algorithm"}, (), "hashing", _check_hash),
    "$hexHash": _obj({"input", "algorithm"}, (), "hashing", _check_hash),
}

#: real MongoDB expression operators headrace does not implement (yet)
NOT_SUPPORTED = frozenset({
    # trigonometry and angles
    "$sin", "$cos", "$tan", "$asin", "$acos", "$atan", "$atan2", "$sinh", "$cosh", "$tanh",
    "$asinh", "$acosh", "$atanh", "$degreesToRadians", "$radiansToDegrees",
    # sets
    "$setUnion", "$setIntersection", "$setDifference", "$setEquals", "$setIsSubset",
    "$allElementsTrue", "$anyElementTrue",
    # arrays and n-ary accumulators as expressions
    "$sortArray", "$maxN", "$minN", "$firstN", "$lastN", "$topN", "$bottomN", "$top", "$bottom",
    "$median", "$percentile", "$stdDevPop", "$stdDevSamp",
    # strings and bytes
    "$indexOfBytes", "$toUUID",
    # bits, sizes, misc
    "$bitAnd", "$bitOr", "$bitXor", "$bitNot", "$binarySize", "$bsonSize", "$rand", "$function",
    "$accumulator", "$unsetField", "$tsIncrement", "$tsSecond", "$toHashedIndexKey",
    "$createObjectId", "$sigmoid", "$hash", "$toArray", "$toObject",
    # queryable encryption
    "$encStrStartsWith", "$encStrEndsWith", "$encStrContains", "$encStrNormalizedEq",
}) - frozenset(OPERATORS)

#: accumulator- or window-only names: real, but not expressions
_NOT_EXPRESSIONS = frozenset({
    "$push", "$addToSet", "$count", "$covariancePop", "$covarianceSamp", "$derivative",
    "$integral", "$expMovingAvg", "$shift", "$rank", "$denseRank", "$documentNumber", "$locf",
    "$linearFill",
})

# --------------------------------------------------------------------------------- validation

_VAR_NAME = re.compile(r"^[a-z\u0080-\U0010ffff][A-Za-z0-9_\u0080-\U0010ffff]*$")


def _join(path: str, key: Any) -> str:
    return f"{path}.{key}" if path else str(key)


def _check_field_path(s: str, path: str) -> None:
    body = s[1:]
    if not body:
        raise PipelineError("EXPR_INVALID_FIELD_PATH", "'$' by itself is not a valid field path",
                            path=path, expected="a field path such as \"$a.b\"", found=s)
    for part in body.split("."):
        if not part:
            raise PipelineError("EXPR_INVALID_FIELD_PATH", "field path components cannot be empty",
                                path=path, expected="a field path such as \"$a.b\"", found=s)
        if part.startswith("$"):
            raise PipelineError("EXPR_INVALID_FIELD_PATH", "field path components cannot start with '$'",
                                path=path, expected="a field path such as \"$a.b\"", found=s)


def _check_variable(s: str, path: str, variables: frozenset[str]) -> None:
    body = s[2:]
    name, _, rest = body.partition(".")
    if not name:
        raise PipelineError("EXPR_INVALID_FIELD_PATH", "empty variable name", path=path,
                            expected="a variable such as \"$$ROOT\" or \"$$x\"", found=s)
    if rest:
        _check_field_path("$" + rest, path)
    if name in SYSTEM_VARIABLES or name in variables:
        return
    if name in _SYSTEM_NOT_YET:
        raise NotYet("EXPR_NOT_SUPPORTED_YET", f"system variable $${name} is not supported yet", path=path,
                     expected="one of $$ROOT, $$CURRENT, $$NOW, $$REMOVE or a defined variable", found=s)
    raise PipelineError("EXPR_UNDEFINED_VARIABLE", f"use of undefined variable: {name}", path=path,
                        expected="$$ROOT, $$CURRENT, $$NOW, $$REMOVE or a variable defined by $let, "
                                 "$map, $filter or $reduce", found=s)


def _check_var_name(name: Any, path: str) -> str:
    if not isinstance(name, str) or not _VAR_NAME.match(name):
        raise PipelineError("EXPR_BAD_ARGS", "invalid variable name", path=path,
                            expected="a name starting with a lowercase letter (letters, digits, _)",
                            found=name)
    return name


def validate_expression(expr: Any, path: str = "", variables: Iterable[str] = ()) -> None:
    """Validate an aggregation expression; raise :class:`PipelineError` on the first problem.

    ``variables``: user variable names in scope (without ``$$``), e.g. from an enclosing stage.
    """
    _validate(expr, path, frozenset(variables))


def _validate(expr: Any, path: str, vs: frozenset[str]) -> None:
    if isinstance(expr, str):
        if expr.startswith("$$"):
            _check_variable(expr, path, vs)
        elif expr.startswith("$"):
            _check_field_path(expr, path)
        return
    if isinstance(expr, list):
        for i, x in enumerate(expr):
            _validate(x, _join(path, i), vs)
        return
    if not isinstance(expr, dict):
        return
    op_keys = [k for k in expr if isinstance(k, str) and k.startswith("$")]
    if len(expr) == 1 and op_keys == ["$regularExpression"]:
        return  # an Extended JSON regular expression literal
    if op_keys:
        if len(expr) != 1:
            raise PipelineError(
                "EXPR_INVALID_OBJECT",
                "an expression object with an operator must have exactly one field",
                path=path, expected=f"{{{op_keys[0]}: ...}} alone", found=list(expr))
        op = op_keys[0]
        _validate_operator(op, expr[op], _join(path, op), vs)
        return
    for k, x in expr.items():
        if "." in k:
            raise PipelineError("EXPR_INVALID_OBJECT", "field names in an expression object cannot contain '.'",
                                path=_join(path, k), expected="a field name without '.'", found=k)
        if not k:
            raise PipelineError("EXPR_INVALID_OBJECT", "field names cannot be empty", path=path,
                                expected="a non-empty field name", found=k)
        _validate(x, _join(path, k), vs)


def _validate_operator(op: str, arg: Any, path: str, vs: frozenset[str]) -> None:
    spec = OPERATORS.get(op)
    if spec is None:
        if op in NOT_SUPPORTED:
            raise NotYet("EXPR_NOT_SUPPORTED_YET", f"expression operator {op} is not supported yet",
                         path=path, expected="a supported expression operator", found=op)
        if op in _NOT_EXPRESSIONS:
            raise PipelineError("EXPR_UNKNOWN_OPERATOR",
                                f"{op} is an accumulator or window operator, not an expression",
                                path=path, expected="an expression operator", found=op)
        raise PipelineError("EXPR_UNKNOWN_OPERATOR", f"unknown expression operator {op}", path=path,
                            expected="an expression operator such as $add, $concat, $cond", found=op)
    if vs and _runs_in_python(op, arg):
        raise NotYet("EXPR_NOT_SUPPORTED_YET", f"{_python_name(op)} inside $map/$filter/$reduce/$let is not "
                     "supported yet (it runs in Python, outside the lambdas those are built with)", path=path,
                     expected="an operator that runs in Spark here", found=op)
    form = spec.form
    if form == "any":
        return
    if form == "string":
        spec.check(arg, path)
        return
    if form == "list":
        ops = operands(arg)
        lo, hi = spec.nargs
        if len(ops) < lo or (hi is not None and len(ops) > hi):
            want = (f"{lo} argument" + ("s" if lo != 1 else "")) if lo == hi else \
                (f"at least {lo} arguments" if hi is None else f"{lo} to {hi} arguments")
            raise _bad(path, f"{op} takes {want}, got {len(ops)}", f"{want} in an array", arg)
        for i, x in enumerate(ops):
            _validate(x, _join(path, i) if isinstance(arg, list) else path, vs)
        if spec.check:
            spec.check(arg, path)
        return
    if form == "list_or_object":  # $cond
        if isinstance(arg, list):
            if len(arg) != 3:
                raise _bad(path, f"$cond takes 3 arguments, got {len(arg)}", "[if, then, else]", arg)
            for i, x in enumerate(arg):
                _validate(x, _join(path, i), vs)
            return
        if not isinstance(arg, dict):
            raise _bad(path, "$cond needs an array or an object", "[if, then, else] or {if, then, else}", arg)
        _named(op, arg, spec, path)
        for k in ("if", "then", "else"):
            _validate(arg[k], _join(path, k), vs)
        return
    if form == "date_part":
        if isinstance(arg, list):
            if len(arg) != 1:
                raise _bad(path, f"{op} takes 1 argument, got {len(arg)}", "a date expression", arg)
            _validate(arg[0], _join(path, 0), vs)
            return
        if isinstance(arg, dict) and "date" in arg and not any(k.startswith("$") for k in arg):
            extra = set(arg) - {"date", "timezone"}
            if extra:
                raise _bad(_join(path, sorted(extra)[0]), f"unknown {op} option", "date and timezone", sorted(extra)[0])
            _validate(arg["date"], _join(path, "date"), vs)
            if "timezone" in arg:
                _validate(arg["timezone"], _join(path, "timezone"), vs)
                _check_timezone(arg["timezone"], _join(path, "timezone"))
            return
        _validate(arg, path, vs)
        return
    if form == "get_field":
        if isinstance(arg, dict) and not (len(arg) == 1 and next(iter(arg)).startswith("$")):
            extra = set(arg) - {"field", "input"}
            if extra:
                raise _bad(_join(path, sorted(extra)[0]), "unknown $getField option", "field and input",
                           sorted(extra)[0])
            if "field" not in arg:
                raise _bad(path, "$getField needs 'field'", "{field: <string>, input: <expression>}", arg)
            spec.check(arg, path)
            if "input" in arg:
                _validate(arg["input"], _join(path, "input"), vs)
            return
        spec.check(arg, path)
        return
    # object form
    if not isinstance(arg, dict):
        raise _bad(path, f"{op} needs an object of named arguments",
                   "{" + ", ".join(sorted(spec.required) + [k + "?" for k in sorted(spec.optional)]) + "}", arg)
    _named(op, arg, spec, path)
    if op in ("$map", "$filter"):
        name = _check_var_name(arg.get("as", "this"), _join(path, "as"))
        _validate(arg["input"], _join(path, "input"), vs)
        if "limit" in arg:
            _validate(arg["limit"], _join(path, "limit"), vs)
        body = "in" if op == "$map" else "cond"
        _validate(arg[body], _join(path, body), vs | {name})
    elif op == "$reduce":
        _validate(arg["input"], _join(path, "input"), vs)
        _validate(arg["initialValue"], _join(path, "initialValue"), vs)
        _validate(arg["in"], _join(path, "in"), vs | {"this", "value"})
    elif op == "$let":
        vars_ = arg["vars"]
        if not isinstance(vars_, dict):
            raise _bad(_join(path, "vars"), "$let vars must be an object", "{name: <expression>, ...}", vars_)
        for k, x in vars_.items():
            _check_var_name(k, _join(path, f"vars.{k}"))
            _validate(x, _join(path, f"vars.{k}"), vs)
        _validate(arg["in"], _join(path, "in"), vs | set(vars_))
    elif op == "$switch":
        spec.check(arg, path)
        for i, b in enumerate(arg["branches"]):
            _validate(b["case"], _join(path, f"branches.{i}.case"), vs)
            _validate(b["then"], _join(path, f"branches.{i}.then"), vs)
        if "default" in arg:
            _validate(arg["default"], _join(path, "default"), vs)
        return
    elif op == "$zip":
        inputs = arg["inputs"]
        if not isinstance(inputs, list):
            raise _bad(_join(path, "inputs"), "$zip inputs must be an array", "an array of array expressions", inputs)
        _validate(inputs, _join(path, "inputs"), vs)
        if "useLongestLength" in arg:
            ok, v = _const_value(arg["useLongestLength"])
            if not ok or not isinstance(v, bool):
                raise _bad(_join(path, "useLongestLength"), "useLongestLength must be a boolean", "true or false", v)
        if "defaults" in arg:
            if not arg.get("useLongestLength"):
                raise _bad(_join(path, "defaults"), "defaults need useLongestLength: true",
                           "useLongestLength: true with defaults", arg["defaults"])
            _validate(arg["defaults"], _join(path, "defaults"), vs)
    elif op in ("$setField", "$unsetField"):
        spec.check(arg, path)
        _validate(arg["input"], _join(path, "input"), vs)
        if "value" in arg:
            _validate(arg["value"], _join(path, "value"), vs)
        return
    else:
        for k, x in arg.items():
            if op == "$sortArray" and k == "sortBy":
                continue  # a sort specification (field paths may be dotted), checked by _check_sort_by
            if op in ("$dateToParts",) and k == "iso8601":
                ok, v = _const_value(x)
                if ok and not isinstance(v, bool):
                    raise _bad(_join(path, k), "iso8601 must be a boolean", "true or false", v)
            _validate(x, _join(path, k), vs)
    if spec.check and op not in ("$switch", "$setField", "$unsetField"):
        spec.check(arg, path)


def _named(op: str, arg: dict, spec: Spec, path: str) -> None:
    allowed = spec.required | spec.optional
    for k in arg:
        if k not in allowed:
            raise _bad(_join(path, k), f"unknown argument to {op}: {k}",
                       "one of " + ", ".join(sorted(allowed)) if allowed else "an empty object {}", k)
    missing = sorted(spec.required - set(arg))
    if missing:
        raise _bad(path, f"{op} is missing required argument '{missing[0]}'",
                   "{" + ", ".join(sorted(spec.required)) + "}", sorted(arg))


#: the stages that compute a Python-run operator in a hoisted column, and how messages name them
PYTHON_OPERATOR_STAGES = frozenset({"$project", "$addFields", "$set", "$replaceRoot", "$replaceWith", "$match"})
PYTHON_OPERATOR_PLACES = "$project, $addFields/$set, $replaceRoot/$replaceWith and $match"


def _runs_in_python(op: str, arg: Any) -> bool:
    """Operators computed in Python as a column of their own (:mod:`headrace.spark.expr.python_ops`)."""
    return op == "$bsonSize" or (op in ("$hash", "$hexHash") and isinstance(arg, dict)
                                 and arg.get("algorithm") == "xxh64")


def _python_name(op: str) -> str:
    return op if op == "$bsonSize" else f"{op} with 'xxh64'"


def python_operator_path(value: Any, path: str = "") -> str | None:
    """The path of the first operator in ``value`` (a stage argument, any JSON) that runs in
    Python as a column of its own (``$bsonSize``, ``$hash``/``$hexHash`` with ``xxh64``), or None. Such an
    operator needs a stage that hoists values (:data:`PYTHON_OPERATOR_STAGES`):
    :func:`headrace.spec.parse.parse_pipeline` refuses it anywhere else."""
    if isinstance(value, dict):
        for k, x in value.items():
            p = _join(path, k)
            if _runs_in_python(k, x):
                return p
            found = python_operator_path(x, p)
            if found:
                return found
    elif isinstance(value, list):
        for i, x in enumerate(value):
            found = python_operator_path(x, _join(path, i))
            if found:
                return found
    return None
