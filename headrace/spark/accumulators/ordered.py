"""Sorted and n-valued accumulators: ``$firstN $lastN $top $bottom $topN $bottomN $maxN $minN``,
and the ``$sort`` keys they order documents by (:func:`sort_field_key`, also used by ``$sort`` itself).
"""
from __future__ import annotations

from typing import Any

from pyspark.sql import Column
from pyspark.sql import functions as F

from ...mql import accumulators as mqlacc
from .. import values as V
from ..registry import Compiled, Ctx, accumulator
from .base import Accumulator, KeyCtx, Partial, Ref, Step, _cmp, _collect_seq, _compile, _m_flat, _null_or, _sub, by_seq


def sort_field_key(doc: Column, path: str, direction: int, value: Column | None = None) -> Column:
    """The ``$sort`` key of field ``path`` of ``doc`` for one direction (an orderable struct).

    MongoDB's sort keys: missing sorts as null; an array sorts by its smallest element
    ascending and its largest descending; an empty array sorts below null (but above MinKey).

    ``value``: the field's value when the caller has it already, e.g. a column a stage's
    :class:`~headrace.spark.hoist.Hoister` computes once per row (its type code and typed reads
    are then columns too). Such a value, and one of known type (:mod:`..values.facts`), is keyed
    without a lambda unless it is an array or a document: Spark evaluates a lambda interpreted,
    on every row.
    """
    v = V.get_path(doc, path) if value is None else value
    if value is None and not V.is_known(v):
        return _array_field_key(v, direction)
    c = V.type_code(v)
    k = V.sort_key_scalar(v, c)
    scalar = F.struct(F.when(k["r"] == 1, F.lit(0)).otherwise(F.lit(2)).alias("p"), k.alias("k"))
    if V.is_known(v):        # the facts' types are never arrays or documents
        return scalar
    # containers as before (a document is its own one candidate)
    return F.when(c.isin(V.CODE["array"], V.CODE["object"]), _array_field_key(v, direction)).otherwise(scalar)


def _array_field_key(v: Column, direction: int) -> Column:
    """:func:`sort_field_key` of any value: each element's key (the value's own when it is not
    an array) under a lambda, the smallest or largest taken."""
    elems = V.array_elems(v)
    empty = F.coalesce(F.size(elems) == 0, F.lit(False))
    cands = F.when(empty, F.array(V.NULL)).when(elems.isNotNull(), elems).otherwise(F.array(v))
    keys = F.transform(cands, lambda e: V.sort_key(e))
    k = F.array_min(keys) if direction > 0 else F.array_max(keys)
    pre = F.when(empty, F.lit(1)).when(k["r"] == 1, F.lit(0)).otherwise(F.lit(2))
    return F.struct(pre.alias("p"), k.alias("k"))


def compare_keys(a: Column, b: Column, dirs: list[int], seq: bool = False) -> Column:
    """-1/0/1 comparing structs ``a`` and ``b`` by their fields ``k0..`` in directions ``dirs``
    (then by field ``s`` ascending when ``seq``)."""
    out = _cmp(a["s"], b["s"]) if seq else F.lit(0)
    for i in reversed(range(len(dirs))):
        ka, kb = a[f"k{i}"], b[f"k{i}"]
        out = F.when(ka < kb, F.lit(-dirs[i])).when(ka > kb, F.lit(dirs[i])).otherwise(out)
    return out


def _n_step(n_expr: Any) -> Step:
    """A step computing ``n`` (INT, NULL when invalid) and ``n_err`` for the group.

    A constant ``n`` needs no evaluation; otherwise ``n`` is evaluated against the group key."""
    const = mqlacc.constant_n_of(n_expr)
    if const is not None:
        return {"n": lambda r, k: F.lit(min(const, 2**31 - 1)), "n_err": lambda r, k: F.lit(None).cast("string")}

    def compiled(k: KeyCtx) -> Compiled:
        return _compile(n_expr, k())

    def n(r: Ref, k: KeyCtx) -> Column:
        v = V.as_integral(compiled(k).value)
        return F.when(v > 0, F.least(v, F.lit(2**31 - 1)).cast("int"))

    def n_err(r: Ref, k: KeyCtx) -> Column:
        c = compiled(k)
        v = V.as_integral(c.value)
        bad = F.when(v.isNull() | (v <= 0), F.concat(
            F.lit("'n' must be a positive integer, found "), F.coalesce(F.to_json(c.value), F.lit("missing"))))
        return bad if c.error is None else F.coalesce(c.error, bad)

    return {"n": n, "n_err": n_err}


def _first_last_n(arg: Any, ctx: Ctx, last: bool) -> Accumulator:
    c = _compile(arg["input"], _sub(ctx, "input"))

    def part(r: Ref, k: KeyCtx) -> Column:
        xs, n = r("vals"), r("n")
        size = F.size(xs)
        take = F.least(n, size)
        return F.when(take <= 0, F.array().cast("array<variant>")).otherwise(
            F.slice(xs, (size - take + 1) if last else F.lit(1), take))

    steps = (
        {**_n_step(arg["n"]), "vals": lambda r, k: F.transform(by_seq(r("xs")), lambda e: e["v"])},
        {"part": part},
        {"value": lambda r, k: F.when(r("n").isNotNull(), V.make_array(r("part"))), "error": lambda r, k: r("n_err")},
    )
    # incrementally: the list, trimmed to the first / last n when n is a constant
    const = mqlacc.constant_n_of(arg["n"])
    post: tuple = ()
    if const is not None:
        def trim(r: Ref) -> Column:
            srt, size = by_seq(r("xs")), F.size(r("xs"))
            take = F.least(F.lit(min(const, 2**31 - 1)), size)
            return F.slice(srt, (size - take + 1) if last else F.lit(1), take)
        post = ({"xs": trim},)
    return Accumulator({"v": c.value}, {"xs": lambda r: _collect_seq(_null_or(r("v")))}, steps, c.error,
                       partial=Partial({"xs": _m_flat("xs")}, post=post, trim=True))


def _max_min_n(arg: Any, ctx: Ctx, largest: bool) -> Accumulator:
    """``$maxN`` / ``$minN``: the ``n`` largest (smallest) values of ``input`` in BSON order, null
    and missing left out, largest (smallest) first: a ``$topN`` whose key is the value itself."""
    c = _compile(arg["input"], _sub(ctx, "input"))
    return _top_bottom({"n": arg["n"]}, ctx, bottom=False, single=False,
                       by_value=(c, -1 if largest else 1))


def _top_bottom(arg: Any, ctx: Ctx, bottom: bool, single: bool,
                by_value: "tuple[Compiled, int] | None" = None) -> Accumulator:
    """``$top`` & co.; ``by_value``: ``(compiled input, direction)`` to rank the values themselves
    by their BSON order, null and missing left out (``$maxN``/``$minN``)."""
    if by_value is None:
        sort = mqlacc.parse_sort_spec(arg["sortBy"], f"{ctx.where}.sortBy", code="ACC_BAD_ARGS")
        dirs = [d for _, d in sort]
        out = _compile(arg["output"], _sub(ctx, "output"))
        inputs = {"o": out.value}
        for i, (path, d) in enumerate(sort):
            inputs[f"k{i}"] = sort_field_key(ctx.root, path, d)
    else:
        out, d = by_value
        dirs = [d]
        inputs = {"o": out.value, "k0": F.struct(V.sort_key(out.value).alias("k"))}

    def agg(r: Ref) -> Column:
        fields = [F.col("_seq").alias("s"), _null_or(r("o")).alias("o")]
        fields += [r(f"k{i}").alias(f"k{i}") for i in range(len(dirs))]
        row = F.struct(*fields)
        if by_value is not None:        # collect_list leaves the NULL rows out
            row = F.when(~(r("o").isNull() | F.is_variant_null(r("o"))), row)
        return F.collect_list(row)

    def srt(r: Ref, k: KeyCtx) -> Column:
        if single:      # the one element kept, found in one pass (no sort)
            return _best(r("xs"), dirs, bottom)
        return F.array_sort(r("xs"), lambda a, b: compare_keys(a, b, dirs, seq=True))

    first: dict = {"srt": srt}
    if single:
        first.update({"n": lambda r, k: F.lit(1), "n_err": lambda r, k: F.lit(None).cast("string")})
        kept: tuple = ({"kept": lambda r, k: r("srt")},)
    else:
        first.update(_n_step(arg["n"]))
        kept = _bottom_n_steps(dirs) if bottom else (
            {"kept": lambda r, k: F.slice(r("srt"), 1, F.least(r("n"), F.size(r("srt"))))},)

    def value(r: Ref, k: KeyCtx) -> Column:
        outs = F.transform(r("kept"), lambda e: e["o"])
        v = F.coalesce(F.try_element_at(outs, F.lit(1)), V.NULL) if single else V.make_array(outs)
        return F.when(r("n").isNotNull(), v)

    steps = (first, *kept, {"value": value, "error": lambda r, k: r("n_err")})
    # incrementally: the list, trimmed to what the result keeps when n is a constant (for the
    # bottom n, MongoDB's bounded map fed the kept elements again in arrival order is the same
    # map, so trimming does not change what later documents do)
    const = 1 if single else mqlacc.constant_n_of(arg["n"])
    post: tuple = ()
    if single:
        post = ({"xs": lambda r: _best(r("xs"), dirs, bottom)},)
    elif const is not None:
        def noctx(steps: tuple) -> tuple:
            return tuple({n: (lambda r, fn=fn: fn(r, None)) for n, fn in st.items()} for st in steps)
        post = ({"srt": lambda r: srt(r, None), "n": lambda r: F.lit(min(const, 2**31 - 1))},
                *noctx(kept), {"xs": lambda r: r("kept")})
    # the best or the top n by (keys, arrival) of some rows is the best of those rows' bests, so a
    # batch's own partial is trimmed too; not $bottomN's (its ties depend on arrivals before)
    return Accumulator(inputs, {"xs": agg}, steps, out.error,
                       partial=Partial({"xs": _m_flat("xs")}, post=post, trim=single or not bottom))


def _best(xs: Column, dirs: list[int], bottom: bool) -> Column:
    """What a single ``$top`` (``$bottom``) keeps of the elements ``xs``, as an array of one
    (empty when ``xs`` is): the first element in sort order (keys, then arrival ``s``), or for
    ``$bottom`` the last by keys and, of elements tied there, the earliest arrival (what
    :func:`_bottom_n_steps` keeps for n = 1). One pass over ``xs``: a sort by a lambda
    comparator makes about log2(len) times as many comparisons, each evaluated interpreted."""
    def better(e: Column, acc: Column) -> Column:
        if bottom:
            c = compare_keys(e, acc, dirs)
            return (c > 0) | ((c == 0) & (e["s"] < acc["s"]))
        return compare_keys(e, acc, dirs, seq=True) < 0

    win = F.aggregate(xs, F.try_element_at(xs, F.lit(1)), lambda acc, e: F.when(better(e, acc), e).otherwise(acc))
    return F.when(F.size(xs) > 0, F.array(win)).otherwise(xs)


def _bottom_n_steps(dirs: list[int]) -> tuple[Step, ...]:
    """MongoDB's ``$bottomN`` result (``kept``) from the stably sorted elements ``srt``.

    With ``t`` the key of the n-th element from the end: every element after the block of
    elements tied with ``t`` is kept; of the block, MongoDB keeps the last ``m`` (the places
    left) among the ones that arrived no later than the n-th arrival with a key at or after
    ``t``. Only key equality is evaluated here (``srt`` is already sorted).
    """
    def t(r: Ref, k: KeyCtx) -> Column:
        return F.try_element_at(r("srt"), F.greatest(F.size(r("srt")) - r("n") + 1, F.lit(1)))

    def tied(r: Ref, k: KeyCtx) -> Column:
        t = r("t")
        return F.transform(r("srt"), lambda e: _and_all([e[f"k{i}"] == t[f"k{i}"] for i in range(len(dirs))]))

    def bounds(r: Ref, k: KeyCtx) -> Column:
        size = F.size(r("tied"))
        first = F.array_position(r("tied"), True).cast("int")
        last = (size - F.array_position(F.reverse(r("tied")), True) + 1).cast("int")
        return F.struct(first.alias("first"), last.alias("last"), size.alias("size"))

    def p(r: Ref, k: KeyCtx) -> Column:
        b = r("b")
        seqs = F.sort_array(F.transform(F.slice(r("srt"), b["first"], b["size"] - b["first"] + 1), lambda e: e["s"]))
        return F.try_element_at(seqs, r("n"))

    def kept(r: Ref, k: KeyCtx) -> Column:
        b, srt = r("b"), r("srt")
        gt = F.slice(srt, b["last"] + 1, b["size"] - b["last"])
        block = F.slice(srt, b["first"], b["last"] - b["first"] + 1)
        eq = F.filter(block, lambda e: e["s"] <= r("p"))
        m = r("n") - F.size(gt)
        size_eq = F.size(eq)
        kept_eq = F.slice(eq, F.greatest(size_eq - m + 1, F.lit(1)), F.greatest(F.least(m, size_eq), F.lit(0)))
        return F.when(F.size(srt) <= r("n"), srt).otherwise(F.concat(kept_eq, gt))

    return ({"t": t}, {"tied": tied}, {"b": bounds}, {"p": p}, {"kept": kept})


def _and_all(cols: list[Column]) -> Column:
    out = cols[0]
    for c in cols[1:]:
        out = out & c
    return out


for _name, _fn in {
    "$firstN": lambda arg, ctx: _first_last_n(arg, ctx, False),
    "$lastN": lambda arg, ctx: _first_last_n(arg, ctx, True),
    "$top": lambda arg, ctx: _top_bottom(arg, ctx, bottom=False, single=True),
    "$bottom": lambda arg, ctx: _top_bottom(arg, ctx, bottom=True, single=True),
    "$topN": lambda arg, ctx: _top_bottom(arg, ctx, bottom=False, single=False),
    "$bottomN": lambda arg, ctx: _top_bottom(arg, ctx, bottom=True, single=False),
    "$maxN": lambda arg, ctx: _max_min_n(arg, ctx, largest=True),
    "$minN": lambda arg, ctx: _max_min_n(arg, ctx, largest=False),
}.items():
    accumulator(_name)(_fn)
