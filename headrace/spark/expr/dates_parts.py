"""Date parts: ``$year $month $dayOfMonth $hour $minute $second $millisecond $dayOfWeek
$dayOfYear $week $isoWeek $isoWeekYear $isoDayOfWeek`` (``date``, ``[date]`` or ``{date,
timezone}``), ``$dateToParts`` and ``$dateFromParts`` (calendar or ISO week parts, out-of-range
parts carrying over).
"""
from __future__ import annotations

from typing import Any

from pyspark.sql import functions as F

from .. import values as V
from ..registry import Compiled, Ctx, expression, first_error
from ._common import CODE, compile_child, found, ntz_to_ms, nullish, v_date_ms, v_long, with_codes
from .dates_common import _Tz, _date_error, _date_ms, _local_ms, _parts, _utc_ms


def _date_and_tz(arg: Any) -> tuple[Any, Any]:
    if isinstance(arg, list):
        return arg[0], "UTC"
    if isinstance(arg, dict) and "date" in arg and not any(k.startswith("$") for k in arg):
        return arg["date"], arg.get("timezone", "UTC")
    return arg, "UTC"


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
    op = "$dateToParts"
    d = compile_child(arg["date"], ctx, op, "date")
    tz = _Tz(arg.get("timezone", "UTC"), ctx, op)
    iso = arg.get("iso8601", False)
    iso = iso["$literal"] if isinstance(iso, dict) and "$literal" in iso else iso
    # a computed iso8601 is read per document: null or missing gives null, a non-bool an error
    iso_c = None if isinstance(iso, bool) else compile_child(iso, ctx, op, "iso8601")
    time = ["hour", "minute", "second", "millisecond"]
    vals = [d.value] + ([iso_c.value] if iso_c is not None else [])

    def value(xs, cs):
        ms = _date_ms(xs[0], cs[0])
        p = _parts(_local_ms(ms, tz))
        p["day"] = p["dayOfMonth"]

        def obj(names):
            return V.make_object([(n, v_long(p[n])) for n in names + time])
        iso_obj, cal_obj = obj(["isoWeekYear", "isoWeek", "isoDayOfWeek"]), obj(["year", "month", "day"])
        if iso_c is None:
            out = iso_obj if iso else cal_obj
            null = F.lit(False)
        else:
            flag = V.as_bool_raw(xs[1])
            out, null = F.when(flag, iso_obj).when(~flag, cal_obj), nullish(cs[1])
        return F.when(null | nullish(cs[0]) | tz.is_null(), V.NULL).when(ms.isNotNull(), out)

    def error(xs, cs):
        e = _date_error(op, xs[0], cs[0])
        if iso_c is None:
            return e
        return F.coalesce(F.when(~nullish(cs[1]) & (cs[1] != CODE["bool"]), F.concat(
            F.lit(f"{op}: iso8601 must evaluate to a bool, found "), found(xs[1], cs[1]))), e)

    return Compiled(with_codes(vals, value),
                    first_error(d.error, iso_c.error if iso_c is not None else None, tz.error(op),
                                with_codes(vals, error)))


_PART_LIMITS = {"year": (1, 9999), "isoWeekYear": (1, 9999)}
#: MongoDB's kMinValueForDatePart / kMaxValueForDatePart (second and millisecond are unbounded)
_BOUNDED = ("month", "day", "hour", "minute", "isoWeek", "isoDayOfWeek")


@expression("$dateFromParts")
def date_from_parts(arg: dict, ctx: Ctx) -> Compiled:
    op = "$dateFromParts"
    iso = "isoWeekYear" in arg
    names = (["isoWeekYear", "isoWeek", "isoDayOfWeek"] if iso else ["year", "month", "day"]) + \
        ["hour", "minute", "second", "millisecond"]
    defaults = {"isoWeek": 1, "isoDayOfWeek": 1, "month": 1, "day": 1, "hour": 0, "minute": 0, "second": 0,
                "millisecond": 0}
    compiled = {n: compile_child(arg[n], ctx, op, n) for n in names if n in arg}
    tz = _Tz(arg.get("timezone", "UTC"), ctx, op)
    present = [n for n in names if n in compiled]

    def date_of(ints: dict, any_null):
        """The date from the parts as bound BIGINTs (NULL where one is not integral)."""
        ok = F.lit(True)
        for n in present:
            ok = ok & ints[n].isNotNull()
        lo, hi = _PART_LIMITS["isoWeekYear" if iso else "year"]
        year = ints["isoWeekYear" if iso else "year"]
        ok = ok & year.between(lo, hi)
        for n in _BOUNDED:
            if n in present:
                ok = ok & ints[n].between(-32768, 32767)
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
        # the local time and the instant bound once each; the local time only where ``ok``
        # (make_date raises outside the years 1-9999)
        return V.let(F.when(ok & local.between(-6e15, 6e15), local), lambda loc: F.when(
            any_null | tz.is_null(), V.NULL).when(loc.isNotNull(), V.let(_utc_ms(loc, tz), v_date_ms)))

    def with_ints(xs, cs, fn):
        """``fn(ints, any_null)`` with every part as a BIGINT bound once (defaults for the absent)."""
        got = dict(zip(present, xs))
        any_null = F.lit(False)
        for c in cs:
            any_null = any_null | nullish(c)
        return V.let_many([V.as_integral(got[n]) if n in got else F.lit(defaults[n]).cast("bigint") for n in names],
                          lambda *bound: fn(dict(zip(names, bound)), any_null))

    def value(xs, cs):
        return with_ints(xs, cs, date_of)

    def error(xs, cs):
        def errors(ints, any_null):
            errs = []
            for n, x, c in zip(present, xs, cs):
                errs.append(F.when(~nullish(c) & ints[n].isNull(),
                                   F.concat(F.lit(f"{op}: '{n}' must evaluate to an integer, found "), found(x, c))))
                if n in _PART_LIMITS:
                    lo, hi = _PART_LIMITS[n]
                    errs.append(F.when(~nullish(c) & ~ints[n].between(lo, hi), F.concat(
                        F.lit(f"{op}: '{n}' must evaluate to an integer in the range {lo} to {hi}, found "),
                        found(x, c))))
                if n in _BOUNDED:
                    errs.append(F.when(~nullish(c) & ~ints[n].between(-32768, 32767), F.concat(
                        F.lit(f"{op}: '{n}' must evaluate to a value in the range [-32768, 32767]; value "),
                        ints[n].cast("string"), F.lit(" is not in range"))))
            errs.append(F.when(~any_null & ~tz.is_null() & date_of(ints, any_null).isNull(),
                               F.lit(f"{op}: the parts do not make a date in range")))
            return F.coalesce(*errs)
        return with_ints(xs, cs, errors)

    vals = [compiled[n].value for n in present]
    err = with_codes(vals, error) if vals else None
    return Compiled(with_codes(vals, value) if vals else V.NULL,
                    first_error(*[compiled[n].error for n in present], tz.error(op), err))
