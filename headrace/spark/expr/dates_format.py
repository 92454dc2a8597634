"""Dates as strings: ``$dateToString`` (:func:`format_date`, MongoDB's ``%`` specifiers) and
``$dateFromString`` (ISO 8601, or a constant ``format`` turned into a guarded Java
``DateTimeFormatter`` pattern).
"""
from __future__ import annotations

import re

from pyspark.sql import Column
from pyspark.sql import functions as F

from .. import values as V
from ..registry import Compiled, Ctx, expression, first_error
from ._common import CODE, compile_child, found, nullish, v_date_ms, v_string, with_codes
from .dates_common import _Tz, _const_str, _date_error, _date_ms, _local_ms, _parts, _utc_ms
from .types import parse_iso_date_ms


# ------------------------------------------------------------------------ $dateToString

_DEFAULT_FORMAT = "%Y-%m-%dT%H:%M:%S.%LZ"
_MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December"]


def _pad(c: Column, n: int) -> Column:
    return F.lpad(c.cast("string"), n, "0")


def _offset_minutes(ms: Column, tz: _Tz) -> Column:
    return F.floor((_local_ms(ms, tz) - ms) / 60_000).cast("bigint")


def format_date(ms: Column, fmt: str, tz: _Tz) -> Column:
    """MongoDB ``$dateToString`` formatting of epoch milliseconds."""
    local = _local_ms(ms, tz)
    p = _parts(local)
    off = _offset_minutes(ms, tz)
    sign = F.when(off < 0, F.lit("-")).otherwise(F.lit("+"))
    aoff = F.abs(off)
    spec = {
        "d": lambda: _pad(p["dayOfMonth"], 2), "G": lambda: _pad(p["isoWeekYear"], 4),
        "H": lambda: _pad(p["hour"], 2), "j": lambda: _pad(p["dayOfYear"], 3),
        "L": lambda: _pad(p["millisecond"], 3), "m": lambda: _pad(p["month"], 2),
        "M": lambda: _pad(p["minute"], 2), "S": lambda: _pad(p["second"], 2),
        "w": lambda: p["dayOfWeek"].cast("string"), "u": lambda: p["isoDayOfWeek"].cast("string"),
        "U": lambda: _pad(p["week"], 2), "V": lambda: _pad(p["isoWeek"], 2), "Y": lambda: _pad(p["year"], 4),
        "z": lambda: F.concat(sign, _pad(F.floor(aoff / 60), 2), _pad(aoff % 60, 2)),
        "Z": lambda: off.cast("string"),  # minutes as a plain number: "270", "-300", "0"
        "b": lambda: F.element_at(F.array(*[F.lit(m[:3]) for m in _MONTHS]), p["month"]),
        "B": lambda: F.element_at(F.array(*[F.lit(m) for m in _MONTHS]), p["month"]),
        "%": lambda: F.lit("%"),
    }
    pieces: list[Column] = []
    text = ""
    i = 0
    while i < len(fmt):
        ch = fmt[i]
        if ch == "%" and i + 1 < len(fmt) and fmt[i + 1] in spec:
            if text:
                pieces.append(F.lit(text))
                text = ""
            pieces.append(spec[fmt[i + 1]]())
            i += 2
        else:
            text += ch
            i += 1
    if text:
        pieces.append(F.lit(text))
    if not pieces:
        return F.lit("")
    return F.concat(*pieces) if len(pieces) > 1 else pieces[0]


def _used_specifiers(fmt: str) -> set[str]:
    out, i = set(), 0
    while i < len(fmt):
        if fmt[i] == "%" and i + 1 < len(fmt):
            out.add(fmt[i + 1])
            i += 2
        else:
            i += 1
    return out


def format_range_error(ms: Column, fmt: str, tz: _Tz, op: str) -> Column | None:
    """MongoDB's error for a ``%Y`` or ``%G`` year outside 0-9999 (``TimeZone::insertPadded``;
    the other components cannot leave the range), else NULL; None when ``fmt`` has neither."""
    used = [k for k in ("Y", "G") if k in _used_specifiers(fmt)]
    if not used:
        return None
    p = _parts(_local_ms(ms, tz))
    years = [p["year" if k == "Y" else "isoWeekYear"] for k in used]
    bad = F.coalesce(*[F.when(~y.between(0, 9999), y) for y in years])
    return F.when(bad.isNotNull(), F.concat(F.lit(f"{op}: Could not convert date to string: date component was "
                                                  "outside the supported range of 0-9999: "), bad.cast("string")))


@expression("$dateToString")
def date_to_string(arg: dict, ctx: Ctx) -> Compiled:
    op = "$dateToString"
    d = compile_child(arg["date"], ctx, op, "date")
    tz = _Tz(arg.get("timezone", "UTC"), ctx, op)
    on_null = compile_child(arg["onNull"], ctx, op, "onNull") if "onNull" in arg else None
    is_const, fmt = _const_str(arg.get("format", _DEFAULT_FORMAT))
    fmt_err = None
    if not is_const:
        fmt_err = F.lit(f"{op}: a format that is not a constant string is not supported yet")
        fmt = _DEFAULT_FORMAT
    null_fmt = fmt is None  # a format given as null gives null (an absent one is the default)
    fmt = fmt if fmt is not None else _DEFAULT_FORMAT

    def value(xs, cs):
        ms = _date_ms(xs[0], cs[0])
        null_value = on_null.value if on_null is not None else V.NULL
        return F.when(nullish(cs[0]), null_value).when(tz.is_null() | F.lit(null_fmt), V.NULL).when(
            ms.isNotNull(), v_string(format_date(ms, fmt, tz)))

    def error(xs, cs):
        e = _date_error(op, xs[0], cs[0])
        range_err = format_range_error(_date_ms(xs[0], cs[0]), fmt, tz, op)
        if range_err is not None:
            e = F.coalesce(e, F.when(~tz.is_null() & F.lit(not null_fmt), range_err))
        if on_null is not None and on_null.error is not None:
            e = F.coalesce(e, F.when(nullish(cs[0]), on_null.error))
        return e

    return Compiled(with_codes([d.value], value),
                    first_error(d.error, fmt_err, tz.error(op), with_codes([d.value], error)))


# ---------------------------------------------------------------------- $dateFromString

_JAVA = {"d": "dd", "G": "YYYY", "H": "HH", "j": "DDD", "L": "SSS", "m": "MM", "M": "mm", "S": "ss",
         "u": "e", "V": "ww", "Y": "yyyy", "z": "xx", "Z": None, "b": "MMM", "B": "MMMM"}


def _java_pattern(fmt: str) -> tuple[str | None, bool]:
    """A Java DateTimeFormatter pattern for a MongoDB format, and whether it has an offset."""
    out, lit, has_zone = [], "", False
    i = 0
    while i < len(fmt):
        ch = fmt[i]
        if ch == "%" and i + 1 < len(fmt):
            k = fmt[i + 1]
            if k == "%":
                lit += "%"
            elif k in _JAVA and _JAVA[k] is not None:
                if lit:
                    out.append("'" + lit.replace("'", "''") + "'")
                    lit = ""
                out.append(_JAVA[k])
                has_zone = has_zone or k == "z"
            else:
                return None, False
            i += 2
        else:
            lit += ch
            i += 1
    if lit:
        out.append("'" + lit.replace("'", "''") + "'")
    return "".join(out), has_zone


def _format_regex(fmt: str) -> str:
    """A regex that strings in MongoDB format ``fmt`` match (guards the strict parser)."""
    rx = {"d": r"[0-9]{1,2}", "G": r"[0-9]{4}", "H": r"[0-9]{1,2}", "j": r"[0-9]{1,3}", "L": r"[0-9]{1,3}",
          "m": r"[0-9]{1,2}", "M": r"[0-9]{1,2}", "S": r"[0-9]{1,2}", "u": r"[1-7]", "V": r"[0-9]{1,2}",
          "Y": r"[0-9]{4}", "z": r"[+-][0-9]{4}", "b": r"[A-Za-z]{3}", "B": r"[A-Za-z]+", "%": "%"}
    out, i = "", 0
    while i < len(fmt):
        if fmt[i] == "%" and i + 1 < len(fmt) and fmt[i + 1] in rx:
            out += rx[fmt[i + 1]]
            i += 2
        else:
            out += re.escape(fmt[i])
            i += 1
    return "^" + out + "$"


#: MongoDB's parser (timelib) also reads dates written out with a month name, as the manual's
#: "oct 20 2020" and "WED jan 31 12:05:28 +03:30 1996": [weekday] month day [time] [offset] year [time]
_TEXTUAL = (r"^(?i)(?:(?:mon|tue|wed|thu|fri|sat|sun)[a-z]*\.?,?\s+)?(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)"
            r"[a-z]*\.?\s+([0-9]{1,2})(?:st|nd|rd|th)?,?\s+(?:([0-9]{1,2}:[0-9]{2}(?::[0-9]{2}(?:\.[0-9]+)?)?)\s+)?"
            r"(?:([+-][0-9]{2}:?[0-9]{2}|z|utc|gmt)\s+)?([0-9]{4})(?:\s+([0-9]{1,2}:[0-9]{2}(?::[0-9]{2}(?:\.[0-9]+)?)?))?$")


def _textual_iso(t: Column) -> Column:
    """The ISO 8601 text of a date written with a month name (:data:`_TEXTUAL`), else ``t``."""
    def g(i: int) -> Column:
        return F.regexp_extract(t, _TEXTUAL, i)
    month = (F.instr(F.lit("janfebmaraprmayjunjulaugsepoctnovdec"), F.lower(g(1))) + 2) / 3
    time = F.coalesce(F.nullif(g(3), F.lit("")), F.nullif(g(6), F.lit("")), F.lit("00:00"))
    zone = F.lower(g(4))
    offset = F.when(zone.isin("z", "utc", "gmt"), F.lit("Z")).otherwise(zone)
    iso = F.concat(g(5), F.lit("-"), F.lpad(month.cast("int").cast("string"), 2, "0"), F.lit("-"),
                   F.lpad(g(2), 2, "0"), F.lit("T"), F.when(F.length(time) < 5, F.concat(F.lit("0"), time))
                   .otherwise(time), offset)
    return F.when(t.rlike(_TEXTUAL), iso).otherwise(t)


@expression("$dateFromString")
def date_from_string(arg: dict, ctx: Ctx) -> Compiled:
    op = "$dateFromString"
    s_c = compile_child(arg["dateString"], ctx, op, "dateString")
    tz = _Tz(arg.get("timezone", "UTC"), ctx, op)
    on_error = compile_child(arg["onError"], ctx, op, "onError") if "onError" in arg else None
    on_null = compile_child(arg["onNull"], ctx, op, "onNull") if "onNull" in arg else None
    is_const, fmt = _const_str(arg.get("format"))
    fmt_err = None if is_const else F.lit(f"{op}: a format that is not a constant string is not supported yet")
    fmt = fmt if is_const else None
    null_fmt = F.lit(is_const and "format" in arg and fmt is None)  # gives null, as a null timezone

    def parsed(s: Column) -> tuple[Column, Column]:
        """(local or absolute ms, whether the string carried its own offset)."""
        if fmt is None:
            t = V.let(F.trim(s), _textual_iso)
            own = t.rlike(r"(Z|[+-][0-9]{2}(:?[0-9]{2})?)$") & t.contains(":")
            return parse_iso_date_ms(t), own
        pattern, has_zone = _java_pattern(fmt)
        if pattern is None:
            return F.lit(None).cast("bigint"), F.lit(False)
        if has_zone:
            ts = F.try_to_timestamp(s, F.lit(pattern))
        else:
            ts = F.try_to_timestamp(F.concat(s, F.lit(" +0000")), F.lit(pattern + " xx"))
        ms = F.when(s.rlike(_format_regex(fmt)), F.unix_millis(ts))
        return ms, F.lit(has_zone)

    def value(xs, cs):
        x, c = xs[0], cs[0]
        s = F.try_variant_get(x, "$", "string")
        ms, own = parsed(s)
        inst = F.when(own, ms).otherwise(_utc_ms(ms, tz))
        null_value = on_null.value if on_null is not None else V.NULL
        bad = ms.isNull() | (own & ~tz.utc_col())
        err_value = on_error.value if on_error is not None else F.lit(None).cast("variant")
        return (F.when(nullish(c), null_value).when(c != CODE["string"], err_value)
                .when(tz.is_null() | null_fmt, V.NULL).when(bad, err_value).otherwise(v_date_ms(inst)))

    def error(xs, cs):
        x, c = xs[0], cs[0]
        s = F.try_variant_get(x, "$", "string")
        ms, own = parsed(s)
        e = (F.when(nullish(c), on_null.error if on_null is not None and on_null.error is not None
                    else F.lit(None).cast("string"))
             .when(c != CODE["string"], F.concat(F.lit(f"{op} requires that 'dateString' be a string, found "),
                                                 found(x, c)))
             .when(tz.is_null() | null_fmt, F.lit(None).cast("string"))
             .when(ms.isNull(), F.concat(F.lit(f"{op}: error parsing date string "), F.to_json(x)))
             .when(own & ~tz.utc_col(), F.lit(f"{op}: you cannot pass in a date/time string with a time zone "
                                              "offset together with a timezone argument")))
        if on_error is not None:
            e = F.when(nullish(c), e).otherwise(
                F.when(e.isNotNull(), on_error.error if on_error.error is not None else F.lit(None).cast("string")))
        return e

    return Compiled(with_codes([s_c.value], value),
                    first_error(s_c.error, fmt_err, tz.error(op), with_codes([s_c.value], error)))
