"""``$replaceRoot`` / ``$replaceWith``: the new root must be a document, else the DLQ.
Golden cases: ``tests/golden/cases/replaceroot_*.json``, ``replacewith_*.json``."""
from pyspark.sql import functions as F

from ...spec.stages import ReplaceRootSpec
from .. import values as V
from ..expr import compile_expression
from ..registry import first_error, stage
from .base import guard


@stage("$replaceRoot", "$replaceWith", spec=ReplaceRootSpec)
def apply(df, st, spec: ReplaceRootSpec, env):
    c = compile_expression(spec.new_root, env.ctx(where=st.name))
    bad = F.when(~V.is_object(c.value) | c.value.isNull(),
                 F.concat(F.lit(f"{st.name}: 'newRoot' must evaluate to an object, but resulting value was of type "),
                          V.type_name(c.value)))
    return guard(df, c.value, first_error(c.error, bad), st.name)
