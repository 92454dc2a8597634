"""The validation walk of aggregation expressions: :func:`validate_expression` checks field
paths, variables in scope, expression objects and each operator's arguments against its entry
in :data:`~.expr_operators.OPERATORS`; :func:`python_operator_path` finds the operators that run
in Python as a column of their own, which only some stages allow. Part of
:mod:`headrace.mql.expressions`, which re-exports it (pure Python).
"""
from __future__ import annotations

import re
from typing import Any, Iterable

from ..errors import PipelineError
from .expr_spec import SYSTEM_VARIABLES, Spec, _SYSTEM_NOT_YET, _bad, _const_value, operands
from .expr_checks import NotYet, _check_timezone
from .expr_operators import NOT_SUPPORTED, OPERATORS, _NOT_EXPRESSIONS


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
                if ok and v is not None and not isinstance(v, bool):       # null: the result is null
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
