"""Stateless stages compiled to DataFrame transformations, one module per stage.

A stage function ``apply(df, stage, env) -> df`` works on a frame with at least the columns
``doc`` (VARIANT), ``_err`` (STRING: why the row failed, NULL when it did not) and ``_op`` (the
operator that failed). Rows that already failed pass through untouched; the engine routes them
to the DLQ. Importing this package registers every stage module.
"""
from __future__ import annotations

from .base import Env, apply_stages, guard, source_fields_after

__all__ = ["Env", "apply_stages", "guard", "source_fields_after"]

from . import add_fields, match, project, replace_root, sink_target, unset, unwind, validate  # noqa: E402,F401
