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
    copied: dict[str, list[str]] = {}     # top-level field -> the paths below it to copy ([] = all)
    if spec.keep_id:
        copied["_id"] = []
    computed: dict[str, Any] = {}
    errors = []
    h = Hoister()
    with h.active():
        for p, expr in spec.include:
            if expr is None:
                top, _, rest = p.partition(".")
                copied.setdefault(top, [])
                if rest:
                    copied[top].append(rest)
            else:
                c = compile_expression(expr, env.ctx(where=f"$project.{p}", hoist=h))
                computed[p] = c.value
                errors.append(c.error)
        # copied fields first (an included sub-path keeps the document's shape: arrays stay
        # arrays, a missing or scalar parent stays missing), then computed fields as $addFields
        base = V.make_object([(k, V.project_value(h.path(k), rest) if rest else h.path(k))
                              for k, rest in copied.items()])
        new = V.set_fields(base, computed)
    return new, first_error(*errors), h
