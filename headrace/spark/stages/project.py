"""``$project``: inclusion (with computed fields) or exclusion; ``_id`` kept unless excluded."""
from __future__ import annotations

from typing import Any

from pyspark.sql import functions as F

from .. import values as V

from ..registry import first_error, stage
from .base import guard


def _flatten(spec: dict, prefix: str = "") -> list[tuple[str, Any]]:
    out = []
    for k, v in spec.items():
        path = f"{prefix}{k}"
        if isinstance(v, dict) and v and not any(str(x).startswith("$") for x in v):
            out += _flatten(v, path + ".")
        else:
            out.append((path, v))
    return out


def _is_flag(v: Any) -> bool:
    return isinstance(v, (bool, int, float)) and not isinstance(v, str)


@stage("$project")
def apply(df, st, env):
    from ..expr import compile_expression

    items = _flatten(st.arg)
    doc = F.col("doc")
    exclusions = [p for p, v in items if _is_flag(v) and not v]
    inclusions = [(p, v) for p, v in items if not (_is_flag(v) and not v)]
    if not inclusions:
        return guard(df, V.unset_fields(doc, exclusions), None, "$project")
    fields: dict[str, Any] = {}
    errors = []
    if "_id" not in dict(items):
        fields["_id"] = V.get_path(doc, "_id")
    for p, v in inclusions:
        if _is_flag(v):
            fields[p] = V.get_path(doc, p)
        else:
            c = compile_expression(v, env.ctx(where=f"$project.{p}"))
            fields[p] = c.value
            errors.append(c.error)
    new = V.set_fields(V.make_object([]), fields)
    return guard(df, new, first_error(*errors), "$project")
