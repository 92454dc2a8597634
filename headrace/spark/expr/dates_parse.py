"""Dates read from strings the way MongoDB's parser (timelib's ``timelib_strtotime``) reads
them without a format: ISO 8601 and the other forms below. ``$dateFromString`` without a
``format`` and ``$toDate``/``$convert`` of a string (``TimeZoneDatabase::fromString``) use the
same reading (:func:`default_date_ms`)."""
from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F

from .. import values as V

# ISO-8601 dates MongoDB accepts: date, date-time with optional fraction and zone
_DATE_RX = (r"^[0-9]{4}-[0-9]{2}-[0-9]{2}([T ][0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]{1,9})?)?)?"
            r"\s*(Z|[+-][0-9]{2}(:?[0-9]{2})?)?$")


def parse_iso_date_ms(s: Column) -> Column:
    """Epoch milliseconds of an ISO-8601 date string (naive times are UTC), else NULL."""
    t = F.trim(s)
    ok = t.rlike(_DATE_RX)
    # a date alone with a zone ("2018-03-15 +10:00") is midnight in that zone
    t = F.regexp_replace(t, r"^([0-9]{4}-[0-9]{2}-[0-9]{2})\s*(Z|[+-][0-9]{2}(:?[0-9]{2})?)$", "$1T00:00:00$2")
    norm = F.regexp_replace(t, r"^([0-9]{4}-[0-9]{2}-[0-9]{2}) ", "$1T")
    norm = F.regexp_replace(norm, r"\s+(Z|[+-][0-9]{2}(:?[0-9]{2})?)$", "$1")
    # +hh and +hhmm offsets as +hh:mm
    norm = F.regexp_replace(norm, r"([+-][0-9]{2})([0-9]{2})$", "$1:$2")
    norm = F.regexp_replace(norm, r"(T[0-9:.]+)([+-][0-9]{2})$", "$1$2:00")
    has_zone = norm.rlike(r"(Z|[+-][0-9]{2}:[0-9]{2})$")
    with_zone = F.when(has_zone, norm).when(norm.contains("T"), F.concat(norm, F.lit("Z"))) \
        .otherwise(F.concat(norm, F.lit("T00:00:00Z")))
    ts = F.try_to_timestamp(with_zone, F.lit("yyyy-MM-dd'T'HH:mm[:ss][.SSSSSSSSS][.SSSSSS][.SSS][.SS][.S]XXX"))
    return F.when(ok, F.unix_millis(ts))


#: MongoDB's parser (timelib) also reads dates written out with a month name, as the manual's
#: "oct 20 2020" and "WED jan 31 12:05:28 +03:30 1996": [weekday] month day [time] [offset] year [time]
_TEXTUAL = (r"^(?i)(?:(?:mon|tue|wed|thu|fri|sat|sun)[a-z]*\.?,?\s+)?(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)"
            r"[a-z]*\.?\s+([0-9]{1,2})(?:st|nd|rd|th)?,?\s+(?:([0-9]{1,2}:[0-9]{2}(?::[0-9]{2}(?:\.[0-9]+)?)?)\s+)?"
            r"(?:([+-][0-9]{2}:?[0-9]{2}|z|utc|gmt)\s+)?([0-9]{4})(?:\s+([0-9]{1,2}:[0-9]{2}(?::[0-9]{2}(?:\.[0-9]+)?)?))?$")


def textual_iso(t: Column) -> Column:
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


_AMERICAN = r"^([0-9]{1,2})/([0-9]{1,2})/([0-9]{1,4})(?=$|[T ])"
_POINTED = r"^([0-9]{1,2})[.-]([0-9]{1,2})[.-]([0-9]{4})(?=$|[T ])"


def timelib_forms(t: Column) -> Column:
    """A few more of timelib's forms as ISO 8601: m/d/y (american; a 1-2 digit year is 19xx
    from 70, else 20xx, as TIMELIB_PROCESS_YEAR), d-m-yyyy and d.m.yyyy (pointeddate4),
    hh:mm.ss (timelong24), and the zones GMT+-offset, GMT, UTC, Z after the time."""
    def ymd(rx: str, mi: int, di: int) -> Column:
        y = F.regexp_extract(t, rx, 3)
        yi = y.cast("int")
        year = F.when((F.length(y) < 3) & (yi < 70), yi + 2000).when(F.length(y) < 3, yi + 1900).otherwise(yi)
        return F.concat(F.lpad(year.cast("string"), 4, "0"), F.lit("-"), F.lpad(F.regexp_extract(t, rx, mi), 2, "0"),
                        F.lit("-"), F.lpad(F.regexp_extract(t, rx, di), 2, "0"), F.regexp_replace(t, rx, ""))
    t2 = F.when(t.rlike(_AMERICAN), ymd(_AMERICAN, 1, 2)).when(t.rlike(_POINTED), ymd(_POINTED, 2, 1)).otherwise(t)
    t2 = F.regexp_replace(t2, r"([T ][0-9]{2}:[0-9]{2})\.([0-9]{2})(?=[.\sZz+-]|$)", "$1:$2")
    t2 = F.regexp_replace(t2, r"\s*(?i:GMT)(?=[+-])", "")
    return F.regexp_replace(t2, r"\s*(?i:UTC|GMT|Z)$", "Z")


def default_date_ms(s: Column) -> tuple[Column, Column]:
    """(milliseconds of string ``s`` read as MongoDB reads a date without a format: absolute when
    it carries its own offset, else a local time (UTC for ``$toDate``), NULL when it is not a
    date; whether it carried its own offset)."""
    t = V.let(V.let(F.trim(s), textual_iso), timelib_forms)
    own = t.rlike(r"(Z|[+-][0-9]{2}(:?[0-9]{2})?)$") & t.contains(":")
    return parse_iso_date_ms(t), own
