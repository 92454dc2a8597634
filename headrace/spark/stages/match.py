"""``$match``: keep documents matching a query (errors from ``$expr`` go to the DLQ).
Golden cases: ``tests/golden/cases/match_*.json``."""
from pyspark.sql import functions as F

from ...spec.stages import MatchSpec
from ..query import compile_query
from ..registry import stage
from ..hoist import Hoister
from .base import _guard, hoisted


@stage("$match", spec=MatchSpec)
def apply(df, st, spec: MatchSpec, env):
    def build():
        h = Hoister()
        with h.active():
            return compile_query(spec.query, env.ctx(where="$match", hoist=h)), h
    c, h = env.once(st, build)

    def run(d):
        if c.error is not None:
            d = _guard(d, F.col("doc"), c.error, "$match")
        return d.filter(F.col("_err").isNotNull() | c.value)
    return hoisted(df, h, run)
