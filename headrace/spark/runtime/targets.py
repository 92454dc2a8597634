"""Where each output document goes when the sink has per-document expressions (pure Python, on
the executor that writes the batch).

The last stage left the evaluated expressions in :data:`~headrace.spec.stages.SINK_FIELD`
(:mod:`headrace.spark.stages.sink_target`); :func:`route` removes that field from every document
and groups the documents by target (``db``, ``coll``), keeping the batch's order within a group.
A target that is not a non-empty string refuses its document (it goes to the DLQ with a reason
that names the option and the value). Kafka's ``key`` and ``headers`` stay with their document
(:class:`Routed`), encoded by :func:`headrace.connectors.kafka.message_of`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ... import ejson
from ...spec.stages import SINK_FIELD

#: option names as the user wrote them, for reasons
_OPTION = {("$merge", "db"): "into.db", ("$merge", "coll"): "into.coll", ("$emit", "coll"): "topic"}


@dataclass
class Routed:
    """The documents of one target, with their indexes in the batch and their evaluated extras."""

    db: str
    coll: str
    index: list[int] = field(default_factory=list)
    docs: list[dict] = field(default_factory=list)
    extras: list[dict] = field(default_factory=list)


_MISSING = object()


def describe(v: Any) -> str:
    """A value for a reason: ``missing``, ``null``, or its type and relaxed Extended JSON."""
    if v is _MISSING or v is None:
        return "missing" if v is _MISSING else "null"
    return f"{type(v).__name__} {ejson.dumps(v)}"


def route(outputs: list[dict], op: str, db: Any, coll: Any, dynamic: tuple[tuple[str, Any], ...],
          stream_word: str = "topic") -> tuple[list[Routed], list[tuple[int, str]]]:
    """Group ``outputs`` by target; returns the groups (in order of first document) and the
    refused documents as ``(index, reason)``. ``db``/``coll`` are the sink's names, used where
    they are not among the ``dynamic`` expressions."""
    names = {k for k, _ in dynamic}
    groups: dict[tuple[str, str], Routed] = {}
    refused: list[tuple[int, str]] = []
    for i, d in enumerate(outputs):
        x = d.pop(SINK_FIELD, None)
        x = x if isinstance(x, dict) else {}
        target = []
        for k, fixed in (("db", db), ("coll", coll)):
            if k not in names:
                target.append(fixed)
                continue
            v = x.get(k, _MISSING)
            if not isinstance(v, str) or not v:
                what = _OPTION.get((op, k), k) if not (op == "$emit" and k == "coll") else stream_word
                refused.append((i, f"{op} {what} must evaluate to a non-empty string, found {describe(v)}"))
                break
            target.append(v)
        else:
            g = groups.get((target[0], target[1]))
            if g is None:
                g = groups[(target[0], target[1])] = Routed(target[0], target[1])
            g.index.append(i)
            g.docs.append(d)
            g.extras.append(x)
    return list(groups.values()), refused
