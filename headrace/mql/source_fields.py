"""Which top-level fields of a document still hold the source record's own value, stage by stage.

MongoDB compares embedded documents field by field in their order (``{size: {w: 21, h: 14}}``
does not match ``size: {h: 14, w: 21}``), but the engine's VARIANT keeps an object's fields sorted
by name. Where a field's value is still the one the source record gave, its order can be read
from the record's raw text (JSON keeps it); this module says where that holds, from the stages
alone (:class:`SourceFields`), so the query compiler knows when it may read the raw text.

The rules are conservative: a field is the source's until a stage might change it —
``$addFields``/``$set``/``$unset`` on it or below it, ``$project`` computing it, excluding part of
it or including only part of it, ``$unwind`` on it; ``$match`` and ``$validate`` change nothing;
any other stage (``$replaceRoot``...) ends the knowledge. The source's ``tsFieldName`` is never the
source's (the engine writes it).

Pure Python: no pyspark.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

from ..spec.stages import MatchSpec, ProjectSpec, SetFieldsSpec, UnsetSpec, UnwindSpec, ValidateSpec


def _top(path: str) -> str:
    return path.split(".", 1)[0]


@dataclass(frozen=True)
class SourceFields:
    """The top-level field names that no stage so far may have changed (``changed``), or none at
    all (``known`` false)."""

    changed: frozenset[str] = frozenset()
    known: bool = True

    @staticmethod
    def at_source(ts_field: str) -> "SourceFields":
        """Before the first stage: every field but the one the source writes (``tsFieldName``)."""
        return SourceFields(frozenset({_top(ts_field)}))

    def intact(self, path: str) -> bool:
        """Whether the value at dotted ``path`` is still the source record's."""
        return self.known and _top(path) not in self.changed

    def after(self, name: str, spec: Any) -> "SourceFields":
        """The fields still the source's after stage ``name`` with typed ``spec``."""
        if not self.known or isinstance(spec, (MatchSpec, ValidateSpec)):
            return self
        if isinstance(spec, SetFieldsSpec):
            return self._with(p for p, _ in spec.fields)
        if isinstance(spec, UnsetSpec):
            return self._with(spec.paths)
        if isinstance(spec, UnwindSpec):
            return self._with([spec.path] + ([spec.include_array_index] if spec.include_array_index else []))
        if isinstance(spec, ProjectSpec):
            if spec.include:     # a field copied whole keeps its value; anything else may not
                return self._with(p for p, e in spec.include if e is not None or "." in p)
            return self._with(spec.exclude)
        return SourceFields(known=False)

    def _with(self, paths: Iterable[str]) -> "SourceFields":
        return SourceFields(self.changed | {_top(p) for p in paths})
