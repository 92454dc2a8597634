"""Documents as Spark VARIANT values, keeping BSON types.

Encoding of the ``headrace.ejson`` value model in VARIANT:
- null, bool, str, double (``float``), decimal (``Decimal``, i.e. ``$numberDecimal`` only):
  the VARIANT primitives of the same kind; ``int`` -> the smallest VARIANT integer,
  :class:`~headrace.ejson.Int64` -> INT8.
- ``datetime`` -> TIMESTAMP (UTC microseconds); ``bytes`` -> BINARY.
- ``ObjectId`` -> the object ``{"$oid": "<hex>"}``; MinKey/MaxKey -> ``{"$minKey": 1}`` /
  ``{"$maxKey": 1}``. :func:`from_variant` turns them back into the Python types.
- Objects keep their fields but VARIANT stores them sorted by name, so field order is not kept.
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
            if parsed.is_finite():
                try:
                    self._append_decimal(parsed)
                    return
                except Exception:  # out of VARIANT decimal range
                    pass
            self._process_parsed_json({"$numberDecimal": str(parsed)})
        elif t is ejson.ObjectId:
            self._process_parsed_json({"$oid": str(parsed)})
        elif parsed is ejson.MINKEY:
            self._process_parsed_json({"$minKey": 1})
        elif parsed is ejson.MAXKEY:
            self._process_parsed_json({"$maxKey": 1})
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
    return _restore(v.toPython())


def _restore(x: Any) -> Any:
    if isinstance(x, dict):
        if len(x) == 1:
            (k, val), = x.items()
            if k == "$oid" and isinstance(val, str):
                try:
                    return ejson.ObjectId(val)
                except ValueError:
                    pass
            if k == "$minKey":
                return ejson.MINKEY
            if k == "$maxKey":
                return ejson.MAXKEY
            if k == "$numberDecimal" and isinstance(val, str):
                return decimal.Decimal(val)
        return {k: _restore(val) for k, val in x.items()}
    if isinstance(x, list):
        return [_restore(e) for e in x]
    if isinstance(x, _dt.datetime):
        return x if x.tzinfo else x.replace(tzinfo=ejson.UTC)
    if isinstance(x, bytearray):
        return bytes(x)
    return x


# Text the JVM cannot read as MQL would: Extended JSON wrappers ("$date"...), NaN/Infinity,
# integers too long for 64 bits (parse_json would make them decimals).
_NEEDS_PYTHON = re.compile(r'"\$|NaN|Infinity|\d{19}')


def parse_in_reader(text: "str | bytes | None") -> tuple[VariantVal | None, str | None]:
    """What a source reader yields for one record's text: ``(None, None)`` when the JVM parses it
    (plain JSON: :mod:`headrace.spark.runtime.parse`), else :func:`parse_text`'s answer."""
    if text is None:
        return parse_text(text)
    s = text if isinstance(text, str) else text.decode("utf-8", "replace")
    if _NEEDS_PYTHON.search(s) is None:
        return None, None
    return parse_text(text)


def parse_error(text: "str | bytes | None") -> str:
    """The reason a record's text is not a document (for a DLQ entry)."""
    return parse_text(text)[1] or "Input is not valid JSON"
