"""Dotted field paths over documents (``headrace.ejson`` value model).

- :func:`iter_path`: the values a query path offers, with MongoDB's matcher's array traversal.
- :func:`get_path` / :func:`has_path` / :func:`set_path`: plain dotted paths through embedded
  documents only (no array traversal), as shard keys and ``_id`` fields read them.
"""
from __future__ import annotations

import re
from typing import Any, Iterator

from .bson import MISSING

__all__ = ["is_index", "iter_path", "get_path", "has_path", "set_path"]


_DIGITS = re.compile(r"[0-9]+\Z")


def is_index(name: str) -> bool:
    """A path component that can address an array element ("0", "12"; not "01")."""
    return bool(_DIGITS.match(name)) and str(int(name)) == name


def _field(obj: Any, name: str) -> Any:
    if isinstance(obj, dict):
        return obj.get(name, MISSING)
    if isinstance(obj, list) and _DIGITS.match(name) and str(int(name)) == name:
        i = int(name)
        return obj[i] if i < len(obj) else MISSING
    return MISSING


def iter_path(doc: Any, path: "str | list[str]", traverse_leaf: bool = True) -> Iterator[Any]:
    """The values a query path offers in a document, as MongoDB's matcher sees them.

    Yields :data:`MISSING` where the path ends nowhere. With ``traverse_leaf`` an array at the
    end of the path yields its elements, then itself."""
    parts = path.split(".") if isinstance(path, str) else list(path)
    return _iter_obj(doc, parts, traverse_leaf)


def _iter_obj(obj: Any, parts: list[str], tl: bool) -> Iterator[Any]:
    cur, i, n = obj, 0, len(parts)
    res: Any = obj
    while i < n:
        res = _field(cur, parts[i])
        if isinstance(res, dict):
            cur = res
            i += 1
            continue
        break
    else:
        yield res
        return
    if res is MISSING:
        yield MISSING
        return
    if not isinstance(res, list):
        yield res if i == n - 1 else MISSING
        return
    rest = parts[i + 1:]
    if not rest:
        if tl:
            yield from res
        yield res
        return
    yield from _iter_array(res, rest, tl)


def _iter_array(arr: list, rest: list[str], tl: bool) -> Iterator[Any]:
    nxt = rest[0]
    is_num = bool(_DIGITS.match(nxt))
    for idx, e in enumerate(arr):
        offset = is_num and str(idx) == nxt
        if isinstance(e, dict):
            yield from _iter_obj(e, rest, tl)
            if offset:
                if len(rest) == 1:
                    yield e
                else:
                    yield from _iter_obj(e, rest[1:], tl)
        elif offset:
            if len(rest) == 1:
                yield e
            elif isinstance(e, list):
                yield from _iter_array(e, rest[1:], tl)


def get_path(doc: Any, path: str, default: Any = MISSING) -> Any:
    """The value at a dotted path through embedded documents, else ``default``."""
    cur = doc
    for part in path.split("."):
        if isinstance(cur, dict) and part in cur:
            cur = cur[part]
        else:
            return default
    return cur


def has_path(doc: Any, path: str) -> bool:
    """Whether a dotted path through embedded documents ends at a value."""
    return get_path(doc, path) is not MISSING


def set_path(doc: dict, path: str, value: Any) -> dict:
    """A copy of ``doc`` with ``path`` set (intermediate documents copied, created when missing)."""
    out = dict(doc)
    parts = path.split(".")
    cur = out
    for part in parts[:-1]:
        nxt = cur.get(part)
        nxt = dict(nxt) if isinstance(nxt, dict) else {}
        cur[part] = nxt
        cur = nxt
    cur[parts[-1]] = value
    return out
