"""Dates: ``$dateFromString $dateToString $dateTrunc $dateAdd $dateSubtract $dateDiff $year
$month $dayOfMonth $dayOfWeek $dayOfYear $hour $minute $second $millisecond $week $isoWeek
$isoWeekYear $isoDayOfWeek $dateToParts $dateFromParts`` (``$toDate`` is in ``types``).

Dates are instants (milliseconds); everything is computed in UTC unless a ``timezone`` (an
Olson name such as ``"America/New_York"`` or an offset ``"+05:30"``, ``"-0500"``, ``"+03"``)
asks for local time. Date arguments may be dates or ObjectIds (their creation time); null or
missing gives null; anything else is an error (``can't convert from BSON type string to Date``).

- Parts: ``$dayOfWeek`` 1 (Sunday) to 7; ``$isoDayOfWeek`` 1 (Monday) to 7; ``$week`` 0 to 53
  (weeks start on Sunday, days before the first Sunday are week 0); ``$isoWeek`` /
  ``$isoWeekYear`` ISO 8601. The date-part operators take ``date``, ``[date]`` or
  ``{date, timezone}``.
- ``$dateToString``: default format ``%Y-%m-%dT%H:%M:%S.%LZ``; specifiers ``%d %G %H %j %L
  %m %M %S %w %u %U %V %Y %z %Z %b %B %%``; ``onNull`` for a null or missing date.
- ``$dateFromString``: ISO 8601 strings (date, date-time, optional fraction, ``Z`` or offset;
  a space may replace ``T``) or a ``format`` built from the specifiers above; ``timezone``
  applies to strings without an offset; ``onError`` / ``onNull``.
- ``$dateTrunc``: bins of ``binSize`` units counted from 2000-01-01T00:00:00 local time (weeks
  from the first ``startOfWeek`` day on or after it); ``$dateAdd`` / ``$dateSubtract`` add
  calendar units in local time (months clamp to the month's end) and fixed units as durations;
  ``$dateDiff`` counts unit boundaries crossed between the two dates in local time.
- ``$dateToParts`` / ``$dateFromParts``: calendar or ISO week parts; out-of-range parts carry
  over (month 14 is February of the next year).

Deviations: a ``format`` that is not a constant string is refused at run time (error).

Golden cases (``tests/golden/cases/<name>.json``): ``$dateAdd`` project_dateadd; ``$dateDiff``
project_datediff; ``$dateFromParts`` project_datefromparts; ``$dateFromString`` hopping_count;
``$dateToParts`` project_datetoparts; ``$dateToString`` project_datetostring; ``$dateTrunc``
project_datetrunc_month; ``$dayOfMonth`` project_date_parts; ``$dayOfWeek`` project_date_parts;
``$dayOfYear`` ejson_constants; ``$hour`` project_date_parts; ``$isoDayOfWeek``
project_iso_week_parts; ``$isoWeek`` project_iso_week_parts; ``$isoWeekYear``
project_iso_week_parts; ``$millisecond`` project_date_parts; ``$minute`` project_date_parts;
``$month`` project_date_parts; ``$second`` project_date_parts; ``$week`` project_date_parts;
``$year`` project_date_parts; ``$dateSubtract`` project_datesubtract; ``$toDate`` addfields_todate.
"""
from __future__ import annotations

import re
import zoneinfo
from typing import Any

from pyspark.sql import Column
from pyspark.sql import functions as F

from .. import values as V
from ..registry import Compiled, Ctx, expression, first_error
from ._common import (
    CODE, compile_child, found, ms_to_ntz, ntz_to_ms, nullish, v_date_ms, v_long,
    v_string, with_codes,
)
from .types import parse_iso_date_ms

DATE = CODE["date"]
OID = CODE["objectId"]
REF_MS = 946_684_800_000  # 2000-01-01T00:00:00Z
UNIT_MS = {"millisecond": 1, "second": 1000, "minute": 60_000, "hour": 3_600_000, "day": 86_400_000,
           "week": 7 * 86_400_000}
UNIT_MONTHS = {"month": 1, "quarter": 3, "year": 12}
_DOW = {"sunday": 0, "sun": 0, "monday": 1, "mon": 1, "tuesday": 2, "tue": 2, "wednesday": 3, "wed": 3,
        "thursday": 4, "thu": 4, "friday": 5, "fri": 5, "saturday": 6, "sat": 6}
_ZONES = sorted(zoneinfo.available_timezones())
_OFFSET_RX = r"^[+-]([01][0-9]|2[0-3])(:?[0-5][0-9])?$"


# --------------------------------------------------------------------------- arguments

def _date_ms(x: Column, c: Column) -> Column:
    """Milliseconds of a bound date or ObjectId, else NULL."""
    oid_secs = F.conv(F.substring(V.oid_hex(x), 1, 8), 16, 10).cast("bigint")
    return (F.when(c == DATE, F.unix_millis(F.try_variant_get(x, "$", "timestamp")))
            .when(c == OID, oid_secs * 1000))


def _date_error(op: str, x: Column, c: Column) -> Column:
    return F.when(~nullish(c) & (c != DATE) & (c != OID),
                  F.concat(F.lit(f"{op}: can't convert to Date, found "), found(x, c)))


class _Tz:
    """A timezone argument: None (UTC), a constant, or a per-document expression."""

    def __init__(self, spec: Any, ctx: Ctx, op: str):
        self.compiled: Compiled | None = None
        self.const: str | None = None
        if isinstance(spec, dict) and "$literal" in spec:
            spec = spec["$literal"]
        if spec is None or spec in ("UTC", "Etc/UTC", "GMT", "Z", "+00:00", "+0000", "+00"):
            return
        if isinstance(spec, str) and not spec.startswith("$"):
            self.const = spec
        else:
            self.compiled = compile_child(spec, ctx, op, "timezone")

    @property
    def utc(self) -> bool:
        return self.const is None and self.compiled is None

    def column(self) -> Column | None:
        if self.const is not None:
            return F.lit(self.const)
        if self.compiled is not None:
            s = V.as_string(self.compiled.value)
            return F.when(self.valid(s), s)
        return None

    @staticmethod
    def valid(s: Column) -> Column:
        return s.rlike(_OFFSET_RX) | F.array_contains(F.array(*[F.lit(z) for z in _ZONES]), s)

    def error(self, op: str) -> Column | None:
        if self.compiled is None:
            return None
        v = self.compiled.value
        s = V.as_string(v)
        bad = F.when(~V.is_null_or_missing(v) & (s.isNull() | ~self.valid(F.coalesce(s, F.lit("")))),
                     F.concat(F.lit(f"{op}: unrecognized time zone, found "), F.coalesce(F.to_json(v), F.lit(""))))
        return first_error(self.compiled.error, bad)

    def utc_col(self) -> Column:
        return F.lit(self.utc)

    def is_null(self) -> Column:
        return V.is_null_or_missing(self.compiled.value) if self.compiled is not None else F.lit(False)


def _local_ms(ms: Column, tz: _Tz) -> Column:
    """Local wall-clock milliseconds (as if UTC) of an instant."""
    if tz.utc:
        return ms
    return ntz_to_ms(F.convert_timezone(F.lit("UTC"), tz.column(), ms_to_ntz(ms)))


def _utc_ms(local_ms: Column, tz: _Tz) -> Column:
    """The instant of a local wall-clock time."""
    if tz.utc:
        return local_ms
    return ntz_to_ms(F.convert_timezone(tz.column(), F.lit("UTC"), ms_to_ntz(local_ms)))


def _parts(local_ms: Column) -> dict[str, Column]:
    ntz = ms_to_ntz(local_ms)
    dow = F.dayofweek(ntz)  # 1 = Sunday
    doy = F.dayofyear(ntz)
    return {
        "year": F.year(ntz), "month": F.month(ntz), "dayOfMonth": F.dayofmonth(ntz),
        "hour": F.hour(ntz), "minute": F.minute(ntz), "second": F.second(ntz),
        "millisecond": F.pmod(local_ms, F.lit(1000)),
        "dayOfWeek": dow, "dayOfYear": doy,
        "week": F.floor((doy - 1 + 7 - (dow - 1)) / 7).cast("int"),
        "isoWeek": F.weekofyear(ntz),
        "isoWeekYear": F.date_part(F.lit("YEAROFWEEK"), ntz),
        "isoDayOfWeek": F.date_part(F.lit("DAYOFWEEK_ISO"), ntz),
    }


def _date_and_tz(arg: Any) -> tuple[Any, Any]:
    if isinstance(arg, list):
        return arg[0], None
    if isinstance(arg, dict) and "date" in arg and not any(k.startswith("$") for k in arg):
        return arg["date"], arg.get("timezone")
    return arg, None


# ------------------------------------------------------------------------------- parts

def _part_op(op: str, part: str):
    def impl(arg: Any, ctx: Ctx) -> Compiled:
        date_expr, tz_spec = _date_and_tz(arg)
        d = compile_child(date_expr, ctx, op, "date")
        tz = _Tz(tz_spec, ctx, op)

        def value(xs, cs):
            ms = _date_ms(xs[0], cs[0])
            out = v_long(_parts(_local_ms(ms, tz))[part])
            return F.when(nullish(cs[0]) | tz.is_null(), V.NULL).when(ms.isNotNull(), out)

        def error(xs, cs):
            return _date_error(op, xs[0], cs[0])

        return Compiled(with_codes([d.value], value), first_error(d.error, tz.error(op), with_codes([d.value], error)))
    return impl


for _op, _part in (("$year", "year"), ("$month", "month"), ("$dayOfMonth", "dayOfMonth"), ("$hour", "hour"),
                   ("$minute", "minute"), ("$second", "second"), ("$millisecond", "millisecond"),
                   ("$dayOfWeek", "dayOfWeek"), ("$dayOfYear", "dayOfYear"), ("$week", "week"),
                   ("$isoWeek", "isoWeek"), ("$isoWeekYear", "isoWeekYear"), ("$isoDayOfWeek", "isoDayOfWeek")):
    expression(_op)(_part_op(_op, _part))


@expression("$dateToParts")
def date_to_parts(arg: dict, ctx: Ctx) -> Compiled:
    d = compile_child(arg["date"], ctx, "$dateToParts", "date")
    tz = _Tz(arg.get("timezone"), ctx, "$dateToParts")
    iso = arg.get("iso8601", False)
    iso = iso.get("$literal") if isinstance(iso, dict) else iso
    names = (["isoWeekYear", "isoWeek", "isoDayOfWeek"] if iso else ["year", "month", "day"]) + \
        ["hour", "minute", "second", "millisecond"]

    def value(xs, cs):
        ms = _date_ms(xs[0], cs[0])
        p = _parts(_local_ms(ms, tz))
        p["day"] = p["dayOfMonth"]
        obj = V.make_object([(n, v_long(p[n])) for n in names])
        return F.when(nullish(cs[0]) | tz.is_null(), V.NULL).when(ms.isNotNull(), obj)

    return Compiled(with_codes([d.value], value),
                    first_error(d.error, tz.error("$dateToParts"),
                                with_codes([d.value], lambda xs, cs: _date_error("$dateToParts", xs[0], cs[0]))))


_PART_LIMITS = {"year": (1, 9999), "isoWeekYear": (1, 9999)}


@expression("$dateFromParts")
def date_from_parts(arg: dict, ctx: Ctx) -> Compiled:
    op = "$dateFromParts"
    iso = "isoWeekYear" in arg
    names = (["isoWeekYear", "isoWeek", "isoDayOfWeek"] if iso else ["year", "month", "day"]) + \
        ["hour", "minute", "second", "millisecond"]
    defaults = {"isoWeek": 1, "isoDayOfWeek": 1, "month": 1, "day": 1, "hour": 0, "minute": 0, "second": 0,
                "millisecond": 0}
    compiled = {n: compile_child(arg[n], ctx, op, n) for n in names if n in arg}
    tz = _Tz(arg.get("timezone"), ctx, op)
    present = [n for n in names if n in compiled]

    def value(xs, cs):
        got = dict(zip(present, zip(xs, cs)))
        ints = {n: V.as_integral(got[n][0]) if n in got else F.lit(defaults[n]).cast("bigint") for n in names}
        any_null = F.lit(False)
        for n in present:
            any_null = any_null | nullish(got[n][1])
        ok = F.lit(True)
        for n in present:
            ok = ok & ints[n].isNotNull()
        lo, hi = _PART_LIMITS["isoWeekYear" if iso else "year"]
        year = ints["isoWeekYear" if iso else "year"]
        ok = ok & year.between(lo, hi)
        if iso:
            jan4 = F.make_date(year.cast("int"), F.lit(1), F.lit(4))
            monday = F.date_sub(jan4, (F.date_part(F.lit("DAYOFWEEK_ISO"), jan4) - 1).cast("int"))
            base_ms = ntz_to_ms(monday.cast("timestamp_ntz"))
            days = F.try_add(F.try_multiply(F.try_subtract(ints["isoWeek"], F.lit(1)), F.lit(7)),
                             F.try_subtract(ints["isoDayOfWeek"], F.lit(1)))
            day_ms = F.try_multiply(days, F.lit(86_400_000))
        else:
            months = F.when(ints["month"].between(-1_000_000, 1_000_000), ints["month"] - 1)
            first = F.add_months(F.make_date(year.cast("int"), F.lit(1), F.lit(1)), months.cast("int"))
            base_ms = ntz_to_ms(first.cast("timestamp_ntz"))
            day_ms = F.try_multiply(F.try_subtract(ints["day"], F.lit(1)), F.lit(86_400_000))
        local = base_ms
        for part in (day_ms, F.try_multiply(ints["hour"], F.lit(3_600_000)),
                     F.try_multiply(ints["minute"], F.lit(60_000)), F.try_multiply(ints["second"], F.lit(1000)),
                     ints["millisecond"]):
            local = F.try_add(local, part)
        local = F.when(local.between(-6e15, 6e15), local)
        return F.when(any_null | tz.is_null(), V.NULL).when(ok, v_date_ms(_utc_ms(local, tz)))

    def error(xs, cs):
        any_null = F.lit(False)
        for c in cs:
            any_null = any_null | nullish(c)
        errs = []
        for n, x, c in zip(present, xs, cs):
            errs.append(F.when(~nullish(c) & V.as_integral(x).isNull(),
                               F.concat(F.lit(f"{op}: '{n}' must evaluate to an integer, found "), found(x, c))))
            if n in _PART_LIMITS:
                lo, hi = _PART_LIMITS[n]
                errs.append(F.when(~nullish(c) & ~V.as_integral(x).between(lo, hi),
                                   F.concat(F.lit(f"{op}: '{n}' must evaluate to an integer in the range {lo} to {hi}, "
                                                  "found "), found(x, c))))
        errs.append(F.when(~any_null & ~tz.is_null() & value(xs, cs).isNull(),
                           F.lit(f"{op}: the parts do not make a date in range")))
        return F.coalesce(*errs)

    vals = [compiled[n].value for n in present]
    err = with_codes(vals, error) if vals else None
    return Compiled(with_codes(vals, value) if vals else V.NULL,
                    first_error(*[compiled[n].error for n in present], tz.error(op), err))


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


def _const_str(spec: Any) -> tuple[bool, Any]:
    if isinstance(spec, dict) and "$literal" in spec:
        spec = spec["$literal"]
    if spec is None or (isinstance(spec, str) and not spec.startswith("$")):
        return True, spec
    return False, spec


@expression("$dateToString")
def date_to_string(arg: dict, ctx: Ctx) -> Compiled:
    op = "$dateToString"
    d = compile_child(arg["date"], ctx, op, "date")
    tz = _Tz(arg.get("timezone"), ctx, op)
    on_null = compile_child(arg["onNull"], ctx, op, "onNull") if "onNull" in arg else None
    is_const, fmt = _const_str(arg.get("format", _DEFAULT_FORMAT))
    fmt_err = None
    if not is_const:
        fmt_err = F.lit(f"{op}: a format that is not a constant string is not supported yet")
        fmt = _DEFAULT_FORMAT
    fmt = fmt if fmt is not None else _DEFAULT_FORMAT

    def value(xs, cs):
        ms = _date_ms(xs[0], cs[0])
        null_value = on_null.value if on_null is not None else V.NULL
        return F.when(nullish(cs[0]), null_value).when(tz.is_null(), V.NULL).when(
            ms.isNotNull(), v_string(format_date(ms, fmt, tz)))

    def error(xs, cs):
        e = _date_error(op, xs[0], cs[0])
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


@expression("$dateFromString")
def date_from_string(arg: dict, ctx: Ctx) -> Compiled:
    op = "$dateFromString"
    s_c = compile_child(arg["dateString"], ctx, op, "dateString")
    tz = _Tz(arg.get("timezone"), ctx, op)
    on_error = compile_child(arg["onError"], ctx, op, "onError") if "onError" in arg else None
    on_null = compile_child(arg["onNull"], ctx, op, "onNull") if "onNull" in arg else None
    is_const, fmt = _const_str(arg.get("format"))
    fmt_err = None if is_const else F.lit(f"{op}: a format that is not a constant string is not supported yet")
    fmt = fmt if is_const else None

    def parsed(s: Column) -> tuple[Column, Column]:
        """(local or absolute ms, whether the string carried its own offset)."""
        if fmt is None:
            t = F.trim(s)
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
        return (F.when(nullish(c), null_value).when(tz.is_null(), V.NULL)
                .when(c != CODE["string"], err_value)
                .when(bad, err_value).otherwise(v_date_ms(inst)))

    def error(xs, cs):
        x, c = xs[0], cs[0]
        s = F.try_variant_get(x, "$", "string")
        ms, own = parsed(s)
        e = (F.when(nullish(c), on_null.error if on_null is not None and on_null.error is not None
                    else F.lit(None).cast("string"))
             .when(c != CODE["string"], F.concat(F.lit(f"{op} requires that 'dateString' be a string, found "),
                                                 found(x, c)))
             .when(ms.isNull(), F.concat(F.lit(f"{op}: error parsing date string "), F.to_json(x)))
             .when(own & ~tz.utc_col(), F.lit(f"{op}: you cannot pass in a date/time string with a time zone "
                                              "offset together with a timezone argument")))
        if on_error is not None:
            e = F.when(nullish(c), e).otherwise(
                F.when(e.isNotNull(), on_error.error if on_error.error is not None else F.lit(None).cast("string")))
        return e

    return Compiled(with_codes([s_c.value], value),
                    first_error(s_c.error, fmt_err, tz.error(op), with_codes([s_c.value], error)))


# ---------------------------------------------------------------- trunc, add, diff

def _const_or_compiled(spec: Any, ctx: Ctx, op: str, name: str) -> tuple[Any, Compiled | None]:
    is_const, v = _const_str(spec)
    if is_const and (v is None or isinstance(v, str)):
        return v, None
    if isinstance(spec, (int, float)) and not isinstance(spec, bool):
        return spec, None
    return None, compile_child(spec, ctx, op, name)


def _unit_cases(unit_const: str | None, unit_col: Column | None, fn) -> Column:
    """``fn(unit)`` for a constant unit, or a CASE over every unit for a computed one."""
    if unit_const is not None:
        return fn(unit_const)
    out = None
    for u in list(UNIT_MS) + list(UNIT_MONTHS):
        out = F.when(unit_col == u, fn(u)) if out is None else out.when(unit_col == u, fn(u))
    return out


def _unit_error(op: str, unit_col: Compiled | None) -> Column | None:
    if unit_col is None:
        return None
    s = V.as_string(unit_col.value)
    ok = s.isin(*UNIT_MS, *UNIT_MONTHS)
    return first_error(unit_col.error, F.when(~V.is_null_or_missing(unit_col.value) & ~F.coalesce(ok, F.lit(False)),
                                               F.concat(F.lit(f"{op}: unknown time unit, found "),
                                                        F.coalesce(F.to_json(unit_col.value), F.lit("")))))


def _month_index(local_ms: Column) -> Column:
    ntz = ms_to_ntz(local_ms)
    return (F.year(ntz) - 2000) * 12 + (F.month(ntz) - 1)


def _months_to_ms(months: Column) -> Column:
    d = F.add_months(F.make_date(F.lit(2000), F.lit(1), F.lit(1)), months.cast("int"))
    return ntz_to_ms(d.cast("timestamp_ntz"))


def _week_ref(start_dow: Column) -> Column:
    # 2000-01-01 is a Saturday (6): the first start-of-week day on or after it
    return F.lit(REF_MS) + F.pmod(start_dow - 6, F.lit(7)) * 86_400_000


@expression("$dateTrunc")
def date_trunc(arg: dict, ctx: Ctx) -> Compiled:
    op = "$dateTrunc"
    d = compile_child(arg["date"], ctx, op, "date")
    tz = _Tz(arg.get("timezone"), ctx, op)
    unit_const, unit_c = _const_or_compiled(arg["unit"], ctx, op, "unit")
    bin_spec = arg.get("binSize", 1)
    bin_c = compile_child(bin_spec, ctx, op, "binSize")
    sow_const, sow_c = _const_or_compiled(arg.get("startOfWeek", "sunday"), ctx, op, "startOfWeek")
    extra = [bin_c.value] + ([unit_c.value] if unit_c else []) + ([sow_c.value] if sow_c else [])

    def value(xs, cs):
        x, c = xs[0], cs[0]
        binv = V.as_integral(xs[1])
        unit_col = V.as_string(xs[2]) if unit_c else None
        sow = F.lit(_DOW[sow_const.lower()]) if sow_c is None else F.try_element_at(
            F.create_map(*[a for k, v in _DOW.items() for a in (F.lit(k), F.lit(v))]),
            F.lower(V.as_string(xs[-1])))
        ms = _date_ms(x, c)
        local = _local_ms(ms, tz)

        def trunc(u: str) -> Column:
            if u in UNIT_MONTHS:
                size = binv * UNIT_MONTHS[u]
                mi = _month_index(local)
                return _months_to_ms(F.floor(mi / size) * size)
            size = binv * UNIT_MS[u]
            ref = _week_ref(sow) if u == "week" else F.lit(REF_MS)
            return ref + F.floor((local - ref) / size) * size

        out = v_date_ms(_utc_ms(_unit_cases(unit_const, unit_col, trunc), tz))
        null = nullish(c) | tz.is_null()
        for cc in cs[1:]:
            null = null | nullish(cc)
        return F.when(null, V.NULL).when(ms.isNotNull() & (binv > 0), out)

    def error(xs, cs):
        binv = V.as_integral(xs[1])
        return F.coalesce(_date_error(op, xs[0], cs[0]),
                          F.when(~nullish(cs[1]) & (binv.isNull() | (binv <= 0)),
                                 F.concat(F.lit(f"{op}: binSize must be a positive integer, found "), found(xs[1], cs[1]))))

    vals = [d.value] + extra
    return Compiled(with_codes(vals, value),
                    first_error(d.error, bin_c.error, tz.error(op), _unit_error(op, unit_c),
                                sow_c.error if sow_c else None, with_codes(vals, error)))


def _add(op: str, sign: int):
    def impl(arg: dict, ctx: Ctx) -> Compiled:
        d = compile_child(arg["startDate"], ctx, op, "startDate")
        tz = _Tz(arg.get("timezone"), ctx, op)
        unit_const, unit_c = _const_or_compiled(arg["unit"], ctx, op, "unit")
        amount = compile_child(arg["amount"], ctx, op, "amount")
        vals = [d.value, amount.value] + ([unit_c.value] if unit_c else [])

        def value(xs, cs):
            ms = _date_ms(xs[0], cs[0])
            n = V.as_integral(xs[1]) * sign
            unit_col = V.as_string(xs[2]) if unit_c else None

            def add(u: str) -> Column:
                step = F.try_multiply(n, F.lit(UNIT_MS.get(u, 1)))
                if u in ("millisecond", "second", "minute", "hour"):
                    return F.try_add(ms, step)
                local = _local_ms(ms, tz)
                if u in ("day", "week"):
                    moved = F.try_add(local, step)
                    return F.when(moved.between(-6e15, 6e15), _utc_ms(moved, tz))
                day = F.floor(local / 86_400_000)
                time_of_day = local - day * 86_400_000
                date = F.date_add(F.make_date(F.lit(1970), F.lit(1), F.lit(1)), day.cast("int"))
                months = F.try_multiply(n, F.lit(UNIT_MONTHS[u]))
                moved = F.when(months.between(-2_000_000, 2_000_000), F.add_months(date, months.cast("int")))
                return _utc_ms(ntz_to_ms(moved.cast("timestamp_ntz")) + time_of_day, tz)

            null = nullish(cs[0]) | nullish(cs[1]) | tz.is_null()
            if unit_c:
                null = null | nullish(cs[2])
            return F.when(null, V.NULL).when(ms.isNotNull() & n.isNotNull(),
                                             v_date_ms(_unit_cases(unit_const, unit_col, add)))

        def error(xs, cs):
            n = V.as_integral(xs[1])
            valid = _date_ms(xs[0], cs[0]).isNotNull() & n.isNotNull()
            return F.coalesce(_date_error(op, xs[0], cs[0]),
                              F.when(~nullish(cs[1]) & n.isNull(),
                                     F.concat(F.lit(f"{op}: amount must be an integral number, found "),
                                              found(xs[1], cs[1]))),
                              F.when(valid & ~tz.is_null() & value(xs, cs).isNull(),
                                     F.lit(f"{op}: the resulting date is out of range")))

        return Compiled(with_codes(vals, value),
                        first_error(d.error, amount.error, tz.error(op), _unit_error(op, unit_c),
                                    with_codes(vals, error)))
    return impl


expression("$dateAdd")(_add("$dateAdd", 1))
expression("$dateSubtract")(_add("$dateSubtract", -1))


@expression("$dateDiff")
def date_diff(arg: dict, ctx: Ctx) -> Compiled:
    op = "$dateDiff"
    a = compile_child(arg["startDate"], ctx, op, "startDate")
    b = compile_child(arg["endDate"], ctx, op, "endDate")
    tz = _Tz(arg.get("timezone"), ctx, op)
    unit_const, unit_c = _const_or_compiled(arg["unit"], ctx, op, "unit")
    sow_const, sow_c = _const_or_compiled(arg.get("startOfWeek", "sunday"), ctx, op, "startOfWeek")
    vals = [a.value, b.value] + ([unit_c.value] if unit_c else []) + ([sow_c.value] if sow_c else [])

    def value(xs, cs):
        ms_a, ms_b = _date_ms(xs[0], cs[0]), _date_ms(xs[1], cs[1])
        la, lb = _local_ms(ms_a, tz), _local_ms(ms_b, tz)
        unit_col = V.as_string(xs[2]) if unit_c else None
        sow = F.lit(_DOW[sow_const.lower()]) if sow_c is None else F.try_element_at(
            F.create_map(*[x for k, v in _DOW.items() for x in (F.lit(k), F.lit(v))]),
            F.lower(V.as_string(xs[-1])))

        def diff(u: str) -> Column:
            if u in UNIT_MONTHS:
                k = UNIT_MONTHS[u]
                return F.floor(_month_index(lb) / k) - F.floor(_month_index(la) / k)
            size = UNIT_MS[u]
            ref = _week_ref(sow) if u == "week" else F.lit(0)
            return F.floor((lb - ref) / size) - F.floor((la - ref) / size)

        null = nullish(cs[0]) | nullish(cs[1]) | tz.is_null()
        for cc in cs[2:]:
            null = null | nullish(cc)
        return F.when(null, V.NULL).when(ms_a.isNotNull() & ms_b.isNotNull(),
                                         v_long(_unit_cases(unit_const, unit_col, diff)))

    def error(xs, cs):
        return F.coalesce(_date_error(op, xs[0], cs[0]), _date_error(op, xs[1], cs[1]))

    return Compiled(with_codes(vals, value),
                    first_error(a.error, b.error, tz.error(op), _unit_error(op, unit_c),
                                sow_c.error if sow_c else None, with_codes(vals, error)))
