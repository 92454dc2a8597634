"""Powers, roots, exponentials and logarithms: ``$sqrt $pow $exp $ln $log $log10 $sigmoid``. The
result is a double (a decimal when an operand is a decimal: ``$sqrt $exp $ln $log10 $log $pow``
in Decimal128 to 34 digits where a stage's hoister runs (:mod:`.decimal_exact`), else and for
``$sigmoid`` the double's decimal of 15 digits; ``$pow`` of integers stays an integer while
exact); a null or missing operand gives null. Errors (the row goes to the DLQ): non-numeric
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
from ._common import INT_CODES, compile_args, dbl, found, is_num, nullish, operands, v_double, v_long
from .arithmetic import DECIMAL, _TWO53, _binary, _double_fn, _null, _num_pair_error


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


@expression("$pow")
def pow_(arg: Any, ctx: Ctx) -> Compiled:
    args, exact = decimal_exact.exact("$pow", compile_args(operands(arg), ctx, "$pow"), ctx)

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
                .when((ca == DECIMAL) | (cb == DECIMAL), decimal_exact.decimal_result(r, exact))
                .otherwise(v_double(r)))

    def error(a, b, ca, cb):
        return F.coalesce(_num_pair_error("$pow", a, b, ca, cb),
                          F.when(is_num(ca) & is_num(cb) & (dbl(a) == 0) & (dbl(b) < 0),
                                 F.lit("$pow cannot take a base of 0 and a negative exponent")),
                          *([decimal_exact.failed("$pow", exact, a, ca)] if exact is not None else []))
    return _binary("$pow", arg, ctx, value, error, args=args)
