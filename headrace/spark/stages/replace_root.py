"""``$replaceRoot`` / ``$replaceWith``: the new root must be a document, else the DLQ.
Golden cases: ``tests/golden/cases/replaceroot_*.json``, ``replacewith_*.json``."""
from pyspark.sql import functions as F

from ...spec.stages import ReplaceRootSpec
from .. import values as V
from ..expr import compile_expression
from ..hoist import Hoister
from ..registry import first_error, stage
from .base import guard


@stage("$replaceRoot", "$replaceWith", spec=ReplaceRootSpec)
def apply(df, st, spec: ReplaceRootSpec, env):
    new, err, h = env.once(st, lambda: _compile(st.name, spec, env))
    return guard(df, new, err, st.name, hoist=h)


def _compile(name: str, spec: ReplaceRootSpec, env):
    h = Hoister()
    with h.active():
        c = compile_expression(spec.new_root, env.ctx(where=name, hoist=h))
        bad = F.when(~V.is_object(c.value) | c.value.isNull(),
                     F.concat(F.lit(f"{name}: 'newRoot' must evaluate to an object, but resulting value was of type "),
                              V.type_name(c.value)))
    return c.value, first_error(c.error, bad), h
