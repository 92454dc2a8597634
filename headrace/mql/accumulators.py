"""Validation of the window-only stages ``$group``, ``$sort``, ``$limit`` and ``$count`` (pure Python).

One function per stage, each ``validate_<stage>(spec, path)``: ``spec`` is the stage's argument as
written, ``path`` the field path of that argument in the pipeline (e.g.
``"pipeline.0.$group"``); errors are :class:`~headrace.errors.PipelineError` whose ``path`` starts
with ``path`` (the caller places them at the outer stage with ``PipelineError.at``). Expressions
inside the stages are validated with ``headrace.mql.expressions.validate_expression``.

Rules (MongoDB's, for ``$group`` inside a window):

``$group``: an object; ``_id`` is required (``GROUP_ID_REQUIRED``) and may be any expression. Every
other field is an output field name (no ``.``, not starting with ``$``: ``GROUP_FIELD_NAME``) whose
value is an object holding exactly one accumulator (``GROUP_FIELD_NOT_ACCUMULATOR``). Accumulator
names: those in :data:`ACCUMULATORS` are supported; real MongoDB accumulators and window functions
in :data:`NOT_SUPPORTED_YET` raise :class:`~headrace.errors.NotSupportedYet` with code
``ACC_NOT_SUPPORTED_YET``; anything else is ``ACC_UNKNOWN``. Argument shapes (``ACC_BAD_ARGS``,
saying what was expected and what was found):

- unary (``$sum $avg $min $max $first $last $push $addToSet $mergeObjects $stdDevPop
  $stdDevSamp``): one expression; an array literal is refused (MongoDB: "is a unary operator").
- ``$count``: ``{}``.
- ``$top`` / ``$bottom``: ``{sortBy, output}``; ``$topN`` / ``$bottomN``: ``{n, sortBy, output}``;
  ``$firstN`` / ``$lastN`` / ``$maxN`` / ``$minN``: ``{input, n}``. No other fields. ``sortBy`` is a non-empty object of
  field paths to ``1`` or ``-1``. ``n`` is an expression; a constant ``n`` must be a positive
  integer (an integral double such as ``3.0`` is accepted). A non-constant ``n`` is evaluated per
  group against the group key (see ``headrace.spark.accumulators``).
- ``$percentile``: ``{input, p, method}``: ``p`` a non-empty array of constant numbers in
  ``[0, 1]``, ``method`` ``"approximate"``. ``$median``: ``{input, method}``.

``$sort``: a non-empty object of field paths to ``1`` or ``-1`` (``SORT_INVALID``).
``$limit``: a positive integer (``LIMIT_INVALID``).
``$count``: a non-empty string, not starting with ``$``, without ``.`` (``COUNT_INVALID``).
"""
from __future__ import annotations

import decimal
from typing import Any

from ..errors import NotSupportedYet, PipelineError
from .expressions import is_constant, validate_expression

UNARY = ("$sum", "$avg", "$min", "$max", "$first", "$last", "$push", "$addToSet", "$mergeObjects",
         "$stdDevPop", "$stdDevSamp")
#: Supported accumulator -> the fields of its object argument (None: one expression; () : ``{}``).
ACCUMULATORS: dict[str, tuple[str, ...] | None] = {
    **{name: None for name in UNARY},
    "$count": (),
    "$top": ("sortBy", "output"),
    "$bottom": ("sortBy", "output"),
    "$topN": ("n", "sortBy", "output"),
    "$bottomN": ("n", "sortBy", "output"),
    "$firstN": ("input", "n"),
    "$lastN": ("input", "n"),
    "$maxN": ("input", "n"),
    "$minN": ("input", "n"),
    "$percentile": ("input", "p", "method"),
    "$median": ("input", "method"),
}
#: Real MongoDB ``$group`` accumulators and window functions headrace does not support yet.
NOT_SUPPORTED_YET = ("$accumulator", "$concatArrays", "$setUnion", "$covariancePop",
                     "$covarianceSamp", "$derivative", "$integral", "$expMovingAvg", "$rank", "$denseRank",
                     "$documentNumber", "$shift", "$locf", "$linearFill")
PERCENTILE_METHODS = ("approximate",)


def _err(code: str, msg: str, path: str, expected: str | None = None, found: Any = ...) -> PipelineError:
    return PipelineError(code, msg, path=path, expected=expected, found=found)


def _join(path: str, *parts: Any) -> str:
    return ".".join([p for p in [path, *map(str, parts)] if p])


def _type(v: Any) -> str:
    if isinstance(v, bool):
        return "bool"
    return {dict: "object", list: "array", str: "string", int: "int", float: "double",
            type(None): "null"}.get(type(v), type(v).__name__)


def _expression(v: Any, path: str) -> None:
    validate_expression(v, path)


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float, decimal.Decimal)) and not isinstance(v, bool)


def constant_n(v: Any) -> int | None:
    """``n`` as an int when it is a constant positive integer, else None (caller decides)."""
    if _is_number(v):
        try:
            if v == int(v) and int(v) > 0:
                return int(v)
        except (ValueError, OverflowError):
            return None
    return None


def literal(v: Any) -> Any:
    """The value of a ``{$literal: v}`` wrapper, else ``v`` itself."""
    return v["$literal"] if isinstance(v, dict) and len(v) == 1 and "$literal" in v else v


def constant_n_of(v: Any) -> int | None:
    """``n`` of ``$topN`` & co. as an int when written as a constant positive integer."""
    return constant_n(literal(v)) if is_constant(v) else None


# ---------------------------------------------------------------- $sort / sortBy

def parse_sort_spec(spec: Any, path: str, code: str = "SORT_INVALID") -> list[tuple[str, int]]:
    """A ``$sort`` / ``sortBy`` object as ``[(field_path, 1 | -1), ...]``, or raise ``code``."""
    if not isinstance(spec, dict) or not spec:
        raise _err(code, "must be a non-empty object of field paths to 1 or -1", path,
                   expected="an object such as {\"field\": 1}", found=spec)
    out = []
    for k, d in spec.items():
        p = _join(path, k)
        if not isinstance(k, str) or not k or k.startswith("$") or any(not s for s in k.split(".")):
            raise _err(code, f"invalid sort field name {k!r}", p, expected="a field path", found=k)
        if isinstance(d, dict) and "$meta" in d:
            raise NotSupportedYet("SORT_META_NOT_SUPPORTED_YET", "sorting by $meta is not supported yet",
                                  path=p)
        if not _is_number(d) or d not in (1, -1):
            raise _err(code, "sort order must be 1 (ascending) or -1 (descending)", p,
                       expected="1 or -1", found=d)
        out.append((k, int(d)))
    return out


def validate_sort(spec: Any, path: str = "$sort") -> None:
    """Validate a ``$sort`` stage argument."""
    parse_sort_spec(spec, path)


# ---------------------------------------------------------------- $limit / $count

def validate_limit(spec: Any, path: str = "$limit") -> None:
    """Validate a ``$limit`` stage argument: a positive integer (``3.0`` is accepted)."""
    n = constant_n(spec)
    if n is None or isinstance(spec, str):
        raise _err("LIMIT_INVALID", "the limit must be a positive integer", path,
                   expected="a positive integer", found=spec)
    if n >= 2**63:
        raise _err("LIMIT_INVALID", "the limit must fit a 64-bit integer", path,
                   expected="a positive 64-bit integer", found=spec)


def validate_count(spec: Any, path: str = "$count") -> None:
    """Validate a ``$count`` stage argument: the output field name."""
    if not isinstance(spec, str) or not spec:
        raise _err("COUNT_INVALID", "the count field must be a non-empty string", path,
                   expected="a field name", found=spec)
    if spec.startswith("$"):
        raise _err("COUNT_INVALID", "the count field must not be a '$'-prefixed path", path,
                   expected="a field name not starting with '$'", found=spec)
    if "." in spec or "\x00" in spec:
        raise _err("COUNT_INVALID", "the count field must not contain '.'", path,
                   expected="a field name without '.'", found=spec)


# ---------------------------------------------------------------- $group

def validate_group(spec: Any, path: str = "$group") -> None:
    """Validate a ``$group`` stage argument (see the module docstring for the rules)."""
    if not isinstance(spec, dict):
        raise _err("TYPE_MISMATCH", "$group needs an object", path,
                   expected="an object {_id: <expression>, <field>: {<accumulator>: ...}}", found=spec)
    if "_id" not in spec:
        raise _err("GROUP_ID_REQUIRED", "a group specification must include an _id", _join(path, "_id"),
                   expected="an _id expression (null for one group)", found=sorted(spec))
    _expression(spec["_id"], _join(path, "_id"))
    for field, acc in spec.items():
        if field == "_id":
            continue
        p = _join(path, field)
        if not isinstance(field, str) or not field or field.startswith("$") or "." in field:
            raise _err("GROUP_FIELD_NAME", f"invalid output field name {field!r}", p,
                       expected="a field name without '.' and not starting with '$'", found=field)
        if not isinstance(acc, dict) or len(acc) != 1:
            raise _err("GROUP_FIELD_NOT_ACCUMULATOR", f"the field '{field}' must be an accumulator object", p,
                       expected="an object with exactly one accumulator, e.g. {\"$sum\": 1}", found=acc)
        (name, arg), = acc.items()
        validate_accumulator(name, arg, _join(p, name))


def validate_accumulator(name: str, arg: Any, path: str) -> None:
    """Validate one ``{name: arg}`` accumulator at ``path`` (the path of ``arg``)."""
    if name not in ACCUMULATORS:
        if name in NOT_SUPPORTED_YET:
            raise NotSupportedYet("ACC_NOT_SUPPORTED_YET", f"accumulator {name} is not supported yet", path=path)
        raise _err("ACC_UNKNOWN", f"unknown group accumulator {name}", path,
                   expected="one of " + " ".join(ACCUMULATORS), found=name)
    fields = ACCUMULATORS[name]
    if fields is None:
        if isinstance(arg, list):
            raise _err("ACC_BAD_ARGS", f"the {name} accumulator is a unary operator", path,
                       expected="one expression (not an array of arguments)", found=arg)
        _expression(arg, path)
        return
    if name == "$count":
        if arg != {}:
            raise _err("ACC_BAD_ARGS", "$count takes no arguments", path, expected="{}", found=arg)
        return
    shape = "{" + ", ".join(fields) + "}"
    if not isinstance(arg, dict):
        raise _err("ACC_BAD_ARGS", f"{name} needs an object argument", path, expected=shape, found=arg)
    for k in arg:
        if k not in fields:
            raise _err("ACC_BAD_ARGS", f"unknown argument to {name} '{k}'", _join(path, k),
                       expected=shape, found=sorted(arg))
    for k in fields:
        if k not in arg:
            raise _err("ACC_BAD_ARGS", f"{name} needs '{k}'", _join(path, k), expected=shape, found=sorted(arg))
    for k in fields:
        v, p = arg[k], _join(path, k)
        if k == "sortBy":
            parse_sort_spec(v, p, code="ACC_BAD_ARGS")
        elif k == "n":
            _validate_n(v, p)
        elif k == "p":
            _validate_p(v, p)
        elif k == "method":
            if v not in PERCENTILE_METHODS:
                raise _err("ACC_BAD_ARGS", f"{name} 'method' must be 'approximate'", p,
                           expected="'approximate'", found=v)
        else:  # output / input
            _expression(v, p)


def _validate_n(v: Any, path: str) -> None:
    if is_constant(v):
        lit = literal(v)
        if not _is_number(lit):
            raise _err("ACC_BAD_ARGS", "'n' must be of integral type", path,
                       expected="a positive integer", found=lit)
        if constant_n(lit) is None:
            raise _err("ACC_BAD_ARGS", "'n' must be a positive integer", path,
                       expected="a positive integer", found=lit)
        return
    _expression(v, path)


def _validate_p(v: Any, path: str) -> None:
    v = literal(v)
    if not isinstance(v, list) or not v:
        raise _err("ACC_BAD_ARGS", "'p' must be a non-empty array of numbers in [0.0, 1.0]", path,
                   expected="an array of numbers from 0.0 to 1.0", found=v)
    for i, e in enumerate(v):
        e = literal(e)
        if not _is_number(e) or not (0 <= e <= 1):
            raise _err("ACC_BAD_ARGS", "'p' must be a non-empty array of numbers in [0.0, 1.0]", _join(path, i),
                       expected="a constant number from 0.0 to 1.0", found=e)


def percentiles(arg: dict) -> list[float]:
    """The validated ``p`` of a ``$percentile`` argument as floats."""
    return [float(literal(e)) for e in literal(arg["p"])]
