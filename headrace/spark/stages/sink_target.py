"""The sink's per-document expressions (``$merge``'s dynamic ``into.db``/``into.coll``,
``$emit``'s dynamic ``topic``/``stream`` and Kafka ``config.key``/``config.headers``), evaluated
as the last stateless stage into the reserved field :data:`~headrace.spec.stages.SINK_FIELD`,
which the sink removes (:mod:`headrace.spark.runtime.sinks`). A document whose expression fails
goes to the DLQ with the sink stage as its operator. Golden cases (validation before anything
runs): ``error_merge_into_coll_expression.json``, ``error_emit_keyformat_without_key.json``;
written targets: ``tests/spark/runtime/test_sinks_parallel.py`` and the Kafka and Redis
integration tests."""
from pyspark.sql import functions as F

from ...spec.stages import SINK_FIELD, SinkTargetSpec
from .. import values as V
from ..expr import compile_expression
from ..hoist import Hoister
from ..registry import first_error, stage
from .base import guard


@stage("$merge", "$emit", spec=SinkTargetSpec)
def apply(df, st, spec: SinkTargetSpec, env):
    doc, err, h = env.once(st, lambda: _compile(st.name, spec, env))
    return guard(df, doc, err, st.name, hoist=h)


def _compile(name: str, spec: SinkTargetSpec, env):
    h = Hoister()
    with h.active():
        compiled = {k: compile_expression(v, env.ctx(where=f"{name}.{k}", hoist=h)) for k, v in spec.parts}
        doc = V.set_fields(F.col("doc"), {SINK_FIELD: V.make_object([(k, c.value) for k, c in compiled.items()])})
    return doc, first_error(*(c.error for c in compiled.values())), h
