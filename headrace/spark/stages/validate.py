"""``$validate``: documents failing ``validator`` are discarded, or sent to the DLQ with
``validationAction: "dlq"`` (reason: ``Input document found to be invalid in $validate stage``)."""
from pyspark.sql import functions as F


from ..registry import stage
from .base import guard

REASON = "Input document found to be invalid in $validate stage"


@stage("$validate")
def apply(df, st, env):
    from ..query import compile_query

    c = compile_query(st.arg["validator"], env.ctx(where="$validate.validator"))
    if c.error is not None:
        df = guard(df, F.col("doc"), c.error, "$validate")
    if st.arg.get("validationAction", "discard") == "dlq":
        return guard(df, F.col("doc"), F.when(~c.value, F.lit(REASON)), "$validate")
    return df.filter(F.col("_err").isNotNull() | c.value)
