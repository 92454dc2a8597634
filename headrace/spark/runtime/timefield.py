"""A fast path for the common ``timeField``: an ISO-8601 date-time string in a document field.

``{"$dateFromString": {"dateString": "$f"}}`` (no other option) and ``{"$toDate": "$f"}`` over
a field holding e.g. ``"2026-11-21T10:00:00.123+00:00"`` compile, through the generic VARIANT
dispatch, to about 35 µs per document; a typed parse of the string is ~3 µs. So when the
field's value is a string in the strict form ``YYYY-MM-DDTHH:MM:SS[.fff](Z|±HH:MM)``, it is
parsed directly by Spark's string-to-timestamp cast (its own ISO-8601 parser, about twice as
fast as the ``DateTimeFormatter`` pattern :func:`headrace.spark.expr.dates_parse.parse_iso_date_ms`
uses, which was 6-9% of a warm solar batch's executor time); on that form both give the same
instant or both NULL (``tests/spark/runtime/test_timefield.py``: invalid dates, hour 24, leap
seconds, offsets beyond ±18:00, nine fraction digits, year 0000). ``$toDate`` of a field holding
a date takes that date. Anything else (another form, another type, an invalid date) falls back
to the generic expression, evaluated only for those rows (:mod:`.prepare`).
"""
from __future__ import annotations

from typing import Any

from pyspark.sql import Column
from pyspark.sql import functions as F

from .. import values as V

STRICT_ISO = (r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,9})?"
              r"(Z|[+-][0-9]{2}:[0-9]{2})$")


def field_of(time_field: Any) -> list[str] | None:
    """The field path (as keys) a ``timeField`` of one of the two fast forms reads, else None."""
    if not isinstance(time_field, dict) or len(time_field) != 1:
        return None
    (op, arg), = time_field.items()
    if op == "$dateFromString" and isinstance(arg, dict) and set(arg) == {"dateString"}:
        arg = arg["dateString"]
    elif op != "$toDate":
        return None
    if isinstance(arg, list) and len(arg) == 1:
        arg = arg[0]
    if not isinstance(arg, str) or not arg.startswith("$") or arg.startswith("$$") or len(arg) < 2:
        return None
    return arg[1:].split(".")


def fast_event_time(time_field: Any) -> Column | None:
    """A TIMESTAMP column (NULL where the fast path does not apply), or None for other forms."""
    keys = field_of(time_field)
    if keys is None:
        return None
    # a value of another type cast to a string (a number, a date "YYYY-MM-DD HH:...") never
    # matches the strict form, so the cast needs no type test
    s = F.try_variant_get(F.col("doc"), V.variant_path(*keys), "string")
    # MQL dates are milliseconds: truncated as the generic parse does
    iso = F.when(s.rlike(STRICT_ISO), F.timestamp_millis(F.unix_millis(s.try_cast("timestamp"))))
    if next(iter(time_field)) != "$toDate":
        return iso
    # $toDate of a date is that date (a date-valued field: change streams, documents with $date)
    date = V.as_timestamp(F.try_variant_get(F.col("doc"), V.variant_path(*keys), "variant"))
    return F.coalesce(iso, F.timestamp_millis(F.unix_millis(date)))
