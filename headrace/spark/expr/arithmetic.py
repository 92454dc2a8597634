"""Arithmetic: ``$add $subtract $multiply $divide $mod $abs $ceil $floor $round $trunc $sqrt
$pow $exp $ln $log $log10 $sigmoid``.

MongoDB semantics: a null or missing operand gives null; a non-number is an error (dates where
allowed). Result types: integers stay integers (an ``int`` result that does not fit 32 bits is a
``long``; a ``long`` overflow becomes a ``double``), any double makes a double, any decimal a
decimal. ``$add`` takes one date plus numbers (milliseconds, doubles rounded) and gives a date;
``$subtract`` of two dates gives their difference in milliseconds, of a date and a number a date.
``$divide`` always gives a double (decimal with decimals); ``$round`` rounds half to even.
Errors (the row goes to the DLQ): non-numeric operands, division / modulo by zero, ``$sqrt`` of a
negative, logarithms of non-positive numbers, ``$pow`` of 0 to a negative power.

Deviations: decimals are computed as DECIMAL(38,18) (division with 10 fractional digits) and
trailing zeros are dropped (``2.50`` prints as ``2.5``); integer results are ``int`` or ``long``
by magnitude only.

Golden cases (``tests/golden/cases/<name>.json``): ``$abs`` project_abs; ``$add`` addfields_scores;
``$ceil`` project_ceil; ``$divide`` project_divide; ``$floor`` project_floor; ``$mod`` match_mod;
``$multiply`` project_multiply_after_toint; ``$pow`` project_sqrt_pow; ``$round``
project_round_place; ``$sigmoid`` project_sigmoid; ``$sqrt`` project_sqrt_pow; ``$subtract`` project_abs; ``$trunc``
project_trunc_place; ``$exp`` project_exp; ``$ln`` project_ln; ``$log`` project_log; ``$log10``
project_log10.
"""
from __future__ import annotations

from typing import Any, Callable

from pyspark.sql import Column
from pyspark.sql import functions as F

from .. import values as V
from ..hoist import shared
from ..registry import Compiled, Ctx, expression
from ._common import (
    CODE, INT_CODES, LONG_MIN, all_, any_, compile_args, date_ms, dbl, dec, errors_of, found, is_num,
    lng, long_or_double, nullish, operands, v_date_ms, v_decimal, v_double, v_long, with_codes,
)

DATE = CODE["date"]
DOUBLE = CODE["double"]
DECIMAL = CODE["decimal"]
_TWO53 = float(2**53)


def _fold(cols: list[Column], fn: Callable[[Column, Column], Column]) -> Column:
    out = cols[0]
    for c in cols[1:]:
        out = fn(out, c)
    return out


def _positional_error(op: str, xs, cs, ok: Callable[[Column], Column], what: str) -> Column:
    """The error of the first operand that is not ``ok`` and comes before any null operand
    (MongoDB stops at the first null)."""
    err = None
    seen_null = F.lit(False)
    for x, c in zip(xs, cs):
        bad = ~nullish(c) & ~ok(c)
        e = F.when(~seen_null & bad, F.concat(F.lit(f"{op} only supports {what}, not "), found(x, c)))
        err = e if err is None else F.coalesce(err, e)
        seen_null = seen_null | nullish(c)
    return err


def _numeric_fold(xs, cs, long_fn, double_fn, dec_fn) -> Column:
    """Sum-like fold with MQL result typing over bound numbers."""
    any_dec = any_([c == DECIMAL for c in cs])
    any_dbl = any_([c == DOUBLE for c in cs])
    longs = shared(_fold([lng(x) for x in xs], long_fn))
    doubles = shared(_fold([dbl(x) for x in xs], double_fn))
    decs = shared(_fold([dec(x) for x in xs], dec_fn))  # dec_fn must not raise on overflow
    return (F.when(any_dec, v_decimal(decs))
            .when(any_dbl, v_double(doubles))
            .otherwise(long_or_double(longs, doubles)))


def _variadic(op: str, arg: Any, ctx: Ctx, identity: int, long_fn, double_fn, dec_fn,
              allow_date: bool) -> Compiled:
    args = compile_args(operands(arg), ctx, op)
    if not args:
        return Compiled(v_long(F.lit(identity)))
    vals = [a.value for a in args]
    what = "numeric or date types" if allow_date else "numeric types"

    def ok(c: Column) -> Column:
        return is_num(c) | (c == DATE) if allow_date else is_num(c)

    def value(xs, cs):
        any_null = any_([nullish(c) for c in cs])
        all_ok = all_([ok(c) for c in cs])
        num = _numeric_fold(xs, cs, long_fn, double_fn, dec_fn)
        out = F.when(any_null, V.NULL).when(~all_ok, F.lit(None).cast("variant"))
        if allow_date and len(xs) > 1:
            n_dates = _fold([F.when(c == DATE, 1).otherwise(0) for c in cs], lambda a, b: a + b)
            # one date plus numbers: the date moved by the (rounded) milliseconds
            ms = shared(_fold([F.when(c == DATE, date_ms(x)).when(c == DOUBLE, F.round(dbl(x)).try_cast("bigint"))
                                 .when(c == DECIMAL, F.round(dec(x)).try_cast("bigint")).otherwise(lng(x))
                                 for x, c in zip(xs, cs)], F.try_add))
            out = out.when(n_dates == 1, v_date_ms(ms)).when(n_dates > 1, F.lit(None).cast("variant"))
        elif allow_date:
            out = out.when(cs[0] == DATE, xs[0])
        return out.otherwise(num)

    def error(xs, cs):
        err = _positional_error(op, xs, cs, ok, what)
        if allow_date and len(xs) > 1:
            n_dates = _fold([F.when(c == DATE, 1).otherwise(0) for c in cs], lambda a, b: a + b)
            any_null = any_([nullish(c) for c in cs])
            err = F.coalesce(err, F.when(~any_null & (n_dates > 1),
                                         F.lit("only one date allowed in an $add expression")))
        # a result the representation cannot hold is an error, not a silent missing value
        all_ok = all_([ok(c) for c in cs])
        any_null = any_([nullish(c) for c in cs])
        any_dec = any_([c == DECIMAL for c in cs])
        overflow = any_dec & _fold([dec(x) for x in xs], dec_fn).isNull()
        if allow_date and len(xs) > 1:
            n_dates = _fold([F.when(c == DATE, 1).otherwise(0) for c in cs], lambda a, b: a + b)
            overflow = overflow | ((n_dates == 1) & value(xs, cs).isNull())
        return F.coalesce(err, F.when(~any_null & all_ok & overflow, F.lit(f"{op}: result out of range")))

    return Compiled(with_codes(vals, value), errors_of(args, with_codes(vals, error)))


@expression("$add")
def add(arg: Any, ctx: Ctx) -> Compiled:
    return _variadic("$add", arg, ctx, 0, F.try_add, lambda a, b: a + b, F.try_add, True)


@expression("$multiply")
def multiply(arg: Any, ctx: Ctx) -> Compiled:
    return _variadic("$multiply", arg, ctx, 1, F.try_multiply, lambda a, b: a * b,
                     lambda a, b: F.try_multiply(a, b).try_cast("decimal(38,18)"), False)


def _binary(op: str, arg: Any, ctx: Ctx, value_fn, error_fn) -> Compiled:
    args = compile_args(operands(arg), ctx, op)
    vals = [a.value for a in args]
    value = with_codes(vals, lambda xs, cs: value_fn(xs[0], xs[1], cs[0], cs[1]))
    err = with_codes(vals, lambda xs, cs: error_fn(xs[0], xs[1], cs[0], cs[1]))
    return Compiled(value, errors_of(args, err))


def _null() -> Column:
    return V.NULL


def _num2(a, b, ca, cb, long_fn, double_fn, dec_fn) -> Column:
    return _numeric_fold([a, b], [ca, cb], long_fn, double_fn, dec_fn)


def _types_msg(op: str, what: str, a, b, ca, cb) -> Column:
    return F.concat(F.lit(f"{op} only supports {what}, not "), found(a, ca), F.lit(" and "), found(b, cb))


@expression("$subtract")
def subtract(arg: Any, ctx: Ctx) -> Compiled:
    def value(a, b, ca, cb):
        return (F.when(nullish(ca) | nullish(cb), _null())
                .when((ca == DATE) & (cb == DATE), v_long(F.try_subtract(date_ms(a), date_ms(b))))
                .when((ca == DATE) & is_num(cb), v_date_ms(F.try_subtract(date_ms(a), _ms_of(b, cb))))
                .when(is_num(ca) & is_num(cb),
                      _num2(a, b, ca, cb, F.try_subtract, lambda x, y: x - y, F.try_subtract)))

    def error(a, b, ca, cb):
        ok = (is_num(ca) | (ca == DATE)) & (is_num(cb) | (cb == DATE))
        return (F.when(nullish(ca) | nullish(cb), F.lit(None).cast("string"))
                .when(~ok, _types_msg("$subtract", "numeric or date types", a, b, ca, cb))
                .when(is_num(ca) & (cb == DATE),
                      F.concat(F.lit("$subtract: cannot subtract a date from a number, found "),
                               found(a, ca))))
    return _binary("$subtract", arg, ctx, value, error)


def _ms_of(x: Column, c: Column) -> Column:
    return (F.when(c == DOUBLE, F.round(dbl(x)).try_cast("bigint"))
            .when(c == DECIMAL, F.round(dec(x)).try_cast("bigint")).otherwise(lng(x)))


def _num_pair_error(op: str, a, b, ca, cb) -> Column:
    return (F.when(nullish(ca) | nullish(cb), F.lit(None).cast("string"))
            .when(~(is_num(ca) & is_num(cb)), _types_msg(op, "numeric types", a, b, ca, cb)))


def _is_zero(x: Column, c: Column) -> Column:
    return F.when(c == DECIMAL, dec(x) == 0).otherwise(dbl(x) == 0)


@expression("$divide")
def divide(arg: Any, ctx: Ctx) -> Compiled:
    def value(a, b, ca, cb):
        any_dec = (ca == DECIMAL) | (cb == DECIMAL)
        d = F.try_divide(dec(a).try_cast("decimal(28,14)"), dec(b).try_cast("decimal(28,14)"))
        return (F.when(nullish(ca) | nullish(cb), _null())
                .when(~(is_num(ca) & is_num(cb)) | _is_zero(b, cb), _null())
                .when(any_dec, v_decimal(d))
                .otherwise(v_double(dbl(a) / dbl(b))))

    def error(a, b, ca, cb):
        return F.coalesce(_num_pair_error("$divide", a, b, ca, cb),
                          F.when(is_num(ca) & is_num(cb) & _is_zero(b, cb), F.lit("can't $divide by zero")))
    return _binary("$divide", arg, ctx, value, error)


@expression("$mod")
def mod(arg: Any, ctx: Ctx) -> Compiled:
    def value(a, b, ca, cb):
        ints = ca.isin(*INT_CODES) & cb.isin(*INT_CODES)
        any_dec = (ca == DECIMAL) | (cb == DECIMAL)
        return (F.when(nullish(ca) | nullish(cb), _null())
                .when(~(is_num(ca) & is_num(cb)) | _is_zero(b, cb), _null())
                .when(ints, v_long(F.when(lng(b) == -1, F.lit(0)).otherwise(lng(a) % lng(b))))
                .when(any_dec, v_decimal(F.try_mod(dec(a), dec(b))))
                .otherwise(v_double(dbl(a) % dbl(b))))

    def error(a, b, ca, cb):
        return F.coalesce(_num_pair_error("$mod", a, b, ca, cb),
                          F.when(is_num(ca) & is_num(cb) & _is_zero(b, cb), F.lit("can't $mod by zero")))
    return _binary("$mod", arg, ctx, value, error)


# --------------------------------------------------------------------------------- unary


def _unary(op: str, arg: Any, ctx: Ctx, value_fn, extra_error=None) -> Compiled:
    """``value_fn(x, c)`` for bound numbers; null for null/missing; error for non-numbers."""
    args = compile_args(operands(arg), ctx, op)
    v = args[0].value

    def value(xs, cs):
        x, c = xs[0], cs[0]
        return F.when(nullish(c), V.NULL).when(is_num(c), value_fn(x, c))

    def error(xs, cs):
        x, c = xs[0], cs[0]
        e = F.when(~nullish(c) & ~is_num(c),
                   F.concat(F.lit(f"{op} only supports numeric types, not "), found(x, c)))
        if extra_error is not None:
            e = F.coalesce(e, F.when(is_num(c), extra_error(x, c)))
        return e

    return Compiled(with_codes([v], value), errors_of(args, with_codes([v], error)))


def _dbl_special(d: Column) -> Column:
    return F.isnan(d) | (F.abs(d) >= _TWO53)


@expression("$abs")
def abs_(arg: Any, ctx: Ctx) -> Compiled:
    def value(x, c):
        return (F.when(c.isin(*INT_CODES), F.when(lng(x) != LONG_MIN, v_long(F.abs(lng(x)))))
                .when(c == DECIMAL, v_decimal(F.abs(dec(x))))
                .otherwise(v_double(F.abs(dbl(x)))))
    return _unary("$abs", arg, ctx, value,
                  lambda x, c: F.when(c.isin(*INT_CODES) & (lng(x) == LONG_MIN),
                                      F.lit("can't take $abs of long long min")))


def _ceil_floor(op: str, fn) -> Callable:
    def impl(arg: Any, ctx: Ctx) -> Compiled:
        def value(x, c):
            d = dbl(x)
            return (F.when(c.isin(*INT_CODES), x)
                    .when(c == DECIMAL, v_decimal(fn(dec(x)).cast("decimal(38,18)")))
                    .otherwise(F.when(_dbl_special(d), v_double(d)).otherwise(v_double(fn(d).cast("double")))))
        return _unary(op, arg, ctx, value)
    return impl


expression("$ceil")(_ceil_floor("$ceil", F.ceil))
expression("$floor")(_ceil_floor("$floor", F.floor))


def _round_like(op: str, arg: Any, ctx: Ctx, truncate: bool) -> Compiled:
    ops = operands(arg)
    place = ops[1] if len(ops) > 1 else 0
    args = compile_args(ops, ctx, op)
    const_place = isinstance(place, int) and not isinstance(place, bool)
    vals = [a.value for a in args]

    def rnd_dec(d: Column, p: int) -> Column:
        if truncate:
            return F.when(d >= 0, F.floor(d, p)).otherwise(F.ceil(d, p)).cast("decimal(38,18)")
        return F.bround(d, p).cast("decimal(38,18)")

    def rnd_long(l: Column, p: int) -> Column:
        if p >= 0:
            return l
        if truncate:
            m = F.lit(10 ** (-p)).cast("bigint")
            return l - (l % m)
        return F.bround(l, p).cast("bigint")

    def value_const(xs, cs):
        x, c = xs[0], cs[0]
        p = int(place)
        d = dbl(x)
        dd = d.try_cast("decimal(38,18)")
        # doubles are rounded through their decimal text (19.25 -> 19.2 at place 1)
        as_double = F.when(F.isnan(d) | F.abs(d).isin(float("inf")) | dd.isNull(),
                           v_double(d if truncate or p >= 0 else F.bround(d, p))).otherwise(
            v_double(rnd_dec(dd, p).cast("double")))
        return (F.when(c.isin(*INT_CODES), v_long(rnd_long(lng(x), p)))
                .when(c == DECIMAL, v_decimal(rnd_dec(dec(x), p)))
                .when(c == DOUBLE, as_double))

    def value_dyn(xs, cs):
        x, c, pv, pc = xs[0], cs[0], xs[1], cs[1]
        p = lng(pv)
        scale = F.pow(F.lit(10.0), p.cast("double"))
        d = dbl(x)
        r = (F.when(d >= 0, F.floor(d * scale)).otherwise(F.ceil(d * scale)) if truncate
             else F.rint(d * scale)) / scale
        return (F.when(nullish(pc), V.NULL)
                .when(c.isin(*INT_CODES), F.when(p >= 0, x).otherwise(v_long(r.cast("bigint"))))
                .when(is_num(c), F.when(c == DECIMAL, v_decimal(r.cast("decimal(38,18)"))).otherwise(v_double(r))))

    value_fn = value_const if const_place else value_dyn

    def value(xs, cs):
        null = nullish(cs[0]) if len(cs) == 1 else (nullish(cs[0]) | nullish(cs[1]))
        return F.when(null, V.NULL).when(is_num(cs[0]), value_fn(xs, cs))

    def error(xs, cs):
        x, c = xs[0], cs[0]
        e = F.when(~nullish(c) & ~is_num(c), F.concat(F.lit(f"{op} only supports numeric types, not "), found(x, c)))
        if len(xs) > 1 and not const_place:
            pv, pc = xs[1], cs[1]
            p = V_integral(pv)
            e = F.coalesce(e, F.when(~nullish(pc) & (p.isNull() | (p <= -20) | (p >= 100)),
                                     F.concat(F.lit(f"{op}: place must be an integer in (-20, 100), found "),
                                              found(pv, pc))))
        return e

    return Compiled(with_codes(vals, value), errors_of(args, with_codes(vals, error)))


def V_integral(x: Column) -> Column:
    return V.as_integral(x)


@expression("$round")
def round_(arg: Any, ctx: Ctx) -> Compiled:
    return _round_like("$round", arg, ctx, truncate=False)


@expression("$trunc")
def trunc(arg: Any, ctx: Ctx) -> Compiled:
    return _round_like("$trunc", arg, ctx, truncate=True)


def _double_fn(op: str, fn, domain=None, domain_msg: str = "") -> Callable:
    """A double-valued function (decimal in, decimal out)."""
    def impl(arg: Any, ctx: Ctx) -> Compiled:
        def value(x, c):
            d = dbl(x)
            r = fn(d)
            ok = domain(d) | F.isnan(d) if domain is not None else F.lit(True)
            return F.when(ok, F.when(c == DECIMAL, v_decimal(r.try_cast("decimal(38,18)"))).otherwise(v_double(r)))
        extra = None
        if domain is not None:
            def extra(x, c):
                d = dbl(x)
                return F.when(~(domain(d) | F.isnan(d)), F.concat(F.lit(domain_msg), found(x, c)))
        return _unary(op, arg, ctx, value, extra)
    return impl


expression("$sqrt")(_double_fn("$sqrt", F.sqrt, lambda d: d >= 0,
                               "$sqrt's argument must be greater than or equal to 0, found "))
expression("$exp")(_double_fn("$exp", F.exp))
expression("$ln")(_double_fn("$ln", F.log, lambda d: d > 0, "$ln's argument must be a positive number, found "))
expression("$log10")(_double_fn("$log10", F.log10, lambda d: d > 0,
                                "$log10's argument must be a positive number, found "))
# 1 / (1 + e^-x): e^-x overflows to infinity for x below about -709, giving 0
expression("$sigmoid")(_double_fn("$sigmoid", lambda d: F.lit(1.0) / (F.lit(1.0) + F.exp(-d))))


@expression("$log")
def log(arg: Any, ctx: Ctx) -> Compiled:
    def value(a, b, ca, cb):
        x, base = dbl(a), dbl(b)
        r = F.log(x) / F.log(base)
        ok = is_num(ca) & is_num(cb) & (((x > 0) & (base > 0) & (base != 1)) | F.isnan(x) | F.isnan(base))
        return (F.when(nullish(ca) | nullish(cb), _null())
                .when(ok, F.when((ca == DECIMAL) | (cb == DECIMAL), v_decimal(r.try_cast("decimal(38,18)")))
                      .otherwise(v_double(r))))

    def error(a, b, ca, cb):
        x, base = dbl(a), dbl(b)
        nums = is_num(ca) & is_num(cb)
        return F.coalesce(
            _num_pair_error("$log", a, b, ca, cb),
            F.when(nums & ~F.isnan(x) & (x <= 0),
                   F.concat(F.lit("$log's argument must be a positive number, found "), found(a, ca))),
            F.when(nums & ~F.isnan(base) & ((base <= 0) | (base == 1)),
                   F.concat(F.lit("$log's base must be a positive number not equal to 1, found "), found(b, cb))))
    return _binary("$log", arg, ctx, value, error)


@expression("$pow")
def pow_(arg: Any, ctx: Ctx) -> Compiled:
    def value(a, b, ca, cb):
        base, e = dbl(a), dbl(b)
        r = F.pow(base, e)
        ints = ca.isin(*INT_CODES) & cb.isin(*INT_CODES)
        # integer powers stay integers while exact; a negative exponent gives a double
        int_result = F.when((e >= 0) & (F.abs(r) < _TWO53), v_long(r.cast("bigint"))).otherwise(v_double(r))
        return (F.when(nullish(ca) | nullish(cb), _null())
                .when(~(is_num(ca) & is_num(cb)), _null())
                .when((base == 0) & (e < 0), _null())
                .when(ints, int_result)
                .when((ca == DECIMAL) | (cb == DECIMAL), v_decimal(r.try_cast("decimal(38,18)")))
                .otherwise(v_double(r)))

    def error(a, b, ca, cb):
        return F.coalesce(_num_pair_error("$pow", a, b, ca, cb),
                          F.when(is_num(ca) & is_num(cb) & (dbl(a) == 0) & (dbl(b) < 0),
                                 F.lit("$pow cannot take a base of 0 and a negative exponent")))
    return _binary("$pow", arg, ctx, value, error)
