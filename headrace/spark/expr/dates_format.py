"""Dates as strings: ``$dateToString`` (:func:`format_date`, MongoDB's ``%`` specifiers) and
``$dateFromString`` (ISO 8601, or a constant ``format`` read as MongoDB's timelib reads it: a
regex of what each specifier takes, the parts checked and assembled by arithmetic).
"""
from __future__ import annotations

import re

from pyspark.sql import Column
from pyspark.sql import functions as F

from .. import values as V
from ..registry import Compiled, Ctx, expression, first_error
from ._common import CODE, compile_child, found, nullish, v_date_ms, v_string, with_codes
from .dates_common import (_Tz, _const_str, _date_error, _date_ms, _local_ms, _parts, _utc_ms, days_from_civil,
                           days_in_month)
from .dates_parse import default_date_ms


# ------------------------------------------------------------------------ $dateToString

_DEFAULT_FORMAT = "%Y-%m-%dT%H:%M:%S.%LZ"
_DEFAULT_FORMAT_LOCAL = "%Y-%m-%dT%H:%M:%S.%L"  # the default in a timezone other than UTC
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
        text = format_date(ms, fmt, tz)
        if "format" not in arg and not (tz.compiled is None and tz.mongo_utc):
            local = format_date(ms, _DEFAULT_FORMAT_LOCAL, tz)
            text = local if tz.compiled is None else F.when(tz.mongo_utc_col(), text).otherwise(local)
        return F.when(nullish(cs[0]), null_value).when(tz.is_null() | F.lit(null_fmt), V.NULL).when(
            ms.isNotNull(), v_string(text))

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

#: timelib's month names (timelib_month_lookup), read alike by %b and %B
_MONTH_NAMES = {**{m.lower(): i + 1 for i, m in enumerate(_MONTHS)},
                **{m[:3].lower(): i + 1 for i, m in enumerate(_MONTHS)}, "sept": 9,
                **{r: i + 1 for i, r in enumerate("i ii iii iv v vi vii viii ix x xi xii".split())}}
#: what each specifier reads (timelib_parse_from_format_with_map): up to so many digits, taken
#: greedily and never given back (possessive); %M %S exactly 2; %G %V %u skip non-digits first
_READ = {"Y": r"([0-9]{1,4}+)", "m": r"([0-9]{1,2}+)", "d": r"([0-9]{1,2}+)", "H": r"([0-9]{1,2}+)",
         "M": r"([0-9]{2})", "S": r"([0-9]{2})", "L": r"([0-9]{1,3}+)", "j": r"([0-9]{1,3}+)",
         "G": r"[^0-9]*+([0-9]{1,4}+)", "V": r"[^0-9]*+([0-9]{1,2}+)", "u": r"[^0-9]*+([0-9])",
         "b": r"([A-Za-z]++)", "B": r"([A-Za-z]++)", "Z": r"([+-][0-9]*+)",
         "z": r"[ \t(]*+((?:GMT(?=[+-]))?[+-][0-9:]*+|[A-Za-z]++)\)*+"}


def _format_parser(fmt: str) -> tuple[str, dict[str, int]] | None:
    """The regex of strings in ``fmt`` and the group of each specifier (the last of a repeated
    one); None where MongoDB refuses every string: ISO and calendar parts mixed, an ISO week or
    day without an ISO year, %j before the year, or a date left incomplete."""
    rx, groups, i, count = "", {}, 0, 0
    while i < len(fmt):
        if fmt[i] == "%" and i + 1 < len(fmt):
            k = fmt[i + 1]
            i += 2
            if k == "%":
                rx += "%"
            elif k in _READ:
                if k == "j" and "Y" not in groups:
                    return None
                count += 1  # each reader has one capturing group
                groups[k] = count
                rx += _READ[k]
            else:
                return None
        else:
            rx += re.escape(fmt[i])
            i += 1
    keys = set(groups)
    if ("Y" in keys and keys & {"G", "V", "u"}) or ("G" in keys and keys & {"Y", "m", "d", "b", "B", "j"}) or \
            (keys & {"V", "u"} and "G" not in keys):
        return None
    if not ("G" in keys or ("Y" in keys and ("j" in keys or (keys & {"m", "b", "B"} and "d" in keys)))):
        return None
    return "^" + rx + r"\z", groups


def _zone_seconds(t: Column) -> Column:
    """Seconds east of UTC of a %z text (timelib_parse_zone: [GMT]+-H, HH, HMM, HHMM, H:MM,
    HH:MM, HHMMSS, HH:MM:SS; the abbreviations UTC, GMT, Z), else NULL."""
    u = F.regexp_replace(t, "^GMT", "")
    c = F.substring(u, 2, 64)

    def x(rx: str, i: int = 1) -> Column:
        return F.regexp_extract(c, rx, i).try_cast("bigint")
    colon, colon3, digits = r"^([0-9]{1,2}):([0-9]{0,2})$", r"^([0-9]{2}):([0-9]{2}):([0-9]{2})$", r"^([0-9]+)$"
    secs = (F.when(c.rlike(r"^[0-9]{1,2}$"), x(digits) * 3600)
            .when(c.rlike(r"^[0-9]{3,4}$"), F.floor(x(digits) / 100) * 3600 + F.pmod(x(digits), F.lit(100)) * 60)
            .when(c.rlike(r"^[0-9]{6}$"), F.floor(x(digits) / 10000) * 3600
                  + F.pmod(F.floor(x(digits) / 100), F.lit(100)) * 60 + F.pmod(x(digits), F.lit(100)))
            .when(c.rlike(colon), x(colon) * 3600 + F.coalesce(x(colon, 2), F.lit(0)) * 60)
            .when(c.rlike(colon3), x(colon3) * 3600 + x(colon3, 2) * 60 + x(colon3, 3)))
    return (F.when(F.lower(t).isin("utc", "gmt", "z"), F.lit(0))
            .when(u.rlike("^[+-]"), F.when(u.startswith("-"), -secs).otherwise(secs)))


def _parse_with_format(s: Column, fmt: str) -> tuple[Column, bool]:
    """(epoch ms, or local ms without an offset in the string; whether ``fmt`` reads an offset)
    of a string in MongoDB format ``fmt``; NULL where MongoDB's parse fails: no match, a date
    or time out of range (timelib_valid_date, timelib_valid_time), ISO week outside 1-53."""
    parser = _format_parser(fmt)
    if parser is None:
        return F.lit(None).cast("bigint"), False
    rx, gi = parser

    def g(k: str) -> Column:
        return F.regexp_extract(s, rx, gi[k])

    def n(k: str, default: int = 0) -> Column:
        return g(k).try_cast("bigint") if k in gi else F.lit(default).cast("bigint")
    ok = s.rlike(rx)
    if "G" in gi:
        jan4 = days_from_civil(n("G"), F.lit(1), F.lit(4))
        days = jan4 - F.pmod(jan4 + 3, F.lit(7)) + (n("V", 1) - 1) * 7 + (n("u", 1) - 1)
        ok = ok & n("V", 1).between(1, 53) & n("u", 1).between(1, 7)
    elif "j" in gi:
        days = days_from_civil(n("Y"), F.lit(1), F.lit(1)) + n("j")  # 0-based: d = tmp + 1
    else:
        mk = max((k for k in ("m", "b", "B") if k in gi), key=lambda k: gi[k])
        names = F.create_map(*[F.lit(x) for kv in _MONTH_NAMES.items() for x in kv])
        month = n("m") if mk == "m" else F.try_element_at(names, F.lower(g(mk))).cast("bigint")
        y, d = n("Y"), n("d")
        ok = ok & month.between(1, 12) & d.between(1, days_in_month(y, month))
        days = days_from_civil(y, month, d)
    h, mi, sec = n("H"), n("M"), n("S")
    ok = ok & h.between(0, 23) & mi.between(0, 59) & sec.between(0, 59)
    ms = F.element_at(F.array(F.lit(100), F.lit(10), F.lit(1)), F.length(g("L"))) * n("L") if "L" in gi else F.lit(0)
    local = days * 86_400_000 + h * 3_600_000 + mi * 60_000 + sec * 1000 + ms
    zone = max((k for k in ("z", "Z") if k in gi), key=lambda k: gi[k], default=None)
    if zone == "z":
        off = _zone_seconds(g("z"))
    elif zone == "Z":
        off = F.coalesce(F.substring(g("Z"), 2, 64).try_cast("bigint"), F.lit(0)) * 60 * \
            F.when(g("Z").startswith("-"), -1).otherwise(1)
    else:
        off = F.lit(0)
    return F.when(ok & off.isNotNull(), (local - off * 1000).cast("bigint")), zone is not None


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
            return default_date_ms(s)
        ms, has_zone = _parse_with_format(s, fmt)
        return ms, F.lit(has_zone)

    def value(xs, cs):
        x, c = xs[0], cs[0]
        s = F.try_variant_get(x, "$", "string")
        ms, own = parsed(s)
        inst = F.when(own, ms).otherwise(_utc_ms(ms, tz))
        null_value = on_null.value if on_null is not None else V.NULL
        bad = ms.isNull() | (own & ~tz.mongo_utc_col())
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
             .when(own & ~tz.mongo_utc_col(), F.lit(f"{op}: you cannot pass in a date/time string with a time zone "
                                              "offset together with a timezone argument")))
        if on_error is not None:
            e = F.when(nullish(c), e).otherwise(
                F.when(e.isNotNull(), on_error.error if on_error.error is not None else F.lit(None).cast("string")))
        return e

    return Compiled(with_codes([s_c.value], value),
                    first_error(s_c.error, fmt_err, tz.error(op), with_codes([s_c.value], error)))
