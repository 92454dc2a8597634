"""Date arithmetic: ``$dateTrunc`` (bins counted from 2000-01-01 local time), ``$dateAdd`` /
``$dateSubtract`` (calendar units in local time, fixed units as durations) and ``$dateDiff``
(unit boundaries crossed), with their ``unit`` and ``startOfWeek`` arguments constant or computed.
"""
from __future__ import annotations

from typing import Any

from pyspark.sql import Column
from pyspark.sql import functions as F

from .. import values as V
from ..registry import Compiled, Ctx, expression, first_error
from ._common import compile_child, found, ms_to_ntz, ntz_to_ms, nullish, v_date_ms, v_long, with_codes
from .dates_common import _Tz, _const_str, _date_error, _date_ms, _local_ms, _utc_ms

REF_MS = 946_684_800_000  # 2000-01-01T00:00:00Z
UNIT_MS = {"millisecond": 1, "second": 1000, "minute": 60_000, "hour": 3_600_000, "day": 86_400_000,
           "week": 7 * 86_400_000}
UNIT_MONTHS = {"month": 1, "quarter": 3, "year": 12}
_SUBDAY = ("millisecond", "second", "minute", "hour")
_DOW = {"sunday": 0, "sun": 0, "monday": 1, "mon": 1, "tuesday": 2, "tue": 2, "wednesday": 3, "wed": 3,
        "thursday": 4, "thu": 4, "friday": 5, "fri": 5, "saturday": 6, "sat": 6}


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


def _sow(sow_const: Any, sow_c: Compiled | None, x: Column | None) -> Column:
    """The startOfWeek day (0 = Sunday), NULL for null or an unknown name."""
    if sow_c is None:
        return F.lit(_DOW[sow_const.lower()] if sow_const is not None else None).cast("int")
    days = F.create_map(*[a for k, v in _DOW.items() for a in (F.lit(k), F.lit(v))])
    return F.try_element_at(days, F.lower(V.as_string(x)))


def _is_week(unit_const: str | None, unit_col: Column | None) -> Column:
    return F.lit(unit_const == "week") if unit_col is None else F.coalesce(unit_col == "week", F.lit(False))


def _sow_null(unit_const, unit_col, sow_const, sow_c, code) -> Column:
    """MongoDB evaluates startOfWeek only for the unit week: null there gives null."""
    return _is_week(unit_const, unit_col) & (F.lit(sow_const is None) if sow_c is None else nullish(code))


def _sow_error(op: str, unit_const, unit_col, sow_c, x, code) -> Column | None:
    if sow_c is None:
        return None
    return F.when(_is_week(unit_const, unit_col) & ~nullish(code) & _sow(None, sow_c, x).isNull(),
                  F.concat(F.lit(f"{op} parameter 'startOfWeek' value cannot be recognized as a day of a week: "),
                           F.coalesce(F.to_json(x), F.lit(""))))


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
    tz = _Tz(arg.get("timezone", "UTC"), ctx, op)
    unit_const, unit_c = _const_or_compiled(arg["unit"], ctx, op, "unit")
    bin_spec = arg.get("binSize", 1)
    bin_c = compile_child(bin_spec, ctx, op, "binSize")
    sow_const, sow_c = _const_or_compiled(arg.get("startOfWeek", "sunday"), ctx, op, "startOfWeek")
    extra = [bin_c.value] + ([unit_c.value] if unit_c else []) + ([sow_c.value] if sow_c else [])

    def compute(xs, cs):
        """(the truncated instant, NULL past MongoDB's limits; whether the result is null)."""
        x, c = xs[0], cs[0]
        binv = V.as_integral(xs[1])
        unit_col = V.as_string(xs[2]) if unit_c else None
        sow = _sow(sow_const, sow_c, xs[-1])
        ms = _date_ms(x, c)
        local = _local_ms(ms, tz)

        def trunc(u: str) -> Column:
            if u in UNIT_MONTHS:
                size = binv * UNIT_MONTHS[u]
                mi = _month_index(local)
                out = _utc_ms(_months_to_ms(F.floor(mi / size) * size), tz)
            elif u not in ("day", "week"):
                # bins of the instant, from 2000-01-01T00:00 local time at that January's offset
                size = F.try_multiply(binv, F.lit(UNIT_MS[u]))  # NULL: "dateTrunc overflowed"
                ref = F.lit(2 * REF_MS) - _local_ms(F.lit(REF_MS), tz)
                return ms - F.pmod(ms - ref, size)
            else:
                ref = _week_ref(sow) if u == "week" else F.lit(REF_MS)
                n = F.floor((local - ref) / UNIT_MS[u]).cast("bigint")  # units from the reference
                lower = F.try_multiply(n - F.pmod(n, binv), F.lit(UNIT_MS[u]))
                out = _utc_ms(ref + F.when(lower.between(-6e15, 6e15), lower), tz)
            return F.when(binv <= 100_000_000_000, out)  # "dateTrunc unsupported binSize value"

        null = nullish(c) | tz.is_null() | _sow_null(unit_const, unit_col, sow_const, sow_c, cs[-1])
        for cc in cs[1:3 if unit_c else 2]:
            null = null | nullish(cc)
        res = F.when(ms.isNotNull() & (binv > 0), _unit_cases(unit_const, unit_col, trunc))
        return res, null, ms.isNotNull() & (binv > 0) & (unit_col.isin(*UNIT_MS, *UNIT_MONTHS)
                                                         if unit_col is not None else F.lit(True))

    def value(xs, cs):
        res, null, _ = compute(xs, cs)
        return F.when(null, V.NULL).when(res.isNotNull(), v_date_ms(res))

    def error(xs, cs):
        binv = V.as_integral(xs[1])
        unit_col = V.as_string(xs[2]) if unit_c else None
        res, null, valid = compute(xs, cs)
        errs = [_date_error(op, xs[0], cs[0]), _sow_error(op, unit_const, unit_col, sow_c, xs[-1], cs[-1]),
                F.when(~nullish(cs[1]) & (binv.isNull() | (binv <= 0)),
                       F.concat(F.lit(f"{op}: binSize must be a positive integer, found "), found(xs[1], cs[1]))),
                F.when(~null & valid & res.isNull(), F.when(
                    (binv > 100_000_000_000) & ~_unit_cases(unit_const, unit_col, lambda u: F.lit(u in _SUBDAY)),
                    F.lit(f"{op}: dateTrunc unsupported binSize value"))
                    .otherwise(F.lit(f"{op}: dateTrunc overflowed")))]
        return F.coalesce(*[e for e in errs if e is not None])

    vals = [d.value] + extra
    return Compiled(with_codes(vals, value),
                    first_error(d.error, bin_c.error, tz.error(op), _unit_error(op, unit_c),
                                sow_c.error if sow_c else None, with_codes(vals, error)))


def _add(op: str, sign: int):
    def impl(arg: dict, ctx: Ctx) -> Compiled:
        d = compile_child(arg["startDate"], ctx, op, "startDate")
        tz = _Tz(arg.get("timezone", "UTC"), ctx, op)
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
            # MongoDB's extractDateArithmetics: startDate, unit and amount evaluated in turn, each
            # null or missing making the result null before anything after it is looked at; then
            # the timezone (null: null); only then the startDate's and the amount's types
            if unit_c is None and unit_const is None:
                return F.lit(None).cast("string")      # a null unit: the result is null
            n = V.as_integral(xs[1])
            valid = _date_ms(xs[0], cs[0]).isNotNull() & n.isNotNull()
            checks = F.coalesce(_date_error(op, xs[0], cs[0]),
                                F.when(n.isNull(), F.concat(F.lit(f"{op}: amount must be an integral number, found "),
                                                            found(xs[1], cs[1]))),
                                F.when(valid & value(xs, cs).isNull(),
                                       F.lit(f"{op}: the resulting date is out of range")))
            after_amount = first_error(tz.error(op), F.when(~tz.is_null(), checks))
            after_unit = first_error(amount.error, F.when(~nullish(cs[1]), after_amount))
            if unit_c:
                after_unit = first_error(_unit_error(op, unit_c), F.when(~nullish(cs[2]), after_unit))
            return F.when(~nullish(cs[0]), after_unit)

        return Compiled(with_codes(vals, value), first_error(d.error, with_codes(vals, error)))
    return impl


expression("$dateAdd")(_add("$dateAdd", 1))
expression("$dateSubtract")(_add("$dateSubtract", -1))


@expression("$dateDiff")
def date_diff(arg: dict, ctx: Ctx) -> Compiled:
    op = "$dateDiff"
    a = compile_child(arg["startDate"], ctx, op, "startDate")
    b = compile_child(arg["endDate"], ctx, op, "endDate")
    tz = _Tz(arg.get("timezone", "UTC"), ctx, op)
    unit_const, unit_c = _const_or_compiled(arg["unit"], ctx, op, "unit")
    sow_const, sow_c = _const_or_compiled(arg.get("startOfWeek", "sunday"), ctx, op, "startOfWeek")
    vals = [a.value, b.value] + ([unit_c.value] if unit_c else []) + ([sow_c.value] if sow_c else [])

    def value(xs, cs):
        ms_a, ms_b = _date_ms(xs[0], cs[0]), _date_ms(xs[1], cs[1])
        la, lb = _local_ms(ms_a, tz), _local_ms(ms_b, tz)
        unit_col = V.as_string(xs[2]) if unit_c else None
        sow = _sow(sow_const, sow_c, xs[-1])

        def diff(u: str) -> Column:
            if u in UNIT_MONTHS:
                k = UNIT_MONTHS[u]
                return F.floor(_month_index(lb) / k) - F.floor(_month_index(la) / k)
            if u == "millisecond":
                return ms_b - ms_a
            size = UNIT_MS[u]
            ref = _week_ref(sow) if u == "week" else F.lit(0)
            crossed = F.floor((lb - ref) / size) - F.floor((la - ref) / size)
            if u in ("day", "week"):
                return crossed
            # MongoDB's utcOffsetCorrectionFor*: the offset change, truncated to whole units
            change = ((la - ms_a) - (lb - ms_b)) / size
            return crossed + F.when(change < 0, F.ceil(change)).otherwise(F.floor(change))

        null = (nullish(cs[0]) | nullish(cs[1]) | tz.is_null()
                | _sow_null(unit_const, unit_col, sow_const, sow_c, cs[-1]))
        if unit_c:
            null = null | nullish(cs[2])
        return F.when(null, V.NULL).when(ms_a.isNotNull() & ms_b.isNotNull(),
                                         v_long(_unit_cases(unit_const, unit_col, diff)))

    def error(xs, cs):
        unit_col = V.as_string(xs[2]) if unit_c else None
        errs = [_date_error(op, xs[0], cs[0]), _date_error(op, xs[1], cs[1]),
                _sow_error(op, unit_const, unit_col, sow_c, xs[-1], cs[-1])]
        return F.coalesce(*[e for e in errs if e is not None])

    return Compiled(with_codes(vals, value),
                    first_error(a.error, b.error, tz.error(op), _unit_error(op, unit_c),
                                sow_c.error if sow_c else None, with_codes(vals, error)))
