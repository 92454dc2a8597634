"""``$match``: keep documents matching a query (errors from ``$expr`` go to the DLQ)."""
from pyspark.sql import functions as F


from ..registry import stage
from .base import guard


@stage("$match")
def apply(df, st, env):
    from ..query import compile_query

    c = compile_query(st.arg, env.ctx(where="$match"))
    if c.error is not None:
        df = guard(df, F.col("doc"), c.error, "$match")
    return df.filter(F.col("_err").isNotNull() | c.value)
