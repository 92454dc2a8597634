"""Interpreted batches order and group by struct keys through ``headrace.spark.ordering``: the
same order and groups as the structs themselves, and a hash aggregate instead of a sort-based one."""
from __future__ import annotations

import itertools

import pytest

from headrace.spark.ctxvar import bound

pytestmark = pytest.mark.spark

SCHEMA = "id int, k struct<p: int, k: struct<r: int, s: string>>"


def _rows():
    """Every combination of null and non-null at each level, with ties."""
    inner = [None, (None, None), (1, None), (1, "a"), (1, "b"), (2, "a"), (None, "a")]
    keys = [None] + [(p, k) for p, k in itertools.product([None, 0, 2], inner)]
    return [(i, k) for i, k in enumerate(keys + keys[::3])]


@pytest.mark.parametrize("ascending", [True, False])
def test_flat_orders_as_the_struct(spark, ascending):
    from pyspark.sql import functions as F

    from headrace.spark.ordering import INTERPRETED, flat

    df = spark.createDataFrame(_rows(), SCHEMA)
    k = F.col("k")
    want = [r["id"] for r in df.orderBy(k.asc() if ascending else k.desc(), "id").collect()]
    with bound(INTERPRETED, True):
        orders = flat(k, df.schema["k"].dataType, ascending)
    assert len(orders) == 5          # k: null-ness, p, then k.k: null-ness, r, s
    got = [r["id"] for r in df.orderBy(*orders, "id").collect()]
    assert got == want


def test_flat_with_generated_code_is_the_column(spark):
    from pyspark.sql import functions as F

    from headrace.spark.ordering import INTERPRETED, flat

    df = spark.createDataFrame(_rows(), SCHEMA)
    with bound(INTERPRETED, False):      # a batch of this thread may have left it set
        assert len(flat(F.col("k"), df.schema["k"].dataType, True)) == 1


def test_hash_hint_keeps_values_and_hashes_when_interpreted(spark):
    from pyspark.sql import functions as F

    from headrace.spark.ordering import INTERPRETED, hash_hint, window_parts

    df = spark.createDataFrame(_rows(), SCHEMA).withColumn("v", F.parse_json(F.lit('{"a": 1}')))

    def grouped():
        return df.groupBy("k").agg(hash_hint(F.min("id")).alias("m"), F.min_by("v", "id").alias("v"))

    with bound(INTERPRETED, False):      # a batch of this thread may have left it set
        plain = grouped()
        plain_parts = window_parts()
    with bound(INTERPRETED, True):
        hinted = grouped()
        parts = window_parts()
    assert sorted(repr((r["k"], r["m"])) for r in hinted.collect()) == sorted(repr((r["k"], r["m"])) for r in plain.collect())
    assert "ObjectHashAggregate" in hinted._jdf.queryExecution().executedPlan().toString()
    assert "SortAggregate" in plain._jdf.queryExecution().executedPlan().toString()
    assert len(parts) == 3 and len(plain_parts) == 1
