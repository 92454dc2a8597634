"""Date operators against MongoDB's exact behaviour where the manual's examples stop: null
options, bounds, and arithmetic across timezone offset changes.

Each case is ``(document, expression, expected)`` or ``(document, expression, None,
error_substring)``; the source lines cited are from mongodb/mongo
(``src/mongo/db/query/datetime/date_time_support.cpp`` and ``.h``, ``src/mongo/db/pipeline/
expression.cpp``).
"""
from __future__ import annotations


import pytest

from headrace import ejson
from _expr_helpers import run_cases as run, utc_dt as dt

pytestmark = pytest.mark.spark


D = {"d": dt(2020, 1, 5, 3, 4, 5, 6000)}

# makeTimeZone (expression.cpp): a timezone that evaluates to null or missing gives null (only
# an absent timezone means UTC); $dateToString: a null date gives onNull first
NULL_TIMEZONE = [
    (D, {"$year": {"date": "$d", "timezone": None}}, None),
    (D, {"$hour": {"date": "$d", "timezone": "$nope"}}, None),
    (D, {"$dateToString": {"date": "$d", "timezone": None}}, None),
    ({}, {"$dateToString": {"date": "$d", "timezone": None, "onNull": "N"}}, "N"),
    (D, {"$dateToParts": {"date": "$d", "timezone": None}}, None),
    ({}, {"$dateFromParts": {"year": 2020, "timezone": None}}, None),
    ({}, {"$dateFromString": {"dateString": "2020-01-01", "timezone": None}}, None),
    (D, {"$dateTrunc": {"date": "$d", "unit": "day", "timezone": None}}, None),
    (D, {"$dateAdd": {"startDate": "$d", "unit": "day", "amount": 1, "timezone": None}}, None),
    (D, {"$dateDiff": {"startDate": "$d", "endDate": "$d", "unit": "day", "timezone": None}}, None),
    (D, {"$year": {"date": "$d"}}, 2020),
    # $dateFromString checks that dateString is a string before the null timezone (onError)
    ({"s": 5}, {"$dateFromString": {"dateString": "$s", "timezone": None, "onError": "E"}}, "E"),
    ({}, {"$dateFromString": {"dateString": "not a date", "timezone": None}}, None),
]


# ExpressionDateToString::evaluate: "if (_format) { if (formatValue.nullish()) return null }";
# a null date still gives onNull. ExpressionDateFromString the same, after checking that
# dateString is a string
NULL_FORMAT = [
    (D, {"$dateToString": {"date": "$d", "format": None}}, None),
    ({}, {"$dateToString": {"date": "$d", "format": None, "onNull": "N"}}, "N"),
    (D, {"$dateToString": {"date": "$d"}}, "2020-01-05T03:04:05.006Z"),
    ({}, {"$dateFromString": {"dateString": "2020-01-01", "format": None}}, None),
    ({}, {"$dateFromString": {"dateString": "x", "format": None}}, None),
    ({}, {"$dateFromString": {"dateString": "$s", "format": None, "onNull": "N"}}, "N"),
    ({"s": 5}, {"$dateFromString": {"dateString": "$s", "format": None, "onError": "E"}}, "E"),
]


# TimeZone::insertPadded (date_time_support.h): a component outside 0-9999 is error 18537
# "Could not convert date to string: date component was outside the supported range of
# 0-9999" (only for the specifiers the format uses); 4 digits are a minimum width
Y10000 = {"$dateFromParts": {"year": 9999, "month": 13}}               # 10000-01-01, a Saturday
Y10000_MON = {"$dateFromParts": {"year": 9999, "month": 13, "day": 3}}  # ISO year 10000
Y_MINUS_1 = {"$dateFromParts": {"year": 1, "month": -12}}               # -0001-12-01
YEAR_RANGE = [
    ({}, {"$dateToString": {"date": Y10000}}, None, "outside the supported range of 0-9999"),
    ({}, {"$dateToString": {"date": Y10000, "format": "%Y"}}, None, "outside the supported range"),
    ({}, {"$dateToString": {"date": Y10000, "format": "%m-%d %G-%V-%u"}}, "01-01 9999-52-6"),
    ({}, {"$dateToString": {"date": Y10000_MON, "format": "%G"}}, None, "outside the supported range"),
    ({}, {"$dateToString": {"date": Y_MINUS_1, "format": "%Y"}}, None, "outside the supported range"),
    ({}, {"$dateToString": {"date": Y_MINUS_1, "format": "%m/%d"}}, "12/01"),
    ({}, {"$dateToString": {"date": {"$dateFromParts": {"year": 1, "month": 0}}, "format": "%Y-%m"}},
     "0000-12"),
    ({}, {"$dateToString": {"date": {"$dateFromParts": {"year": 12}}, "format": "%Y %j"}}, "0012 001"),
]


# ExpressionDateFromParts::evaluateNumberWithDefaultAndBounds: month, day, hour, minute,
# isoWeek and isoDayOfWeek must be in [-32768, 32767] (error 31034); second and millisecond
# are unbounded; parts in range carry over (createFromDateParts, timelib)
PART_BOUNDS = [
    ({}, {"$dateFromParts": {"year": 2020, "month": 32768}}, None,
     "must evaluate to a value in the range [-32768, 32767]"),
    ({}, {"$dateFromParts": {"year": 2020, "day": -32769}}, None, "'day' must evaluate to a value in the range"),
    ({}, {"$dateFromParts": {"year": 2020, "hour": 40000}}, None, "'hour' must evaluate to a value in the range"),
    ({}, {"$dateFromParts": {"year": 2020, "minute": -40000}}, None, "'minute' must evaluate to a value in"),
    ({}, {"$dateFromParts": {"isoWeekYear": 2020, "isoWeek": 32768}}, None, "'isoWeek' must evaluate to a value"),
    ({}, {"$dateFromParts": {"isoWeekYear": 2020, "isoDayOfWeek": -32769}}, None, "'isoDayOfWeek' must"),
    ({}, {"$dateFromParts": {"year": 2020, "month": -24000}}, dt(19, 12, 1)),
    ({}, {"$dateFromParts": {"year": 2020, "minute": 32767}}, dt(2020, 1, 23, 18, 7)),
    ({}, {"$dateFromParts": {"year": 2020, "second": 100000, "millisecond": -1}}, dt(2020, 1, 2, 3, 46, 39, 999000)),
    ({}, {"$dateFromParts": {"year": 2020, "month": 14, "day": -1, "hour": -1}}, dt(2021, 1, 29, 23)),
    ({}, {"$dateFromParts": {"isoWeekYear": 2020, "isoWeek": 0, "isoDayOfWeek": 8}}, dt(2019, 12, 30)),
]


def _diff(a, b, unit, tz):
    return ({"a": a, "b": b}, {"$dateDiff": {"startDate": "$a", "endDate": "$b", "unit": unit, "timezone": tz}})


NY, LH = "America/New_York", "Australia/Lord_Howe"
# dateDiff (date_time_support.cpp): millisecond is endDate - startDate; hour, minute and second
# count boundaries in local time, then add utcOffsetCorrectionFor*: (start->z - end->z) divided
# (truncating) by the unit, so across a DST change they count elapsed units
DIFF_OFFSET_CHANGE = [
    (*_diff(dt(2021, 3, 14, 6), dt(2021, 3, 14, 7), "hour", NY), 1),          # 01:00 EST -> 03:00 EDT
    (*_diff(dt(2021, 3, 14, 6, 59), dt(2021, 3, 14, 7), "minute", NY), 1),
    (*_diff(dt(2021, 3, 14, 6, 59, 59), dt(2021, 3, 14, 7), "second", NY), 1),
    (*_diff(dt(2021, 3, 14, 6, 59, 59, 999000), dt(2021, 3, 14, 7), "millisecond", NY), 1),
    (*_diff(dt(2021, 11, 7, 5, 30), dt(2021, 11, 7, 6, 30), "hour", NY), 1),    # 01:30 EDT -> 01:30 EST
    (*_diff(dt(2021, 11, 7, 6, 30), dt(2021, 11, 7, 5, 30), "minute", NY), -60),
    (*_diff(dt(2021, 3, 14, 6), dt(2021, 3, 14, 7), "day", NY), 0),
    # Lord Howe moves 30 minutes: (39600 - 37800) / 3600 truncates to 0 hours, 30 minutes
    (*_diff(dt(2021, 4, 3, 14, 20), dt(2021, 4, 3, 15, 20), "hour", LH), 0),  # 01:20 +11 -> 01:50 +10:30
    (*_diff(dt(2021, 4, 3, 14, 50), dt(2021, 4, 3, 15, 10), "minute", LH), 20),
    (*_diff(dt(2021, 1, 1, 0, 20), dt(2021, 1, 1, 0, 40), "hour", "+05:30"), 1),  # 05:50 -> 06:10
]


def _trunc(d, unit, tz, bin_size=1):
    return ({"d": d}, {"$dateTrunc": {"date": "$d", "unit": unit, "binSize": bin_size, "timezone": tz}})


# truncateDate (date_time_support.cpp): millisecond to hour bins are truncateDateMillis on the
# instant, from the reference point 2000-01-01T00:00 local time taken with the UTC offset of
# that January (defaultReferencePointForDateTrunc), not from local midnights
TRUNC_SUBDAY = [
    (*_trunc(dt(2021, 7, 1, 12, 30), "hour", NY, 2), dt(2021, 7, 1, 11)),       # bins from 05:00Z
    (*_trunc(dt(2021, 7, 1, 12, 30), "minute", NY, 7), dt(2021, 7, 1, 12, 24)),
    (*_trunc(dt(2021, 11, 7, 6, 30), "hour", NY), dt(2021, 11, 7, 6)),          # 01:30 EST -> 01:00 EST
    (*_trunc(dt(2021, 1, 1, 0, 20), "hour", "Asia/Kolkata"), dt(2020, 12, 31, 23, 30)),
    (*_trunc(dt(2021, 7, 1, 12, 30, 10, 123000), "second", NY, 7), dt(2021, 7, 1, 12, 30, 4)),
    (*_trunc(dt(2021, 7, 1, 12, 30), "day", NY), dt(2021, 7, 1, 4)),            # local midnight, EDT
]


# $dateToString's default format (exec evaluate(ExpressionDateToString), manual since 7.1):
# timeZone->isUtcZone() ? "%Y-%m-%dT%H:%M:%S.%LZ" : "%Y-%m-%dT%H:%M:%S.%L"; isUtcZone is "UTC"
# or a zero offset (no tzInfo), not "GMT" or "Etc/UTC". fromString refuses a string's own
# offset only when the timezone is not that UTC zone
TZ_DOC = {"d": dt(2020, 1, 5, 3, 4, 5, 6000), "utc": "UTC", "tokyo": "Asia/Tokyo"}
UTC_ZONE = [
    (TZ_DOC, {"$dateToString": {"date": "$d", "timezone": "America/New_York"}}, "2020-01-04T22:04:05.006"),
    (TZ_DOC, {"$dateToString": {"date": "$d", "timezone": "+05:30"}}, "2020-01-05T08:34:05.006"),
    (TZ_DOC, {"$dateToString": {"date": "$d", "timezone": "GMT"}}, "2020-01-05T03:04:05.006"),
    (TZ_DOC, {"$dateToString": {"date": "$d", "timezone": "UTC"}}, "2020-01-05T03:04:05.006Z"),
    (TZ_DOC, {"$dateToString": {"date": "$d", "timezone": "+00:00"}}, "2020-01-05T03:04:05.006Z"),
    (TZ_DOC, {"$dateToString": {"date": "$d", "timezone": "$utc"}}, "2020-01-05T03:04:05.006Z"),
    (TZ_DOC, {"$dateToString": {"date": "$d", "timezone": "$tokyo"}}, "2020-01-05T12:04:05.006"),
    (TZ_DOC, {"$dateToString": {"date": "$d", "timezone": "$tokyo", "format": "%H"}}, "12"),
    (TZ_DOC, {"$dateFromString": {"dateString": "2017-07-12T22:23:55Z", "timezone": "$utc"}},
     dt(2017, 7, 12, 22, 23, 55)),
    (TZ_DOC, {"$dateFromString": {"dateString": "2017-07-12T22:23:55Z", "timezone": "GMT"}}, None,
     "cannot pass in a date/time string"),
]


# TimeZoneDatabase::parseUtcOffset: +-HH, +-HHMM, +-HH:MM with any digits (hours * 60 + minutes,
# no range check), so a computed "+19:00" is a zone (it failed the whole query: Spark refuses
# offsets beyond 18 hours); ROC is tzdata's link to Asia/Taipei
def _tz_doc(tz):
    return {"d": dt(2020, 1, 5, 3, 4, 5), "tz": tz}


OFFSET_ZONES = [
    (_tz_doc("+19:00"), {"$hour": {"date": "$d", "timezone": "$tz"}}, 22),
    (_tz_doc("-2359"), {"$dateToString": {"date": "$d", "timezone": "$tz", "format": "%d %H:%M %z %Z"}},
     "04 03:05 -2359 -1439"),
    (_tz_doc("+0575"), {"$minute": {"date": "$d", "timezone": "$tz"}}, 19),      # 5 hours 75 minutes
    (_tz_doc("+05"), {"$dateTrunc": {"date": "$d", "unit": "day", "timezone": "$tz"}}, dt(2020, 1, 4, 19)),
    (_tz_doc("+19"), {"$dateFromParts": {"year": 2020, "timezone": "$tz"}}, dt(2019, 12, 31, 5)),
    (_tz_doc("ROC"), {"$hour": {"date": "$d", "timezone": "$tz"}}, 11),
    (_tz_doc("Asia/Taipei"), {"$hour": {"date": "$d", "timezone": "$tz"}}, 11),
    (_tz_doc("localtime"), {"$hour": {"date": "$d", "timezone": "$tz"}}, None, "unrecognized time zone"),
    # the same offsets written as constants (validation refused them)
    (_tz_doc(None), {"$hour": {"date": "$d", "timezone": "+19:00"}}, 22),
    (_tz_doc(None), {"$minute": {"date": "$d", "timezone": "+0575"}}, 19),
    (_tz_doc("+5"), {"$hour": {"date": "$d", "timezone": "$tz"}}, None, "unrecognized time zone"),
    (_tz_doc(None), {"$hour": {"date": "$d", "timezone": "ROC"}}, 11),
    (_tz_doc(None), {"$hour": {"date": "$d", "timezone": "localtime"}}, None, "unrecognized time zone"),
]


# evaluate(ExpressionDateDiff / ExpressionDateTrunc): startOfWeek is evaluated only when the
# unit is week ("if (unit == TimeUnit::week) { ... if (startOfWeekValue.nullish()) return null"),
# so a null or missing startOfWeek with another unit changes nothing
START_OF_WEEK = [
    (D, {"$dateDiff": {"startDate": "$d", "endDate": {"$dateAdd": {"startDate": "$d", "unit": "day", "amount": 3}},
                       "unit": "day", "startOfWeek": "$nope"}}, 3),
    (D, {"$dateTrunc": {"date": "$d", "unit": "day", "startOfWeek": "$nope"}}, dt(2020, 1, 5)),
    (D, {"$dateTrunc": {"date": "$d", "unit": "week", "startOfWeek": "$nope"}}, None),
    (D, {"$dateDiff": {"startDate": "$d", "endDate": "$d", "unit": "week", "startOfWeek": None}}, None),
    (D, {"$dateTrunc": {"date": "$d", "unit": "week", "startOfWeek": "MON"}}, dt(2019, 12, 30)),
    ({**D, "w": "someday"}, {"$dateTrunc": {"date": "$d", "unit": "day", "startOfWeek": "$w"}}, dt(2020, 1, 5)),
    ({**D, "w": "someday"}, {"$dateDiff": {"startDate": "$d", "endDate": "$d", "unit": "week", "startOfWeek": "$w"}},
     None, "cannot be recognized as a day of a week"),
]


# evaluate(ExpressionDateToParts): iso8601 is evaluated per document (evaluateIso8601Flag):
# null or missing gives null, a non-bool is an error
ISO_FLAG = [
    ({**D, "f": False}, {"$dateToParts": {"date": "$d", "iso8601": "$f"}},
     {"year": 2020, "month": 1, "day": 5, "hour": 3, "minute": 4, "second": 5, "millisecond": 6}),
    ({**D, "f": True}, {"$dateToParts": {"date": "$d", "iso8601": "$f"}},
     {"isoWeekYear": 2020, "isoWeek": 1, "isoDayOfWeek": 7, "hour": 3, "minute": 4, "second": 5, "millisecond": 6}),
    (D, {"$dateToParts": {"date": "$d", "iso8601": "$f"}}, None),
    (D, {"$dateToParts": {"date": "$d", "iso8601": None}}, None),     # a constant null too
    ({**D, "f": "yes"}, {"$dateToParts": {"date": "$d", "iso8601": "$f"}}, None, "iso8601 must evaluate to a bool"),
]


# Value::coerceToDate: a Timestamp is the date of its seconds (the manual's date arguments: "a
# Date, a Timestamp, or an ObjectID")
TS = {"ts": ejson.Timestamp(1578193445, 7)}  # 2020-01-05T03:04:05Z
TIMESTAMP_DATES = [
    (TS, {"$year": "$ts"}, 2020),
    (TS, {"$hour": {"date": "$ts", "timezone": "+01:00"}}, 4),
    (TS, {"$dateToString": {"date": "$ts", "format": "%Y-%m-%d %H:%M:%S.%L"}}, "2020-01-05 03:04:05.000"),
    (TS, {"$dateTrunc": {"date": "$ts", "unit": "hour"}}, dt(2020, 1, 5, 3)),
    (TS, {"$dateAdd": {"startDate": "$ts", "unit": "day", "amount": 1}}, dt(2020, 1, 6, 3, 4, 5)),
    (TS, {"$dateDiff": {"startDate": "$ts", "endDate": dt(2020, 1, 5, 4), "unit": "minute"}}, 56),
]


# truncateDate: binSizeInMillis overflowing is "dateTrunc overflowed" (5439002); day and larger
# units refuse a binSize above 100'000'000'000 ("dateTrunc unsupported binSize value", 5439006);
# a week bin larger than the distance to the reference is the reference (both failed the query)
def _tb(unit, b):
    return ({"d": dt(2021, 7, 1, 12, 30), "b": b}, {"$dateTrunc": {"date": "$d", "unit": unit, "binSize": "$b"}})


TRUNC_LIMITS = [
    (*_tb("hour", 9_000_000_000_000_000), None, "dateTrunc overflowed"),
    (*_tb("day", 200_000_000_000), None, "dateTrunc unsupported binSize value"),
    (*_tb("month", 200_000_000_000), None, "dateTrunc unsupported binSize value"),
    (*_tb("month", 3_000_000_000), dt(2000, 1, 1)),
    (*_tb("week", 100_000_000_000), dt(2000, 1, 2)),
    (*_tb("day", 100_000_000_000), dt(2000, 1, 1)),
    (*_tb("hour", 5), dt(2021, 7, 1, 12)),
]


def test_null_timezone(spark):
    run(spark, NULL_TIMEZONE)


def test_null_format(spark):
    run(spark, NULL_FORMAT)


def test_year_range(spark):
    run(spark, YEAR_RANGE)


def test_part_bounds(spark):
    run(spark, PART_BOUNDS)


def test_diff_offset_change(spark):
    run(spark, DIFF_OFFSET_CHANGE)


def test_trunc_subday(spark):
    run(spark, TRUNC_SUBDAY)


def test_utc_zone(spark):
    run(spark, UTC_ZONE)


def test_offset_zones(spark):
    run(spark, OFFSET_ZONES)


def test_start_of_week_only_for_weeks(spark):
    run(spark, START_OF_WEEK)


def test_iso_flag_per_document(spark):
    run(spark, ISO_FLAG)


def test_timestamp_dates(spark):
    run(spark, TIMESTAMP_DATES)


def test_trunc_limits(spark):
    run(spark, TRUNC_LIMITS)


# extractDateArithmetics (exec/expression/evaluate_date.cpp): startDate, unit, amount, then the
# timezone, each null or missing giving null before anything after it is checked; the types of
# startDate (5166403) and amount (5166405) only after all four
S = {"s": "not a date", "d": dt(2020, 1, 5), "u": "fortnight", "z": "Mars/Olympus", "f": 1.5}
DATE_ARITH_NULLS = [
    (S, {"$dateAdd": {"startDate": "$s", "unit": "day", "amount": 1, "timezone": None}}, None),
    (S, {"$dateAdd": {"startDate": "$s", "unit": "day", "amount": 1, "timezone": "$nope"}}, None),
    (S, {"$dateSubtract": {"startDate": "$s", "unit": "$nope", "amount": 1}}, None),
    (S, {"$dateAdd": {"startDate": "$s", "unit": "day", "amount": None}}, None),
    (S, {"$dateAdd": {"startDate": "$nope", "unit": "$u", "amount": "$f", "timezone": "$z"}}, None),
    (S, {"$dateAdd": {"startDate": "$d", "unit": "$nope", "amount": "$f"}}, None),
    (S, {"$dateAdd": {"startDate": "$d", "unit": "day", "amount": "$f", "timezone": None}}, None),
    (S, {"$dateAdd": {"startDate": "$s", "unit": "day", "amount": 1}}, None, "can't convert to Date"),
    (S, {"$dateAdd": {"startDate": "$s", "unit": "day", "amount": "$f"}}, None, "can't convert to Date"),
    (S, {"$dateAdd": {"startDate": "$s", "unit": "$u", "amount": 1}}, None, "unknown time unit"),
    (S, {"$dateAdd": {"startDate": "$s", "unit": "day", "amount": 1, "timezone": "$z"}}, None,
     "unrecognized time zone"),
    (S, {"$dateAdd": {"startDate": "$d", "unit": "day", "amount": "$f"}}, None, "amount must be an integral"),
    (S, {"$dateAdd": {"startDate": "$d", "unit": "day", "amount": 2}}, dt(2020, 1, 7)),
]


def test_date_arithmetic_nulls_before_types(spark):
    run(spark, DATE_ARITH_NULLS)
