"""Dates read from strings against MongoDB's exact behaviour: ``$dateFromString`` with a
format (timelib's ``parse_from_format``), without one (``timelib_strtotime``'s forms), and
``$toDate``/``$convert`` of a string, which read what ``$dateFromString`` reads without a format
(``headrace/spark/expr/dates_parse.py``). Cases as in :mod:`test_expressions_dates_exact`.
"""
from __future__ import annotations


import pytest

from _expr_helpers import run_cases as run, utc_dt as dt

pytestmark = pytest.mark.spark




def _dfs(text, fmt, **kw):
    return ({}, {"$dateFromString": {"dateString": text, "format": fmt, **kw}})


# $dateFromString with a format: timelib_parse_from_format_with_map (src/third_party/timelib/
# dist/parse_date.re) and TimeZoneDatabase::fromString; the expectations marked "jstests" are
# jstests/aggregation/expressions/date_from_string.js
FROM_FORMAT = [
    (*_dfs("2017-07-04T11:56:02.81Z", "%Y-%m-%dT%H:%M:%S.%LZ"), dt(2017, 7, 4, 11, 56, 2, 810000)),  # jstests
    (*_dfs("2017-07-04T11:56.02.8", "%Y-%m-%dT%H:%M.%S.%L"), dt(2017, 7, 4, 11, 56, 2, 800000)),    # jstests
    (*_dfs("2017-07-04T11:56.02", "%Y-%m-%dT%H:%M.%S", timezone="Europe/London"), dt(2017, 7, 4, 10, 56, 2)),
    (*_dfs("4/26/1992:+0445", "%m/%d/%Y:%z"), dt(1992, 4, 25, 19, 15)),                               # jstests
    (*_dfs("4/26/1992:+285", "%m/%d/%Y:%Z"), dt(1992, 4, 25, 19, 15)),                                # jstests
    (*_dfs("1992 % 04 % 26", "%Y %% %m %% %d"), dt(1992, 4, 26)),                                     # jstests
    (*_dfs("Day: 05 Month: 12 Year: 1988", "Day: %d Month: %m Year: %Y"), dt(1988, 12, 5)),           # jstests
    (*_dfs("2017", "%G"), dt(2017, 1, 2)),                                                           # jstests
    (*_dfs("2017, Week 53", "%G, Week %V"), dt(2018, 1, 1)),                                         # jstests
    (*_dfs("2017, Day 5", "%G, Day %u"), dt(2017, 1, 6)),                                            # jstests
    (*_dfs("53.7.2017", "%V.%u.%G"), dt(2018, 1, 7)),                                                # jstests
    (*_dfs("1.1.1", "%V.%u.%G"), dt(1, 1, 1)),                                                       # jstests
    (*_dfs("2017-07-14T12:02:44.771 GMT+02:00", "%Y-%m-%dT%H:%M:%S.%L%z"), dt(2017, 7, 14, 10, 2, 44, 771000)),
    (*_dfs("2017-07-14T12:02:44.771+03", "%Y-%m-%dT%H:%M:%S.%L%z"), dt(2017, 7, 14, 9, 2, 44, 771000)),
    (*_dfs("2017-07-14T12:02:44.771+03:30", "%Y-%m-%dT%H:%M:%S.%L%z"), dt(2017, 7, 14, 8, 32, 44, 771000)),
    (*_dfs("2017-07-14T12:02:44.771 UTC", "%Y-%m-%dT%H:%M:%S.%L%z"), dt(2017, 7, 14, 12, 2, 44, 771000)),
    # timelib_get_nr reads up to 4 (%Y), 2 (%m %d %H) digits; %j is 0-based (d = tmp + 1)
    (*_dfs("17-7-4 9:05", "%Y-%m-%d %H:%M"), dt(17, 7, 4, 9, 5)),
    (*_dfs("2017-039", "%Y-%j"), dt(2017, 2, 9)),
    (*_dfs("jul 4 2017", "%b %d %Y"), dt(2017, 7, 4)),
    (*_dfs("Sept 4 2017", "%B %d %Y"), dt(2017, 9, 4)),
    (*_dfs("2018-01", "%Y-%m-%d"), None, "error parsing date string"),                       # jstests: data missing
    (*_dfs("2018-01", "%Y"), None, "error parsing date string"),                             # jstests: trailing data
    (*_dfs("1992-26-04", "Y-d-m"), None, "error parsing date string"),                       # jstests
    (*_dfs("ISO Day 6", "ISO Day %u"), None, "error parsing date string"),                   # jstests
    (*_dfs("ISO Week 1, 2018", "ISO Week %V, %Y"), None, "error parsing date string"),       # jstests: mixing
    (*_dfs("12/31/2018", "%m/%d/%G"), None, "error parsing date string"),                    # jstests: mixing
    (*_dfs("2017-07", "%Y-%m"), None, "error parsing date string"),                          # incomplete
    (*_dfs("2017-02-30", "%Y-%m-%d"), None, "error parsing date string"),                    # invalid date
    (*_dfs("2017-07-04 24:00", "%Y-%m-%d %H:%M"), None, "error parsing date string"),        # invalid time
    (*_dfs("2017-07-04 9:5", "%Y-%m-%d %H:%M"), None, "error parsing date string"),          # %M: 2 digits
    (*_dfs("4/26/1992:+0445", "%m/%d/%Y:%z", timezone="+0500"), None, "cannot pass in a date/time string"),
    (*_dfs("2017-02-30", "%Y-%m-%d", onError="E"), "E"),
]


def _dfs_plain(text, **kw):
    return ({}, {"$dateFromString": {"dateString": text, **kw}})


# $dateFromString without a format: timelib_strtotime's forms, as jstests/aggregation/
# expressions/date_from_string.js expects them
FROM_STRING_FORMS = [
    (*_dfs_plain("2017-07-14T12:02:44.771 GMT"), dt(2017, 7, 14, 12, 2, 44, 771000)),
    (*_dfs_plain("2017-07-14T12:02:44.771 GMT+00"), dt(2017, 7, 14, 12, 2, 44, 771000)),
    (*_dfs_plain("2017-07-14T12:02:44.771 GMT+02:00"), dt(2017, 7, 14, 10, 2, 44, 771000)),
    (*_dfs_plain("2017-07-14T12:02:44.771 UTC"), dt(2017, 7, 14, 12, 2, 44, 771000)),
    (*_dfs_plain("2017-07-14T12:02:44.771 Z"), dt(2017, 7, 14, 12, 2, 44, 771000)),
    (*_dfs_plain("2017-07-04 12:48:07 GMT+0545"), dt(2017, 7, 4, 7, 3, 7)),
    (*_dfs_plain("2017-07-04 12:48:07 GMT-0200"), dt(2017, 7, 4, 14, 48, 7)),
    (*_dfs_plain("7/4/17"), dt(2017, 7, 4)),
    (*_dfs_plain("04-07-2017"), dt(2017, 7, 4)),
    (*_dfs_plain("2017-07-04T11:56.02"), dt(2017, 7, 4, 11, 56, 2)),
    (*_dfs_plain("2017-07-04T11:56.02.813"), dt(2017, 7, 4, 11, 56, 2, 813000)),
    (*_dfs_plain("2017-07-04T11:56.02", timezone="Europe/London"), dt(2017, 7, 4, 10, 56, 2)),
    (*_dfs_plain("2017-07-12T22:23:55 GMT+02:00", timezone="Europe/Amsterdam"), None, "cannot pass in"),
    (*_dfs_plain("12:50:53"), None, "error parsing date string"),
]


# ExpressionConvert (performConvertToDate): a string converts with
# TimeZoneDatabase::fromString(str, utcZone), the parser $dateFromString uses without a format
TO_DATE_FORMS = [
    ({"s": s}, {"$toDate": "$s"}, want) for s, want in [
        ("2017-07-14T12:02:44.771 GMT+02:00", dt(2017, 7, 14, 10, 2, 44, 771000)),
        ("2017-07-04 12:48:07 GMT+0545", dt(2017, 7, 4, 7, 3, 7)),
        ("7/4/17", dt(2017, 7, 4)),
        ("04-07-2017", dt(2017, 7, 4)),
        ("oct 20 2020", dt(2020, 10, 20)),
        ("2017-07-04T11:56.02", dt(2017, 7, 4, 11, 56, 2)),
        ("2018-03-15 +10:00", dt(2018, 3, 14, 14)),
    ]
] + [
    ({"s": "12:50:53"}, {"$toDate": "$s"}, None, "cannot convert string"),
    ({"s": "7/4/17"}, {"$convert": {"input": "$s", "to": "date"}}, dt(2017, 7, 4)),
]


def test_to_date_reads_what_date_from_string_reads(spark):
    run(spark, TO_DATE_FORMS)


def test_from_format(spark):
    run(spark, FROM_FORMAT)


def test_from_string_forms(spark):
    run(spark, FROM_STRING_FORMS)
