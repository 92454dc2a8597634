"""Strings searched for a literal substring: ``$indexOfCP $indexOfBytes $split $replaceOne
$replaceAll``. ``$indexOfCP`` counts Unicode code points, ``$indexOfBytes`` UTF-8 bytes;
``$split`` splits on a literal separator; an empty ``find`` matches at the start (``$replaceOne``)
or at every position (``$replaceAll``: before each character and at the end; MongoDB's loop goes by
UTF-8 byte, headrace by character, the same for ASCII); null or missing input gives null, other
non-strings are errors naming the operator and what was found.

Golden cases (``tests/golden/cases/<name>.json``): ``$indexOfCP`` project_indexofcp;
``$indexOfBytes`` project_indexofbytes; ``$replaceAll`` project_replaceall; ``$replaceOne``
project_replaceone; ``$split`` project_split.
"""
from __future__ import annotations

from typing import Any

from pyspark.sql import Column
from pyspark.sql import functions as F

from .. import values as V
from ..registry import Compiled, Ctx, expression
from ._common import compile_args, compile_child, errors_of, found, nullish, v_long, v_string, with_codes
from .strings import STRING, _str


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
                # an empty 'find' matches at every position: before each character and at the end
                everywhere = F.when(s == "", r).otherwise(
                    F.concat(r, F.call_function("array_join", F.split(s, ""), r), r))
                out = F.when(F.length(f) == 0, everywhere).otherwise(F.replace(s, f, r))
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
