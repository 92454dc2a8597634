"""Values that change from one micro-batch to the next (a frontier, the closing windows' starts,
the batch's sequence base) as literals that leave the batch's generated code as it was.

Spark writes an integer literal into the Java source it generates, so an expression comparing
with this batch's frontier is a new class every batch: Janino compiles it and the JIT compiles it
again, which was most of the JVM's CPU in a warm solar micro-batch (``benchmarks/PROFILE.md``). A
DECIMAL or ARRAY literal is handed to the generated class by reference instead, so the class
compiled for an earlier batch is found in Spark's cache. Arithmetic between a BIGINT and a
``DECIMAL(20,0)`` is exact.

A lambda's variable gets a fresh name each time its Column is built, and the name is in the code
too: expressions with lambdas that every batch uses are built once (:func:`once`) and read the
batch's values from a column (:data:`FRONTIER`) instead of capturing them.
"""
from __future__ import annotations

from decimal import Decimal
from typing import Callable, Iterable

from pyspark.sql import Column
from pyspark.sql import functions as F

from ..stages.base import current_env

#: The column holding this batch's frontier (``W - allowedLateness`` after the previous batch).
FRONTIER = "_fr"


def long_param(v: int) -> Column:
    """The integer ``v`` as a ``DECIMAL(20,0)`` literal (passed by reference, not inlined), for
    arithmetic; compare with :func:`above` and :func:`at_most`."""
    return F.lit(Decimal(int(v))).cast("decimal(20,0)")


def above(c: Column, p: Column) -> Column:
    """``c > p`` for a BIGINT ``c`` and a parameter ``p`` (:func:`long_param` or the
    :data:`FRONTIER` column), written as ``c - p > 0``: Spark's optimizer turns ``c > p`` back
    into a comparison with an inlined BIGINT (``UnwrapCastInBinaryComparison``)."""
    return (c - p) > F.lit(0)


def at_most(c: Column, p: Column) -> Column:
    """``c <= p``, as :func:`above`."""
    return (c - p) <= F.lit(0)


def longs_param(vs: Iterable[int]) -> Column:
    """The integers ``vs`` as an ``ARRAY<BIGINT>`` literal (passed by reference, not inlined)."""
    return F.array(*[F.lit(int(v)) for v in vs]).cast("array<bigint>")


def contains(vs: Iterable[int], c: Column) -> Column:
    """Whether BIGINT ``c`` is one of ``vs`` (instead of ``c.isin(vs)``, whose values are inlined)."""
    vs = list(vs)
    return F.array_contains(longs_param(vs), c) if vs else F.lit(False)


def once(key: object, tag: str, build: Callable[[], Column]) -> Column:
    """``build()`` once per processor for ``key`` (by identity) and ``tag``: the same Column, and
    so the same lambda variable names, every batch (a fresh one outside a micro-batch)."""
    env = current_env()
    return build() if env is None else env.once(key, build, "param:" + tag)
