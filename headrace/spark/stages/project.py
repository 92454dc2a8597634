"""``$project``: inclusion (with computed fields) or exclusion; ``_id`` kept unless excluded.
Golden cases: ``tests/golden/cases/project_*.json``."""
from __future__ import annotations

from typing import Any

from pyspark.sql import functions as F

from ...spec.stages import ProjectSpec
from .. import values as V
from ..expr import compile_expression
from ..registry import first_error, stage
from .base import guard


@stage("$project", spec=ProjectSpec)
def apply(df, st, spec: ProjectSpec, env):
    doc = F.col("doc")
    if not spec.include:
        return guard(df, V.unset_fields(doc, spec.exclude), None, "$project")
    fields: dict[str, Any] = {}
    errors = []
    if spec.keep_id:
        fields["_id"] = V.get_path(doc, "_id")
    for p, expr in spec.include:
        if expr is None:
            fields[p] = V.get_path(doc, p)
        else:
            c = compile_expression(expr, env.ctx(where=f"$project.{p}"))
            fields[p] = c.value
            errors.append(c.error)
    new = V.set_fields(V.make_object([]), fields)
    return guard(df, new, first_error(*errors), "$project")
