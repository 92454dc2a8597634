"""``$unset``: remove fields. Golden case: ``tests/golden/cases/unset_fields.json``."""
from pyspark.sql import functions as F

from ...spec.stages import UnsetSpec
from .. import values as V
from ..registry import stage
from .base import guard


@stage("$unset", spec=UnsetSpec)
def apply(df, st, spec: UnsetSpec, env):
    return guard(df, env.once(st, lambda: V.unset_fields(F.col("doc"), spec.paths)), None, "$unset")
