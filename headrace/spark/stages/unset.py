"""``$unset``: remove fields."""
from pyspark.sql import functions as F

from .. import values as V
from ..registry import stage
from .base import guard


@stage("$unset")
def apply(df, st, env):
    fields = [st.arg] if isinstance(st.arg, str) else list(st.arg)
    return guard(df, V.unset_fields(F.col("doc"), fields), None, "$unset")
