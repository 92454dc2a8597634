"""Order templates: what :mod:`.field_order` knows of a value's field order, and applying it.

A template is
- a ``dict``: the fields in order, each with its own template; the :data:`REST` key marks where
  fields the template does not know go (without it: at the end, in the decoded order);
- a ``list``: one template per element of an array of that length;
- :class:`Each`: the same template for every element of an array;
- :class:`KeyOrder`: an array of ``{k, v}`` documents (``$objectToArray``) sorted by the
  position of ``k`` in the given keys;
- ``None``: nothing known (the decoded order stays).

Pure Python: no pyspark.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Iterable


class _Rest:
    """The place of fields a template does not know (a singleton, pickled by reference)."""

    def __repr__(self) -> str:
        return "REST"

    def __reduce__(self) -> str:
        return "REST"


REST = _Rest()


@dataclass(frozen=True)
class Each:
    """Every element of an array has template ``t``."""

    t: Any


@dataclass(frozen=True)
class KeyOrder:
    """An array of ``{k, v}`` documents ordered by the position of ``k`` in ``keys``; ``values``:
    ``(k, template)`` pairs for the ``v`` of each ``k`` (an embedded document keeps its order)."""

    keys: tuple
    values: tuple = ()


# ---------------------------------------------------------------- applying a template

def reorder(v: Any, t: Any) -> Any:
    """``v`` (a decoded value) with its documents' fields in the order template ``t`` gives."""
    if t is None:
        return v
    tv = type(v)
    if tv is dict:
        if type(t) is not dict:
            return v
        out = {}
        rest = False
        for k, sub in t.items():
            if k is REST:
                rest = True
                for k2, x in v.items():
                    if k2 not in t:
                        out[k2] = x
            elif k in v:
                out[k] = reorder(v[k], sub)
        if not rest and len(out) < len(v):
            for k2, x in v.items():
                if k2 not in out:
                    out[k2] = x
        return out
    if tv is list:
        tt = type(t)
        if tt is list:
            if len(t) == len(v):
                return [reorder(x, s) for x, s in zip(v, t)]
            u = union_all(t)
            return [reorder(x, u) for x in v]
        if tt is Each:
            return [reorder(x, t.t) for x in v]
        if tt is KeyOrder:
            pos = {k: i for i, k in enumerate(t.keys)}
            n = len(pos)
            if all(type(x) is dict and "k" in x for x in v):
                subs = dict(t.values)
                return [{**x, "v": reorder(x["v"], subs[x["k"]])} if x["k"] in subs and "v" in x else x
                        for x in sorted(v, key=lambda x: pos.get(x["k"], n))]
        return v
    return v


def source_template(raw: "str | bytes | None") -> Any:
    """A source record's template: its document as JSON text reads (``None`` when it does not read)."""
    if raw is None:
        return None
    try:
        t = json.loads(raw)
    except ValueError:
        return None
    return t if type(t) is dict else None


# ---------------------------------------------------------------- combining templates

def union(a: Any, b: Any) -> Any:
    """A template for a value that is either ``a``'s or ``b``'s: ``a``'s fields, then ``b``'s new ones."""
    a, b = _info(a), _info(b)
    if a is None:
        return b
    if b is None:
        return a
    if type(a) is dict and type(b) is dict:
        out = dict(a)
        for k, x in b.items():
            out[k] = union(out[k], x) if k in out else x
        return out
    if _is_array_t(a) and _is_array_t(b):
        if type(a) is KeyOrder:
            return a
        return Each(union(elements(a), elements(b)))
    return a


def union_all(ts: Iterable[Any]) -> Any:
    out = None
    for t in ts:
        out = union(out, t)
    return out


def _info(t: Any) -> Any:
    """``t`` when it says something about order (a scalar of a source document says nothing)."""
    return t if type(t) in (dict, list, Each, KeyOrder) else None


def _is_array_t(t: Any) -> bool:
    return type(t) in (list, Each, KeyOrder)


def elements(t: Any) -> Any:
    """The template of any one element of an array with template ``t``."""
    if type(t) is list:
        return union_all(t)
    if type(t) is Each:
        return t.t
    if type(t) is KeyOrder:     # a {k, v} document, its v as any of the values'
        return {"k": None, "v": union_all(v for _, v in t.values)}
    return None


def get_path(t: Any, path: str) -> Any:
    """The template of field path ``path`` (dotted) of a value with template ``t``; arrays on the
    way give arrays of their elements' fields, as aggregation field paths do."""
    for k in path.split("."):
        if type(t) is dict:
            t = t.get(k)
        elif _is_array_t(t):
            t = Each(get_path(elements(t), k))
        else:
            return None
        if t is None:
            return None
    return t


def set_path(t: Any, keys: list[str], value: Any) -> Any:
    """``$addFields`` of one dotted path: an existing field keeps its place, a new one goes last;
    an array on the way gets the field in each element."""
    if type(t) is not dict:
        if type(t) is list:
            return [set_path(e, keys, value) for e in t]
        if _is_array_t(t):
            return Each(set_path(elements(t), keys, value))
        t = {REST: None} if t is None else {}
    out = dict(t)
    head = keys[0]
    if len(keys) == 1:
        out[head] = value
    else:
        sub = out.get(head)
        out[head] = set_path(sub if (type(sub) is dict or _is_array_t(sub)) else {}, keys[1:], value)
    return out
