"""The regex operators ``$regexMatch $regexFind $regexFindAll``: PCRE patterns (translated to
Java; options ``i m s x``); a null or missing input gives ``false`` / null / ``[]``, another
non-string an error. A capture group that did not take part in the match is null. Deviations: a
regex that is not a constant runs as a Java regex without translation (its unmatched groups read
``""``), as does a group that can match the empty string.

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
