"""The collection interface every sink backend implements, and ``$merge`` semantics."""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, Sequence

from .. import ejson


def id_key(value: Any) -> str:
    """A canonical text key for an ``_id`` (or any value): canonical Extended JSON."""
    return ejson.dumps(value, relaxed=False, sort_keys=False)


def on_key(doc: dict, on: Sequence[str]) -> str | None:
    """The canonical key of a document's ``on`` fields (dotted paths), None if one is missing."""
    vals = []
    for path in on:
        cur: Any = doc
        for part in path.split("."):
            if isinstance(cur, dict) and part in cur:
                cur = cur[part]
            else:
                return None
        vals.append(cur)
    return id_key(vals)


@dataclass(frozen=True)
class MergeSpec:
    """``$merge`` behaviour. ``when_matched`` is a string or a Python callable
    ``(existing, new) -> doc`` compiled from a pipeline."""

    on: tuple[str, ...] = ("_id",)
    when_matched: Any = "merge"
    when_not_matched: str = "insert"


@dataclass
class WriteResult:
    """What a batch write did. ``errors`` lists ``(index, reason)`` per failed document."""

    inserted: int = 0
    replaced: int = 0
    merged: int = 0
    kept: int = 0
    discarded: int = 0
    deleted: int = 0
    errors: list[tuple[int, str]] = field(default_factory=list)


def apply_merge(existing: dict | None, new: dict, spec: MergeSpec) -> tuple[str, dict | None, str | None]:
    """Decide one ``$merge`` write. Returns (action, document to store or None, error or None);
    action ``"deleted"``: remove ``existing``."""
    if existing is None:
        if spec.when_not_matched == "insert":
            return "inserted", new, None
        if spec.when_not_matched == "discard":
            return "discarded", None, None
        return "error", None, "whenNotMatched: fail: no document matches the 'on' fields"
    wm = spec.when_matched
    if callable(wm):
        out = wm(existing, new)
        out["_id"] = existing.get("_id")
        return "merged", out, None
    if wm == "replace":
        out = dict(new)
        out["_id"] = existing.get("_id", new.get("_id"))
        return "replaced", out, None
    if wm == "keepExisting":
        return "kept", None, None
    if wm == "delete":      # Atlas Stream Processing's: the matching document is removed
        return "deleted", None, None
    if wm == "merge":
        out = dict(existing)
        for k, v in new.items():
            if k != "_id":
                out[k] = v
        return "merged", out, None
    return "error", None, "whenMatched: fail: a document matches the 'on' fields"


class Collection(ABC):
    """A named collection of documents, ordered by insertion."""

    @abstractmethod
    def insert_many(self, docs: Iterable[dict]) -> WriteResult: ...

    @abstractmethod
    def merge_many(self, docs: Sequence[dict], spec: MergeSpec) -> WriteResult:
        """Apply ``$merge`` to each document in order, atomically for the batch."""

    @abstractmethod
    def find(self, predicate: Callable[[dict], bool] | None = None) -> Iterator[dict]: ...

    @abstractmethod
    def count(self) -> int: ...

    @abstractmethod
    def delete_ids(self, ids: Iterable[Any]) -> int: ...

    @abstractmethod
    def drop(self) -> None: ...
