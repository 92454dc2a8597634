"""The sink's per-document expressions (``$merge``'s dynamic ``into.db``/``into.coll``,
``$emit``'s dynamic ``topic``/``stream`` and Kafka ``config.key``/``config.headers``), evaluated
as the last stateless stage into the reserved field :data:`~headrace.spec.stages.SINK_FIELD`,
which the sink removes (:mod:`headrace.spark.runtime.sinks`). A document whose expression fails
goes to the DLQ with the sink stage as its operator. Golden cases (validation before anything
runs): ``error_merge_into_coll_expression.json``, ``error_emit_keyformat_without_key.json``;
written targets: ``tests/spark/runtime/test_sinks_parallel.py`` and the Kafka and Redis
integration tests."""
from ...spec.stages import SINK_FIELD, SetFieldsSpec, SinkTargetSpec
from ..registry import stage
from .add_fields import compile_fields
from .base import guard


@stage("$merge", "$emit", spec=SinkTargetSpec)
def apply(df, st, spec: SinkTargetSpec, env):
    doc, err, h = env.once(st, lambda: compile_fields(st.name, SetFieldsSpec(spec.parts), env, prefix=SINK_FIELD + "."))
    return guard(df, doc, err, st.name, hoist=h)
