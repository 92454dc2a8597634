"""The regex operators ``$regexMatch $regexFind $regexFindAll``: PCRE patterns (translated to
Java; options ``i m s x``); a null or missing input gives ``false`` / null / ``[]``, another
non-string an error. A capture group that did not take part in the match is null, one that took
part and matched nothing ``""``. Deviation: a regex that is not a constant runs as a Java regex
without translation, its groups counted in its text (:func:`_group_count`).

Spark reads a group that did not take part as ``""``. For a group that can only match a non-empty
string that means null; for one that can match ``""``, an empty capture is tested again
(:func:`_took_part`): the pattern, atomic, at the match's start, followed by a backreference to
the group, which Java fails for a group that did not take part.

Golden cases (``tests/golden/cases/<name>.json``): ``$regexFind`` addfields_regexfind;
``$regexFindAll`` addfields_regexfindall; ``$regexMatch`` addfields_regexmatch.
"""
from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F

from ...mql.regex import compile_regex, regex_literal, translate_regex
from .. import values as V
from ..registry import Compiled, Ctx, expression, first_error
from ._common import compile_child, found, nullish, v_bool, v_long, v_string, with_codes
from .strings import STRING, _str


def _regex_parts(arg: dict, ctx: Ctx, op: str):
    """(input Compiled, java pattern Column, per-group facts, extra Compiled list); the facts of a
    constant pattern are ``[can only match non-empty, per group]``, of one computed per document
    None (groups counted per row)."""
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
        return inp, None, [], []
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
        inp, pattern, facts, extra = _regex_parts(arg, ctx, op)

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
                out = F.when(F.regexp_like(s, pattern), _find_one(s, pattern, facts)).otherwise(V.NULL)
                empty = V.NULL
            else:
                out = _find_all(s, pattern, facts)
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


def _took_part(s: Column, java: Column, group: "int | Column", start: Column) -> Column:
    """Whether capture ``group`` took part in the match of ``java`` that starts ``start`` code
    points into ``s``: the pattern made atomic at that start (its first way to match there, the
    one the search found), then a backreference to the group, which matches ``""`` after a group
    that matched ``""`` and fails after one that did not take part. A pattern per row, so it is
    asked only of empty captures."""
    group = F.lit(group) if isinstance(group, int) else group
    probe = F.concat(F.lit("\\A(?s:.){"), start.cast("string"), F.lit("}(?>"), java, F.lit(")(?:\\"),
                     group.cast("string"), F.lit(")"))
    return F.regexp_like(s, probe)


def _group_count(java: Column) -> Column:
    """The number of capture groups of a Java pattern's text: ``(`` not after ``\\``, outside
    ``[...]`` and not opening ``(?...)`` other than a named group ``(?<name>``."""
    bare = F.regexp_replace(F.regexp_replace(java, r"\\.", ""), r"\[\^?\]?[^\]]*\]", "")
    return F.call_function("regexp_count", bare, F.lit(r"\((?!\?)|\(\?<(?![=!])"))


def _cap(text: Column, nonempty: bool, took_part) -> Column:
    """A capture as a string, or null for a group that did not take part in the match
    (``took_part``: a function giving that test for an empty capture)."""
    if nonempty:
        return F.when(text == "", V.NULL).otherwise(v_string(text))
    return F.when(text != "", v_string(text)).when(took_part(), v_string(F.lit(""))).otherwise(V.NULL)


def _captures(pattern: Column, groups: "list[bool] | None", capture) -> Column:
    """The captures array: ``capture(i, nonempty)`` for each group ``i`` (1-based) of a constant
    pattern, or for each group counted in a computed one."""
    if groups is not None:
        return V.make_array([capture(i, ne) for i, ne in enumerate(groups, 1)]) if groups else V.lit_value([])
    n = _group_count(pattern)
    return V.make_array(F.when(n > 0, F.transform(F.sequence(F.lit(1), n), lambda i: capture(i, False)))
                        .otherwise(F.array().cast("array<variant>")))


def _col(i: "int | Column") -> Column:
    return F.lit(i) if isinstance(i, int) else i


def _find_one(s: Column, pattern: Column, groups: "list[bool] | None") -> Column:
    match = F.call_function("regexp_extract", s, pattern, F.lit(0))
    idx = F.call_function("regexp_instr", s, pattern) - 1
    caps = _captures(pattern, groups, lambda i, ne: _cap(
        F.call_function("regexp_extract", s, pattern, _col(i)), ne, lambda: _took_part(s, pattern, i, idx)))
    return V.make_object([("match", v_string(match)), ("idx", v_long(idx)), ("captures", caps)])


def _find_all(s: Column, pattern: Column, groups: "list[bool] | None") -> Column:
    matches = F.call_function("regexp_extract_all", s, pattern, F.lit(0))
    pieces = F.call_function("split", s, pattern, F.lit(-1))

    # every group's captures over all the matches, read once (not again for each match)
    def extract_all(i: "int | Column") -> Column:
        return F.call_function("regexp_extract_all", s, pattern, _col(i))
    if groups is not None:
        per_group = F.array(*[extract_all(i) for i in range(1, len(groups) + 1)]) if groups else None
    else:
        n = _group_count(pattern)
        per_group = F.when(n > 0, F.transform(F.sequence(F.lit(1), n), extract_all))

    def entry(m: Column, k: Column) -> Column:
        # the text before match k is pieces[0..k] and matches[0..k-1]
        before = F.aggregate(F.slice(pieces, 1, k + 1), F.lit(0), lambda acc, p: acc + F.length(p)) + \
            F.aggregate(F.slice(matches, 1, k), F.lit(0), lambda acc, p: acc + F.length(p))
        caps = _captures(pattern, groups, lambda i, ne: _cap(
            F.coalesce(F.get(F.get(per_group, _col(i) - 1), k), F.lit("")), ne,
            lambda: _took_part(s, pattern, i, before)))
        return V.make_object([("match", v_string(m)), ("idx", v_long(before)), ("captures", caps)])

    return V.make_array(F.transform(matches, entry))


for _op in ("$regexMatch", "$regexFind", "$regexFindAll"):
    expression(_op)(_regex_op(_op))
