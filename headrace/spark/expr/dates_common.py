"""What the date operators share: reading a date argument (a date, ObjectId or Timestamp) as epoch
milliseconds and its conversion error, the ``timezone`` argument (:class:`_Tz`, UTC, an Olson
name or an offset) with conversions between instants and local wall-clock time, the calendar
parts of a local time, days of a calendar date, and constant string arguments.
"""
from __future__ import annotations

import functools
import re
import zoneinfo
from typing import Any

from pyspark.sql import Column
from pyspark.sql import functions as F

from .. import values as V
from ..registry import Compiled, Ctx, first_error
from ._common import CODE, compile_child, found, ms_to_ntz, ntz_to_ms, nullish

DATE = CODE["date"]
OID = CODE["objectId"]
TS = CODE["timestamp"]
#: MongoDB's UTC offsets (TimeZoneDatabase::parseUtcOffset): +-HH, +-HHMM, +-HH:MM, the digits
#: unchecked (hours * 60 + minutes); computed as offsets, not by Spark (which stops at 18 hours)
_OFFSET_RX = r"^[+-][0-9]{2}(:?[0-9]{2})?$"
#: tzdata links Java does not know, by their target
_LINKS = {"ROC": "Asia/Taipei"}


@functools.lru_cache(maxsize=1)
def _zones() -> tuple[str, ...]:
    """The Olson names both tzdata and Spark's Java know (a name Java refuses would fail the
    query), and the links of :data:`_LINKS`."""
    names = set(zoneinfo.available_timezones())
    try:
        from pyspark.sql import SparkSession
        jvm = SparkSession.getActiveSession()._jvm  # type: ignore[union-attr]
        known = set(jvm.java.time.ZoneId.getAvailableZoneIds()) | set(jvm.java.time.ZoneId.SHORT_IDS.keySet())
        names &= known
    except Exception:  # no classic session: trust tzdata
        pass
    return tuple(sorted(names | set(_LINKS)))


def _offset_ms(s: Column) -> Column:
    """Milliseconds east of UTC of an offset string (:data:`_OFFSET_RX`)."""
    minutes = F.substring(s, 2, 2).cast("int") * 60 + F.when(F.length(s) > 3, F.substring(s, -2, 2).cast("int"))\
        .otherwise(0)
    return (F.when(s.startswith("-"), -minutes).otherwise(minutes) * 60_000).cast("bigint")
#: the names of MongoDB's UTC zone (TimeZone::isUtcZone: no tzInfo and a zero offset); "GMT"
#: and "Etc/UTC" compute as UTC but are Olson zones
_MONGO_UTC = ("UTC", "+00", "-00", "+0000", "-0000", "+00:00", "-00:00")


# --------------------------------------------------------------------------- arguments

def _date_ms(x: Column, c: Column) -> Column:
    """Milliseconds of a bound date, ObjectId or Timestamp (its seconds, as MongoDB's
    Value::coerceToDate), else NULL."""
    oid_secs = F.conv(F.substring(V.oid_hex(x), 1, 8), 16, 10).cast("bigint")
    return (F.when(c == DATE, F.unix_millis(F.try_variant_get(x, "$", "timestamp")))
            .when(c == OID, oid_secs * 1000).when(c == TS, V.ts_parts(x)[0] * 1000))


def _date_error(op: str, x: Column, c: Column) -> Column:
    return F.when(~nullish(c) & (c != DATE) & (c != OID) & (c != TS),
                  F.concat(F.lit(f"{op}: can't convert to Date, found "), found(x, c)))


class _Tz:
    """A timezone argument: UTC (callers pass ``"UTC"`` for an absent one), a constant, or a
    per-document expression. A timezone that is null (or evaluates to null or missing) makes
    the operator's result null (MongoDB's ``makeTimeZone``): :meth:`is_null`."""

    def __init__(self, spec: Any, ctx: Ctx, op: str):
        self.compiled: Compiled | None = None
        self.const: str | None = None
        self.null = False
        self.unknown: str | None = None  # a constant name Spark does not know: an error, computed as UTC
        if isinstance(spec, dict) and "$literal" in spec:
            spec = spec["$literal"]
        self.mongo_utc = spec in _MONGO_UTC
        if spec is None:
            self.null = True
            return
        if spec in ("Etc/UTC", "GMT", "Z") + _MONGO_UTC:
            return
        if isinstance(spec, str) and not spec.startswith("$"):
            self.const = _LINKS.get(spec, spec)
            if not (re.match(_OFFSET_RX, self.const) or self.const in _zones()):
                self.unknown, self.const = spec, None
        else:
            self.compiled = compile_child(spec, ctx, op, "timezone")

    @property
    def utc(self) -> bool:
        return self.const is None and self.compiled is None

    def column(self) -> Column | None:
        """The timezone string (a link resolved), NULL where it is not one."""
        if self.const is not None:
            return F.lit(self.const)
        if self.compiled is not None:
            s = V.as_string(self.compiled.value)
            links = F.create_map(*[F.lit(x) for kv in _LINKS.items() for x in kv])
            return F.when(self.valid(s), F.coalesce(F.try_element_at(links, s), s))
        return None

    def shift(self, ms: Column, sign: int, convert) -> Column:
        """``ms`` moved by the offset (``sign`` 1: to local time, -1: to the instant), by
        ``convert(zone, ms)`` for a named zone."""
        if self.const is not None and re.match(_OFFSET_RX, self.const):
            return ms + sign * _offset_ms(F.lit(self.const))
        if self.const is not None:
            return convert(F.lit(self.const), ms)
        # the zone and ``ms`` bound once each: both branches read them, and nesting (local time
        # of an instant of a local time) would otherwise copy them exponentially
        return V.let(self.column(), lambda s: V.let(ms, lambda m: F.when(
            s.rlike(_OFFSET_RX), m + sign * _offset_ms(s)).otherwise(convert(F.when(~s.rlike(_OFFSET_RX), s), m))))

    @staticmethod
    def valid(s: Column) -> Column:
        return s.rlike(_OFFSET_RX) | F.array_contains(F.array(*[F.lit(z) for z in _zones()]), s)

    def error(self, op: str) -> Column | None:
        if self.unknown is not None:
            return F.lit(f"{op}: unrecognized time zone, found \"{self.unknown}\"")
        if self.compiled is None:
            return None
        v = self.compiled.value
        s = V.as_string(v)
        bad = F.when(~V.is_null_or_missing(v) & (s.isNull() | ~self.valid(F.coalesce(s, F.lit("")))),
                     F.concat(F.lit(f"{op}: unrecognized time zone, found "), F.coalesce(F.to_json(v), F.lit(""))))
        return first_error(self.compiled.error, bad)

    def mongo_utc_col(self) -> Column:
        """Whether the timezone is MongoDB's UTC zone (:data:`_MONGO_UTC`)."""
        if self.compiled is not None:
            return F.coalesce(V.as_string(self.compiled.value).isin(*_MONGO_UTC), F.lit(False))
        return F.lit(self.mongo_utc)

    def is_null(self) -> Column:
        if self.null:
            return F.lit(True)
        return V.is_null_or_missing(self.compiled.value) if self.compiled is not None else F.lit(False)


def _local_ms(ms: Column, tz: _Tz) -> Column:
    """Local wall-clock milliseconds (as if UTC) of an instant."""
    if tz.utc:
        return ms
    return tz.shift(ms, 1, lambda zone, m: ntz_to_ms(F.convert_timezone(F.lit("UTC"), zone, ms_to_ntz(m))))


def _utc_ms(local_ms: Column, tz: _Tz) -> Column:
    """The instant of a local wall-clock time."""
    if tz.utc:
        return local_ms
    return tz.shift(local_ms, -1, lambda zone, m: ntz_to_ms(F.convert_timezone(zone, F.lit("UTC"), ms_to_ntz(m))))


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


def days_from_civil(y: Column, m: Column, d: Column) -> Column:
    """Days since 1970-01-01 of a proleptic Gregorian date (any year, month 1-12; plain
    arithmetic, no ``make_date`` and its year limits)."""
    y2 = y - F.when(m <= 2, 1).otherwise(0)
    era = F.floor(y2 / 400)
    yoe = y2 - era * 400
    doy = F.floor((153 * F.pmod(m + 9, F.lit(12)) + 2) / 5) + d - 1
    return era * 146097 + yoe * 365 + F.floor(yoe / 4) - F.floor(yoe / 100) + doy - 719468


def days_in_month(y: Column, m: Column) -> Column:
    leap = ((F.pmod(y, F.lit(4)) == 0) & (F.pmod(y, F.lit(100)) != 0)) | (F.pmod(y, F.lit(400)) == 0)
    return F.when(m == 2, F.when(leap, 29).otherwise(28)).when(m.isin(4, 6, 9, 11), 30).otherwise(31)


def _const_str(spec: Any) -> tuple[bool, Any]:
    if isinstance(spec, dict) and "$literal" in spec:
        spec = spec["$literal"]
    if spec is None or (isinstance(spec, str) and not spec.startswith("$")):
        return True, spec
    return False, spec
