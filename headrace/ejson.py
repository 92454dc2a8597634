"""MongoDB Extended JSON v2: parse to Python values and dump as relaxed Extended JSON.

Python value model (used across headrace, pure Python):
- ``None``, ``bool``, ``int`` (int32 range = BSON int, else long), :class:`Int64` (explicit
  ``$numberLong``), ``float`` (double), :class:`decimal.Decimal` (``$numberDecimal``), ``str``,
  ``dict`` (document, insertion ordered), ``list`` (array), :class:`datetime.datetime`
  (timezone-aware UTC, millisecond precision; ``$date``), :class:`ObjectId` (``$oid``),
  ``bytes`` (``$binary`` of subtype 0), :class:`Binary` (``$binary`` of another subtype, e.g. 4
  for a UUID), :class:`Timestamp` (``$timestamp``), :data:`MINKEY` / :data:`MAXKEY`.
"""
from __future__ import annotations

import base64
import datetime as _dt
import decimal
import json
import math
import os
import struct
import threading
import time
from typing import Any

UTC = _dt.timezone.utc
EPOCH = _dt.datetime(1970, 1, 1, tzinfo=UTC)
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1


class Int64(int):
    """An integer that is a BSON long even when it would fit an int."""

    def __repr__(self) -> str:
        return f"Int64({int(self)})"


class _Bound:
    def __init__(self, name: str, rank: int):
        self.name, self.rank = name, rank

    def __repr__(self) -> str:
        return self.name

    def __reduce__(self):
        return (_bound, (self.name,))


def _bound(name: str) -> "_Bound":
    return MINKEY if name == "MinKey" else MAXKEY


MINKEY = _Bound("MinKey", -1)
MAXKEY = _Bound("MaxKey", 1)


class ObjectId:
    """A 12-byte BSON ObjectId: 4-byte big-endian seconds, 5 random bytes, 3-byte counter."""

    _lock = threading.Lock()
    _counter = int.from_bytes(os.urandom(3), "big")
    _random = os.urandom(5)

    __slots__ = ("binary",)

    def __init__(self, oid: "str | bytes | ObjectId | None" = None):
        if oid is None:
            self.binary = self._generate(time.time())
        elif isinstance(oid, ObjectId):
            self.binary = oid.binary
        elif isinstance(oid, bytes) and len(oid) == 12:
            self.binary = oid
        elif isinstance(oid, str) and len(oid) == 24:
            self.binary = bytes.fromhex(oid)
        else:
            raise ValueError(f"not a valid ObjectId: {oid!r}")

    @classmethod
    def _generate(cls, ts: float) -> bytes:
        with cls._lock:
            cls._counter = (cls._counter + 1) % 0xFFFFFF
            counter = cls._counter
        return struct.pack(">I", int(ts)) + cls._random + counter.to_bytes(3, "big")

    @classmethod
    def from_datetime(cls, when: _dt.datetime) -> "ObjectId":
        return cls(struct.pack(">I", int(when.timestamp())) + b"\x00" * 8)

    @property
    def generation_time(self) -> _dt.datetime:
        return _dt.datetime.fromtimestamp(struct.unpack(">I", self.binary[:4])[0], UTC)

    def __str__(self) -> str:
        return self.binary.hex()

    def __repr__(self) -> str:
        return f"ObjectId('{self}')"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ObjectId) and other.binary == self.binary

    def __lt__(self, other: "ObjectId") -> bool:
        return self.binary < other.binary

    def __hash__(self) -> int:
        return hash(self.binary)


class Binary(bytes):
    """BSON binData of a subtype other than 0 (generic binary data is plain ``bytes``).

    Equal to another value only when both bytes and subtype are equal, as in MongoDB."""

    def __new__(cls, data: bytes = b"", subtype: int = 0) -> "Binary":
        if not 0 <= int(subtype) <= 255:
            raise ValueError(f"binData subtype must be 0-255, found {subtype}")
        obj = super().__new__(cls, data)
        obj.subtype = int(subtype)
        return obj

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (bytes, bytearray)):
            return getattr(other, "subtype", 0) == self.subtype and bytes(other) == bytes(self)
        return NotImplemented

    def __ne__(self, other: object) -> bool:
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    def __hash__(self) -> int:
        return hash((bytes(self), self.subtype))

    def __repr__(self) -> str:
        return f"Binary({bytes(self)!r}, {self.subtype})"

    def __reduce__(self):
        return (Binary, (bytes(self), self.subtype))


def binary(data: bytes, subtype: int = 0) -> "bytes | Binary":
    """binData of ``subtype``: plain ``bytes`` for subtype 0, else a :class:`Binary`."""
    return bytes(data) if int(subtype) == 0 else Binary(data, subtype)


def binary_subtype(value: bytes) -> int:
    return getattr(value, "subtype", 0)


class Timestamp:
    """A BSON Timestamp: seconds since the epoch ``t`` and an ordinal ``i``, both unsigned 32-bit;
    ordered by ``t``, then ``i``."""

    __slots__ = ("t", "i")

    def __init__(self, t: int, i: int):
        t, i = int(t), int(i)
        if not (0 <= t < 2**32 and 0 <= i < 2**32):
            raise ValueError(f"Timestamp fields must be unsigned 32-bit integers, found t={t}, i={i}")
        self.t, self.i = t, i

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Timestamp) and (other.t, other.i) == (self.t, self.i)

    def __lt__(self, other: "Timestamp") -> bool:
        return (self.t, self.i) < (other.t, other.i)

    def __hash__(self) -> int:
        return hash((self.t, self.i))

    def __repr__(self) -> str:
        return f"Timestamp({self.t}, {self.i})"

    def __reduce__(self):
        return (Timestamp, (self.t, self.i))


class EJSONError(ValueError):
    """Text that is not valid (Extended) JSON."""


def parse_date(value: Any) -> _dt.datetime:
    """An Extended JSON ``$date`` payload or an ISO-8601 string as an aware UTC datetime."""
    if isinstance(value, dict):
        if "$numberLong" in value:
            return millis_to_datetime(int(value["$numberLong"]))
        raise EJSONError(f"invalid $date: {value!r}")
    if isinstance(value, bool):
        raise EJSONError(f"invalid $date: {value!r}")
    if isinstance(value, (int, float)):
        return millis_to_datetime(int(value))
    if isinstance(value, str):
        return parse_iso(value)
    raise EJSONError(f"invalid $date: {value!r}")


def parse_iso(text: str) -> _dt.datetime:
    """Parse an ISO-8601 date/time; naive values are UTC."""
    s = text.strip()
    if s.endswith("Z") or s.endswith("z"):
        s = s[:-1] + "+00:00"
    try:
        d = _dt.datetime.fromisoformat(s)
    except ValueError as exc:
        raise EJSONError(f"not an ISO-8601 date: {text!r}") from exc
    if d.tzinfo is None:
        d = d.replace(tzinfo=UTC)
    return d.astimezone(UTC)


def millis_to_datetime(ms: int) -> _dt.datetime:
    return EPOCH + _dt.timedelta(milliseconds=ms)


def datetime_to_millis(d: _dt.datetime) -> int:
    if d.tzinfo is None:
        d = d.replace(tzinfo=UTC)
    delta = d - EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000


def _hook(obj: dict) -> Any:
    if len(obj) == 1:
        (k, v), = obj.items()
        if k == "$date":
            return parse_date(v)
        if k == "$oid":
            return ObjectId(v)
        if k == "$numberLong":
            return Int64(int(v))
        if k == "$numberInt":
            return int(v)
        if k == "$numberDouble":
            return float(v)
        if k == "$numberDecimal":
            return decimal.Decimal(v)
        if k == "$minKey":
            return MINKEY
        if k == "$maxKey":
            return MAXKEY
        if k == "$binary" and isinstance(v, dict):
            return _binary(v.get("base64", ""), v.get("subType", "00"))
        if k == "$timestamp" and isinstance(v, dict):
            try:
                return Timestamp(v["t"], v["i"])
            except (KeyError, TypeError, ValueError) as exc:
                raise EJSONError(f"invalid $timestamp: {v!r}") from exc
    if len(obj) == 2 and "$binary" in obj and "$type" in obj:
        return _binary(obj["$binary"], obj["$type"])
    return obj


def _binary(b64: Any, subtype: Any) -> "bytes | Binary":
    try:
        return binary(base64.b64decode(b64), int(str(subtype), 16))
    except (TypeError, ValueError) as exc:
        raise EJSONError(f"invalid $binary: base64 {b64!r}, subType {subtype!r}") from exc


def loads(text: "str | bytes") -> Any:
    """Parse Extended JSON (canonical or relaxed) text. Raises :class:`EJSONError`."""
    try:
        return json.loads(text, object_hook=_hook)
    except EJSONError:
        raise
    except (ValueError, TypeError) as exc:
        raise EJSONError(str(exc)) from exc


def from_plain(value: Any) -> Any:
    """Convert an already-parsed JSON value (e.g. from YAML or ``json.load``) to the value model."""
    if isinstance(value, dict):
        return _hook({k: from_plain(v) for k, v in value.items()})
    if isinstance(value, list):
        return [from_plain(v) for v in value]
    return value


def format_date(d: _dt.datetime) -> str:
    if d.tzinfo is None:
        d = d.replace(tzinfo=UTC)
    d = d.astimezone(UTC)
    return d.strftime("%Y-%m-%dT%H:%M:%S.") + f"{d.microsecond // 1000:03d}Z"


def to_plain(value: Any, relaxed: bool = True) -> Any:
    """The value as plain JSON-compatible data in (relaxed) Extended JSON v2."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, Int64):
        return int(value) if relaxed else {"$numberLong": str(int(value))}
    if isinstance(value, int):
        if relaxed:
            return value
        return {"$numberInt": str(value)} if INT32_MIN <= value <= INT32_MAX else {"$numberLong": str(value)}
    if isinstance(value, float):
        if math.isnan(value):
            return {"$numberDouble": "NaN"}
        if math.isinf(value):
            return {"$numberDouble": "Infinity" if value > 0 else "-Infinity"}
        return value if relaxed else {"$numberDouble": repr(value)}
    if isinstance(value, decimal.Decimal):
        return {"$numberDecimal": str(value)}
    if isinstance(value, _dt.datetime):
        if relaxed and 1970 <= value.year <= 9999:
            return {"$date": format_date(value)}
        return {"$date": {"$numberLong": str(datetime_to_millis(value))}}
    if isinstance(value, _dt.date):
        return to_plain(_dt.datetime(value.year, value.month, value.day, tzinfo=UTC), relaxed)
    if isinstance(value, ObjectId):
        return {"$oid": str(value)}
    if isinstance(value, (bytes, bytearray)):
        return {"$binary": {"base64": base64.b64encode(bytes(value)).decode(),
                            "subType": f"{getattr(value, 'subtype', 0):02x}"}}
    if isinstance(value, Timestamp):
        return {"$timestamp": {"t": value.t, "i": value.i}}
    if value is MINKEY:
        return {"$minKey": 1}
    if value is MAXKEY:
        return {"$maxKey": 1}
    if isinstance(value, dict):
        return {str(k): to_plain(v, relaxed) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_plain(v, relaxed) for v in value]
    raise TypeError(f"cannot represent {type(value).__name__} in Extended JSON")


def _relaxed_default(value: Any) -> Any:
    return to_plain(value, True)


def dumps(value: Any, relaxed: bool = True, **kwargs: Any) -> str:
    """Relaxed (default) or canonical Extended JSON v2 text, one line.

    Relaxed text without options is written by ``json``'s C encoder directly, calling
    :func:`to_plain` only for the values JSON has no form for (dates, ObjectIds, decimals,
    bytes...): the same text as converting the whole value first, in about 60% of the time. A
    NaN or infinity (``{"$numberDouble": ...}``) takes the general path."""
    if relaxed and not kwargs:
        try:
            return json.dumps(value, default=_relaxed_default, allow_nan=False, separators=(",", ":"),
                              ensure_ascii=False)
        except ValueError:
            pass
    kwargs.setdefault("separators", (",", ":"))
    kwargs.setdefault("ensure_ascii", False)
    return json.dumps(to_plain(value, relaxed), **kwargs)
