"""Powers, roots, exponentials and logarithms: ``$sqrt $pow $exp $ln $log $log10 $sigmoid``. The
result is a double (a decimal when an operand is a decimal: ``$sqrt $exp $ln $log10 $log $pow``
in Decimal128 to 34 digits where a stage's hoister runs (:mod:`.decimal_exact`), else and for
``$sigmoid`` the double's decimal of 15 digits; ``$pow`` of two integers is MongoDB's: the exact
integer when it fits in 64 bits (a base of 0, 1 or -1 whatever the exponent), else a double);
a null or missing operand gives null. Errors (the row goes to the DLQ): non-numeric
operands, ``$sqrt`` of a negative, logarithms of non-positive numbers (or a base of 1), ``$pow``
of 0 to a negative power.

Golden cases (``tests/golden/cases/<name>.json``): ``$exp`` project_exp; ``$ln`` project_ln;
``$log`` project_log; ``$log10`` project_log10; ``$pow`` project_sqrt_pow; ``$sigmoid``
project_sigmoid; ``$sqrt`` project_sqrt_pow.
"""
from __future__ import annotations

from typing import Any

from pyspark.sql import functions as F

from ..registry import Compiled, Ctx, expression
from . import decimal_exact
from ._common import INT_CODES, compile_args, dbl, found, is_num, lng, nullish, operands, v_double, v_long
from .arithmetic import DECIMAL, _binary, _double_fn, _null, _num_pair_error


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
    args, exact = decimal_exact.exact("$log", compile_args(operands(arg), ctx, "$log"), ctx)

    def value(a, b, ca, cb):
        x, base = dbl(a), dbl(b)
        r = F.log(x) / F.log(base)
        ok = is_num(ca) & is_num(cb) & (((x > 0) & (base > 0) & (base != 1)) | F.isnan(x) | F.isnan(base))
        return (F.when(nullish(ca) | nullish(cb), _null())
                .when(ok, F.when((ca == DECIMAL) | (cb == DECIMAL), decimal_exact.decimal_result(r, exact))
                      .otherwise(v_double(r))))

    def error(a, b, ca, cb):
        x, base = dbl(a), dbl(b)
        nums = is_num(ca) & is_num(cb)
        return F.coalesce(
            _num_pair_error("$log", a, b, ca, cb),
            F.when(nums & ~F.isnan(x) & (x <= 0),
                   F.concat(F.lit("$log's argument must be a positive number, found "), found(a, ca))),
            F.when(nums & ~F.isnan(base) & ((base <= 0) | (base == 1)),
                   F.concat(F.lit("$log's base must be a positive number not equal to 1, found "), found(b, cb))),
            *([decimal_exact.failed("$log", exact, a, ca)] if exact is not None else []))
    return _binary("$log", arg, ctx, value, error, args=args)


def _base_limits() -> list[tuple[int, int]]:
    """Per exponent 0..63, the smallest and largest integer bases whose power fits in a signed
    64-bit integer (MongoDB's ``representableAsLong`` table, computed)."""
    top, bottom = 2**63 - 1, -2**63

    def root(limit: int, e: int) -> int:       # the largest b >= 0 with b**e <= limit
        b = int(round(limit ** (1.0 / e)))
        while b ** e > limit:
            b -= 1
        while (b + 1) ** e <= limit:
            b += 1
        return b

    out = [(bottom, top), (bottom, top)]
    for e in range(2, 64):
        hi = root(top, e)
        out.append((-root(-bottom, e) if e % 2 else -hi, hi))
    return out


_LIMITS = _base_limits()


def _int_pow(b: Column, e: Column) -> Column:
    """``b ** e`` as a BIGINT by squaring (no lambda), for ``0 <= e <= 63`` and a base within
    :data:`_LIMITS` of ``e``: every square taken is at most the result's magnitude."""
    squares = [b]
    for i in range(1, 6):
        squares.append(F.when(e >= (1 << i), squares[-1] * squares[-1]))
    out = F.lit(1).cast("bigint")
    for i, sq in enumerate(squares):
        out = out * F.when(F.shiftright(e, i) % 2 == 1, sq).otherwise(F.lit(1).cast("bigint"))
    return out


def _pow_of_ints(a: Column, b: Column, r: Column) -> Column:
    """MongoDB's ``$pow`` of two integers (``r``: the double power): 0, 1 and -1 give integers
    for any exponent, a power that fits in 64 bits is computed exactly, anything else is ``r``."""
    base, e = a.cast("bigint"), b.cast("bigint")
    lo = F.element_at(F.array(*[F.lit(x) for x, _ in _LIMITS]), (e + 1).cast("int"))
    hi = F.element_at(F.array(*[F.lit(y) for _, y in _LIMITS]), (e + 1).cast("int"))
    small = F.when(base == 0, F.when(e == 0, F.lit(1)).otherwise(F.lit(0))).when(base == 1, F.lit(1)) \
        .otherwise(F.when(e % 2 == 0, F.lit(1)).otherwise(F.lit(-1)))
    fits = (e >= 0) & (e <= 63)
    return (F.when(base.isin(0, 1, -1), v_long(small.cast("bigint")))
            .when(fits & (base >= lo) & (base <= hi), v_long(_int_pow(base, e)))
            .otherwise(v_double(r)))


@expression("$pow")
def pow_(arg: Any, ctx: Ctx) -> Compiled:
    args, exact = decimal_exact.exact("$pow", compile_args(operands(arg), ctx, "$pow"), ctx)

    def value(a, b, ca, cb):
        base, e = dbl(a), dbl(b)
        r = F.pow(base, e)
        ints = ca.isin(*INT_CODES) & cb.isin(*INT_CODES)
        return (F.when(nullish(ca) | nullish(cb), _null())
                .when(~(is_num(ca) & is_num(cb)), _null())
                .when((base == 0) & (e < 0), _null())
                .when(ints, _pow_of_ints(lng(a), lng(b), r))
                .when((ca == DECIMAL) | (cb == DECIMAL), decimal_exact.decimal_result(r, exact))
                .otherwise(v_double(r)))

    def error(a, b, ca, cb):
        return F.coalesce(_num_pair_error("$pow", a, b, ca, cb),
                          F.when(is_num(ca) & is_num(cb) & (dbl(a) == 0) & (dbl(b) < 0),
                                 F.lit("$pow cannot take a base of 0 and a negative exponent")),
                          *([decimal_exact.failed("$pow", exact, a, ca)] if exact is not None else []))
    return _binary("$pow", arg, ctx, value, error, args=args)
