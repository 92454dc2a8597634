"""Strings: ``$concat $substrCP $substrBytes $substr $toLower $toUpper $split $strLenCP
$strLenBytes $trim $ltrim $rtrim $indexOfCP $indexOfBytes $regexMatch $regexFind $regexFindAll $replaceOne
$replaceAll $strcasecmp``.

MongoDB semantics: ``$concat`` takes strings only (null or missing gives null); ``$substr*``,
``$toLower``, ``$toUpper`` and ``$strcasecmp`` convert numbers and dates to strings and null or
missing to ``""``; case mapping and ``$strcasecmp`` touch ASCII letters only; code point (CP)
operators count Unicode code points, byte operators UTF-8 bytes; ``$split`` splits on a literal
separator; ``$strLenCP`` / ``$strLenBytes`` of a non-string (null too) is an error; the regex
operators take PCRE patterns (translated to Java; options ``i m s x``) and give ``false`` / null
/ ``[]`` for a null or missing input. Errors name the operator and what was found.

A capture group that did not take part in the match is null. Deviations: a regex that is not
a constant runs as a Java regex without translation (its unmatched groups read ``""``), as
does a group that can match the empty string; doubles
convert to strings in Java's notation when not integral (``1.0E20``).

Golden cases (``tests/golden/cases/<name>.json``): ``$concat`` project_concat; ``$indexOfCP``
project_indexofcp; ``$indexOfBytes`` project_indexofbytes; ``$ltrim`` project_ltrim; ``$regexFind`` addfields_regexfind; ``$regexFindAll``
addfields_regexfindall; ``$regexMatch`` addfields_regexmatch; ``$replaceAll`` project_replaceall;
``$replaceOne`` project_replaceone; ``$rtrim`` project_rtrim; ``$split`` project_split;
``$strcasecmp`` project_strcasecmp; ``$strLenBytes`` project_strlenbytes; ``$strLenCP``
project_strlencp; ``$substr`` project_computed; ``$substrBytes`` project_substrbytes; ``$substrCP``
project_substrcp; ``$toLower`` project_tolower; ``$toUpper`` project_toupper; ``$trim``
project_trim.
"""
from __future__ import annotations

from typing import Any

from pyspark.sql import Column
from pyspark.sql import functions as F

from ...mql.regex import compile_regex, regex_literal, translate_regex
from .. import values as V
from ..hoist import shared
from ..registry import Compiled, Ctx, expression, first_error
from ._common import (
    CODE, INT_CODES, compile_args, compile_child, date_ms, dbl, dec, errors_of, found, is_num, iso_string,
    lng, nullish, operands, v_bool, v_long, v_string, with_codes,
)

STRING = CODE["string"]
_LOWER = "abcdefghijklmnopqrstuvwxyz"
_UPPER = _LOWER.upper()
#: what $trim removes by default: ASCII and Unicode white space and NUL
_WHITESPACE = ("\u0000\u0020\u0009\u000a\u000b\u000c\u000d\u00a0\u1680\u2000\u2001\u2002\u2003"
               "\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")


def _str(x: Column) -> Column:
    return V._tvg(x, "string")


def coerce_string(x: Column, c: Column) -> Column:
    """MongoDB's string conversion for ``$substr`` & co: strings as is, null/missing ``""``,
    numbers and dates as text; NULL for other types (an error for the caller)."""
    d = dbl(x)
    double_text = F.when((F.abs(d) < 1e15) & (F.floor(d) == d), d.cast("bigint").cast("string")) \
        .otherwise(d.cast("string"))
    return (F.when(c == STRING, _str(x))
            .when(nullish(c), F.lit(""))
            .when(c.isin(*INT_CODES), lng(x).cast("string"))
            .when(c == CODE["double"], double_text)
            .when(c == CODE["decimal"], dec(x).cast("string"))
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

def _int_arg(op: str, name: str, x: Column, c: Column) -> tuple[Column, Column]:
    """(BIGINT value, error) of an argument that must be an integral number."""
    i = V.as_integral(x)
    err = F.when(~is_num(c), F.concat(F.lit(f"{op}: {name} must be a numeric type, found "), found(x, c))) \
        .when(i.isNull(), F.concat(F.lit(f"{op}: {name} must be an integral value, found "), found(x, c)))
    return i, err


def _substr(op: str, arg: Any, ctx: Ctx, code_points: bool) -> Compiled:
    args = compile_args(operands(arg), ctx, op)
    vals = [a.value for a in args]

    def parts(xs, cs):
        s = shared(coerce_string(xs[0], cs[0]))
        start, e1 = _int_arg(op, "starting index", xs[1], cs[1])
        length, e2 = _int_arg(op, "length", xs[2], cs[2])
        return s, start, length, e1, e2

    def value(xs, cs):
        s, start, length, _, _ = parts(xs, cs)
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
        s, start, length, e1, e2 = parts(xs, cs)
        e0 = F.when(~_coercible(cs[0]), F.concat(F.lit(f"{op}: can't convert to string, found "),
                                                  found(xs[0], cs[0])))
        errs = [e0, e1, e2]
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


# ----------------------------------------------------------------------------- $split

def _literal_regex(sep: Column) -> Column:
    """A Java regex matching ``sep`` literally."""
    return F.concat(F.lit("\\Q"), F.replace(sep, F.lit("\\E"), F.lit("\\E\\\\E\\Q")), F.lit("\\E"))


@expression("$split")
def split(arg: Any, ctx: Ctx) -> Compiled:
    args = compile_args(arg, ctx, "$split")
    vals = [a.value for a in args]

    def value(xs, cs):
        s, sep = _str(xs[0]), _str(xs[1])
        parts = F.call_function("split", s, _literal_regex(sep), F.lit(-1))
        ok = (cs[0] == STRING) & (cs[1] == STRING) & (F.length(sep) > 0)
        return (F.when(nullish(cs[0]) | nullish(cs[1]), V.NULL)
                .when(ok, V.make_array(F.transform(parts, lambda p: p.cast("variant")))))

    def error(xs, cs):
        sep = _str(xs[1])
        return (F.when(nullish(cs[0]) | nullish(cs[1]), F.lit(None).cast("string"))
                .when(cs[0] != STRING, F.concat(F.lit("$split requires an expression that evaluates to a string "
                                                      "as a first argument, found "), found(xs[0], cs[0])))
                .when(cs[1] != STRING, F.concat(F.lit("$split requires an expression that evaluates to a string "
                                                      "as a second argument, found "), found(xs[1], cs[1])))
                .when(F.length(sep) == 0, F.lit("$split requires a non-empty separator")))
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


# ------------------------------------------------------------------- $indexOfCP, $indexOfBytes

def _chars_before(s: Column, nbytes: Column, inclusive: bool) -> Column:
    """How many leading characters of ``s`` end at or before byte ``nbytes`` (``inclusive``), or
    start before it (a byte offset inside a character moves on to the next one)."""
    if inclusive:
        return F.size(F.filter(F.sequence(F.lit(1), F.greatest(F.length(s), F.lit(1))),
                               lambda i: (i <= F.length(s)) & (F.octet_length(F.substring(s, 1, i)) <= nbytes)))
    return F.size(F.filter(F.sequence(F.lit(0), F.length(s)),
                           lambda i: F.octet_length(F.substring(s, 1, i)) < nbytes))


def _index_of(op: str, in_bytes: bool):
    """``$indexOfCP`` (code points) or ``$indexOfBytes`` (UTF-8 bytes: a match of a UTF-8 string
    starts and ends on character boundaries, so the search runs over characters and the offsets
    convert at the edges)."""
    def compile_(arg: Any, ctx: Ctx) -> Compiled:
        args = compile_args(arg, ctx, op)
        vals = [a.value for a in args]

        def value(xs, cs):
            s, sub = _str(xs[0]), _str(xs[1])
            n = (F.octet_length(s) if in_bytes else F.length(s)).cast("bigint")
            start = V.as_integral(xs[2]) if len(xs) > 2 else F.lit(0).cast("bigint")
            end = F.least(V.as_integral(xs[3]) if len(xs) > 3 else n, n)
            if in_bytes:
                first, last = _chars_before(s, start, False), _chars_before(s, end, True)
            else:
                first, last = F.least(start, F.lit(2**31 - 2)), end
            hay = F.substring(s, 1, F.greatest(last, F.lit(0)).try_cast("int"))
            pos = F.call_function("locate", sub, hay, (first + 1).try_cast("int")) - 1
            if in_bytes:
                pos = F.when(pos < 0, pos).otherwise(F.octet_length(F.substring(s, 1, pos)))
            found_at = F.when((start > n) | (start > end), F.lit(-1)) \
                .when(F.length(sub) == 0, start).otherwise(pos)
            return F.when(nullish(cs[0]), V.NULL).when((cs[0] == STRING) & (cs[1] == STRING), v_long(found_at))

        def error(xs, cs):
            errs = [F.when(~nullish(cs[0]) & (cs[0] != STRING),
                           F.concat(F.lit(f"{op} requires a string as the first argument, found "), found(xs[0], cs[0]))),
                    F.when(~nullish(cs[0]) & (cs[1] != STRING),
                           F.concat(F.lit(f"{op} requires a string as the second argument, found "),
                                    found(xs[1], cs[1])))]
            for i, name in ((2, "starting index"), (3, "ending index")):
                if len(xs) > i:
                    v = V.as_integral(xs[i])
                    errs.append(F.when(~nullish(cs[0]) & (v.isNull() | (v < 0)),
                                       F.concat(F.lit(f"{op} {name} must be a non-negative integer, found "),
                                                found(xs[i], cs[i]))))
            return F.coalesce(*errs)
        return Compiled(with_codes(vals, value), errors_of(args, with_codes(vals, error)))
    return compile_


index_of_cp = expression("$indexOfCP")(_index_of("$indexOfCP", False))
index_of_bytes = expression("$indexOfBytes")(_index_of("$indexOfBytes", True))


# ------------------------------------------------------------------------------ regexes

def _regex_parts(arg: dict, ctx: Ctx, op: str):
    """(input Compiled, java pattern Column, group count or None, extra Compiled list)."""
    inp = compile_child(arg["input"], ctx, op, "input")
    rx, opts = arg["regex"], arg.get("options", "")
    if isinstance(rx, dict) and "$literal" in rx:
        rx = rx["$literal"]
    lit = regex_literal(rx)
    if lit is not None:
        rx, lit_opts = lit
        opts = opts or lit_opts
    if isinstance(rx, str) and not rx.startswith("$") and isinstance(opts, str):
        java = translate_regex(rx, opts, "java")
        groups = _nonempty_groups(translate_regex(rx, opts, "python"), compile_regex(rx, opts).groups)
        return inp, F.lit(java), groups, []
    if rx is None:
        return inp, None, 0, []
    # a pattern computed per document: used as a Java regex with the options inlined
    rxc = compile_child(rx, ctx, op, "regex")
    oc = compile_child(opts, ctx, op, "options") if opts != "" else None
    flags = F.lit("") if oc is None else V.as_string(oc.value)
    flags = F.regexp_replace(F.coalesce(flags, F.lit("")), "[^imsx]", "")
    pattern = F.concat(F.when(F.length(flags) > 0, F.concat(F.lit("(?"), flags, F.lit(")"))).otherwise(F.lit("")),
                       V.as_string(rxc.value))
    return inp, pattern, None, [rxc] + ([oc] if oc else [])


def _regex_op(op: str):
    def impl(arg: dict, ctx: Ctx) -> Compiled:
        inp, pattern, groups, extra = _regex_parts(arg, ctx, op)

        def value(xs, cs):
            x, c = xs[0], cs[0]
            s = _str(x)
            if pattern is None:
                none = {"$regexMatch": V.lit_value(False), "$regexFind": V.NULL, "$regexFindAll": V.lit_value([])}[op]
                return F.when(c == STRING, none)
            if op == "$regexMatch":
                out = v_bool(F.regexp_like(s, pattern))
                empty = V.lit_value(False)
            elif op == "$regexFind":
                out = F.when(F.regexp_like(s, pattern), _find_one(s, pattern, groups)).otherwise(V.NULL)
                empty = V.NULL
            else:
                out = _find_all(s, pattern, groups)
                empty = V.lit_value([])
            return F.when(nullish(c), empty).when(c == STRING, out)

        def error(xs, cs):
            return F.when(~nullish(cs[0]) & (cs[0] != STRING),
                          F.concat(F.lit(f"{op} needs 'input' to be of type string, found "), found(xs[0], cs[0])))

        return Compiled(with_codes([inp.value], value),
                        first_error(inp.error, *[e.error for e in extra], with_codes([inp.value], error)))
    return impl


def _nonempty_groups(py_pattern: str, count: int) -> list[bool]:
    """Per capture group (1..count): whether it can only match a non-empty string. Spark reads
    a group that did not take part in the match as ``""``; for these groups that means null."""
    try:
        try:
            from re import _parser as sre  # Python 3.11+
        except ImportError:  # pragma: no cover
            import sre_parse as sre  # type: ignore[no-redef]
        tree = sre.parse(py_pattern)
    except Exception:
        return [False] * count
    out = [False] * count

    def walk(sub) -> None:
        for op, av in sub:
            if str(op) == "SUBPATTERN":
                group, _, _, inner = av
                if group is not None and 1 <= group <= count:
                    out[group - 1] = inner.getwidth()[0] > 0
                walk(inner)
            elif isinstance(av, (list, tuple)):
                for x in av:
                    if isinstance(x, sre.SubPattern):
                        walk(x)
                    elif isinstance(x, (list, tuple)):
                        for y in x:
                            if isinstance(y, sre.SubPattern):
                                walk(y)
            elif isinstance(av, sre.SubPattern):
                walk(av)
    walk(tree)
    return out


def _cap(text: Column, nonempty: bool) -> Column:
    """A capture as a string, or null for a group that did not take part in the match."""
    if nonempty:
        return F.when(text == "", V.NULL).otherwise(v_string(text))
    return v_string(text)


def _captures(s: Column, pattern: Column, groups: "list[bool] | int | None", extract) -> Column:
    if not groups:
        return V.lit_value([])
    return V.make_array([extract(i) for i in range(1, len(groups) + 1)])


def _find_one(s: Column, pattern: Column, groups: "list[bool] | None") -> Column:
    match = F.call_function("regexp_extract", s, pattern, F.lit(0))
    idx = F.call_function("regexp_instr", s, pattern) - 1
    caps = _captures(s, pattern, groups, lambda i: _cap(F.call_function("regexp_extract", s, pattern, F.lit(i)),
                                                        groups[i - 1]))
    return V.make_object([("match", v_string(match)), ("idx", v_long(idx)), ("captures", caps)])


def _find_all(s: Column, pattern: Column, groups: int | None) -> Column:
    matches = F.call_function("regexp_extract_all", s, pattern, F.lit(0))
    pieces = F.call_function("split", s, pattern, F.lit(-1))
    cap_arrays = [F.call_function("regexp_extract_all", s, pattern, F.lit(i)) for i in range(1, len(groups or []) + 1)]

    def entry(m: Column, i: Column) -> Column:
        # the text before match i is pieces[0..i] and matches[0..i-1]
        before = F.aggregate(F.slice(pieces, 1, i + 1), F.lit(0), lambda acc, p: acc + F.length(p)) + \
            F.aggregate(F.slice(matches, 1, i), F.lit(0), lambda acc, p: acc + F.length(p))
        caps = V.make_array([_cap(F.coalesce(F.get(ca, i), F.lit("")), groups[j]) for j, ca in enumerate(cap_arrays)]) \
            if cap_arrays else V.lit_value([])
        return V.make_object([("match", v_string(m)), ("idx", v_long(before)), ("captures", caps)])

    return V.make_array(F.transform(matches, entry))


for _op in ("$regexMatch", "$regexFind", "$regexFindAll"):
    expression(_op)(_regex_op(_op))


# ---------------------------------------------------------------------------- replace

def _replace(op: str, first_only: bool):
    def impl(arg: dict, ctx: Ctx) -> Compiled:
        parts = [compile_child(arg[k], ctx, op, k) for k in ("input", "find", "replacement")]
        vals = [p.value for p in parts]

        def value(xs, cs):
            s, f, r = (_str(x) for x in xs)
            if first_only:
                pos = F.call_function("locate", f, s, F.lit(1))
                out = F.when(pos == 0, s).otherwise(F.concat(
                    F.substring(s, 1, (pos - 1).cast("int")), r,
                    F.substring(s, (pos + F.length(f)).cast("int"), 2147483647)))  # small ints
            else:
                out = F.when(F.length(f) == 0, s).otherwise(F.replace(s, f, r))
            any_null = nullish(cs[0]) | nullish(cs[1]) | nullish(cs[2])
            all_str = (cs[0] == STRING) & (cs[1] == STRING) & (cs[2] == STRING)
            return F.when(any_null, V.NULL).when(all_str, v_string(out))

        def error(xs, cs):
            return F.coalesce(*[F.when(~nullish(c) & (c != STRING),
                                       F.concat(F.lit(f"{op} requires that '{k}' be a string, found "), found(x, c)))
                                for k, x, c in zip(("input", "find", "replacement"), xs, cs)])
        return Compiled(with_codes(vals, value), errors_of(parts, with_codes(vals, error)))
    return impl


expression("$replaceOne")(_replace("$replaceOne", True))
expression("$replaceAll")(_replace("$replaceAll", False))
