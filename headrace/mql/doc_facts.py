"""What every document of one micro-batch is known to hold at a field path: the typed fast path's
facts.

Spark's ``schema_of_variant_agg`` over a batch's documents gives one merged schema, e.g.
``OBJECT<device_id: STRING, obs: OBJECT<watts: BIGINT>>`` (the JVM computes it in the batch's
statistics job). :class:`DocFacts` reads it: :meth:`DocFacts.kind` answers, for a dotted path,
the one MQL type that every present, non-null value at that path has in this batch, and only
when no document has an array or a non-document on the way, so that a plain
``variant_get(doc, path)`` gives exactly what MQL's path semantics give. The compilers then use a
constant type code and typed reads instead of the generic type dispatch
(:mod:`headrace.spark.values.facts`).

Merged schemas lose per-document types where kinds were widened: ``BIGINT`` + ``DOUBLE`` is
``DOUBLE``, ``BIGINT`` + ``DECIMAL`` a ``DECIMAL``. So only types that no merge produces from
different MQL kinds are answered: ``BIGINT`` (int or long: one type code), ``STRING``,
``BOOLEAN``, ``BINARY``, the date types and ``VOID`` (null only); ``DOUBLE``, ``DECIMAL``,
``ARRAY``, ``OBJECT`` and ``VARIANT`` at the end of a path answer None (the generic path), as
does ``VARIANT`` or ``ARRAY`` on the way. A field absent from an object everywhere is
``"missing"``. ``{"$oid": ...}``-style wrappers are objects here, so they never pass for a
scalar.

Pure Python: no pyspark.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

#: schema type names that no merge of different MQL kinds produces, to MQL type names
_SCALARS = {"BIGINT": "int", "STRING": "string", "BOOLEAN": "bool", "BINARY": "binData", "DATE": "date",
            "TIMESTAMP": "date", "TIMESTAMP_NTZ": "date", "VOID": "null"}

#: schemas longer than this (documents with very many distinct field names) give no facts
MAX_SCHEMA_CHARS = 200_000

# a parsed schema: ("object", {name: node}) | ("array", node) | a type name such as "BIGINT"
Node = Any


def parse_schema(text: str) -> Node:
    """A schema string of ``schema_of_variant(_agg)`` as a tree; raises ValueError when it is not one."""
    node, i = _parse(text, 0)
    if i != len(text):
        raise ValueError(f"variant schema: unexpected {text[i:i + 20]!r} at {i}")
    return node


def _parse(s: str, i: int) -> tuple[Node, int]:
    if s.startswith("OBJECT<", i):
        i += 7
        fields: dict[str, Node] = {}
        if s.startswith(">", i):
            return ("object", fields), i + 1
        while True:
            name, i = _name(s, i)
            if not s.startswith(": ", i):
                raise ValueError(f"variant schema: ': ' expected at {i}")
            fields[name], i = _parse(s, i + 2)
            if s.startswith(", ", i):
                i += 2
            elif s.startswith(">", i):
                return ("object", fields), i + 1
            else:
                raise ValueError(f"variant schema: ',' or '>' expected at {i}")
    if s.startswith("ARRAY<", i):
        elem, i = _parse(s, i + 6)
        if not s.startswith(">", i):
            raise ValueError(f"variant schema: '>' expected at {i}")
        return ("array", elem), i + 1
    j = i
    while j < len(s) and (s[j].isalnum() or s[j] == "_"):
        j += 1
    if j == i:
        raise ValueError(f"variant schema: a type expected at {i}")
    name = s[i:j]
    if j < len(s) and s[j] == "(":          # DECIMAL(p,s) and the like
        k = s.index(")", j)
        return s[i:k + 1], k + 1
    return name, j


def _name(s: str, i: int) -> tuple[str, int]:
    if s.startswith("`", i):
        out, i = [], i + 1
        while True:
            k = s.index("`", i)
            out.append(s[i:k])
            if s.startswith("``", k):
                out.append("`")
                i = k + 2
            else:
                return "".join(out), k + 1
    k = s.index(":", i)
    return s[i:k], k


def merge(a: Node, b: Node) -> Node:
    """Two partitions' schemas as one: fields of both objects, the same scalar kept, ``VOID``
    giving way; anything else ``VARIANT`` (unknown)."""
    if a == b:
        return a
    if a == "VOID":
        return b
    if b == "VOID":
        return a
    if isinstance(a, tuple) and isinstance(b, tuple) and a[0] == b[0]:
        if a[0] == "array":
            return ("array", merge(a[1], b[1]))
        fields = dict(a[1])
        for k, v in b[1].items():
            fields[k] = merge(fields[k], v) if k in fields else v
        return ("object", fields)
    return "VARIANT"


@dataclass(frozen=True)
class DocFacts:
    """The merged schema of a batch's documents (:func:`parse_schema` tree); ``None`` root: no
    document (every path missing)."""

    root: Node

    @staticmethod
    def from_schemas(texts: list[str | None]) -> "DocFacts | None":
        """Facts from the per-partition schema strings (None entries: partitions without
        documents); None when a string cannot be read or they are over ``MAX_SCHEMA_CHARS``."""
        node: Node = "VOID"
        if sum(len(t) for t in texts if t is not None) > MAX_SCHEMA_CHARS:
            return None
        try:
            for t in texts:
                if t is not None:
                    node = merge(node, parse_schema(t))
        except ValueError:
            return None
        return DocFacts(node)

    def kind(self, path: str) -> str | None:
        """The MQL type name (``"int"`` for int and long alike, ``"string"``, ``"bool"``,
        ``"binData"``, ``"date"``, ``"null"``, or ``"missing"`` when no document has the path)
        of every present, non-null value at dotted ``path``, when there is one and no array or
        non-document lies on the way; else None."""
        node = self.root
        for key in path.split("."):
            if node == "VOID":           # null (or no document) on the way: the path is missing
                return "missing"
            if not isinstance(node, tuple) or node[0] != "object":
                return None
            node = node[1].get(key)
            if node is None:
                return "missing"
        return _SCALARS.get(node) if isinstance(node, str) else None
