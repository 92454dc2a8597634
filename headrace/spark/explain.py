"""The Spark side of ``explain``: the physical plan of one micro-batch's stateless part."""
from __future__ import annotations

from pyspark.sql import functions as F

from ..spec.model import Pipeline
from .sources import SOURCE_SCHEMA
from .stages import Env, apply_stages


def spark_plan(p: Pipeline) -> str:
    from .session import get_spark

    spark = get_spark()
    df = spark.createDataFrame([], SOURCE_SCHEMA)
    df = df.withColumn("_err", F.lit(None).cast("string")).withColumn("_op", F.lit(None).cast("string"))
    df = apply_stages(df, p.before, Env())
    return df._jdf.queryExecution().executedPlan().toString()
