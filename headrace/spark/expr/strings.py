"""Strings: ``$concat $substrCP $substrBytes $substr $toLower $toUpper $strLenCP $strLenBytes
$strcasecmp $trim $ltrim $rtrim``, and the helpers the other string modules share. Searching
(``$indexOfCP $indexOfBytes $split $replaceOne $replaceAll``) is in :mod:`.string_search`, the
regex operators in :mod:`.string_regex`.

MongoDB semantics: ``$concat`` takes strings only (null or missing gives null); ``$substr*``,
``$toLower``, ``$toUpper`` and ``$strcasecmp`` convert numbers and dates to strings and null or
missing to ``""``; case mapping and ``$strcasecmp`` touch ASCII letters only; code point (CP)
operators count Unicode code points, byte operators UTF-8 bytes; ``$strLenCP`` /
``$strLenBytes`` of a non-string (null too) is an error. Errors name the operator and what was
found. A double converts to text as MongoDB's ``%g`` (:mod:`.double_text`: ``1.23457e+17``).

Golden cases (``tests/golden/cases/<name>.json``): ``$concat`` project_concat; ``$ltrim``
project_ltrim; ``$rtrim`` project_rtrim; ``$strcasecmp`` project_strcasecmp; ``$strLenBytes``
project_strlenbytes; ``$strLenCP`` project_strlencp; ``$substr`` project_computed;
``$substrBytes`` project_substrbytes; ``$substrCP`` project_substrcp; ``$toLower``
project_tolower; ``$toUpper`` project_toupper; ``$trim`` project_trim.
"""
from __future__ import annotations

from typing import Any

from pyspark.sql import Column
from pyspark.sql import functions as F

from .. import values as V
from ..hoist import shared
from ..registry import Compiled, Ctx, expression, first_error
from . import decimal_variant as DV
from .double_text import g_text
from ._common import (
    CODE, INT_CODES, compile_args, compile_child, date_ms, dbl, errors_of, found, is_num, iso_string,
    lng, nullish, operands, v_long, v_string, with_codes,
)

STRING = CODE["string"]
_LOWER = "abcdefghijklmnopqrstuvwxyz"
_UPPER = _LOWER.upper()
#: what $trim removes by default: ASCII and Unicode white space and NUL
_WHITESPACE = ("\u0000\u0020\u0009\u000a\u000b\u000c\u000d\u00a0\u1680\u2000\u2001\u2002\u2003"
               "\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")


def _str(x: Column) -> Column:
    return V._tvg(x, "string")


def coerce_string(x: Column, c: Column, converting: bool = False) -> Column:
    """MongoDB's string conversion for ``$substr`` & co: strings as is, null/missing ``""``,
    numbers and dates as text (a double as ``%g``; ``converting``: NaN and the infinities as
    ``$convert`` spells them); NULL for other types (an error for the caller)."""
    double_text = g_text(dbl(x), converting)
    return (F.when(c == STRING, _str(x))
            .when(nullish(c), F.lit(""))
            .when(c.isin(*INT_CODES), lng(x).cast("string"))
            .when(c == CODE["double"], double_text)
            .when(c == CODE["decimal"], DV.to_string(x))
            .when(c == CODE["date"], iso_string(date_ms(x))))


def _coercible(c: Column) -> Column:
    return (c == STRING) | nullish(c) | is_num(c) | (c == CODE["date"])


def _not_string(op: str, x: Column, c: Column, what: str = "a string") -> Column:
    return F.concat(F.lit(f"{op} requires {what}, found "), found(x, c))


# --------------------------------------------------------------------------------- $concat

@expression("$concat")
def concat(arg: Any, ctx: Ctx) -> Compiled:
    args = compile_args(operands(arg), ctx, "$concat")
    if not args:
        return Compiled(V.lit_value(""))
    vals = [a.value for a in args]

    def value(xs, cs):
        any_null = F.lit(False)
        all_str = F.lit(True)
        for c in cs:
            any_null = any_null | nullish(c)
            all_str = all_str & (c == STRING)
        return F.when(any_null, V.NULL).when(all_str, v_string(F.concat(*[_str(x) for x in xs])))

    def error(xs, cs):
        err, seen_null = None, F.lit(False)
        for x, c in zip(xs, cs):
            e = F.when(~seen_null & ~nullish(c) & (c != STRING),
                       F.concat(F.lit("$concat only supports strings, not "), found(x, c)))
            err = e if err is None else F.coalesce(err, e)
            seen_null = seen_null | nullish(c)
        return err

    return Compiled(with_codes(vals, value), errors_of(args, with_codes(vals, error)))


# ---------------------------------------------------------------------------- substrings

def _int_error(op: str, name: str, i: Column, x: Column, c: Column) -> Column:
    """The error of an argument ``x`` (type code ``c``) that must be an integral number; ``i``
    is its :func:`~headrace.spark.values.as_integral`."""
    return F.when(~is_num(c), F.concat(F.lit(f"{op}: {name} must be a numeric type, found "), found(x, c))) \
        .when(i.isNull(), F.concat(F.lit(f"{op}: {name} must be an integral value, found "), found(x, c)))


def _substr(op: str, arg: Any, ctx: Ctx, code_points: bool) -> Compiled:
    args = compile_args(operands(arg), ctx, op)
    vals = [a.value for a in args]

    def parts(xs, cs, fn):
        """``fn(s, start, length)``: the string and the two integers, each bound once."""
        return V.let_many([shared(coerce_string(xs[0], cs[0])), V.as_integral(xs[1]), V.as_integral(xs[2])], fn)

    def value(xs, cs):
        return parts(xs, cs, value_of)

    def value_of(s, start, length):
        if code_points:
            out = F.substring(s, F.least(start + 1, F.lit(2**31 - 1)).try_cast("int"),
                              F.least(F.greatest(length, F.lit(0)), F.lit(2**31 - 1)).try_cast("int"))
            out = F.when(start >= F.length(s), F.lit("")).otherwise(out)
        else:
            b = s.cast("binary")
            n = F.least(F.when(length < 0, F.octet_length(s)).otherwise(length), F.lit(2**31 - 1))
            out = F.when(start >= F.octet_length(s), F.lit("")).otherwise(
                F.substring(b, F.least(start + 1, F.lit(2**31 - 1)).try_cast("int"), n.try_cast("int")).cast("string"))
        return v_string(out)

    def error(xs, cs):
        e0 = F.when(~_coercible(cs[0]), F.concat(F.lit(f"{op}: can't convert to string, found "),
                                                  found(xs[0], cs[0])))
        return parts(xs, cs, lambda s, start, length: error_of(s, start, length, [
            e0, _int_error(op, "starting index", start, xs[1], cs[1]), _int_error(op, "length", length, xs[2], cs[2])]))

    def error_of(s, start, length, errs):
        if code_points:
            errs.append(F.when(start < 0, F.lit(f"{op}: starting index must be non-negative")))
            errs.append(F.when(length < 0, F.lit(f"{op}: length must be non-negative")))
        else:
            b = s.cast("binary")
            errs.append(F.when(start < 0, F.lit(f"{op}: starting index must be non-negative")))
            # a cut inside a UTF-8 character is refused
            def continuation(pos: Column) -> Column:
                byte = F.hex(F.substring(b, F.least(pos + 1, F.lit(2**31 - 1)).try_cast("int"), 1))
                return (pos < F.octet_length(s)) & (pos > 0) & byte.rlike("^[89AB]")
            end = F.try_add(start, length)
            errs.append(F.when(continuation(start),
                               F.lit(f"{op}: invalid range, starting index is a UTF-8 continuation byte")))
            errs.append(F.when((length >= 0) & continuation(end),
                               F.lit(f"{op}: invalid range, ending index is in the middle of a UTF-8 character")))
        return F.coalesce(*errs)

    return Compiled(with_codes(vals, value), errors_of(args, with_codes(vals, error)))


@expression("$substrCP")
def substr_cp(arg: Any, ctx: Ctx) -> Compiled:
    return _substr("$substrCP", arg, ctx, True)


@expression("$substrBytes")
def substr_bytes(arg: Any, ctx: Ctx) -> Compiled:
    return _substr("$substrBytes", arg, ctx, False)


@expression("$substr")
def substr(arg: Any, ctx: Ctx) -> Compiled:
    return _substr("$substr", arg, ctx, False)


# ------------------------------------------------------------------------------ case, len

def _ascii_case(op: str, arg: Any, ctx: Ctx, src: str, dst: str) -> Compiled:
    a = compile_args(operands(arg), ctx, op)[0]
    value = with_codes([a.value], lambda xs, cs: F.when(
        _coercible(cs[0]), v_string(F.translate(coerce_string(xs[0], cs[0]), src, dst))))
    err = with_codes([a.value], lambda xs, cs: F.when(
        ~_coercible(cs[0]), F.concat(F.lit(f"{op}: can't convert to string, found "), found(xs[0], cs[0]))))
    return Compiled(value, first_error(a.error, err))


@expression("$toLower")
def to_lower(arg: Any, ctx: Ctx) -> Compiled:
    return _ascii_case("$toLower", arg, ctx, _UPPER, _LOWER)


@expression("$toUpper")
def to_upper(arg: Any, ctx: Ctx) -> Compiled:
    return _ascii_case("$toUpper", arg, ctx, _LOWER, _UPPER)


def _strlen(op: str, arg: Any, ctx: Ctx, fn) -> Compiled:
    a = compile_args(operands(arg), ctx, op)[0]
    value = with_codes([a.value], lambda xs, cs: F.when(cs[0] == STRING, v_long(fn(_str(xs[0])))))
    err = with_codes([a.value], lambda xs, cs: F.when(cs[0] != STRING, _not_string(op, xs[0], cs[0], "a string argument")))
    return Compiled(value, first_error(a.error, err))


@expression("$strLenCP")
def str_len_cp(arg: Any, ctx: Ctx) -> Compiled:
    return _strlen("$strLenCP", arg, ctx, F.length)


@expression("$strLenBytes")
def str_len_bytes(arg: Any, ctx: Ctx) -> Compiled:
    return _strlen("$strLenBytes", arg, ctx, F.octet_length)


@expression("$strcasecmp")
def strcasecmp(arg: Any, ctx: Ctx) -> Compiled:
    args = compile_args(arg, ctx, "$strcasecmp")
    vals = [a.value for a in args]

    def value(xs, cs):
        a = F.translate(coerce_string(xs[0], cs[0]), _LOWER, _UPPER)
        b = F.translate(coerce_string(xs[1], cs[1]), _LOWER, _UPPER)
        return F.when(_coercible(cs[0]) & _coercible(cs[1]),
                      v_long(F.when(a < b, -1).when(a > b, 1).otherwise(0)))

    def error(xs, cs):
        return F.coalesce(*[F.when(~_coercible(c), F.concat(F.lit("$strcasecmp: can't convert to string, found "),
                                                           found(x, c))) for x, c in zip(xs, cs)])
    return Compiled(with_codes(vals, value), errors_of(args, with_codes(vals, error)))


# ------------------------------------------------------------------------------ trims

def _trim(op: str, fn) -> Any:
    def impl(arg: dict, ctx: Ctx) -> Compiled:
        inp = compile_child(arg["input"], ctx, op, "input")
        chars = compile_child(arg["chars"], ctx, op, "chars") if "chars" in arg else None
        vals = [inp.value] + ([chars.value] if chars else [])

        def value(xs, cs):
            trim_set = _str(xs[1]) if chars else F.lit(_WHITESPACE)
            out = v_string(fn(_str(xs[0]), trim_set))
            w = F.when(nullish(cs[0]), V.NULL)
            if chars:
                w = w.when(nullish(cs[1]), V.NULL).when(cs[1] != STRING, F.lit(None).cast("variant"))
            return w.when(cs[0] == STRING, out)

        def error(xs, cs):
            e = F.when(~nullish(cs[0]) & (cs[0] != STRING),
                       F.concat(F.lit(f"{op} requires its input to be a string, found "), found(xs[0], cs[0])))
            if chars:
                e = F.coalesce(e, F.when(~nullish(cs[1]) & (cs[1] != STRING),
                                         F.concat(F.lit(f"{op} requires 'chars' to be a string, found "),
                                                  found(xs[1], cs[1]))))
            return e
        return Compiled(with_codes(vals, value),
                        first_error(inp.error, chars.error if chars else None, with_codes(vals, error)))
    return impl


expression("$trim")(_trim("$trim", lambda s, t: F.trim(s, t)))
expression("$ltrim")(_trim("$ltrim", lambda s, t: F.ltrim(s, t)))
expression("$rtrim")(_trim("$rtrim", lambda s, t: F.rtrim(s, t)))
