"""A VARIANT document written straight to relaxed Extended JSON text, fields in template order.

The JSON-lines sink used to decode each output document (:func:`headrace.spark.docs.decode`),
put its fields in MongoDB's order (:func:`headrace.mql.order_templates.reorder`) and write it
(:func:`headrace.ejson.dumps`): three passes and a Python object per value. :func:`to_text`
reads the VARIANT bytes once and writes the same text::

    to_text(value, metadata, t) == ejson.dumps(reorder(decode(value, metadata), t))

for every document (a test checks it over random documents and templates). Values JSON writes
as they are (strings, numbers, booleans, null, and dates in 1970-9999) are formatted here;
anything rarer (a one-field object that may stand for a BSON type, decimals, binData, NaN,
dates outside that range, an ``$objectToArray`` template) is decoded and written the general
way, so the two can only agree.

Runs inside Python workers; imports pyspark only through :mod:`headrace.spark.docs`.
"""
from __future__ import annotations

import datetime as _dt
import math
from json.encoder import encode_basestring as _quote   # what json.dumps(ensure_ascii=False) uses
from typing import Any, Callable

from pyspark.sql.variant_utils import VariantUtils as _V

from .. import ejson
from ..mql.order_templates import REST, Each, KeyOrder, reorder, union_all
from .docs import _S1, _S2, _S4, _S8, _SD, _SF, _dec, _keys, _uint

_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)


def to_text(value: bytes, metadata: bytes, t: Any = None, head: str = "", tail: str = "",
            head_unless: str = "_id", tail_unless: str = "_stream_meta") -> "str | None":
    """The document's text; ``head`` (e.g. ``"_id":...``) goes before its fields unless it has
    a field ``head_unless``, and ``tail`` (e.g. ``"_stream_meta":...``) after them.

    ``None`` (write it the general way) when the value is not an object, is a one-field object
    whose field name starts with ``$`` (it may stand for a BSON type), or has a field
    ``tail_unless`` while ``tail`` is given (the tail would have to merge into it)."""
    if value[0] & 3 != 2:
        return None
    if type(metadata) is not bytes:
        metadata = bytes(metadata)
    keys = _keys(metadata)
    lay = _layout(value, 0, metadata, keys, t)
    if lay.wrapper:
        return None
    if head or tail:
        if tail and tail_unless in lay.names:
            return None
        if head_unless in lay.names:
            head = ""
    parts = _parts(value, 0, metadata, keys, lay)
    if head:
        parts.insert(0, head)
    if tail:
        parts.append(tail)
    return "{" + ",".join(parts) + "}"


class _Layout:
    """How to write objects of one layout (metadata, header, key ids) under one template: the
    stored index, key text and template of each field, in the template's order."""

    __slots__ = ("t", "n", "idsz", "osz", "order", "names", "wrapper")

    def __init__(self, b: bytes, pos: int, keys: list[str], t: Any):
        info = b[pos] >> 2
        nsz = 4 if (info >> 4) & 1 else 1
        self.t = t
        self.n = n = _uint(b, pos + 1, nsz)
        idsz, osz = ((info >> 2) & 3) + 1, (info & 3) + 1
        self.idsz, self.osz = idsz, osz
        ids = pos + 1 + nsz
        kids = [_uint(b, ids + i * idsz, idsz) for i in range(n)]
        self.names = frozenset(keys[k] for k in kids)
        self.wrapper = n == 1 and keys[kids[0]].startswith("$")
        self.order = [(i, _quote(keys[kids[i]]) + ":", sub) for i, sub in _in_order(kids, keys, t)]


_LAYOUTS: dict[tuple, _Layout] = {}
_CACHED_METADATA = 4096               # bytes of metadata (field names) up to which layouts are cached


def _layout(b: bytes, pos: int, metadata: bytes, keys: list[str], t: Any) -> _Layout:
    if type(t) is not dict:
        t = None                              # any other template leaves an object's order as stored
    info = b[pos] >> 2
    nsz = 4 if (info >> 4) & 1 else 1
    n = _uint(b, pos + 1, nsz)
    idsz = ((info >> 2) & 3) + 1
    start = pos + 1 + nsz
    if len(metadata) > _CACHED_METADATA:      # many names: the cache would hold too much
        return _Layout(b, pos, keys, t)
    key = (metadata, b[pos], b[start:start + n * idsz], id(t))
    lay = _LAYOUTS.get(key)
    if lay is None or lay.t is not t:         # ``t`` held by the layout: its id cannot be reused
        lay = _Layout(b, pos, keys, t)
        if len(_LAYOUTS) >= 4096:
            _LAYOUTS.clear()
        _LAYOUTS[key] = lay
    return lay


def _parts(b: bytes, pos: int, metadata: bytes, keys: list[str], lay: _Layout) -> list[str]:
    """The ``"name":value`` texts of an object's fields, in order."""
    info = b[pos] >> 2
    n = lay.n
    offs = pos + 1 + (4 if (info >> 4) & 1 else 1) + n * lay.idsz
    osz = lay.osz
    data = offs + (n + 1) * osz
    out = []
    for i, kt, sub in lay.order:
        p = data + (b[offs + i] if osz == 1 else _uint(b, offs + i * osz, osz))
        f = _SCALAR[b[p]]
        out.append(kt + (f(b, p) if f is not None else _enc(b, metadata, keys, p, sub)))
    return out


def _in_order(kids: list[int], keys: list[str], t: Any) -> list[tuple[int, Any]]:
    """The stored indexes of an object's fields as
    :func:`~headrace.mql.order_templates.reorder` places them, with their templates."""
    if type(t) is not dict:
        return [(i, None) for i in range(len(kids))]
    by_name = {keys[k]: i for i, k in enumerate(kids)}
    out = []
    rest = False
    for k, sub in t.items():
        if k is REST:
            rest = True
            out.extend((i, None) for i, kid in enumerate(kids) if keys[kid] not in t)
        else:
            i = by_name.get(k)
            if i is not None:
                out.append((i, sub))
    if not rest and len(out) < len(kids):
        placed = {i for i, _ in out}
        out.extend((i, None) for i in range(len(kids)) if i not in placed)
    return out


def _enc(b: bytes, metadata: bytes, keys: list[str], pos: int, t: Any) -> str:
    """Any value's text (objects and arrays follow template ``t``)."""
    h = b[pos]
    f = _SCALAR[h]
    if f is not None:
        return f(b, pos)
    if h & 3 == 2:                                   # object
        lay = _layout(b, pos, metadata, keys, t)
        if lay.wrapper:
            return _general(b, keys, pos, t)
        return "{" + ",".join(_parts(b, pos, metadata, keys, lay)) + "}"
    tt = type(t)                                     # array
    if tt is KeyOrder:
        return _general(b, keys, pos, t)             # it sorts decoded elements
    info = h >> 2
    nsz = 4 if (info >> 2) & 1 else 1
    n = _uint(b, pos + 1, nsz)
    osz = (info & 3) + 1
    offs = pos + 1 + nsz
    data = offs + (n + 1) * osz
    if tt is list:
        subs = t if len(t) == n else [union_all(t)] * n
    else:                                            # any other template leaves the elements as they are
        subs = [t.t if tt is Each else None] * n
    return "[" + ",".join([_enc(b, metadata, keys, data + _uint(b, offs + i * osz, osz), subs[i])
                           for i in range(n)]) + "]"


# ---------------------------------------------------------------- scalars, by header byte

def _short_string(n: int) -> Callable[[bytes, int], str]:
    return lambda b, pos: _quote(b[pos + 1:pos + 1 + n].decode("utf-8"))


def _int(s: Any) -> Callable[[bytes, int], str]:
    return lambda b, pos: str(s.unpack_from(b, pos + 1)[0])


def _float(s: Any) -> Callable[[bytes, int], str]:
    def f(b: bytes, pos: int) -> str:
        x = s.unpack_from(b, pos + 1)[0]
        return float.__repr__(x) if math.isfinite(x) else _general(b, [], pos, None)
    return f


def _long_string(b: bytes, pos: int) -> str:
    n = int.from_bytes(b[pos + 1:pos + 5], "little")
    return _quote(b[pos + 5:pos + 5 + n].decode("utf-8"))


_YEAR_10000 = 253_402_300_800_000_000          # 10000-01-01 in microseconds since the epoch
_EPOCH_ORDINAL = _EPOCH.toordinal()
_DAYS: dict[int, str] = {}                      # days since the epoch -> '{"$date":"YYYY-MM-DDT'


def _timestamp(b: bytes, pos: int) -> str:
    micros = _S8.unpack_from(b, pos + 1)[0]
    if not 0 <= micros < _YEAR_10000:           # years 1970-9999 only; the rest the general way
        return _general(b, [], pos, None)
    day, ms = divmod(micros // 1000, 86_400_000)
    head = _DAYS.get(day)
    if head is None:
        if len(_DAYS) >= 4096:
            _DAYS.clear()
        d = _dt.date.fromordinal(_EPOCH_ORDINAL + day)
        head = _DAYS[day] = '{"$date":"%04d-%02d-%02dT' % (d.year, d.month, d.day)
    h, ms = divmod(ms, 3_600_000)
    m, ms = divmod(ms, 60_000)
    return '%s%02d:%02d:%02d.%03dZ"}' % (head, h, m, ms // 1000, ms % 1000)


def _other(b: bytes, pos: int) -> str:
    return _general(b, [], pos, None)


_SCALAR: list = [None] * 256           # header byte -> writer; None: an object or an array
for _n in range(64):
    _SCALAR[(_n << 2) | 1] = _short_string(_n)
for _info in range(64):
    _SCALAR[_info << 2] = _other
for _info, _s in ((_V.INT1, _S1), (_V.INT2, _S2), (_V.INT4, _S4), (_V.INT8, _S8)):
    _SCALAR[_info << 2] = _int(_s)
for _info, _c in ((_V.NULL, "null"), (_V.TRUE, "true"), (_V.FALSE, "false")):
    _SCALAR[_info << 2] = (lambda c: lambda b, pos: c)(_c)
_SCALAR[_V.DOUBLE << 2] = _float(_SD)
_SCALAR[_V.FLOAT << 2] = _float(_SF)
_SCALAR[_V.LONG_STR << 2] = _long_string
_SCALAR[_V.TIMESTAMP << 2] = _timestamp


def _general(b: bytes, keys: list[str], pos: int, t: Any) -> str:
    """The value decoded, reordered and written as :func:`headrace.ejson.dumps` writes it."""
    return ejson.dumps(reorder(_dec(b, keys, pos), t))
