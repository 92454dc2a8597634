"""``$project``: inclusion (with computed fields) or exclusion; ``_id`` kept unless excluded.
Golden cases: ``tests/golden/cases/project_*.json``."""
from __future__ import annotations

from typing import Any

from pyspark.sql import functions as F

from ...spec.stages import ProjectSpec
from .. import values as V
from ..expr import compile_expression
from ..hoist import Hoister, shared
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
    # top-level field -> the paths below it to copy; None: the whole field
    copied: dict[str, list[str] | None] = {"_id": None} if spec.keep_id else {}
    below: dict[str, list[str]] = {}     # top-level field -> the computed paths below it
    computed: dict[str, Any] = {}
    errors = []
    h = Hoister()
    with h.active():
        for p, expr in spec.include:
            top, _, rest = p.partition(".")
            if expr is None:
                if rest:
                    copied.setdefault(top, []).append(rest)
                else:
                    copied[top] = None
                continue
            c = compile_expression(expr, env.ctx(where=f"$project.{p}", hoist=h))
            computed[p] = c.value
            errors.append(c.error)
            if rest:
                copied.setdefault(top, [])
                below.setdefault(top, []).append(rest)
        # MongoDB's two passes: copy (an included sub-path keeps the document's shape: arrays
        # stay arrays, a missing or scalar parent stays missing), then the computed fields as
        # $addFields into that shape (an array element the copy dropped gets a document of them)
        base = V.make_object([(k, h.path(k) if rest is None else V.project_value(h.path(k), rest, below.get(k, ())))
                              for k, rest in copied.items()])
        new = V.set_fields(base, computed, bind=shared)
    return new, first_error(*errors), h
