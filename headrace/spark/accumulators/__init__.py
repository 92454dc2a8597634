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
- ``$maxN`` / ``$minN``: the ``n`` largest / smallest values in BSON order (whole values: an array
  compares as an array), null and missing left out, largest / smallest first; ties by arrival.
- ``n`` (``$topN $bottomN $firstN $lastN $maxN $minN``): a constant, or an expression evaluated per group
  against the group key (``$$ROOT`` is ``_id`` when ``_id`` is a document, else an empty
  document); it must be a positive integer, else the group fails.
- ``$median`` / ``$percentile``: numbers as doubles; for each ``p`` the value of rank
  ``ceil(p * count)`` (1-based; the minimum for ``p = 0``, the maximum for ``p = 1``), which is
  MongoDB's discrete percentile and what its ``'approximate'`` t-digest returns on small inputs
  (e.g. the documented ``[62, 64, 67, 67]``); ``$percentile`` gives an array in ``p`` order.
  No number: ``null`` (``$median``) or an array of nulls.
- ``$stdDevPop`` / ``$stdDevSamp``: numbers as doubles, MongoDB's Welford updates in arrival
  order; null when there is no number (``$stdDevSamp``: fewer than two).

Decimals are added as MongoDB adds them: one by one in arrival order in Decimal128 (each sum
rounded to 34 significant digits), then the other numbers' double-double sum added (an integral
one exactly, else from its shortest text; MongoDB takes its exact binary value to 34 digits);
``$avg`` divides that total by the count, to 34 digits. A NaN or infinite decimal gives NaN.
Decimal results have no trailing fractional zeros (``Decimal128("170")``, ``Decimal128("112.5")``).

Modules: ``base`` (the :class:`Accumulator` and :class:`Partial` types and shared column helpers),
``summation`` (exact totals, double-double sums, Welford states), ``numeric``, ``collecting``
(``$min`` to ``$mergeObjects``) and ``ordered`` (``$firstN`` to ``$bottomN``, ``$sort`` keys).
"""
from __future__ import annotations

# importing the families registers their accumulators (in this order, as before the split)
from . import base, summation, numeric, collecting, ordered  # noqa: F401
from .base import Accumulator, KeyCtx, Partial, PostStep, Ref, Step, by_seq
from .collecting import acc_add_to_set, acc_merge_objects, acc_push
from .numeric import acc_avg, acc_count, acc_median, acc_percentile, acc_std_dev_pop, acc_std_dev_samp, acc_sum
from .ordered import compare_keys, sort_field_key
from .summation import dd_decimals, dd_finish, dd_fold, dd_init, dd_sum, dec_fold, dec_zero, welford, welford_init

__all__ = [
    "Accumulator", "KeyCtx", "Partial", "PostStep", "Ref", "Step", "by_seq", "compare_keys", "sort_field_key",
    "dd_decimals", "dd_finish", "dd_fold", "dd_init", "dd_sum", "dec_fold", "dec_zero", "welford", "welford_init",
    "acc_add_to_set", "acc_avg", "acc_count", "acc_median", "acc_merge_objects", "acc_percentile", "acc_push",
    "acc_std_dev_pop", "acc_std_dev_samp", "acc_sum",
]
