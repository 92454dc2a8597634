"""``$addFields`` / ``$set``: add or replace fields (dotted paths create sub-documents;
``$$REMOVE`` removes)."""
from pyspark.sql import functions as F

from .. import values as V

from ..registry import first_error, stage
from .base import guard


@stage("$addFields", "$set")
def apply(df, st, env):
    from ..expr import compile_expression

    compiled = {k: compile_expression(v, env.ctx(where=f"{st.name}.{k}")) for k, v in st.arg.items()}
    doc = V.set_fields(F.col("doc"),
                       {k: c.value for k, c in compiled.items()})
    return guard(df, doc, first_error(*(c.error for c in compiled.values())), st.name)
