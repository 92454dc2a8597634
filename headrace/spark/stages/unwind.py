"""``$unwind``: one output document per array element (``includeArrayIndex``,
``preserveNullAndEmptyArrays``); a non-array value counts as a one-element array.
Golden cases: ``tests/golden/cases/unwind_*.json``."""
from pyspark.sql import functions as F

from ...spec.stages import UnwindSpec
from .. import values as V
from ..registry import stage


@stage("$unwind", spec=UnwindSpec)
def apply(df, st, spec: UnwindSpec, env):
    path, index_field, preserve = spec.path, spec.include_array_index, spec.preserve_null_and_empty
    v = V.get_path(F.col("doc"), path)
    ok = F.col("_err").isNull()
    elems = (F.when(V.is_array(v), V.array_elems(v))
             .when(V.is_null_or_missing(v), F.lit(None))
             .otherwise(F.array(v)))
    exploded = df.select("*", F.posexplode_outer(F.when(ok, elems)).alias("_ui", "_uv"))
    keep = (~ok) | F.col("_uv").isNotNull() | F.lit(preserve)
    out = exploded.filter(keep)
    fields = {path: F.when(F.col("_uv").isNotNull(), F.col("_uv")).otherwise(V.get_path(F.col("doc"), path))}
    if index_field:
        # a non-array value unwinds as itself with a null index (MongoDB)
        fields[index_field] = F.when(F.col("_ui").isNotNull() & V.is_array(v),
                                     V.to_variant(F.col("_ui").cast("long"))).otherwise(V.NULL)
    is_empty_array = V.is_array(v) & (F.size(V.array_elems(v)) == 0)
    if preserve:
        # an empty array is dropped from the output document when preserved (MongoDB keeps no field)
        fields[path] = F.when(is_empty_array, V.MISSING).otherwise(fields[path])
    doc = F.when(ok, V.set_fields(F.col("doc"), fields)).otherwise(F.col("doc"))
    return out.withColumn("doc", doc).drop("_ui", "_uv")
