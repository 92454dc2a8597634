"""Arithmetic: ``$add $subtract $multiply $divide $mod $abs``, and the helpers the other
arithmetic modules (and :mod:`.trig`) share. ``$ceil $floor $round $trunc`` are in
:mod:`.arithmetic_round`, ``$sqrt $pow $exp $ln $log $log10 $sigmoid`` in
:mod:`.arithmetic_exp_log`.

MongoDB semantics: a null or missing operand gives null; a non-number is an error (dates where
allowed). Result types: integers stay integers (an ``int`` result that does not fit 32 bits is a
``long``; a ``long`` overflow becomes a ``double``), any double makes a double, any decimal a
decimal. ``$add`` takes one date plus numbers (milliseconds, doubles rounded) and gives a date;
``$subtract`` of two dates gives their difference in milliseconds, of a date and a number a date.
``$divide`` always gives a double (decimal with decimals). Errors (the row goes to the DLQ):
non-numeric operands, division / modulo by zero.

Decimals: ``$add $subtract $multiply $divide $abs`` compute as MongoDB's Decimal128 does, the exact
result rounded to 34 significant digits (:mod:`.decimal128`); ``$mod`` gives the exact remainder
(:mod:`.decimal_quantize`), each at the exponent IEEE 754 gives it (``1.50 + 1`` is ``2.50``).
Deviation: integer results are ``int`` or ``long`` by magnitude only.

Golden cases (``tests/golden/cases/<name>.json``): ``$abs`` project_abs; ``$add`` addfields_scores;
``$divide`` project_divide; ``$mod`` match_mod; ``$multiply`` project_multiply_after_toint;
``$subtract`` project_abs.
"""
from __future__ import annotations

import datetime
from typing import Any, Callable

from pyspark.sql import Column
from pyspark.sql import functions as F

from .. import values as V
from ..hoist import shared
from ..registry import Compiled, Ctx, expression
from ...mql import decimal_math
from . import decimal128 as D
from . import decimal_variant as DV
from . import decimal_exact
from .decimal_quantize import fmod
from ._common import (
    CODE, INT_CODES, LONG_MIN, all_, any_, compile_args, date_ms, dbl, dec, errors_of, found, is_num,
    lng, long_or_double, nullish, operands, v_date_ms, v_double, v_long, with_codes,
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


def _dec_fold(xs, cs, dec_fn) -> Column:
    """The Decimal128 result of a fold (:mod:`.decimal128`; NULL for a NaN or infinite operand)."""
    return _fold([D.read(x, c) for x, c in zip(xs, cs)], dec_fn)


def _numeric_fold(xs, cs, long_fn, double_fn, dec_fn) -> Column:
    """Sum-like fold with MQL result typing over bound numbers (``dec_fn``: a :mod:`.decimal128`
    operation)."""
    any_dbl = any_([c == DOUBLE for c in cs])
    longs = shared(_fold([lng(x) for x in xs], long_fn))
    doubles = shared(_fold([dbl(x) for x in xs], double_fn))
    out = F.when(any_dbl, v_double(doubles)).otherwise(long_or_double(longs, doubles))
    if D.possible(xs):
        out = F.when(any_([c == DECIMAL for c in cs]), DV.to_variant(_dec_fold(xs, cs, dec_fn))).otherwise(out)
    return out


def _rounded_ms(x: Column, c: Column) -> Column:
    """A number as milliseconds to add to a date: a double or decimal rounded half away from
    zero (``llround``)."""
    return (F.when(c == DOUBLE, F.round(dbl(x)).try_cast("bigint"))
            .when(c == DECIMAL, F.round(dec(x)).try_cast("bigint")).otherwise(lng(x)))


def _moved_date(xs, cs) -> Column:
    """One date plus numbers, as MongoDB's ``$add`` adds left to right: the numbers before the
    date summed (as longs, or as doubles when one is not an integer type) and rounded once when
    the date joins, each one after it rounded on its own (``[1.5, 1.6, date, 1.5, 1.5]`` moves
    the date by 3 + 2 + 2 ms)."""
    rounded = [_rounded_ms(x, c) for x, c in zip(xs, cs)]
    cases = []
    for j, (x, c) in enumerate(zip(xs, cs)):
        is_const, value = V.const_of(x)
        if (is_const and not isinstance(value, datetime.datetime)) or V.known_type(x) not in (None, DATE):
            continue                                  # never the date
        if j <= 1:
            before = rounded[:j]
        else:
            frac = any_([cy.isin(DOUBLE, DECIMAL) for cy in cs[:j]])
            before = [F.when(frac, F.round(_fold([dbl(y) for y in xs[:j]], lambda a, b: a + b)).try_cast("bigint"))
                      .otherwise(_fold([lng(y) for y in xs[:j]], F.try_add))]
        cases.append((c == DATE, _fold([*before, date_ms(x), *rounded[j + 1:]], F.try_add)))
    if not cases:
        return F.lit(None).cast("variant")
    ms = F.when(*cases[0])
    for cond, v in cases[1:]:
        ms = ms.when(cond, v)
    return v_date_ms(shared(ms))


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
            out = out.when(n_dates == 1, _moved_date(xs, cs)).when(n_dates > 1, F.lit(None).cast("variant"))
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
        overflow = F.lit(False)
        if D.possible(xs):
            overflow = any_([c == DECIMAL for c in cs]) & any_([D.unreadable(x, c) for x, c in zip(xs, cs)])
        if allow_date and len(xs) > 1:
            n_dates = _fold([F.when(c == DATE, 1).otherwise(0) for c in cs], lambda a, b: a + b)
            overflow = overflow | ((n_dates == 1) & _moved_date(xs, cs).isNull())
        return F.coalesce(err, F.when(~any_null & all_ok & overflow, F.lit(f"{op}: result out of range")))

    return Compiled(with_codes(vals, value), errors_of(args, with_codes(vals, error)))


@expression("$add")
def add(arg: Any, ctx: Ctx) -> Compiled:
    return _variadic("$add", arg, ctx, 0, F.try_add, lambda a, b: a + b, D.add, True)


@expression("$multiply")
def multiply(arg: Any, ctx: Ctx) -> Compiled:
    return _variadic("$multiply", arg, ctx, 1, F.try_multiply, lambda a, b: a * b, D.mul, False)


def _binary(op: str, arg: Any, ctx: Ctx, value_fn, error_fn, args=None) -> Compiled:
    args = args or compile_args(operands(arg), ctx, op)
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
                      _num2(a, b, ca, cb, F.try_subtract, lambda x, y: x - y, D.sub)))

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
    if not D.possible([x]):
        return dbl(x) == 0
    return F.when(c == DECIMAL, D.text_is_zero(x)).otherwise(dbl(x) == 0)


@expression("$divide")
def divide(arg: Any, ctx: Ctx) -> Compiled:
    def value(a, b, ca, cb):
        out = (F.when(nullish(ca) | nullish(cb), _null())
               .when(~(is_num(ca) & is_num(cb)) | _is_zero(b, cb), _null()))
        if D.possible([a, b]):
            quotient = D.div(D.read(a, ca), D.read(b, cb))
            out = out.when((ca == DECIMAL) | (cb == DECIMAL), DV.to_variant(quotient))
        return out.otherwise(v_double(dbl(a) / dbl(b)))

    def error(a, b, ca, cb):
        return F.coalesce(_num_pair_error("$divide", a, b, ca, cb),
                          F.when(is_num(ca) & is_num(cb) & _is_zero(b, cb), F.lit("can't $divide by zero")))
    return _binary("$divide", arg, ctx, value, error)


@expression("$mod")
def mod(arg: Any, ctx: Ctx) -> Compiled:
    def value(a, b, ca, cb):
        ints = ca.isin(*INT_CODES) & cb.isin(*INT_CODES)
        out = (F.when(nullish(ca) | nullish(cb), _null())
               .when(~(is_num(ca) & is_num(cb)) | _is_zero(b, cb), _null())
               .when(ints, v_long(F.when(lng(b) == -1, F.lit(0)).otherwise(lng(a) % lng(b)))))
        if D.possible([a, b]):     # decimals: the exact remainder (Decimal128::modulo)
            out = out.when((ca == DECIMAL) | (cb == DECIMAL), DV.to_variant(fmod(D.read(a, ca), D.read(b, cb))))
        return out.otherwise(v_double(dbl(a) % dbl(b)))

    def error(a, b, ca, cb):
        return F.coalesce(_num_pair_error("$mod", a, b, ca, cb),
                          F.when(is_num(ca) & is_num(cb) & _is_zero(b, cb), F.lit("can't $mod by zero")))
    return _binary("$mod", arg, ctx, value, error)


# --------------------------------------------------------------------------------- unary


def _unary(op: str, arg: Any, ctx: Ctx, value_fn, extra_error=None, args=None) -> Compiled:
    """``value_fn(x, c)`` for bound numbers; null for null/missing; error for non-numbers
    (``args``: the operand already compiled)."""
    args = args or compile_args(operands(arg), ctx, op)
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
        out = F.when(c.isin(*INT_CODES), F.when(lng(x) != LONG_MIN, v_long(F.abs(lng(x)))))
        if D.possible([x]):
            out = out.when(c == DECIMAL, DV.to_variant(D.absolute(D.read(x, c))))
        return out.otherwise(v_double(F.abs(dbl(x))))
    return _unary("$abs", arg, ctx, value,
                  lambda x, c: F.when(c.isin(*INT_CODES) & (lng(x) == LONG_MIN),
                                      F.lit("can't take $abs of long long min")))


def _double_fn(op: str, fn, domain=None, domain_msg: str = "") -> Callable:
    """A double-valued function; a decimal input gives a decimal: MongoDB's Decimal128 result
    where :mod:`.decimal_exact` computes it, else the double result as a decimal of 15 digits (as
    MongoDB converts doubles)."""
    def impl(arg: Any, ctx: Ctx) -> Compiled:
        args = compile_args(operands(arg), ctx, op)
        exact = None
        if op in decimal_math.FUNCTIONS:
            args, exact = decimal_exact.exact(op, args, ctx)

        def value(x, c):
            d = dbl(x)
            r = fn(d)
            ok = domain(d) | F.isnan(d) if domain is not None else F.lit(True)
            if not D.possible([x]):
                return F.when(ok, v_double(r))
            dec = decimal_exact.decimal_result(r, exact)
            return F.when(ok, F.when(c == DECIMAL, dec).otherwise(v_double(r)))

        def extra(x, c):
            errs = []
            if domain is not None:
                d = dbl(x)
                errs.append(F.when(~(domain(d) | F.isnan(d)), F.concat(F.lit(domain_msg), found(x, c))))
            if exact is not None:      # a decimal just outside, which its double is not
                errs.append(decimal_exact.failed(op, exact, x, c))
            return F.coalesce(*errs) if len(errs) > 1 else errs[0]
        return _unary(op, arg, ctx, value, extra if domain is not None or exact is not None else None, args=args)
    return impl
