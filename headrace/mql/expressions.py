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
non-array argument is a one-element list).
"""
from __future__ import annotations

import decimal
import re
from dataclasses import dataclass
from typing import Any, Callable, Iterable

from ..errors import NotSupportedYet, PipelineError
from .regex import RegexError, compile_regex, regex_literal, translate_regex

__all__ = [
    "validate_expression", "operands", "OPERATORS", "NOT_SUPPORTED", "SYSTEM_VARIABLES",
    "Spec", "is_field_path", "is_variable", "valid_timezone", "DATE_UNITS", "CONVERT_TYPES",
    "META_NAMES", "is_constant",
]

# --------------------------------------------------------------------------------------- specs


@dataclass(frozen=True)
class Spec:
    """How an operator takes its argument.

    ``form``: ``"list"`` (positional; ``nargs`` = (min, max), max None = any; a single
    non-array argument counts as one), ``"object"`` (named; ``required`` / ``optional``),
    ``"list_or_object"`` ($cond), ``"date_part"`` (a date, ``[date]`` or
    ``{date, timezone}``), ``"any"`` ($literal), ``"string"`` ($meta).
    ``check``: extra validation of constant arguments, ``fn(arg, path)``.
    """

    form: str
    nargs: tuple[int, int | None] = (1, 1)
    required: frozenset[str] = frozenset()
    optional: frozenset[str] = frozenset()
    check: Callable[[Any, str], None] | None = None
    family: str = ""


def _list(lo: int, hi: int | None, family: str, check=None) -> Spec:
    return Spec("list", (lo, hi), check=check, family=family)


def _obj(required: Iterable[str], optional: Iterable[str], family: str, check=None) -> Spec:
    return Spec("object", required=frozenset(required), optional=frozenset(optional), check=check, family=family)


DATE_UNITS = ("year", "quarter", "month", "week", "day", "hour", "minute", "second", "millisecond")
_DATE_UNIT_ALIASES = {"yr": "year", "y": "year", "mon": "month", "wk": "week", "w": "week", "d": "day",
                      "hr": "hour", "h": "hour", "min": "minute", "s": "second", "ms": "millisecond",
                      "q": "quarter", "qtr": "quarter"}
_WEEKDAYS = ("monday", "mon", "tuesday", "tue", "wednesday", "wed", "thursday", "thu", "friday", "fri",
             "saturday", "sat", "sunday", "sun")
#: ``$convert`` target types by name and by BSON type number
CONVERT_TYPES = {"double": "double", "string": "string", "objectId": "objectId", "bool": "bool",
                 "date": "date", "int": "int", "long": "long", "decimal": "decimal",
                 "object": "object", "array": "array",
                 1: "double", 2: "string", 3: "object", 4: "array", 7: "objectId", 8: "bool", 9: "date",
                 16: "int", 18: "long", 19: "decimal"}
#: real ``$convert`` targets headrace does not convert to yet
_CONVERT_NOT_YET = {"binData": 5, "null": 10, "regex": 11, "timestamp": 17, "minKey": -1, "maxKey": 127,
                    "javascript": 13, "symbol": 14, "undefined": 6}
META_NAMES_EXACT = ("stream.window.start", "stream.window.end")
META_PREFIXES = ("stream.source.",)
META_NAMES = META_NAMES_EXACT + tuple(p + "*" for p in META_PREFIXES)
_META_NOT_YET = ("textScore", "indexKey", "searchScore", "searchHighlights", "searchScoreDetails",
                 "vectorSearchScore", "score", "scoreDetails", "searchSequenceToken", "sortKey",
                 "geoNearDistance", "geoNearPoint", "randVal", "recordId", "timeseriesBucketMinTime",
                 "timeseriesBucketMaxTime", "stream", "stream.source", "stream.window")
SYSTEM_VARIABLES = frozenset({"ROOT", "CURRENT", "NOW", "REMOVE"})
_SYSTEM_NOT_YET = frozenset({"CLUSTER_TIME", "USER_ROLES", "SEARCH_META", "DESCEND", "PRUNE", "KEEP"})

# --------------------------------------------------------------------------------- constants


def _is_num(v: Any) -> bool:
    return isinstance(v, (int, float, decimal.Decimal)) and not isinstance(v, bool)


def is_field_path(v: Any) -> bool:
    return isinstance(v, str) and v.startswith("$") and not v.startswith("$$")


def is_variable(v: Any) -> bool:
    return isinstance(v, str) and v.startswith("$$")


def is_constant(v: Any) -> bool:
    """True when ``v`` has no field path, variable or operator (a plain literal)."""
    if isinstance(v, str):
        return not v.startswith("$")
    if isinstance(v, list):
        return all(is_constant(x) for x in v)
    if isinstance(v, dict):
        if len(v) == 1 and next(iter(v)) in ("$literal", "$regularExpression"):
            return True
        return all(not k.startswith("$") and is_constant(x) for k, x in v.items())
    return True


def _const_value(v: Any) -> tuple[bool, Any]:
    """(True, value) when v is a literal constant (or ``{$literal: c}``), else (False, None)."""
    if isinstance(v, dict) and len(v) == 1 and "$literal" in v:
        return True, v["$literal"]
    if is_constant(v):
        return True, v
    return False, None


_OFFSET = re.compile(r"^[+-](\d{2})(:?(\d{2}))?$")


def valid_timezone(tz: str) -> bool:
    """An Olson name, ``"UTC"``/``"GMT"`` or an offset ``+hh``, ``+hhmm``, ``+hh:mm``."""
    if not isinstance(tz, str) or not tz:
        return False
    m = _OFFSET.match(tz)
    if m:
        return int(m.group(1)) <= 18 and int(m.group(3) or 0) < 60
    try:
        import zoneinfo

        zoneinfo.ZoneInfo(tz)
        return True
    except Exception:
        return False


def operands(arg: Any) -> list:
    """The arguments of a list-form operator (a single non-array argument is one operand)."""
    return arg if isinstance(arg, list) else [arg]


def _bad(path: str, msg: str, expected: str, found: Any = ...) -> PipelineError:
    return PipelineError("EXPR_BAD_ARGS", msg, path=path, expected=expected, found=found)


# --------------------------------------------------------------------------- constant checks


def _check_const(arg: Any, path: str, ok: Callable[[Any], bool], msg: str, expected: str) -> None:
    const, value = _const_value(arg)
    if const and not ok(value):
        raise _bad(path, msg, expected, value)


def _unit_ok(u: Any) -> bool:
    return isinstance(u, str) and u in DATE_UNITS


def _check_timezone(arg: Any, path: str) -> None:
    _check_const(arg, path, lambda t: t is None or valid_timezone(t), "unrecognized time zone",
                 "an Olson time zone name or a UTC offset such as \"+05:30\"")


def _check_date_common(arg: dict, path: str) -> None:
    if "timezone" in arg:
        _check_timezone(arg["timezone"], f"{path}.timezone")
    if "unit" in arg:
        _check_const(arg["unit"], f"{path}.unit", lambda u: u is None or _unit_ok(u), "unknown time unit",
                     "one of " + ", ".join(DATE_UNITS))
    if "startOfWeek" in arg:
        _check_const(arg["startOfWeek"], f"{path}.startOfWeek",
                     lambda s: s is None or (isinstance(s, str) and s.lower() in _WEEKDAYS),
                     "unknown startOfWeek", "a day of the week such as \"monday\" or \"sun\"")


def _check_date_trunc(arg: dict, path: str) -> None:
    _check_date_common(arg, path)
    if "binSize" in arg:
        _check_const(arg["binSize"], f"{path}.binSize",
                     lambda b: b is None or (_is_num(b) and float(b) == int(b) and int(b) > 0),
                     "binSize must be a positive integer", "a positive integer")


def _check_date_add(arg: dict, path: str) -> None:
    _check_date_common(arg, path)
    _check_const(arg["amount"], f"{path}.amount",
                 lambda a: a is None or (_is_num(a) and float(a) == int(a)),
                 "amount must be an integral number", "an integer")


def _check_convert(arg: dict, path: str) -> None:
    const, to = _const_value(arg["to"])
    if not const:
        return
    if isinstance(to, dict):
        raise NotYet("EXPR_NOT_SUPPORTED_YET", "$convert with a 'to' document is not supported yet",
                     path=f"{path}.to", expected="a type name or number", found=to)
    if to in CONVERT_TYPES or (isinstance(to, float) and to in CONVERT_TYPES):
        return
    if to in _CONVERT_NOT_YET or to in _CONVERT_NOT_YET.values():
        raise NotYet("EXPR_NOT_SUPPORTED_YET", f"$convert to {to!r} is not supported yet", path=f"{path}.to",
                     expected="one of " + ", ".join(k for k in CONVERT_TYPES if isinstance(k, str)), found=to)
    raise _bad(f"{path}.to", "unknown $convert target type",
               "one of " + ", ".join(k for k in CONVERT_TYPES if isinstance(k, str)), to)


def _check_regex(arg: dict, path: str) -> None:
    const, rx = _const_value(arg["regex"])
    opts_const, opts = _const_value(arg.get("options", ""))
    if not const or not opts_const:
        return
    lit = regex_literal(rx)
    if lit is not None:
        rx, lit_opts = lit
        if opts and lit_opts:
            raise _bad(f"{path}.options", "options cannot be given both in the regex and in 'options'",
                       "options in one place", opts)
        opts = opts or lit_opts
    if rx is None:
        return
    if not isinstance(rx, str):
        raise _bad(f"{path}.regex", "regex must be a string or a regular expression", "a string", rx)
    if opts is not None and not isinstance(opts, str):
        raise _bad(f"{path}.options", "options must be a string", "a string", opts)
    try:
        translate_regex(rx, opts or "", "java")
        translate_regex(rx, opts or "", "python")
    except RegexError as exc:
        raise _bad(f"{path}.regex", f"invalid regular expression: {exc}", "a valid regular expression", rx) from None
    try:
        compile_regex(rx, opts or "")
    except Exception as exc:  # invalid pattern
        raise _bad(f"{path}.regex", f"invalid regular expression: {exc}", "a valid regular expression", rx) from None


def _check_round(arg: Any, path: str) -> None:
    ops = operands(arg)
    if len(ops) == 2:
        _check_const(ops[1], f"{path}.1",
                     lambda p: p is None or (_is_num(p) and float(p) == int(p) and -20 < int(p) < 100),
                     "place must be an integer between -20 and 100", "an integer in (-20, 100)")


def _check_range(arg: Any, path: str) -> None:
    ops = operands(arg)
    for i, o in enumerate(ops):
        _check_const(o, f"{path}.{i}", lambda x: _is_num(x) and float(x) == int(x),
                     "$range arguments must be integers", "an integer")
    if len(ops) == 3:
        _check_const(ops[2], f"{path}.2", lambda x: x != 0, "$range step cannot be 0", "a non-zero integer")


def _check_meta(arg: Any, path: str) -> None:
    if not isinstance(arg, str):
        raise _bad(path, "$meta needs a metadata name", "a string such as \"stream.window.start\"", arg)
    if arg in META_NAMES_EXACT or any(arg.startswith(p) and len(arg) > len(p) for p in META_PREFIXES):
        return
    if arg in _META_NOT_YET or arg.startswith("stream"):
        raise NotYet("EXPR_NOT_SUPPORTED_YET", f"$meta \"{arg}\" is not supported yet", path=path,
                     expected="one of " + ", ".join(META_NAMES), found=arg)
    raise _bad(path, "unknown $meta name", "one of " + ", ".join(META_NAMES), arg)


def _check_get_field(arg: Any, path: str) -> None:
    named = isinstance(arg, dict) and "field" in arg
    fld = arg["field"] if named else arg
    where = f"{path}.field" if named else path
    const, value = _const_value(fld)
    if not const or (isinstance(fld, str) and fld.startswith("$")):
        raise _bad(where, "'field' must be a constant string", "a string (use $literal for names starting with $)", fld)
    if not isinstance(value, str):
        raise _bad(where, "'field' must be a string", "a string", value)


def _check_const_format(arg: dict, path: str) -> None:
    if "format" in arg and not _const_value(arg["format"])[0]:
        raise NotYet("EXPR_NOT_SUPPORTED_YET", "a format computed per document is not supported yet",
                     path=f"{path}.format", expected="a constant format string", found=arg["format"])


def _check_trunc_date_to_string(arg: dict, path: str) -> None:
    _check_date_common(arg, path)
    _check_const_format(arg, path)
    if "format" in arg:
        _check_const(arg["format"], f"{path}.format", _valid_format, "invalid date format",
                     "a format string with %Y %m %d %H %M %S %L %j %w %u %U %V %G %Z %z %b %B %% ...")


_FORMAT_SPECS = set("dGHjLmMSuVwYzZUbBaAepfyIlCDFnNtxXkr%")


def _valid_format(f: Any) -> bool:
    if f is None:
        return True
    if not isinstance(f, str):
        return False
    i = 0
    while i < len(f):
        if f[i] == "%":
            if i + 1 >= len(f) or f[i + 1] not in "dGHjLmMSuVwYzZUbB%":
                return False
            i += 2
        else:
            i += 1
    return True


def _check_date_from_parts(arg: dict, path: str) -> None:
    iso = {"isoWeekYear", "isoWeek", "isoDayOfWeek"}
    cal = {"year", "month", "day"}
    keys = set(arg)
    if keys & iso and keys & cal:
        raise _bad(path, "$dateFromParts takes calendar or ISO week parts, not both",
                   "either year/month/day or isoWeekYear/isoWeek/isoDayOfWeek", sorted(keys))
    if keys & iso and "isoWeekYear" not in keys:
        raise _bad(path, "$dateFromParts needs 'isoWeekYear'", "an 'isoWeekYear' field", sorted(keys))
    if not keys & iso and "year" not in keys:
        raise _bad(path, "$dateFromParts needs 'year'", "a 'year' field", sorted(keys))
    _check_date_common(arg, path)


def _check_switch(arg: dict, path: str) -> None:
    br = arg["branches"]
    if not isinstance(br, list):
        raise _bad(f"{path}.branches", "$switch branches must be an array", "an array of {case, then}", br)
    if not br:
        raise _bad(f"{path}.branches", "$switch requires at least one branch", "a non-empty array", br)
    for i, b in enumerate(br):
        if not isinstance(b, dict) or set(b) != {"case", "then"}:
            raise _bad(f"{path}.branches.{i}", "each $switch branch needs exactly 'case' and 'then'",
                       "{case: <expression>, then: <expression>}", b)


def _check_dfs(arg: dict, path: str) -> None:
    _check_date_common(arg, path)
    _check_const_format(arg, path)
    if "format" in arg:
        _check_const(arg["format"], f"{path}.format", _valid_format, "invalid date format",
                     "a format string with %Y %m %d %H %M %S %L %j %z %Z %u %V %G ...")


NotYet = NotSupportedYet


def _check_sort_by(arg: dict, path: str) -> None:
    sb = arg["sortBy"]
    ok = sb in (1, -1) and not isinstance(sb, bool) or (
        isinstance(sb, dict) and sb and all(isinstance(k, str) and not k.startswith("$") and v in (1, -1)
                                            and not isinstance(v, bool) for k, v in sb.items()))
    if not ok:
        raise _bad(f"{path}.sortBy", "sortBy must be 1, -1 or a document of field: 1 | -1",
                   "1, -1 or {field: 1 | -1, ...}", sb)


def _check_method(arg: dict, path: str) -> None:
    m = arg["method"]
    if m == "continuous":
        raise NotYet("EXPR_NOT_SUPPORTED_YET", "method 'continuous' is not supported yet", path=f"{path}.method",
                     expected="'approximate' or 'discrete'", found=m)
    if m not in ("approximate", "discrete"):
        raise _bad(f"{path}.method", "unknown percentile method", "'approximate'", m)


def _check_percentile(arg: dict, path: str) -> None:
    _check_method(arg, path)
    const, p = _const_value(arg["p"])
    if const and (not isinstance(p, list) or not p or not all(_is_num(x) and 0 <= float(x) <= 1 for x in p)):
        raise _bad(f"{path}.p", "p must be an array of numbers between 0 and 1", "[<number in [0, 1]>, ...]", p)


HASH_ALGORITHMS = ("md5", "sha256", "xxh64")


def _check_hash(arg: dict, path: str) -> None:
    a = arg["algorithm"]
    if a == "xxh64":
        raise NotYet("EXPR_NOT_SUPPORTED_YET", "hash algorithm 'xxh64' is not supported yet",
                     path=f"{path}.algorithm", expected="'md5' or 'sha256'", found=a)
    if not isinstance(a, str) or a not in HASH_ALGORITHMS:
        raise _bad(f"{path}.algorithm", "unknown hash algorithm", "'md5', 'sha256' or 'xxh64'", a)


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
    "$convert": _obj({"input", "to"}, {"onError", "onNull"}, "types", _check_convert),
    **{op: _list(1, 1, "types") for op in ("$toInt", "$toLong", "$toDouble", "$toDecimal", "$toString",
                                           "$toBool", "$toObjectId", "$type", "$isNumber", "$binarySize",
                                           "$toObject", "$toArray",
                                           "$toHashedIndexKey")},
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
