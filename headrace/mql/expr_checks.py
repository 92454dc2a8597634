"""Checks of aggregation operators' constant arguments (a bad ``unit``, ``timezone``, ``to``
type, regex, format, ``$meta`` name...), each ``fn(arg, path)`` raising ``EXPR_BAD_ARGS`` (pure
Python; part of :mod:`headrace.mql.expressions`, whose operator table names them)."""
from __future__ import annotations

from typing import Any, Callable

from ..errors import NotSupportedYet
from .regex import RegexError, compile_regex, regex_literal, translate_regex
from .expr_spec import (CONVERT_BYTE_ORDERS, CONVERT_FORMATS, CONVERT_TYPES, DATE_UNITS, META_NAMES,
                        META_NAMES_EXACT, META_PREFIXES, _CONVERT_NOT_YET, _META_NOT_YET, _WEEKDAYS, _bad, _const_value, _is_num, operands,
                        valid_timezone)


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
    for key, allowed in (("format", CONVERT_FORMATS), ("byteOrder", CONVERT_BYTE_ORDERS)):
        if key not in arg:
            continue
        const, v = _const_value(arg[key])
        if not const:
            raise NotYet("EXPR_NOT_SUPPORTED_YET", f"$convert with a computed '{key}' is not supported yet",
                         path=f"{path}.{key}", expected="a constant", found=arg[key])
        if v not in allowed:
            raise _bad(f"{path}.{key}", f"invalid '{key}' argument for $convert", "one of " + ", ".join(allowed), v)
    const, to = _const_value(arg["to"])
    if not const:
        if isinstance(arg["to"], dict) and "type" in arg["to"]:
            raise NotYet("EXPR_NOT_SUPPORTED_YET", "$convert with a computed 'to' document is not supported yet",
                         path=f"{path}.to", expected="constant type and subtype", found=arg["to"])
        return
    if isinstance(to, dict):
        unknown = set(to) - {"type", "subtype"}
        if "type" not in to or unknown:
            raise _bad(f"{path}.to", "a 'to' document has 'type' and optionally 'subtype'",
                       "{type, subtype}", sorted(unknown) or to)
        st = to.get("subtype", 0)
        if not (_is_num(st) and float(st) == int(st) and (0 <= int(st) <= 8 or 128 <= int(st) <= 255)):
            raise _bad(f"{path}.to.subtype", "'subtype' must be a binData subtype number", "0-8 or 128-255", st)
        if CONVERT_TYPES.get(to["type"]) != "binData" and int(st) != 0:
            raise _bad(f"{path}.to.subtype", "'subtype' is for conversions to binData", "binData", to["type"])
        to = to["type"]
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


def _check_date_format(arg: dict, path: str, shown: str) -> None:
    """A date operator's options, and its constant ``format`` (``shown``: the specifiers named)."""
    _check_date_common(arg, path)
    _check_const_format(arg, path)
    if "format" in arg:
        _check_const(arg["format"], f"{path}.format", _valid_format, "invalid date format",
                     f"a format string with {shown} ...")


def _check_trunc_date_to_string(arg: dict, path: str) -> None:
    _check_date_format(arg, path, "%Y %m %d %H %M %S %L %j %w %u %U %V %G %Z %z %b %B %%")


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
    _check_date_format(arg, path, "%Y %m %d %H %M %S %L %j %z %Z %u %V %G")


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
    if not isinstance(a, str) or a not in HASH_ALGORITHMS:
        raise _bad(f"{path}.algorithm", "unknown hash algorithm", "'md5', 'sha256' or 'xxh64'", a)
