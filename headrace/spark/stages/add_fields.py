"""``$addFields`` / ``$set``: add or replace fields (dotted paths create sub-documents;
``$$REMOVE`` removes). Golden cases: ``tests/golden/cases/addfields_*.json``."""
from pyspark.sql import functions as F

from ...spec.stages import SetFieldsSpec
from .. import values as V
from ..expr import compile_expression
from ..hoist import Hoister, shared
from ..registry import first_error, stage
from .base import guard


@stage("$addFields", "$set", spec=SetFieldsSpec)
def apply(df, st, spec: SetFieldsSpec, env):
    doc, err, h = env.once(st, lambda: compile_fields(st.name, spec, env))
    return guard(df, doc, err, st.name, hoist=h)


def compile_fields(name: str, spec: SetFieldsSpec, env, prefix: str = ""):
    """The document with ``spec``'s fields set (under ``prefix``), its error column and hoister."""
    h = Hoister()
    with h.active():
        compiled = {prefix + k: compile_expression(v, env.ctx(where=f"{name}.{k}", hoist=h)) for k, v in spec.fields}
        doc = V.set_fields(F.col("doc"), {k: c.value for k, c in compiled.items()}, bind=shared)
    return doc, first_error(*(c.error for c in compiled.values())), h
