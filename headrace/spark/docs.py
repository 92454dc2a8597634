"""Documents as Spark VARIANT values, keeping BSON types.

Encoding of the ``headrace.ejson`` value model in VARIANT:
- null, bool, str, double (``float``), decimal (``Decimal``, i.e. ``$numberDecimal`` only):
  the VARIANT primitives of the same kind; ``int`` -> the smallest VARIANT integer,
  :class:`~headrace.ejson.Int64` -> INT8.
- ``datetime`` -> TIMESTAMP (UTC microseconds); ``bytes`` -> BINARY.
- ``ObjectId`` -> the object ``{"$oid": "<hex>"}``; MinKey/MaxKey -> ``{"$minKey": 1}`` /
  ``{"$maxKey": 1}``; :class:`~headrace.ejson.Timestamp` -> ``{"$timestamp": {"i": I, "t": T}}``;
  :class:`~headrace.ejson.Binary` (binData of a subtype other than 0) -> ``{"$binary": {"data":
  BINARY, "subType": N}}``. :func:`from_variant` turns them back into the Python types.
- Objects keep their fields but VARIANT stores them sorted by name; :func:`from_variant` gives them
  in that order, and the sink puts them back in MongoDB's (:mod:`headrace.mql.field_order`).
"""
from __future__ import annotations

import datetime as _dt
import decimal
import json
import re
import struct
from typing import Any

from pyspark.sql.types import VariantVal
from pyspark.sql.variant_utils import FieldEntry, VariantBuilder, VariantUtils

from .. import ejson

_TS = bytes([(VariantUtils.TIMESTAMP << 2) | VariantUtils.PRIMITIVE])
_BIN = bytes([(VariantUtils.BINARY << 2) | VariantUtils.PRIMITIVE])
_I8 = bytes([(VariantUtils.INT8 << 2) | VariantUtils.PRIMITIVE])


class _Builder(VariantBuilder):
    def _process_parsed_json(self, parsed: Any) -> None:  # noqa: C901 - one dispatch
        t = type(parsed)
        if t is dict:
            fields = []
            start = len(self.value)
            for key, value in parsed.items():
                fid = self._add_key(key)
                fields.append(FieldEntry(key, fid, len(self.value) - start))
                self._process_parsed_json(value)
            self._finish_writing_object(start, fields)
        elif t is list or t is tuple:
            offsets = []
            start = len(self.value)
            for elem in parsed:
                offsets.append(len(self.value) - start)
                self._process_parsed_json(elem)
            self._finish_writing_array(start, offsets)
        elif t is str:
            self._append_string(parsed)
        elif t is bool:
            self._append_boolean(parsed)
        elif t is int:
            if not self._append_int(parsed):
                self._append_float(float(parsed))
        elif t is float:
            self._append_float(parsed)
        elif parsed is None:
            self._append_null()
        elif t is ejson.Int64:
            self._check_capacity(9)
            self.value.extend(_I8)
            self.value.extend(int(parsed).to_bytes(8, "little", signed=True))
        elif t is _dt.datetime:
            d = parsed if parsed.tzinfo else parsed.replace(tzinfo=ejson.UTC)
            delta = d - ejson.EPOCH
            micros = (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
            self._check_capacity(9)
            self.value.extend(_TS)
            self.value.extend(micros.to_bytes(8, "little", signed=True))
        elif t is decimal.Decimal:
            if variant_holds(parsed):
                self._append_decimal(parsed)
            else:       # 2.50, 2E+2, out of VARIANT decimal range: Spark would not read it back as it is
                self._process_parsed_json({"$numberDecimal": str(parsed)})
        elif t is ejson.ObjectId:
            self._process_parsed_json({"$oid": str(parsed)})
        elif parsed is ejson.MINKEY:
            self._process_parsed_json({"$minKey": 1})
        elif parsed is ejson.MAXKEY:
            self._process_parsed_json({"$maxKey": 1})
        elif t is ejson.Timestamp:
            self._process_parsed_json({"$timestamp": {"t": parsed.t, "i": parsed.i}})
        elif t is ejson.Binary:
            self._process_parsed_json({"$binary": {"data": bytes(parsed), "subType": parsed.subtype}})
        elif t is bytes or t is bytearray:
            self._check_capacity(5 + len(parsed))
            self.value.extend(_BIN)
            self.value.extend(len(parsed).to_bytes(4, "little"))
            self.value.extend(parsed)
        elif isinstance(parsed, dict):
            self._process_parsed_json(dict(parsed))
        elif isinstance(parsed, int):
            self._process_parsed_json(int(parsed))
        else:
            raise ValueError(f"cannot store a {t.__name__} in a document")

    def build_value(self, value: Any) -> tuple[bytes, bytes]:
        """Like ``build`` but from a Python value instead of JSON text."""
        self._process_parsed_json(value)
        keys = self.dictionary_keys
        offset_size = self._get_integer_size(max(sum(len(k) for k in keys), len(keys)))
        meta = bytearray([VariantUtils.VERSION | ((offset_size - 1) << 6)])
        meta += len(keys).to_bytes(offset_size, "little")
        pos = 0
        for k in keys:
            meta += pos.to_bytes(offset_size, "little")
            pos += len(k)
        meta += pos.to_bytes(offset_size, "little")
        for k in keys:
            meta += k
        return bytes(self.value), bytes(meta)


def to_variant(value: Any) -> VariantVal:
    """A Python value (``headrace.ejson`` model) as a VariantVal."""
    v, m = _Builder().build_value(value)
    return VariantVal(v, m)


def parse_text(text: "str | bytes | None") -> tuple[VariantVal | None, str | None]:
    """Parse one input record's text as Extended JSON into a document.

    Returns ``(variant, None)``, or ``(None, reason)`` when the text is not valid JSON or is
    not a JSON object (a document must be an object).
    """
    if text is None:
        return None, "empty input record"
    try:
        value = ejson.loads(text)
    except ejson.EJSONError as exc:
        return None, f"Input is not valid JSON: {exc}"
    if not isinstance(value, dict):
        return None, f"Input is not a JSON object (found {type(value).__name__})"
    try:
        return to_variant(value), None
    except (ValueError, OverflowError) as exc:
        return None, f"Input cannot be stored: {exc}"


def from_variant(v: "VariantVal | None") -> Any:
    """A VariantVal back to the ``headrace.ejson`` value model (``None`` for SQL NULL)."""
    if v is None:
        return None
    return decode(v.value, v.metadata)


def from_variant_slow(v: "VariantVal | None") -> Any:
    """:func:`from_variant` through pyspark's generic ``toPython`` (the reference :func:`decode`
    is tested against)."""
    if v is None:
        return None
    return _restore(v.toPython())


# ---------------------------------------------------------------- a fast VARIANT decoder
# pyspark's ``VariantVal.toPython`` is generic and checks every index (about 150 µs for a small
# document); this reads the same binary format (Spark's common/variant README) directly and
# returns what ``_restore(toPython())`` returns, in the same key order (the stored one).

_S1, _S2, _S4, _S8 = struct.Struct("<b"), struct.Struct("<h"), struct.Struct("<i"), struct.Struct("<q")
_SD, _SF = struct.Struct("<d"), struct.Struct("<f")
_UTC_ZONE = None
_KEYS_CACHE: dict[bytes, list[str]] = {}


def variant_holds(d: decimal.Decimal) -> bool:
    """Whether a VARIANT decimal keeps decimal ``d`` as Spark reads it back: an integer at
    exponent 0 or a fraction whose last digit is not 0, of at most 38 digits at a scale up to 38.
    Spark drops a VARIANT decimal's trailing zeros when it reads one (``2.50`` as ``2.5``), so
    any other decimal (``2.50``, ``2E+2``, ``0.00``, ``-0``) goes in as a ``{"$numberDecimal"}``
    wrapper of its text (as :func:`headrace.spark.expr.decimal_variant.to_variant` writes it)."""
    if not d.is_finite():
        return False
    sign, digits, exp = d.as_tuple()
    if exp == 0:
        return len(digits) <= 38 and not (sign and not any(digits))
    return exp < 0 and digits[-1] != 0 and len(digits) <= 38 and -exp <= 38


_WIDE = decimal.Context(prec=100)


def _keys(metadata: bytes) -> list[str]:
    if type(metadata) is not bytes:
        metadata = bytes(metadata)
    keys = _KEYS_CACHE.get(metadata)
    if keys is None:
        osz = ((metadata[0] >> 6) & 3) + 1
        n = int.from_bytes(metadata[1:1 + osz], "little")
        offs = [int.from_bytes(metadata[1 + (i + 1) * osz:1 + (i + 2) * osz], "little") for i in range(n + 1)]
        start = 1 + (n + 2) * osz
        keys = [metadata[start + offs[i]:start + offs[i + 1]].decode("utf-8") for i in range(n)]
        if len(_KEYS_CACHE) > 4096:
            _KEYS_CACHE.clear()
        _KEYS_CACHE[metadata] = keys
    return keys


def decode(value: bytes, metadata: bytes) -> Any:
    """A VARIANT's ``(value, metadata)`` bytes as a ``headrace.ejson`` value."""
    return _dec(value, _keys(metadata), 0)


def _uint(b: bytes, pos: int, size: int) -> int:
    if size == 1:
        return b[pos]
    return int.from_bytes(b[pos:pos + size], "little")


def _dec(b: bytes, keys: list[str], pos: int) -> Any:  # noqa: C901 - one dispatch
    h = b[pos]
    basic, info = h & 3, h >> 2
    if basic == 1:                                   # short string
        return b[pos + 1:pos + 1 + info].decode("utf-8")
    if basic == 2:                                   # object
        large = (info >> 4) & 1
        nsz = 4 if large else 1
        n = _uint(b, pos + 1, nsz)
        idsz, osz = ((info >> 2) & 3) + 1, (info & 3) + 1
        ids = pos + 1 + nsz
        offs = ids + n * idsz
        data = offs + (n + 1) * osz
        out = {}
        for i in range(n):
            out[keys[_uint(b, ids + i * idsz, idsz)]] = _dec(b, keys, data + _uint(b, offs + i * osz, osz))
        if n == 1:
            return _restore_object(out)
        return out
    if basic == 3:                                   # array
        nsz = 4 if (info >> 2) & 1 else 1
        n = _uint(b, pos + 1, nsz)
        osz = (info & 3) + 1
        offs = pos + 1 + nsz
        data = offs + (n + 1) * osz
        return [_dec(b, keys, data + _uint(b, offs + i * osz, osz)) for i in range(n)]
    if info == VariantUtils.INT1:
        return _S1.unpack_from(b, pos + 1)[0]
    if info == VariantUtils.INT2:
        return _S2.unpack_from(b, pos + 1)[0]
    if info == VariantUtils.INT4:
        return _S4.unpack_from(b, pos + 1)[0]
    if info == VariantUtils.INT8:
        return _S8.unpack_from(b, pos + 1)[0]
    if info == VariantUtils.DOUBLE:
        return _SD.unpack_from(b, pos + 1)[0]
    if info == VariantUtils.NULL:
        return None
    if info == VariantUtils.TRUE:
        return True
    if info == VariantUtils.FALSE:
        return False
    if info == VariantUtils.LONG_STR:
        n = int.from_bytes(b[pos + 1:pos + 5], "little")
        return b[pos + 5:pos + 5 + n].decode("utf-8")
    if info == VariantUtils.TIMESTAMP:
        global _UTC_ZONE
        if _UTC_ZONE is None:
            from zoneinfo import ZoneInfo

            _UTC_ZONE = ZoneInfo("UTC")
        micros = _S8.unpack_from(b, pos + 1)[0]
        return (VariantUtils.EPOCH + _dt.timedelta(microseconds=micros)).astimezone(_UTC_ZONE)
    if info == VariantUtils.TIMESTAMP_NTZ:
        micros = _S8.unpack_from(b, pos + 1)[0]
        return (VariantUtils.EPOCH_NTZ + _dt.timedelta(microseconds=micros)).replace(tzinfo=ejson.UTC)
    if info == VariantUtils.FLOAT:
        return _SF.unpack_from(b, pos + 1)[0]
    if info in (VariantUtils.DECIMAL4, VariantUtils.DECIMAL8, VariantUtils.DECIMAL16):
        scale = b[pos + 1]
        size = {VariantUtils.DECIMAL4: 4, VariantUtils.DECIMAL8: 8}.get(info, 16)
        unscaled = int.from_bytes(b[pos + 2:pos + 2 + size], "little", signed=True)
        return decimal.Decimal(unscaled).scaleb(-scale, _WIDE)      # exact: 38 digits exceed the default 28
    if info == VariantUtils.DATE:
        days = _S4.unpack_from(b, pos + 1)[0]
        return _dt.date.fromordinal(VariantUtils.EPOCH.toordinal() + days)
    if info == VariantUtils.BINARY:
        n = int.from_bytes(b[pos + 1:pos + 5], "little")
        return bytes(b[pos + 5:pos + 5 + n])
    raise ValueError(f"unsupported VARIANT type {info}")


def _restore_object(x: dict) -> Any:
    """The one-field objects that stand for BSON types (see the module docstring)."""
    (k, val), = x.items()
    if k == "$oid" and isinstance(val, str):
        try:
            return ejson.ObjectId(val)
        except ValueError:
            return x
    if k == "$minKey":
        return ejson.MINKEY
    if k == "$maxKey":
        return ejson.MAXKEY
    if k == "$numberDecimal" and isinstance(val, str):
        return decimal.Decimal(val)
    if k == "$timestamp" and type(val) is dict and len(val) == 2:
        try:
            return ejson.Timestamp(val["t"], val["i"])
        except (KeyError, TypeError, ValueError):
            return x
    if k == "$binary" and type(val) is dict and len(val) == 2 and isinstance(val.get("data"), bytes):
        try:
            return ejson.binary(val["data"], val["subType"])
        except (KeyError, TypeError, ValueError):
            return x
    return x


def _restore(x: Any) -> Any:
    if isinstance(x, dict):
        out = {k: _restore(val) for k, val in x.items()}
        return _restore_object(out) if len(out) == 1 else out
    if isinstance(x, list):
        return [_restore(e) for e in x]
    if isinstance(x, _dt.datetime):
        return x if x.tzinfo else x.replace(tzinfo=ejson.UTC)
    if isinstance(x, bytearray):
        return bytes(x)
    return x


# Text the JVM cannot read as MQL would: Extended JSON wrappers ("$date"...), NaN/Infinity,
# integers too long for 64 bits (parse_json would make them decimals).
NEEDS_PYTHON = re.compile(r'"\$|NaN|Infinity|\d{19}')


def parse_in_reader(text: "str | bytes | None") -> tuple[VariantVal | None, str | None]:
    """What a source reader yields for one record's text: ``(None, None)`` when the JVM parses it
    (plain JSON: :mod:`headrace.spark.runtime.parse`), else :func:`parse_text`'s answer."""
    if text is None:
        return parse_text(text)
    s = text if isinstance(text, str) else text.decode("utf-8", "replace")
    if NEEDS_PYTHON.search(s) is None:
        return None, None
    return parse_text(text)


def parse_error(text: "str | bytes | None") -> str:
    """The reason a record's text is not a document (for a DLQ entry)."""
    return parse_text(text)[1] or "Input is not valid JSON"
