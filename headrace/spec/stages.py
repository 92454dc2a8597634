"""Typed arguments of the stages: each stage's argument is read once, after validation
(:func:`headrace.spec.parse.parse_stateless`, and for the window-only ``$group``, ``$sort``,
``$limit`` and ``$count`` the validators of :mod:`headrace.mql.accumulators`), into a frozen
dataclass that its compiler (``headrace.spark.stages``, ``headrace.spark.window_stages``) takes
as it is, in the spirit of MongoDB's ``REGISTER_DOCUMENT_SOURCE(name, parse, createFromBson)``.

``STAGE_SPECS[name](arg)`` builds the spec of a validated argument; ``@stage_spec(*names)``
registers a builder. Expressions and queries inside stay raw MQL (validated), compiled later.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

__all__ = [
    "STAGE_SPECS", "stage_spec", "spec_of", "MatchSpec", "ValidateSpec", "SetFieldsSpec", "ProjectSpec",
    "UnsetSpec", "ReplaceRootSpec", "UnwindSpec", "GroupSpec", "SortSpec", "LimitSpec", "CountSpec",
    "SinkTargetSpec", "SINK_FIELD", "with_sink_targets",
]

#: Stage name -> builder of its typed spec from a validated argument.
STAGE_SPECS: dict[str, Callable[[Any], Any]] = {}


def stage_spec(*names: str):
    """Register ``fn(arg) -> spec`` as the builder of the named stages' specs."""
    def deco(fn):
        for n in names:
            if n in STAGE_SPECS:
                raise ValueError(f"stage spec {n} registered twice")
            STAGE_SPECS[n] = fn
        return fn
    return deco


def spec_of(name: str, arg: Any) -> Any:
    """The typed spec of stage ``name`` with validated argument ``arg`` (None for a stage with
    no builder)."""
    fn = STAGE_SPECS.get(name)
    return fn(arg) if fn is not None else None


@dataclass(frozen=True)
class MatchSpec:
    """``$match``: a query document. Golden cases: ``tests/golden/cases/match_*.json``."""

    query: dict


@dataclass(frozen=True)
class ValidateSpec:
    """``$validate``: ``validator`` (a query) and ``validationAction`` (``"discard"`` or ``"dlq"``).
    Golden cases: ``tests/golden/cases/validate_*.json``."""

    validator: dict
    action: str = "discard"


@dataclass(frozen=True)
class SetFieldsSpec:
    """``$addFields`` / ``$set``: ``(dotted path, expression)`` in the order written.
    Golden cases: ``tests/golden/cases/addfields_*.json``."""

    fields: tuple[tuple[str, Any], ...]


@dataclass(frozen=True)
class ProjectSpec:
    """``$project``: exclusions, or inclusions where an expression of None copies the field;
    ``_id`` is kept unless excluded (``keep_id``). Nested specifications are flattened to dotted
    paths. Golden cases: ``tests/golden/cases/project_*.json``."""

    exclude: tuple[str, ...]
    include: tuple[tuple[str, Any], ...]
    keep_id: bool


@dataclass(frozen=True)
class UnsetSpec:
    """``$unset``: the dotted paths to remove."""

    paths: tuple[str, ...]


@dataclass(frozen=True)
class ReplaceRootSpec:
    """``$replaceRoot`` (``newRoot``) / ``$replaceWith``: the expression of the new document."""

    new_root: Any


@dataclass(frozen=True)
class UnwindSpec:
    """``$unwind``: ``path`` without its ``$``, ``includeArrayIndex``, ``preserveNullAndEmptyArrays``.
    Golden cases: ``tests/golden/cases/unwind_*.json``."""

    path: str
    include_array_index: str | None = None
    preserve_null_and_empty: bool = False


@stage_spec("$match")
def _match(arg: dict) -> MatchSpec:
    return MatchSpec(arg)


@stage_spec("$validate")
def _validate(arg: dict) -> ValidateSpec:
    return ValidateSpec(arg["validator"], arg.get("validationAction", "discard"))


@stage_spec("$addFields", "$set")
def _set_fields(arg: dict) -> SetFieldsSpec:
    return SetFieldsSpec(tuple(arg.items()))


def _is_flag(v: Any) -> bool:
    return isinstance(v, (bool, int, float)) and not isinstance(v, str)


def nested_spec(v: Any) -> bool:
    """Whether a ``$project`` value is a nested specification (``{author: {first: 0}}``), not an
    expression (an operator document)."""
    return isinstance(v, dict) and bool(v) and not any(str(x).startswith("$") for x in v)


def _flatten(spec: dict, prefix: str = "") -> list[tuple[str, Any]]:
    out = []
    for k, v in spec.items():
        path = f"{prefix}{k}"
        if nested_spec(v):
            out += _flatten(v, path + ".")
        else:
            out.append((path, v))
    return out


@stage_spec("$project")
def _project(arg: dict) -> ProjectSpec:
    items = _flatten(arg)
    exclude = tuple(p for p, v in items if _is_flag(v) and not v)
    include = tuple((p, None if _is_flag(v) else v) for p, v in items if not (_is_flag(v) and not v))
    return ProjectSpec(exclude, include, keep_id="_id" not in dict(items))


@stage_spec("$unset")
def _unset(arg: "str | list[str]") -> UnsetSpec:
    return UnsetSpec((arg,) if isinstance(arg, str) else tuple(arg))


@stage_spec("$replaceRoot")
def _replace_root(arg: dict) -> ReplaceRootSpec:
    return ReplaceRootSpec(arg["newRoot"])


@stage_spec("$replaceWith")
def _replace_with(arg: Any) -> ReplaceRootSpec:
    return ReplaceRootSpec(arg)


@stage_spec("$unwind")
def _unwind(arg: "str | dict") -> UnwindSpec:
    d = {"path": arg} if isinstance(arg, str) else arg
    return UnwindSpec(d["path"][1:], d.get("includeArrayIndex"), bool(d.get("preserveNullAndEmptyArrays", False)))


@dataclass(frozen=True)
class GroupSpec:
    """``$group`` (inside a window): ``id``, the ``_id`` expression; ``fields``, each output field
    as ``(name, accumulator operator, its argument)`` in the order written. Golden cases:
    ``tests/golden/cases/tumbling_group.json``, ``session_group.json``."""

    id: Any
    fields: tuple[tuple[str, str, Any], ...]


@dataclass(frozen=True)
class SortSpec:
    """``$sort`` (inside a window): ``(field path, 1 | -1)`` in the order written."""

    keys: tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class LimitSpec:
    """``$limit`` (inside a window): ``n``, a positive integer."""

    n: int


@dataclass(frozen=True)
class CountSpec:
    """``$count`` (inside a window): the output field's name. Golden case:
    ``tests/golden/cases/hopping_count.json``."""

    field: str


@stage_spec("$group")
def _group(arg: dict) -> GroupSpec:
    fields = tuple((f, *next(iter(acc.items()))) for f, acc in arg.items() if f != "_id")
    return GroupSpec(arg["_id"], fields)


@stage_spec("$sort")
def _sort(arg: dict) -> SortSpec:
    from ..mql.accumulators import parse_sort_spec

    return SortSpec(tuple(parse_sort_spec(arg, "$sort")))


@stage_spec("$limit")
def _limit(arg: Any) -> LimitSpec:
    from ..mql.accumulators import constant_n

    n = constant_n(arg)
    if n is None:
        raise ValueError(f"$limit needs a positive integer, found {arg!r}")
    return LimitSpec(n)


@stage_spec("$count")
def _count(arg: str) -> CountSpec:
    return CountSpec(arg)


#: Reserved: the field that carries a document's evaluated sink expressions from the last stage
#: to the sink, which removes it before writing (:func:`with_sink_targets`).
SINK_FIELD = "__hr_sink"


@dataclass(frozen=True)
class SinkTargetSpec:
    """The sink's per-document expressions (``$merge``'s dynamic ``into.db``/``into.coll``;
    ``$emit``'s dynamic ``topic``/``stream``, Kafka ``config.key`` and ``config.headers``), by
    name, evaluated after the last stage into :data:`SINK_FIELD`. A document whose expression
    fails goes to the DLQ with the sink stage as its operator."""

    parts: tuple[tuple[str, Any], ...]


def with_sink_targets(p: Any) -> Any:
    """``p`` (a :class:`~headrace.spec.model.Pipeline`) with a last stateless stage named after its
    sink that evaluates the sink's per-document expressions, when it has any; else ``p``."""
    from dataclasses import replace

    from .model import EmitSpec, Stage

    parts = p.sink.dynamic() if p.sink is not None else ()
    if not parts:
        return p
    name = "$emit" if isinstance(p.sink, EmitSpec) else "$merge"
    st = Stage(name, p.sink.position, dict(parts), SinkTargetSpec(parts))
    return replace(p, after=p.after + (st,)) if p.window is not None else replace(p, before=p.before + (st,))
