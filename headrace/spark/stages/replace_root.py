"""``$replaceRoot`` / ``$replaceWith``: the new root must be a document, else the DLQ."""
from pyspark.sql import functions as F

from .. import values as V

from ..registry import first_error, stage
from .base import guard


@stage("$replaceRoot", "$replaceWith")
def apply(df, st, env):
    from ..expr import compile_expression

    expr = st.arg["newRoot"] if st.name == "$replaceRoot" else st.arg
    c = compile_expression(expr, env.ctx(where=st.name))
    bad = F.when(~V.is_object(c.value) | c.value.isNull(),
                 F.concat(F.lit(f"{st.name}: 'newRoot' must evaluate to an object, but resulting value was of type "),
                          V.type_name(c.value)))
    return guard(df, c.value, first_error(c.error, bad), st.name)
