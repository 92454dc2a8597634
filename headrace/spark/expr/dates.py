"""Dates: ``$dateFromString $dateToString $dateTrunc $dateAdd $dateSubtract $dateDiff $year
$month $dayOfMonth $dayOfWeek $dayOfYear $hour $minute $second $millisecond $week $isoWeek
$isoWeekYear $isoDayOfWeek $dateToParts $dateFromParts`` (``$toDate`` is in ``types``).

Dates are instants (milliseconds); everything is computed in UTC unless a ``timezone`` (an
Olson name such as ``"America/New_York"`` or an offset ``"+05:30"``, ``"-0500"``, ``"+03"``)
asks for local time (offsets are read as MongoDB reads them, two-digit hours and minutes
unchecked, and computed without Spark's time zones); a ``timezone`` that is (or evaluates to)
null or missing gives null.
Date arguments may be dates, ObjectIds (their creation time) or Timestamps (their seconds);
null or missing gives null; anything else is an error (``can't convert from BSON type string to Date``).

- Parts: ``$dayOfWeek`` 1 (Sunday) to 7; ``$isoDayOfWeek`` 1 (Monday) to 7; ``$week`` 0 to 53
  (weeks start on Sunday, days before the first Sunday are week 0); ``$isoWeek`` /
  ``$isoWeekYear`` ISO 8601. The date-part operators take ``date``, ``[date]`` or
  ``{date, timezone}``.
- ``$dateToString``: default format ``%Y-%m-%dT%H:%M:%S.%LZ``, without the ``Z`` in a
  timezone other than MongoDB's UTC zone (``"UTC"`` or a zero offset; ``"GMT"`` is another
  zone, as it is for ``$dateFromString``'s refusal of a string's own offset); specifiers ``%d %G %H %j %L
  %m %M %S %w %u %U %V %Y %z %Z %b %B %%``; ``onNull`` for a null or missing date; a
  ``format`` given as null gives null (as it does for ``$dateFromString``); a ``%Y`` or ``%G``
  year outside 0-9999 is an error.
- ``$dateFromString``: ISO 8601 strings (date, date-time, optional fraction, ``Z`` or offset;
  a space may replace ``T``; ``hh:mm.ss``; a zone ``GMT+02:00``, ``GMT``, ``UTC`` or ``Z`` after
  the time), ``m/d/y`` and ``d-m-yyyy`` dates, dates written with a month name (``oct 20 2020``,
  ``WED jan 31 12:05:28 +03:30 1996``), or a ``format`` built from the specifiers above, read as timelib
  does (``%Y`` up to 4 digits, ``%m %d %H`` up to 2, ``%M %S`` exactly 2, ``%L`` up to 3 scaled
  to milliseconds, ``%j`` a 0-based day of the year, ``%G %V %u`` an ISO week date, ``%b %B``
  any month name, ``%z`` an offset, ``%Z`` offset minutes; the date must be complete and
  valid); ``timezone`` applies to strings without an offset; ``onError`` / ``onNull``.
- ``$dateTrunc``: bins of ``binSize`` units counted from 2000-01-01T00:00:00 local time (weeks
  from the first ``startOfWeek`` day on or after it, ``startOfWeek`` read, and null giving
  null, only for the unit week, as in ``$dateDiff``; bins of hours and smaller are durations
  from that instant, whatever the offset of the date truncated; a binSize above 10^11 with
  the unit day or larger, or one overflowing in milliseconds, is an error); ``$dateAdd`` /
  ``$dateSubtract`` add calendar units in local time (months clamp to the month's end) and
  fixed units as durations;
  ``$dateDiff`` counts unit boundaries crossed between the two dates in local time, hours,
  minutes and seconds corrected by the change of UTC offset between them (whole units,
  truncated), milliseconds the plain difference.
- ``$dateToParts`` / ``$dateFromParts``: calendar or ISO week parts (a computed ``iso8601`` is
  read per document: null gives null, a non-bool is an error); out-of-range parts carry
  over (month 14 is February of the next year); month, day, hour, minute, isoWeek and
  isoDayOfWeek must be within -32768 to 32767 (an error beyond), second and millisecond are
  unbounded.

The operators are in ``dates_parts`` (the date-part operators, ``$dateToParts``,
``$dateFromParts``), ``dates_format`` (``$dateToString``, ``$dateFromString``) and
``dates_arith`` (``$dateTrunc $dateAdd $dateSubtract $dateDiff``), which share ``dates_common``
(date and timezone arguments); importing this module registers them all.

Deviations: an Olson name that Spark's Java does not know (``Factory``, a zone
newer than its tzdata; the link ``ROC`` is resolved) is an unrecognized time zone (error); a
``format`` that is not a constant string is refused at run time (error); a
``%z`` in a ``$dateFromString`` format reads offsets and the abbreviations UTC, GMT and Z only
(timelib also knows EST, CEST, military letters...).

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

# importing the parts registers their operators (in this order, as before the split)
from . import dates_common, dates_parts, dates_format, dates_arith  # noqa: F401
from .dates_arith import REF_MS, UNIT_MONTHS, UNIT_MS, date_diff, date_trunc
from .dates_common import DATE, OID
from .dates_format import date_from_string, date_to_string, format_date
from .dates_parts import date_from_parts, date_to_parts

__all__ = [
    "DATE", "OID", "REF_MS", "UNIT_MONTHS", "UNIT_MS", "date_diff", "date_from_parts", "date_from_string",
    "date_to_parts", "date_to_string", "date_trunc", "format_date",
]
