"""``$project``: inclusion (with computed fields) or exclusion; ``_id`` kept unless excluded.
Golden cases: ``tests/golden/cases/project_*.json``."""
from __future__ import annotations

from typing import Any

from pyspark.sql import functions as F

from ...spec.stages import ProjectSpec
from .. import values as V
from ..expr import compile_expression
from ..hoist import Hoister
from ..registry import first_error, stage
from .base import guard


@stage("$project", spec=ProjectSpec)
def apply(df, st, spec: ProjectSpec, env):
    new, err, h = env.once(st, lambda: _compile(spec, env))
    return guard(df, new, err, "$project", hoist=h)


def _compile(spec: ProjectSpec, env):
    doc = F.col("doc")
    if not spec.include:
        return V.unset_fields(doc, spec.exclude), None, None
    fields: dict[str, Any] = {}
    errors = []
    h = Hoister()
    with h.active():
        if spec.keep_id:
            fields["_id"] = h.path("_id")
        for p, expr in spec.include:
            if expr is None:
                fields[p] = h.path(p)
            else:
                c = compile_expression(expr, env.ctx(where=f"$project.{p}", hoist=h))
                fields[p] = c.value
                errors.append(c.error)
        new = V.set_fields(V.make_object([]), fields)
    return new, first_error(*errors), h
