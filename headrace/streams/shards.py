"""The shard table of a stream (``stream.json``): hash keys (MD5 of a partition key, parsing a
hash key given as text), stream and shard names, :class:`Shard` and :class:`Meta`, and which
shards a consumer may read given its positions (:func:`readable`). Pure data, no files.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Any, Mapping

from .errors import InvalidArgument

FORMAT = 1
MAX_HASH = (1 << 128) - 1
MAX_SHARDS = 4096
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


def hash_key(partition_key: str) -> int:
    """The 128-bit hash key of a partition key: MD5 of its UTF-8 bytes, as a big-endian int."""
    return int.from_bytes(hashlib.md5(partition_key.encode("utf-8")).digest(), "big")


def check_name(kind: str, name: str) -> str:
    if not isinstance(name, str) or not _NAME.match(name):
        raise InvalidArgument(
            f"invalid {kind} name {name!r}: use 1-128 letters, digits, '.', '_' or '-', starting with a letter or digit",
            code="NAME_INVALID")
    return name


def shard_name(n: int) -> str:
    return f"shard-{n:06d}"


@dataclass
class Shard:
    """One shard: hash key range ``[start, end]`` (inclusive), lineage and state.

    ``end_seq`` is the number of records of a closed shard (its next sequence number when it
    closed); ``None`` while open.
    """

    id: str
    start: int
    end: int
    parents: list[str] = field(default_factory=list)
    children: list[str] = field(default_factory=list)
    created_us: int = 0
    closed_us: int | None = None
    end_seq: int | None = None

    @property
    def open(self) -> bool:
        return self.end_seq is None

    def to_json(self) -> dict:
        return {"id": self.id, "start": str(self.start), "end": str(self.end), "parents": self.parents,
                "children": self.children, "created_us": self.created_us, "closed_us": self.closed_us,
                "end_seq": self.end_seq}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "Shard":
        return cls(d["id"], int(d["start"]), int(d["end"]), list(d.get("parents", [])), list(d.get("children", [])),
                   int(d.get("created_us", 0)), d.get("closed_us"), d.get("end_seq"))


@dataclass
class Meta:
    name: str
    shards: dict[str, Shard]
    next_shard: int
    version: int
    created_us: int

    def to_json(self) -> dict:
        return {"format": FORMAT, "name": self.name, "version": self.version, "next_shard": self.next_shard,
                "created_us": self.created_us, "shards": [s.to_json() for s in self.shards.values()]}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "Meta":
        if d.get("format") != FORMAT:
            raise InvalidArgument(f"stream {d.get('name')!r} has format {d.get('format')!r}, expected {FORMAT}",
                                  code="STREAM_FORMAT")
        shards = {s["id"]: Shard.from_json(s) for s in d["shards"]}
        return cls(d["name"], shards, int(d["next_shard"]), int(d["version"]), int(d.get("created_us", 0)))

    def open_shards(self) -> list[Shard]:
        return sorted((s for s in self.shards.values() if s.open), key=lambda s: s.start)


def parse_hash_key(text: "str | int") -> int:
    """A hash key given as a decimal integer (or ``0x`` hex)."""
    try:
        value = int(text, 0) if isinstance(text, str) else int(text)
    except (TypeError, ValueError):
        raise InvalidArgument(f"hash key must be an integer in [0, 2**128-1], found {text!r}",
                              code="HASH_KEY_INVALID") from None
    if not 0 <= value <= MAX_HASH:
        raise InvalidArgument(f"hash key must be in [0, 2**128-1], found {value}", code="HASH_KEY_INVALID")
    return value


def readable(meta: Meta, positions: Mapping[str, int]) -> list[Shard]:
    """Shards that may be read given per-shard positions (next sequence numbers).

    A shard is readable once each of its parents is closed and drained (position == end_seq);
    a closed shard that is drained is not readable. Parent-first order follows from this.
    """
    out = []
    for s in meta.shards.values():
        if not s.open and positions.get(s.id, 0) >= (s.end_seq or 0):
            continue
        if all(not meta.shards[p].open and positions.get(p, 0) >= (meta.shards[p].end_seq or 0) for p in s.parents):
            out.append(s)
    return sorted(out, key=lambda s: s.id)
