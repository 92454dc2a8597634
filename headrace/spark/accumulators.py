"""``$group`` accumulators as native Spark aggregates (no Python UDFs), with MongoDB's semantics.

Each accumulator is registered with ``@accumulator("$name")`` as ``fn(arg, ctx) -> Accumulator``:
``arg`` is the accumulator's validated argument (``headrace.mql.accumulators``) and ``ctx`` the
expression context of one document. ``headrace.spark.window_stages.apply_group`` evaluates the
:class:`Accumulator`'s per-document ``inputs``, aggregates them per (window, group) with ``aggs``
and turns the aggregates into the field's value with its ``steps``.

Arrival order is ``_seq``: order-sensitive accumulators collect ``(seq, value)`` pairs and sort
them by ``seq``, so results never depend on Spark's partitioning (floating-point sums included).

Semantics (MongoDB's, as documented and as its server computes them):

- ``$sum``: numbers only (int, long, double, decimal; everything else, arrays included, is
  ignored); nothing to sum gives ``0``. Integers only: the exact sum, an int when it fits 32 bits,
  else a long, else (beyond 64 bits) a double. With a double: MongoDB's double-double summation
  (``DoubleDoubleSummation``: 2Sum/Fast2Sum, longs split in two exact halves) in arrival order,
  returning its rounded ``sum`` part. With a decimal: a decimal (decimals exactly, plus the other
  numbers' double-double sum).
- ``$avg``: the same sum divided by the count of numbers; a double (decimal if any decimal);
  null when there is no number.
- ``$min`` / ``$max``: BSON order across types; null and missing ignored (null if nothing is
  left); among equal values the first arrival wins.
- ``$first`` / ``$last``: the value of the first / last document by arrival; missing gives null.
- ``$push``: the values in arrival order (missing values skipped, nulls kept).
- ``$addToSet``: distinct values (MQL equality: ``1``, ``1.0`` and ``NumberLong(1)`` are one),
  each at its first arrival, in arrival order (MongoDB leaves the order undefined).
- ``$mergeObjects``: documents merged in arrival order, later fields win; null and missing are
  ignored; any other non-document is an error for the group.
- ``$count``: the number of documents (``{$sum: 1}``).
- ``$top`` / ``$bottom`` / ``$topN`` / ``$bottomN``: documents ordered by ``sortBy`` (``$sort``
  keys: BSON order, arrays by their smallest element ascending / largest descending, an empty
  array below null); ``output`` evaluated per document, missing as null; results in sort order.
  Ties follow MongoDB's implementation exactly: the top ``n`` are the first ``n`` of a stable
  sort (ties by arrival); for the bottom ``n``, MongoDB keeps a bounded sorted map that drops a
  newcomer tied with its minimum and evicts the earliest-inserted minimum, reproduced here in
  closed form (e.g. ``$bottom`` with two tied last values returns the earlier one).
- ``$firstN`` / ``$lastN``: the first / last ``n`` values by arrival, missing as null.
- ``n`` (``$topN $bottomN $firstN $lastN``): a constant, or an expression evaluated per group
  against the group key (``$$ROOT`` is ``_id`` when ``_id`` is a document, else an empty
  document); it must be a positive integer, else the group fails.
- ``$median`` / ``$percentile``: numbers as doubles; for each ``p`` the value of rank
  ``ceil(p * count)`` (1-based; the minimum for ``p = 0``, the maximum for ``p = 1``), which is
  MongoDB's discrete percentile and what its ``'approximate'`` t-digest returns on small inputs
  (e.g. the documented ``[62, 64, 67, 67]``); ``$percentile`` gives an array in ``p`` order.
  No number: ``null`` (``$median``) or an array of nulls.
- ``$stdDevPop`` / ``$stdDevSamp``: numbers as doubles, MongoDB's Welford updates in arrival
  order; null when there is no number (``$stdDevSamp``: fewer than two).

Decimals are computed as ``DECIMAL(38,18)`` (as ``values.as_decimal`` reads them); decimal results
have no trailing fractional zeros (``Decimal128("170")``, ``Decimal128("112.5")``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from pyspark.sql import Column
from pyspark.sql import functions as F

from ..mql import accumulators as mqlacc
from . import values as V
from .registry import Compiled, Ctx, accumulator

Ref = Callable[[str], Column]

#: Largest decimal scale kept in results (inputs are read as DECIMAL(38,18)).
DECIMAL_SCALE = 18
_DEC = "decimal(38,18)"


KeyCtx = Callable[[], Ctx]
Step = Mapping[str, Callable[[Ref, KeyCtx], Column]]
PostStep = Mapping[str, Callable[[Ref], Column]]


@dataclass(frozen=True)
class Partial:
    """How an accumulator keeps one partial aggregate per (window, group) across micro-batches
    (:mod:`headrace.spark.windows.partial`), with the same result as :attr:`Accumulator.aggs` and
    :attr:`Accumulator.steps` over all the documents.

    ``aggs``: per micro-batch, over its documents of one (window, group), like
    :attr:`Accumulator.aggs` (None: those); their names are the partial's columns.
    ``merge``: local name -> ``fn(ref) -> aggregate column`` over partial rows of one (window,
    group), for every partial column. Each partial row has ``_seq`` (its first document's) and
    ``_smax`` (its last document's); rows of different micro-batches never interleave in
    arrival order, so an order-sensitive merge takes rows in ``_seq`` order.
    ``post``: projections (``fn(ref) -> column``) applied in turn after ``merge``, making the
    partial compact again (fold a batch's items into a running state, trim a top-n list); the
    columns they define that are not partial columns are dropped.
    ``steps``: the finalisation from a merged and posted partial (None: :attr:`Accumulator.steps`).
    """

    merge: Mapping[str, Callable[[Ref], Column]]
    aggs: Mapping[str, Callable[[Ref], Column]] | None = None
    post: tuple[PostStep, ...] = ()
    steps: tuple[Step, ...] | None = None


@dataclass(frozen=True)
class Accumulator:
    """How one ``$group`` output field is computed.

    ``inputs``: per-document columns by local name (evaluated before grouping).
    ``derived``: more per-document columns, local name -> ``fn(ref)`` where ``ref(name)`` is an
    input column (so a compiled expression is evaluated once and then referenced).
    ``aggs``: local name -> ``fn(ref) -> aggregate column`` over inputs and derived columns.
    ``steps``: projections applied in turn to the grouped rows, each local name ->
    ``fn(ref, key_ctx) -> column``, where ``ref(name)`` is an aggregate or an earlier step's
    column and ``key_ctx()`` the expression context rooted at the group key (for ``n``). The
    last step defines ``value`` (the field's VARIANT value) and may define ``error`` (a
    per-group error). Steps keep every expression small: a value used several times is
    computed once in an earlier step and referenced by name.
    ``error``: per-document error column of the compiled expression, or None.
    ``check``: ``fn(ref) -> STRING`` (over inputs and derived columns), a per-document error
    of the accumulator itself (e.g. ``$mergeObjects`` of a non-document), or None.
    ``partial``: how the accumulator is kept incrementally in window state (:class:`Partial`),
    or None when it is not decomposable.
    """

    inputs: Mapping[str, Column]
    aggs: Mapping[str, Callable[[Ref], Column]]
    steps: tuple[Step, ...]
    error: Column | None = None
    derived: Mapping[str, Callable[[Ref], Column]] = field(default_factory=dict)
    check: Callable[[Ref], Column] | None = None
    partial: Partial | None = None     # None: not decomposable (the window keeps documents)


def _value(fn: Callable[[Ref], Column]) -> tuple[Step, ...]:
    """One step computing ``value`` from the aggregates."""
    return ({"value": lambda r, k: fn(r)},)


def _compile(expr: Any, ctx: Ctx) -> Compiled:
    from .expr import compile_expression

    return compile_expression(expr, ctx)


# ---------------------------------------------------------------------------------------------
# shared column helpers


def by_seq(lst: Column) -> Column:
    """An array of structs with field ``s`` sorted by ``s``."""
    return F.array_sort(lst, lambda a, b: F.when(a["s"] < b["s"], -1).when(a["s"] > b["s"], 1).otherwise(0))


def _collect_seq(value: Column, when: Column | None = None) -> Column:
    """collect_list of ``{s: _seq, v: value}`` (rows where ``when`` is false are skipped)."""
    item = F.struct(F.col("_seq").alias("s"), value.alias("v"))
    return F.collect_list(item if when is None else F.when(when, item))


def _cmp(a: Column, b: Column) -> Column:
    return F.when(a < b, F.lit(-1)).when(a > b, F.lit(1)).otherwise(F.lit(0))


def _null_or(v: Column) -> Column:
    """Missing as BSON null."""
    return F.coalesce(v, V.NULL)


def _m_sum(name: str) -> Callable[[Ref], Column]:
    return lambda r: F.sum(r(name))


def _m_max(name: str) -> Callable[[Ref], Column]:
    return lambda r: F.max(r(name))


def _m_flat(name: str) -> Callable[[Ref], Column]:
    """Lists of the partial rows concatenated (their order is restored by ``s`` later)."""
    return lambda r: F.flatten(F.collect_list(r(name)))


def _m_first(name: str) -> Callable[[Ref], Column]:
    """The value of the earliest partial row."""
    return lambda r: F.min_by(r(name), F.col("_seq"))


def _emptied(name: str) -> Callable[[Ref], Column]:
    return lambda r: F.slice(r(name), 1, 0)


def sort_field_key(doc: Column, path: str, direction: int) -> Column:
    """The ``$sort`` key of field ``path`` of ``doc`` for one direction (an orderable struct).

    MongoDB's sort keys: missing sorts as null; an array sorts by its smallest element
    ascending and its largest descending; an empty array sorts below null (but above MinKey).
    """
    v = V.get_path(doc, path)
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


def _int_result(total: Column) -> Column:
    """An exact integer total (DECIMAL(38,0)): int/long when it fits 64 bits, else a double."""
    fits = total.between(F.lit(-(2**63)), F.lit(2**63 - 1))
    return F.when(fits, V.from_long(total.cast("bigint"))).otherwise(V.from_double(total.cast("double")))


def decimal_value(x: Column) -> Column:
    """A DECIMAL(38,18) column as a VARIANT decimal without trailing fractional zeros.

    (Spark reads VARIANT decimals with their trailing zeros stripped, so an input's own scale
    cannot be kept: ``Decimal128("10.00") + Decimal128("5.00")`` gives ``15``, not ``15.00``.)
    """
    text = x.cast("string")                                   # plain: -12.340000000000000000
    scale = F.length(F.regexp_extract(text, r"\.(\d*?)0*$", 1))
    digits = F.concat(F.regexp_extract(text, r"^(-?\d+)", 1), F.lit("."),
                      F.substring(F.regexp_extract(text, r"\.(\d+)$", 1), 1, DECIMAL_SCALE))
    # JSON text with a fraction parses as a VARIANT decimal of exactly that scale
    return F.when(x.isNotNull(), F.when(scale == 0, x.cast("decimal(38,0)").cast("variant"))
                  .otherwise(F.parse_json(F.substring(digits, F.lit(1), F.length(digits) - DECIMAL_SCALE + scale))))


# ---------------------------------------------------------------------------------------------
# MongoDB's DoubleDoubleSummation (src/mongo/util/summation.h), in arrival order


def _dd_add(st: Column, x: Column) -> Column:
    """One ``addDouble(x)`` on a ``{sum, addend, special}`` state."""
    s1 = x + st["addend"]                       # Fast2Sum(x, addend)
    t1 = st["addend"] - (s1 - x)
    s2 = st["sum"] + s1                         # 2Sum(sum, s1)
    a_p = s2 - s1
    b_p = s2 - a_p
    t2 = (st["sum"] - a_p) + (s1 - b_p)
    return F.struct(s2.alias("sum"), (t1 + t2).alias("addend"), (st["special"] + x).alias("special"))


def _dd_zero():
    return F.lit(0.0).cast("double")


def dd_init() -> Column:
    """The double-double state before any number: ``{sum, addend, special}``."""
    return F.struct(_dd_zero().alias("sum"), _dd_zero().alias("addend"), _dd_zero().alias("special"))


def dd_finish(st: Column) -> Column:
    """MongoDB's ``getDouble()`` of a double-double state."""
    return F.when(F.isnan(st["sum"]), st["special"]).otherwise(st["sum"])


def dd_sum(items: Column) -> Column:
    """The double-double sum (DOUBLE, MongoDB's ``getDouble()``) of an array of structs
    ``{l: BIGINT (longs beyond 32 bits), d: DOUBLE (other numbers)}`` in array order."""
    return dd_finish(dd_fold(dd_init(), items))


def dd_fold(init: Column, items: Column) -> Column:
    """The double-double state after adding ``items`` (as :func:`dd_sum`) to state ``init``."""
    def halves(x: Column) -> Column:
        # addLong: high = x / 2**32 * 2**32 (C++ division truncates toward zero), low = x - high
        fq = F.shiftright(x, 32)
        q = F.when((x < 0) & (x != F.shiftleft(fq, 32)), fq + 1).otherwise(fq)
        high = F.shiftleft(q, 32)
        return F.array((x - high).cast("double"), high.cast("double"))

    parts = F.flatten(F.transform(items, lambda e: F.when(e["l"].isNotNull(), halves(e["l"]))
                                  .otherwise(F.array(e["d"]))))
    return F.aggregate(parts, init, _dd_add)


def welford_init() -> Column:
    return F.struct(F.lit(0).cast("bigint").alias("n"), F.lit(0.0).alias("mean"), F.lit(0.0).alias("m2"))


def welford(xs: Column, init: Column | None = None) -> Column:
    """``{n, mean, m2}`` after MongoDB's online variance updates over an array of doubles (from
    state ``init``, by default the empty one)."""
    init = welford_init() if init is None else init

    def step(st, x):
        n = st["n"] + 1
        delta = x - st["mean"]
        mean = F.when(delta != 0, st["mean"] + delta / n).otherwise(st["mean"])
        m2 = F.when(delta != 0, st["m2"] + delta * (x - mean)).otherwise(st["m2"])
        return F.struct(n.alias("n"), mean.alias("mean"), m2.alias("m2"))

    return F.aggregate(xs, init, step)


# ---------------------------------------------------------------------------------------------
# numeric accumulators


_NUMERIC = ("int", "long", "double", "decimal")


def _tvg(v: Column, type_: str) -> Column:
    return F.try_variant_get(v, "$", type_)


def _numeric_inputs(arg: Any, ctx: Ctx) -> dict[str, Any]:
    """Input ``v`` (the value) and derived ``t`` (its MQL type name); typed reads use ``t``."""
    c = _compile(arg, ctx)
    return {"inputs": {"v": c.value}, "derived": {"t": lambda r: V.type_name(r("v"))}, "error": c.error}


def _numeric_aggs() -> dict[str, Callable[[Ref], Column]]:
    """Aggregates shared by ``$sum`` and ``$avg`` over inputs ``v`` (value) and ``t`` (type)."""

    def dd_items(r: Ref) -> Column:
        t, v = r("t"), r("v")
        item = F.struct(F.col("_seq").alias("s"), F.when(t == "long", _tvg(v, "bigint")).alias("l"),
                        F.when(t.isin("int", "double"), _tvg(v, "double")).alias("d"))
        return F.collect_list(F.when(t.isin("int", "long", "double"), item))

    def dec(r: Ref) -> Column:
        return F.when(r("t") == "decimal", _tvg(r("v"), _DEC))

    return {
        "n": lambda r: F.count(F.when(r("t").isin(*_NUMERIC), F.lit(1))),
        "has_double": lambda r: F.max(r("t") == "double"),
        "has_decimal": lambda r: F.max(r("t") == "decimal"),
        "int_total": lambda r: F.try_sum(F.when(r("t").isin("int", "long"),
                                                _tvg(r("v"), "bigint").cast("decimal(38,0)"))),
        "dec_total": lambda r: F.try_sum(dec(r)),
        "dec_bad": lambda r: F.max((r("t") == "decimal") & dec(r).isNull()),
        "dd_items": dd_items,
    }


_DEC_ERR = "decimal result out of range (DECIMAL(38,18))"


def _guarded_sum(name: str, flag: str) -> Callable[[Ref], Column]:
    """Merge of a ``try_sum`` partial: NULL (overflow) when a row that had inputs (``flag``) is NULL."""
    return lambda r: F.when(F.max(F.coalesce(r(flag), F.lit(False)) & r(name).isNull()), F.lit(None)) \
        .otherwise(F.try_sum(r(name)))


def _numeric_partial(steps: tuple[Step, ...]) -> Partial:
    """``$sum``/``$avg`` kept incrementally: counts and exact totals merge by addition; the
    double-double sum is a running state ``dd_st`` onto which each batch's numbers (``dd_items``)
    are folded in arrival order, exactly as one pass over all the numbers would."""
    aggs = {**_numeric_aggs(),
            "has_int": lambda r: F.max(r("t").isin("int", "long")),
            "dd_st": lambda r: dd_init()}
    merge = {"n": _m_sum("n"), "has_double": _m_max("has_double"), "has_decimal": _m_max("has_decimal"),
             "has_int": _m_max("has_int"), "dec_bad": _m_max("dec_bad"),
             "int_total": _guarded_sum("int_total", "has_int"), "dec_total": _guarded_sum("dec_total", "has_decimal"),
             "dd_items": _m_flat("dd_items"), "dd_st": _m_first("dd_st")}
    post = ({"dd_st": lambda r: dd_fold(r("dd_st"), by_seq(r("dd_items"))), "dd_items": _emptied("dd_items")},)
    final = ({"dd": lambda r, k: dd_finish(r("dd_st"))}, *steps[1:])
    return Partial(merge, aggs, post, final)


def _dd_step(r: Ref, k: KeyCtx) -> Column:
    return F.when(F.size(r("dd_items")) > 0, dd_sum(by_seq(r("dd_items")))).otherwise(F.lit(0.0))


def _dec_total_step(r: Ref, k: KeyCtx) -> Column:
    """The decimal total including the non-decimal numbers (NULL on overflow)."""
    return F.when(r("has_decimal"), (r("dec_total") + r("dd").try_cast(_DEC)).try_cast(_DEC))


@accumulator("$sum")
def acc_sum(arg: Any, ctx: Ctx) -> Accumulator:
    """``$sum`` (see the module docstring)."""
    if type(arg) is int:  # a constant integer: count * arg, exactly
        return Accumulator({}, {"n": lambda r: F.count(F.lit(1))}, (
            {"total": lambda r, k: r("n").cast("decimal(38,0)") * F.lit(arg).cast("decimal(38,0)")},
            {"value": lambda r, k: _int_result(r("total"))}), partial=Partial({"n": _m_sum("n")}))

    num = _numeric_inputs(arg, ctx)

    def value(r: Ref, k: KeyCtx) -> Column:
        return (
            F.when(r("has_decimal"), decimal_value(r("dec")))
            .when(r("has_double"), V.from_double(r("dd")))
            .when(r("n") == 0, V.from_long(F.lit(0)))
            .when(r("int_total").isNull(), V.from_double(r("dd")))
            .otherwise(_int_result(r("int_total")))
        )

    def err(r: Ref, k: KeyCtx) -> Column:
        return F.when(r("has_decimal") & (r("dec_bad") | r("dec").isNull()), F.lit(_DEC_ERR))

    steps = ({"dd": _dd_step}, {"dec": _dec_total_step}, {"value": value, "error": err})
    return Accumulator(aggs=_numeric_aggs(), steps=steps, partial=_numeric_partial(steps), **num)


@accumulator("$avg")
def acc_avg(arg: Any, ctx: Ctx) -> Accumulator:
    """``$avg`` (see the module docstring)."""
    num = _numeric_inputs(arg, ctx)

    def avg(r: Ref, k: KeyCtx) -> Column:
        return F.when(r("n") > 0, (r("dec") / r("n").cast("decimal(20,0)")).try_cast(_DEC))

    def value(r: Ref, k: KeyCtx) -> Column:
        return (
            F.when(r("n") == 0, V.NULL)
            .when(r("has_decimal"), decimal_value(r("avg")))
            .otherwise(V.from_double(r("dd") / r("n").cast("double")))
        )

    def err(r: Ref, k: KeyCtx) -> Column:
        return F.when(r("has_decimal") & (r("n") > 0) & (r("dec_bad") | r("avg").isNull()), F.lit(_DEC_ERR))

    steps = ({"dd": _dd_step}, {"dec": _dec_total_step}, {"avg": avg}, {"value": value, "error": err})
    return Accumulator(aggs=_numeric_aggs(), steps=steps, partial=_numeric_partial(steps), **num)


def _doubles_acc(arg: Any, ctx: Ctx, steps: tuple[Step, ...], partial: Partial | None = None) -> Accumulator:
    """Numbers as doubles in arrival order: a first step makes ``xs`` (ARRAY<DOUBLE>)."""
    num = _numeric_inputs(arg, ctx)

    def items(r: Ref) -> Column:
        return _collect_seq(_tvg(r("v"), "double"), r("t").isin(*_NUMERIC) & _tvg(r("v"), "double").isNotNull())

    first = {"xs": lambda r, k: F.transform(by_seq(r("items")), lambda e: e["v"])}
    if partial is not None:
        partial = Partial(partial.merge, {"items": items, **(partial.aggs or {})}, partial.post, partial.steps)
    return Accumulator(aggs={"items": items}, steps=(first, *steps), partial=partial, **num)


def _std_dev(arg: Any, ctx: Ctx, least: int) -> Accumulator:
    """``$stdDevPop`` (``least`` 1) / ``$stdDevSamp`` (2). Incrementally: a running Welford state
    ``wf`` onto which each batch's numbers are folded in arrival order."""
    def value(r: Ref, k: KeyCtx) -> Column:
        st = r("st")
        return F.when(st["n"] >= least, V.from_double(
            F.sqrt(st["m2"] / (st["n"] - (least - 1)).cast("double")))).otherwise(V.NULL)

    partial = Partial(
        {"items": _m_flat("items"), "wf": _m_first("wf")}, {"wf": lambda r: welford_init()},
        ({"wf": lambda r: welford(F.transform(by_seq(r("items")), lambda e: e["v"]), r("wf")),
          "items": _emptied("items")},),
        ({"st": lambda r, k: r("wf")}, {"value": value}))
    return _doubles_acc(arg, ctx, ({"st": lambda r, k: welford(r("xs"))}, {"value": value}), partial)


@accumulator("$stdDevPop")
def acc_std_dev_pop(arg: Any, ctx: Ctx) -> Accumulator:
    return _std_dev(arg, ctx, 1)


@accumulator("$stdDevSamp")
def acc_std_dev_samp(arg: Any, ctx: Ctx) -> Accumulator:
    return _std_dev(arg, ctx, 2)


def _discrete_percentile(sorted_xs: Column, p: float) -> Column:
    """MongoDB's discrete percentile of an ascending ARRAY<DOUBLE> (NULL when empty)."""
    n = F.size(sorted_xs)
    if p >= 1.0:
        idx = n
    else:
        idx = F.greatest(F.lit(1), F.ceil(F.lit(float(p)) * n.cast("double")).cast("int"))
    return F.when(n > 0, F.try_element_at(sorted_xs, idx.cast("int")))


def _sub(ctx: Ctx, name: str) -> Ctx:
    return ctx.at(f"{ctx.where}.{name}" if ctx.where else name)


@accumulator("$percentile")
def acc_percentile(arg: Any, ctx: Ctx) -> Accumulator:
    ps = mqlacc.percentiles(arg)
    return _doubles_acc(arg["input"], _sub(ctx, "input"), (
        {"sorted": lambda r, k: F.array_sort(r("xs"))},
        {"value": lambda r, k: V.make_array([V.from_double(_discrete_percentile(r("sorted"), p)) for p in ps])}))


@accumulator("$median")
def acc_median(arg: Any, ctx: Ctx) -> Accumulator:
    return _doubles_acc(arg["input"], _sub(ctx, "input"), (
        {"sorted": lambda r, k: F.array_sort(r("xs"))},
        {"value": lambda r, k: _null_or(V.from_double(_discrete_percentile(r("sorted"), 0.5)))}))


@accumulator("$count")
def acc_count(arg: Any, ctx: Ctx) -> Accumulator:
    return Accumulator({}, {"n": lambda r: F.count(F.lit(1))}, _value(lambda r: V.from_long(r("n"))),
                       partial=Partial({"n": _m_sum("n")}))


# ---------------------------------------------------------------------------------------------
# value accumulators


def _min_max(arg: Any, ctx: Ctx, sign: int) -> Accumulator:
    c = _compile(arg, ctx)
    derived = {"k": lambda r: F.when(~V.is_null_or_missing(r("v")), V.sort_key(r("v")))}
    seq = F.col("_seq") if sign < 0 else -F.col("_seq")  # ties: the first arrival wins

    def order(r: Ref) -> Column:
        return F.when(r("k").isNotNull(), F.struct(r("k").alias("k"), seq.alias("s")))

    def agg(r: Ref) -> Column:
        return F.min_by(r("v"), order(r)) if sign < 0 else F.max_by(r("v"), order(r))

    # incrementally: the winner and its order key ``mk`` per partial row
    pick, best = (F.min_by, F.min) if sign < 0 else (F.max_by, F.max)
    partial = Partial({"m": lambda r: pick(r("m"), r("mk")), "mk": lambda r: best(r("mk"))},
                      {"m": agg, "mk": lambda r: best(order(r))})
    return Accumulator({"v": c.value}, {"m": agg}, _value(lambda r: _null_or(r("m"))), c.error, derived,
                       partial=partial)


def _first_last(arg: Any, ctx: Ctx, last: bool) -> Accumulator:
    c = _compile(arg, ctx)

    def agg(r: Ref) -> Column:
        v = _null_or(r("v"))
        return F.max_by(v, F.col("_seq")) if last else F.min_by(v, F.col("_seq"))

    merge = (lambda r: F.max_by(r("x"), F.col("_smax"))) if last else _m_first("x")
    return Accumulator({"v": c.value}, {"x": agg}, _value(lambda r: _null_or(r("x"))), c.error,
                       partial=Partial({"x": merge}))


@accumulator("$push")
def acc_push(arg: Any, ctx: Ctx) -> Accumulator:
    c = _compile(arg, ctx)
    return Accumulator(
        {"v": c.value}, {"xs": lambda r: _collect_seq(r("v"), r("v").isNotNull())},
        _value(lambda r: V.make_array(F.transform(by_seq(r("xs")), lambda e: e["v"]))), c.error,
        partial=Partial({"xs": _m_flat("xs")}))


@accumulator("$addToSet")
def acc_add_to_set(arg: Any, ctx: Ctx) -> Accumulator:
    c = _compile(arg, ctx)

    def agg(r: Ref) -> Column:
        item = F.struct(F.col("_seq").alias("s"), r("k").alias("k"), r("v").alias("v"))
        return F.collect_list(F.when(r("v").isNotNull(), item))

    def by_key(r: Ref, k: KeyCtx) -> Column:
        return F.array_sort(r("xs"), lambda a, b: F.when(a["k"] < b["k"], -1).when(a["k"] > b["k"], 1)
                            .otherwise(_cmp(a["s"], b["s"])))

    def firsts(srt: Column) -> Column:
        return F.filter(srt, lambda e, i: (i == 0) | (srt[F.greatest(i - 1, F.lit(0))]["k"] != e["k"]))

    def value(r: Ref, k: KeyCtx) -> Column:
        return V.make_array(F.transform(by_seq(firsts(r("by_key"))), lambda e: e["v"]))

    # incrementally: the list, compacted to each value's first arrival
    partial = Partial({"xs": _m_flat("xs")},
                      post=({"by_key": lambda r: by_key(r, None)}, {"xs": lambda r: firsts(r("by_key"))}))
    return Accumulator({"v": c.value}, {"xs": agg}, ({"by_key": by_key}, {"value": value}), c.error,
                       {"k": lambda r: V.sort_key(r("v"))}, partial=partial)


@accumulator("$mergeObjects")
def acc_merge_objects(arg: Any, ctx: Ctx) -> Accumulator:
    c = _compile(arg, ctx)

    def check(r: Ref) -> Column:
        v = r("v")
        bad = ~V.is_null_or_missing(v) & ~V.is_object(v)
        return F.when(bad, F.concat(F.lit("$mergeObjects requires object inputs, but input "), F.to_json(v),
                                    F.lit(" is of type "), V.type_name(v)))

    def merged(r: Ref) -> Column:
        maps = F.transform(by_seq(r("xs")), lambda e: e["v"])
        empty = F.create_map().cast("map<string,variant>")
        return F.aggregate(maps, empty, lambda acc, m: F.map_concat(
            F.map_filter(acc, lambda key, _x: ~F.array_contains(F.map_keys(m), key)), m))

    def value(r: Ref) -> Column:
        return V.make_object(merged(r))

    def compact(r: Ref) -> Column:
        # merging is associative (a later field moves to the end either way): one merged element
        one = F.struct(F.array_min(F.transform(r("xs"), lambda e: e["s"])).alias("s"), merged(r).alias("v"))
        return F.when(F.size(r("xs")) > 1, F.array(one)).otherwise(r("xs"))

    return Accumulator({"v": c.value},
                       {"xs": lambda r: _collect_seq(V.object_entries(r("v")), V.is_object(r("v")))},
                       _value(value), c.error, check=check,
                       partial=Partial({"xs": _m_flat("xs")}, post=({"xs": compact},)))


# ---------------------------------------------------------------------------------------------
# n-valued and sorted accumulators


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
                       partial=Partial({"xs": _m_flat("xs")}, post=post))


def _top_bottom(arg: Any, ctx: Ctx, bottom: bool, single: bool) -> Accumulator:
    sort = mqlacc.parse_sort_spec(arg["sortBy"], f"{ctx.where}.sortBy", code="ACC_BAD_ARGS")
    dirs = [d for _, d in sort]
    out = _compile(arg["output"], _sub(ctx, "output"))
    inputs = {"o": out.value}
    for i, (path, d) in enumerate(sort):
        inputs[f"k{i}"] = sort_field_key(ctx.root, path, d)

    def agg(r: Ref) -> Column:
        fields = [F.col("_seq").alias("s"), _null_or(r("o")).alias("o")]
        fields += [r(f"k{i}").alias(f"k{i}") for i in range(len(dirs))]
        return F.collect_list(F.struct(*fields))

    def srt(r: Ref, k: KeyCtx) -> Column:
        return F.array_sort(r("xs"), lambda a, b: compare_keys(a, b, dirs, seq=True))

    first: dict = {"srt": srt}
    if single:
        first.update({"n": lambda r, k: F.lit(1), "n_err": lambda r, k: F.lit(None).cast("string")})
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
    if const is not None:
        def noctx(steps: tuple) -> tuple:
            return tuple({n: (lambda r, fn=fn: fn(r, None)) for n, fn in st.items()} for st in steps)
        post = ({"srt": lambda r: srt(r, None), "n": lambda r: F.lit(min(const, 2**31 - 1))},
                *noctx(kept), {"xs": lambda r: r("kept")})
    return Accumulator(inputs, {"xs": agg}, steps, out.error, partial=Partial({"xs": _m_flat("xs")}, post=post))


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
    "$min": lambda arg, ctx: _min_max(arg, ctx, -1),
    "$max": lambda arg, ctx: _min_max(arg, ctx, 1),
    "$first": lambda arg, ctx: _first_last(arg, ctx, False),
    "$last": lambda arg, ctx: _first_last(arg, ctx, True),
    "$firstN": lambda arg, ctx: _first_last_n(arg, ctx, False),
    "$lastN": lambda arg, ctx: _first_last_n(arg, ctx, True),
    "$top": lambda arg, ctx: _top_bottom(arg, ctx, bottom=False, single=True),
    "$bottom": lambda arg, ctx: _top_bottom(arg, ctx, bottom=True, single=True),
    "$topN": lambda arg, ctx: _top_bottom(arg, ctx, bottom=False, single=False),
    "$bottomN": lambda arg, ctx: _top_bottom(arg, ctx, bottom=True, single=False),
}.items():
    accumulator(_name)(_fn)
