"""The argument shapes (:class:`Spec`) of aggregation expression operators, the constants
they are checked against, and the small predicates validation shares (pure Python; part of
:mod:`headrace.mql.expressions`)."""
from __future__ import annotations

import decimal
import re
from dataclasses import dataclass
from typing import Any, Callable, Iterable

from ..errors import PipelineError

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
                 "object": "object", "array": "array", "binData": "binData",
                 1: "double", 2: "string", 3: "object", 4: "array", 5: "binData", 7: "objectId", 8: "bool",
                 9: "date", 16: "int", 18: "long", 19: "decimal"}
#: ``$convert``'s ``format`` (binData <-> string) and ``byteOrder`` (binData <-> numbers)
CONVERT_FORMATS = ("auto", "base64", "base64url", "hex", "utf8", "uuid")
CONVERT_BYTE_ORDERS = ("little", "big")
#: real ``$convert`` targets headrace does not convert to yet
_CONVERT_NOT_YET = {"null": 10, "regex": 11, "timestamp": 17, "minKey": -1, "maxKey": 127,
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
    """An Olson name, ``"UTC"``/``"GMT"`` or an offset ``+hh``, ``+hhmm``, ``+hh:mm`` (any two-digit
    hours and minutes, as MongoDB's ``TimeZoneDatabase::parseUtcOffset``: ``"+19:00"``, ``"+0575"``)."""
    if not isinstance(tz, str) or not tz:
        return False
    m = _OFFSET.match(tz)
    if m:
        return True
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
