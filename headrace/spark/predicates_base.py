"""The building blocks of value tests: :class:`Pred` (a test of one value that never returns
NULL), the literals :func:`true` / :func:`false`, :func:`nn` and the boolean folds
:func:`all_of` / :func:`any_of`, and the reads :func:`field` (a document's field, or an array's
element by a numeric name) and :func:`raw_double`. Part of :mod:`headrace.spark.predicates`,
which re-exports it.
"""
from __future__ import annotations

from typing import Callable

from pyspark.sql import Column
from pyspark.sql import functions as F

from ..mql.paths import is_index
from . import values as V


def true() -> Column:
    """The literal ``true`` (built on use: a Column needs a running SparkContext, and this module
    is imported before one exists)."""
    return F.lit(True)


def false() -> Column:
    """The literal ``false`` (built on use, as :func:`true`)."""
    return F.lit(False)


_C = V.CODE


class Pred:
    """A test of one value (a simple column: a lambda variable or a field read) that never
    returns NULL; ``missing`` is its result on a missing value (known at compile time).
    Comparison tests also take the value's type code when it is at hand (:meth:`coded`)."""

    __slots__ = ("fn", "missing")

    def __init__(self, fn: Callable[..., Column], missing: bool):
        self.fn, self.missing = fn, missing

    def __call__(self, x: Column) -> Column:  # one parameter: Spark lambdas count them
        return self.fn(x)

    def coded(self, x: Column, code: Column) -> Column:
        """The test with ``values.type_code(x)`` already at hand (comparison tests only)."""
        return self.fn(x, code)


def nn(c: Column) -> Column:
    """A boolean that is never NULL (NULL reads as false)."""
    return F.coalesce(c, false())


def all_of(cols: list[Column]) -> Column:
    if not cols:
        return true()
    out = cols[0]
    for c in cols[1:]:
        out = out & c
    return out


def any_of(cols: list[Column]) -> Column:
    if not cols:
        return false()
    out = cols[0]
    for c in cols[1:]:
        out = out | c
    return out


def field(obj: Column, name: str) -> Column:
    """Field ``name`` of a document (SQL NULL when missing); a numeric name also indexes an
    array (an array is a document with fields "0", "1", ... inside ``$elemMatch``)."""
    got = F.try_variant_get(obj, V.variant_path(name), "variant")
    if _is_index(name):
        got = F.coalesce(got, F.try_variant_get(obj, f"$[{int(name)}]", "variant"))
    return got


def raw_double(x: Column) -> Column:
    """DOUBLE of a value known to be a number (decimals stored as text included)."""
    if V.is_known(x):      # the typed fast path: never a {$numberDecimal} wrapper
        return V._tvg(x, "double")
    return F.coalesce(F.try_variant_get(x, "$", "double"),
                      F.try_variant_get(x, "$['$numberDecimal']", "string").try_cast("double"))


def _code(x: Column) -> Column:
    return V.type_code(x)


def _is_index(name: str) -> bool:
    return is_index(name) and int(name) <= 2**31 - 2
