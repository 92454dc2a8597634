"""Registries for the Spark compilers, filled by decorators under MQL names.

- ``@expression("$add")``: ``fn(args, ctx) -> Compiled``; ``args`` is the operator's raw
  argument (as written in the pipeline, already validated by ``headrace.mql``).
- ``@query_operator("$gt")``: ``fn(path, arg, ctx) -> Compiled`` whose ``value`` is a Spark
  boolean column; ``path`` is the dotted field path it applies to (None at top level).
- ``@accumulator("$sum")``: ``fn(arg, ctx) -> Accumulator``.
- ``@stage("$match")``: see ``headrace.spark.stages``.

A :class:`Compiled` carries a value column and an optional error column (STRING, non-null
when the expression fails for that row, e.g. ``$toInt`` of "abc"): rows with an error go to the
DLQ instead of failing the batch. Combine child errors with :func:`first_error`.
"""
from __future__ import annotations

import contextvars
from contextlib import AbstractContextManager as ContextManager
from dataclasses import dataclass, field, replace
from typing import Any, Callable

from pyspark.sql import Column
from pyspark.sql import functions as F

from .ctxvar import bound

EXPRESSIONS: dict[str, Callable[..., "Compiled"]] = {}
QUERY_OPERATORS: dict[str, Callable[..., "Compiled"]] = {}
ACCUMULATORS: dict[str, Callable[..., Any]] = {}
STAGES: dict[str, Any] = {}
WINDOW_STAGES: dict[str, Any] = {}

_STAGE_POSITION: contextvars.ContextVar = contextvars.ContextVar("headrace_stage_position", default=None)


def compiling_stage(position: int) -> ContextManager[int]:
    """While a stage at ``position`` of the pipeline compiles (:func:`stage_position`)."""
    return bound(_STAGE_POSITION, position)


def stage_position() -> "int | None":
    """The pipeline position of the stage being compiled, when a stage is (``$rand`` tells
    evaluations of two stages apart by it)."""
    return _STAGE_POSITION.get()


#: Stage name -> the type of its typed spec (:mod:`headrace.spec.stages`).
STAGE_SPEC_TYPES: dict[str, type] = {}


@dataclass(frozen=True)
class Compiled:
    """A compiled expression: ``value`` (VARIANT, or BOOLEAN for queries) and ``error``."""

    value: Column
    error: Column | None = None


@dataclass(frozen=True)
class Ctx:
    """What an expression can see.

    ``root``: the current document ($$ROOT / $$CURRENT), a VARIANT column.
    ``variables``: user and system variables by name without ``$$`` (``this``, ``value``, ...).
    ``meta``: ``$meta`` values by name (``stream.window.start``, ``stream.source.partition``...),
    as VARIANT columns. ``where``: the field path of the expression being compiled, for errors.
    ``hoist``: a :class:`~headrace.spark.hoist.Hoister` when ``root`` is the stage's ``doc``
    column and the stage adds the hoisted columns before evaluating (see ``stages.base.guard``).
    ``text``: for a dotted path, the JSON text of ``root`` when the path's value is still the
    source record's (its field order; :mod:`headrace.mql.source_fields`), else None.
    """

    root: Column
    variables: dict[str, Compiled] = field(default_factory=dict)
    meta: dict[str, Column] = field(default_factory=dict)
    where: str = ""
    hoist: Any = None
    text: Any = None       # Callable[[str], Column | None] | None

    def with_vars(self, **variables: Compiled) -> "Ctx":
        return replace(self, variables={**self.variables, **variables})

    def at(self, where: str) -> "Ctx":
        return replace(self, where=where)


def first_error(*errors: Column | None) -> Column | None:
    """The first non-null error among children (None when none can fail)."""
    errs = [e for e in errors if e is not None]
    if not errs:
        return None
    return errs[0] if len(errs) == 1 else F.coalesce(*errs)


def _register(table: dict, names: tuple[str, ...]):
    def deco(fn):
        for n in names:
            if n in table:
                raise RuntimeError(f"{n} registered twice")
            table[n] = fn
        return fn
    return deco


def expression(*names: str):
    return _register(EXPRESSIONS, names)


def query_operator(*names: str):
    return _register(QUERY_OPERATORS, names)


def accumulator(*names: str):
    return _register(ACCUMULATORS, names)


def window_stage(*names: str, spec: type):
    """Register ``fn(df, spec, env) -> df`` as the compiler of the named window-only stages
    (inside a window's pipeline, over framed documents: :mod:`headrace.spark.window_stages`)."""
    for n in names:
        STAGE_SPEC_TYPES[n] = spec
    return _register(WINDOW_STAGES, names)


def stage(*names: str, spec: type):
    """Register ``fn(df, st, spec, env) -> df`` as the compiler of the named stateless stages,
    which take their argument as a ``spec`` (a :mod:`headrace.spec.stages` dataclass)."""
    for n in names:
        STAGE_SPEC_TYPES[n] = spec
    return _register(STAGES, names)
