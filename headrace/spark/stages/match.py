"""``$match``: keep documents matching a query (errors from ``$expr`` go to the DLQ).
Golden cases: ``tests/golden/cases/match_*.json``."""
from pyspark.sql import functions as F

from ...spec.stages import MatchSpec
from ..query import compile_query
from ..registry import stage
from .base import guard


@stage("$match", spec=MatchSpec)
def apply(df, st, spec: MatchSpec, env):
    c = compile_query(spec.query, env.ctx(where="$match"))
    if c.error is not None:
        df = guard(df, F.col("doc"), c.error, "$match")
    return df.filter(F.col("_err").isNotNull() | c.value)
