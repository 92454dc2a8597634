"""Aggregation expressions on Spark: MongoDB's documented examples of the date and type operators, as data
tables (the form of :mod:`test_expressions`)."""
from __future__ import annotations

import decimal

import pytest

from headrace import ejson
from _expr_helpers import MISSING as M, run_cases as run, utc_dt as dt

pytestmark = pytest.mark.spark

D = decimal.Decimal
OID = ejson.ObjectId("5ab9cbe531c2ab715d42129e")



DATES = [
    ({"date": dt(2014, 1, 1, 8, 15, 39, 736000)}, {"$year": "$date"}, 2014),
    ({"date": dt(2014, 1, 1, 8, 15, 39, 736000)}, {"$month": "$date"}, 1),
    ({"date": dt(2014, 1, 1, 8, 15, 39, 736000)}, {"$dayOfMonth": "$date"}, 1),
    ({"date": dt(2014, 1, 1, 8, 15, 39, 736000)}, {"$hour": "$date"}, 8),
    ({"date": dt(2014, 1, 1, 8, 15, 39, 736000)}, {"$minute": "$date"}, 15),
    ({"date": dt(2014, 1, 1, 8, 15, 39, 736000)}, {"$second": "$date"}, 39),
    ({"date": dt(2014, 1, 1, 8, 15, 39, 736000)}, {"$millisecond": "$date"}, 736),
    ({"date": dt(2014, 1, 1, 8, 15, 39, 736000)}, {"$dayOfYear": "$date"}, 1),
    ({"date": dt(2014, 1, 1, 8, 15, 39, 736000)}, {"$dayOfWeek": "$date"}, 4),
    ({"date": dt(2014, 1, 1, 8, 15, 39, 736000)}, {"$week": "$date"}, 0),
    ({"date": dt(2016, 1, 1)}, {"$isoWeek": "$date"}, 53),
    ({"date": dt(2016, 1, 1)}, {"$isoWeekYear": "$date"}, 2015),
    ({"date": dt(2016, 1, 1)}, {"$isoDayOfWeek": "$date"}, 5),
    ({"date": dt(2014, 1, 1, 8, 15, 39, 736000)}, {"$hour": {"date": "$date", "timezone": "America/New_York"}}, 3),
    ({"date": dt(2014, 1, 1, 8, 15, 39, 736000)}, {"$minute": {"date": "$date", "timezone": "+0530"}}, 45),
    ({"date": dt(2014, 1, 1, 8, 15, 39, 736000)}, {"$hour": ["$date"]}, 8),
    ({"date": OID}, {"$year": "$date"}, 2018),
    ({}, {"$year": "$date"}, None),
    ({"date": "2014-01-01"}, {"$year": "$date"}, None, "can't convert"),
    # $dateToString (docs)
    ({"date": dt(2014, 1, 1, 8, 15, 39, 736000)}, {"$dateToString": {"format": "%Y-%m-%d", "date": "$date"}},
     "2014-01-01"),
    ({"date": dt(2014, 1, 1, 8, 15, 39, 736000)},
     {"$dateToString": {"format": "%H:%M:%S:%L%z", "date": "$date", "timezone": "America/New_York"}},
     "03:15:39:736-0500"),
    ({"date": dt(2014, 1, 1, 8, 15, 39, 736000)},
     {"$dateToString": {"format": "%Z", "date": "$date", "timezone": "America/New_York"}}, "-300"),
    ({"date": dt(2014, 1, 1, 8, 15, 39, 736000)}, {"$dateToString": {"date": "$date"}}, "2014-01-01T08:15:39.736Z"),
    ({"date": dt(2014, 1, 1, 8, 15, 39, 736000)},
     {"$dateToString": {"format": "%j %w %U %V %u %G %b %B %%", "date": "$date"}},
     "001 4 00 01 3 2014 Jan January %"),
    ({}, {"$dateToString": {"date": "$date", "onNull": "none"}}, "none"),
    ({"date": None}, {"$dateToString": {"date": "$date"}}, None),
    # $dateFromString (docs)
    ({"s": "2017-02-08T12:10:40.787"}, {"$dateFromString": {"dateString": "$s", "timezone": "America/New_York"}},
     dt(2017, 2, 8, 17, 10, 40, 787000)),
    ({"s": "2017-02-08"}, {"$dateFromString": {"dateString": "$s"}}, dt(2017, 2, 8)),
    ({"s": "2017-02-08T12:10:40Z"}, {"$dateFromString": {"dateString": "$s"}}, dt(2017, 2, 8, 12, 10, 40)),
    ({"s": "2017-02-08T12:10:40+01:00"}, {"$dateFromString": {"dateString": "$s"}}, dt(2017, 2, 8, 11, 10, 40)),
    ({"s": "06-15-2018"}, {"$dateFromString": {"dateString": "$s", "format": "%m-%d-%Y"}}, dt(2018, 6, 15)),
    ({"s": "15-06-2018"}, {"$dateFromString": {"dateString": "$s", "format": "%d-%m-%Y"}}, dt(2018, 6, 15)),
    ({"s": "WEDNESDAY"}, {"$dateFromString": {"dateString": "$s"}}, None, "error parsing"),
    ({"s": "WEDNESDAY"}, {"$dateFromString": {"dateString": "$s", "onError": "bad"}}, "bad"),
    ({"s": None}, {"$dateFromString": {"dateString": "$s", "onNull": dt(1970, 1, 1)}}, dt(1970, 1, 1)),
    ({"s": "2017-02-08T12:10:40Z"}, {"$dateFromString": {"dateString": "$s", "timezone": "Europe/London"}},
     None, "timezone argument"),
    # $dateTrunc (docs: binSize and startOfWeek)
    ({"d": dt(2021, 3, 15, 10, 30)}, {"$dateTrunc": {"date": "$d", "unit": "month"}}, dt(2021, 3, 1)),
    ({"d": dt(2021, 3, 15, 10, 30)}, {"$dateTrunc": {"date": "$d", "unit": "hour", "binSize": 2}}, dt(2021, 3, 15, 10)),
    ({"d": dt(2021, 3, 15, 11, 30)}, {"$dateTrunc": {"date": "$d", "unit": "hour", "binSize": 2}}, dt(2021, 3, 15, 10)),
    ({"d": dt(2021, 3, 17, 10, 30)}, {"$dateTrunc": {"date": "$d", "unit": "week"}}, dt(2021, 3, 14)),
    ({"d": dt(2021, 3, 17, 10, 30)}, {"$dateTrunc": {"date": "$d", "unit": "week", "startOfWeek": "monday"}},
     dt(2021, 3, 15)),
    ({"d": dt(2021, 3, 15, 10, 30)}, {"$dateTrunc": {"date": "$d", "unit": "quarter"}}, dt(2021, 1, 1)),
    ({"d": dt(2021, 3, 15, 10, 30)}, {"$dateTrunc": {"date": "$d", "unit": "year", "binSize": 2}}, dt(2020, 1, 1)),
    ({"d": dt(2021, 3, 15, 3, 30)}, {"$dateTrunc": {"date": "$d", "unit": "day", "timezone": "America/New_York"}},
     dt(2021, 3, 14, 5)),  # local midnight was still EST (-05:00)
    # $dateAdd / $dateSubtract / $dateDiff
    ({"d": dt(2021, 1, 31)}, {"$dateAdd": {"startDate": "$d", "unit": "month", "amount": 1}}, dt(2021, 2, 28)),
    ({"d": dt(2021, 1, 31)}, {"$dateAdd": {"startDate": "$d", "unit": "day", "amount": 3}}, dt(2021, 2, 3)),
    ({"d": dt(2020, 10, 24, 18, 10)},
     {"$dateAdd": {"startDate": "$d", "unit": "hour", "amount": 2}}, dt(2020, 10, 24, 20, 10)),
    ({"d": dt(2021, 3, 13, 12)},
     {"$dateAdd": {"startDate": "$d", "unit": "day", "amount": 1, "timezone": "America/New_York"}},
     dt(2021, 3, 14, 11)),  # the day has 23 hours there
    ({"d": dt(2021, 1, 31)}, {"$dateSubtract": {"startDate": "$d", "unit": "hour", "amount": 3}},
     dt(2021, 1, 30, 21)),
    ({"d": dt(2021, 3, 31)}, {"$dateSubtract": {"startDate": "$d", "unit": "month", "amount": 1}}, dt(2021, 2, 28)),
    ({"a": dt(2020, 12, 31, 23), "b": dt(2021, 1, 1, 1)},
     {"$dateDiff": {"startDate": "$a", "endDate": "$b", "unit": "year"}}, 1),
    ({"a": dt(2020, 12, 31, 23), "b": dt(2021, 1, 1, 1)},
     {"$dateDiff": {"startDate": "$a", "endDate": "$b", "unit": "day"}}, 1),
    ({"a": dt(2020, 12, 31, 23), "b": dt(2021, 1, 1, 1)},
     {"$dateDiff": {"startDate": "$a", "endDate": "$b", "unit": "hour"}}, 2),
    ({"a": dt(2021, 1, 1), "b": dt(2021, 3, 1)},
     {"$dateDiff": {"startDate": "$a", "endDate": "$b", "unit": "month"}}, 2),
    ({"a": dt(2021, 3, 1), "b": dt(2021, 1, 1)},
     {"$dateDiff": {"startDate": "$a", "endDate": "$b", "unit": "month"}}, -2),
    # $dateToParts / $dateFromParts (docs)
    ({"date": dt(2017, 1, 1, 1, 29, 9, 123000)}, {"$dateToParts": {"date": "$date"}},
     {"year": 2017, "month": 1, "day": 1, "hour": 1, "minute": 29, "second": 9, "millisecond": 123}),
    ({"date": dt(2017, 1, 1, 1, 29, 9, 123000)}, {"$dateToParts": {"date": "$date", "iso8601": True}},
     {"isoWeekYear": 2016, "isoWeek": 52, "isoDayOfWeek": 7, "hour": 1, "minute": 29, "second": 9,
      "millisecond": 123}),
    ({"date": dt(2017, 1, 1, 1, 29, 9, 123000)}, {"$dateToParts": {"date": "$date", "timezone": "America/New_York"}},
     {"year": 2016, "month": 12, "day": 31, "hour": 20, "minute": 29, "second": 9, "millisecond": 123}),
    ({}, {"$dateFromParts": {"year": 2017, "month": 2, "day": 8, "hour": 12}}, dt(2017, 2, 8, 12)),
    ({}, {"$dateFromParts": {"isoWeekYear": 2017, "isoWeek": 6, "isoDayOfWeek": 3, "hour": 12}}, dt(2017, 2, 8, 12)),
    ({}, {"$dateFromParts": {"year": 2016, "month": 12, "day": 31, "hour": 23, "minute": 46, "second": 12,
                             "timezone": "America/New_York"}}, dt(2017, 1, 1, 4, 46, 12)),
    ({}, {"$dateFromParts": {"year": 2017, "month": 14, "day": 1}}, dt(2018, 2, 1)),
    ({}, {"$dateFromParts": {"year": 2017, "month": 1, "day": 0}}, dt(2016, 12, 31)),
    ({"y": None}, {"$dateFromParts": {"year": "$y"}}, None),
    ({"y": "x"}, {"$dateFromParts": {"year": "$y"}}, None, "must evaluate to an integer"),
]

TYPES = [
    ({"a": "5"}, {"$toInt": "$a"}, 5),
    ({"a": "abc"}, {"$toInt": "$a"}, None, "cannot convert"),
    ({"a": 5.9}, {"$toInt": "$a"}, 5),
    ({"a": -5.9}, {"$toInt": "$a"}, -5),
    ({"a": True}, {"$toInt": "$a"}, 1),
    ({"a": 2**40}, {"$toInt": "$a"}, None, "cannot convert"),
    ({"a": None}, {"$toInt": "$a"}, None),
    ({"a": "5.5"}, {"$toDouble": "$a"}, 5.5),
    ({"a": "1e3"}, {"$toDouble": "$a"}, 1000.0),
    ({"a": dt(2018, 3, 27, 16, 58, 51, 538000)}, {"$toDouble": "$a"}, 1522169931538.0),
    ({"a": "5.5.5"}, {"$toDouble": "$a"}, None, "cannot convert"),
    ({"a": dt(2018, 3, 27, 16, 58, 51, 538000)}, {"$toLong": "$a"}, 1522169931538),
    ({"a": "5"}, {"$toLong": "$a"}, 5),
    ({"a": "5.5"}, {"$toDecimal": "$a"}, D("5.5")),
    ({"a": 2.5}, {"$toDecimal": "$a"}, D("2.50000000000000")),     # Decimal128(double): 15 digits
    ({"a": dt(2018, 3, 27, 16, 58, 51, 538000)}, {"$toString": "$a"}, "2018-03-27T16:58:51.538Z"),
    ({"a": 2.5}, {"$toString": "$a"}, "2.5"),
    # a double as MongoDB's str::stream writes it: C's %g (six significant digits)
    ({"a": 1.23456789}, {"$toString": "$a"}, "1.23457"),
    ({"a": 1e20}, {"$toString": "$a"}, "1e+20"),
    ({"a": 2.5e-7}, {"$toString": "$a"}, "2.5e-07"),
    ({"a": 1234567.0}, {"$toString": "$a"}, "1.23457e+06"),
    ({"a": 0.0001}, {"$toString": "$a"}, "0.0001"),
    ({"a": 1e-310}, {"$toString": "$a"}, "1e-310"),
    ({"a": -0.0}, {"$toString": "$a"}, "-0"),
    ({"a": float("-inf")}, {"$toString": "$a"}, "-Infinity"),
    ({"a": float("inf")}, {"$toUpper": "$a"}, "INF"),
    ({"a": 123456.4}, {"$substrBytes": ["$a", 0, 10]}, "123456"),
    ({"a": 1}, {"$toString": "$a"}, "1"),
    ({"a": True}, {"$toString": "$a"}, "true"),
    ({"a": OID}, {"$toString": "$a"}, "5ab9cbe531c2ab715d42129e"),
    ({"a": [1]}, {"$toString": "$a"}, None, "cannot convert"),
    ({"a": "5ab9cbe531c2ab715d42129e"}, {"$toObjectId": "$a"}, OID),
    ({"a": "5ab9cbe531c2ab715d4212"}, {"$toObjectId": "$a"}, None, "cannot convert"),
    ({"a": OID}, {"$toDate": "$a"}, dt(2018, 3, 27, 4, 43, 17)),
    ({"a": "2018-03-03"}, {"$toDate": "$a"}, dt(2018, 3, 3)),
    ({"a": "2018-03-20 11:00:06 +0500"}, {"$toDate": "$a"}, dt(2018, 3, 20, 6, 0, 6)),
    ({"a": 1522039108044}, {"$toDate": "$a"}, dt(2018, 3, 26, 4, 38, 28, 44000)),
    ({"a": 120000000000.5}, {"$toDate": "$a"}, dt(1973, 10, 20, 21, 20)),
    ({"a": "x"}, {"$toDate": "$a"}, None, "cannot convert"),
    ({"a": "false"}, {"$toBool": "$a"}, True),
    ({"a": ""}, {"$toBool": "$a"}, True),
    ({"a": 0}, {"$toBool": "$a"}, False),
    ({"a": D("0")}, {"$toBool": "$a"}, False),
    ({"a": [1]}, {"$toBool": "$a"}, True),
    ({"a": "x"}, {"$convert": {"input": "$a", "to": "int", "onError": "err", "onNull": "nul"}}, "err"),
    ({}, {"$convert": {"input": "$a", "to": "int", "onError": "err", "onNull": "nul"}}, "nul"),
    ({"a": "12"}, {"$convert": {"input": "$a", "to": 16}}, 12),
    ({"a": "12", "t": "double"}, {"$convert": {"input": "$a", "to": "$t"}}, 12.0),
    ({"a": "12", "t": "bogus"}, {"$convert": {"input": "$a", "to": "$t"}}, None, "unknown target"),
    ({"a": 1.5}, {"$type": "$a"}, "double"),
    ({"a": 1}, {"$type": "$a"}, "int"),
    ({"a": 2**40}, {"$type": "$a"}, "long"),
    ({"a": D("1")}, {"$type": "$a"}, "decimal"),
    ({"a": "s"}, {"$type": "$a"}, "string"),
    ({"a": {"x": 1}}, {"$type": "$a"}, "object"),
    ({"a": [2]}, {"$type": "$a"}, "array"),
    ({"a": OID}, {"$type": "$a"}, "objectId"),
    ({"a": None}, {"$type": "$a"}, "null"),
    ({}, {"$type": "$a"}, "missing"),
    ({"a": D("1")}, {"$isNumber": "$a"}, True),
    ({"a": "1"}, {"$isNumber": "$a"}, False),
    ({}, {"$isNumber": "$a"}, False),
]


def test_dates(spark):
    run(spark, DATES)


def test_types(spark):
    run(spark, TYPES)
