"""``$validate``: documents failing ``validator`` are discarded, or sent to the DLQ with
``validationAction: "dlq"`` (reason: ``Input document found to be invalid in $validate stage``).
Golden cases: ``tests/golden/cases/validate_*.json``."""
from pyspark.sql import functions as F

from ...spec.stages import ValidateSpec
from ..query import compile_query
from ..registry import stage
from .base import guard

REASON = "Input document found to be invalid in $validate stage"


@stage("$validate", spec=ValidateSpec)
def apply(df, st, spec: ValidateSpec, env):
    c = env.once(st, lambda: compile_query(spec.validator, env.ctx(where="$validate.validator")))
    if c.error is not None:
        df = guard(df, F.col("doc"), c.error, "$validate")
    if spec.action == "dlq":
        return guard(df, F.col("doc"), F.when(~c.value, F.lit(REASON)), "$validate")
    return df.filter(F.col("_err").isNotNull() | c.value)
