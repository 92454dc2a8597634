"""Kafka messages written by ``$emit`` with a ``config``: the key (``config.key`` serialized as
``config.keyFormat``) and the headers (``config.headers``) of one message, from the values the
sink stage evaluated for its document (:mod:`headrace.spark.runtime.targets`). Pure Python."""
from __future__ import annotations

from typing import Any, Mapping

from .. import ejson

_INT_RANGE = {"int": (4, -2**31, 2**31 - 1), "long": (8, -2**63, 2**63 - 1)}


def _what(v: Any) -> str:
    return "missing" if v is None else f"{type(v).__name__} {ejson.dumps(v)}"


def encode_key(v: Any, key_format: str, relaxed: bool = True) -> bytes | None:
    """A message key from the evaluated ``config.key`` as ``keyFormat`` says: ``binData`` (the
    bytes of a binData value), ``string`` (UTF-8), ``json`` (Extended JSON text of any value),
    ``int``/``long`` (4/8-byte big-endian two's complement of an integral number). Missing or
    null gives no key; a value of another type raises ``ValueError`` naming both."""
    if v is None:
        return None
    if key_format == "json":
        return ejson.dumps(v, relaxed=relaxed).encode()
    if key_format == "binData" and isinstance(v, (bytes, bytearray)):
        return bytes(v)
    if key_format == "string" and isinstance(v, str):
        return v.encode()
    if key_format in _INT_RANGE and isinstance(v, (int, float)) and not isinstance(v, bool) and float(v).is_integer():
        size, lo, hi = _INT_RANGE[key_format]
        if lo <= int(v) <= hi:
            return int(v).to_bytes(size, "big", signed=True)
    want = {"int": "an int", "long": "a long", "binData": "a binData", "string": "a string"}[key_format]
    raise ValueError(f"$emit config.key: keyFormat {key_format!r} needs {want} value, found {_what(v)}")


def header_value(v: Any) -> bytes | None:
    """A header's bytes: a string in UTF-8, binData as is, null as no value, anything else as its
    relaxed Extended JSON text."""
    if v is None:
        return None
    if isinstance(v, str):
        return v.encode()
    if isinstance(v, (bytes, bytearray)):
        return bytes(v)
    return ejson.dumps(v).encode()


def encode_headers(v: Any) -> list[tuple[str, bytes | None]]:
    """Headers from the evaluated ``config.headers``: a document (a header per field, in order)
    or an array of ``{k: <string>, v: <value>}`` documents; missing gives none."""
    if v is None:
        return []
    if isinstance(v, dict):
        return [(k, header_value(x)) for k, x in v.items()]
    if isinstance(v, list) and all(isinstance(e, dict) and set(e) <= {"k", "v"} and isinstance(e.get("k"), str)
                                   for e in v):
        return [(e["k"], header_value(e.get("v"))) for e in v]
    raise ValueError("$emit config.headers must evaluate to a document or an array of {k: <string>, v: <value>} "
                     f"documents, found {_what(v)}")


def message_of(extra: Mapping[str, Any], config: Any) -> tuple[bytes | None, list]:
    """The key and headers of one message (see :func:`encode_key`, :func:`encode_headers`)."""
    if config is None:
        return None, []
    relaxed = config.output_format != "canonicalJson"
    key = encode_key(extra.get("key"), config.key_format, relaxed) if config.key is not None else None
    return key, encode_headers(extra.get("headers")) if config.headers is not None else []


def decode_key(b: bytes | None, key_format: str) -> Any:
    """A message key read as ``keyFormat`` says (the inverse of :func:`encode_key`); ``None`` for
    no key. Raises ``ValueError`` when the bytes are not of that format."""
    if b is None:
        return None
    if key_format == "binData":
        return bytes(b)
    if key_format in _INT_RANGE:
        size = _INT_RANGE[key_format][0]
        if len(b) != size:
            raise ValueError(f"keyFormat {key_format!r}: a key of {len(b)} byte(s), expected {size}")
        v = int.from_bytes(b, "big", signed=True)
        return ejson.Int64(v) if key_format == "long" else v
    try:
        text = bytes(b).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"keyFormat {key_format!r}: the key is not UTF-8 ({exc.reason})") from None
    if key_format == "string":
        return text
    try:
        return ejson.loads(text)
    except ValueError as exc:
        raise ValueError(f"keyFormat 'json': the key is not JSON ({exc})") from None


def decode_headers(headers: Any) -> list[dict]:
    """A message's headers as an array of ``{k, v}`` documents, in order: ``v`` is the value as a
    string when it is UTF-8, else binData, and null for a header without a value."""
    out = []
    for k, v in headers or []:
        if v is not None:
            try:
                v = bytes(v).decode("utf-8")
            except UnicodeDecodeError:
                v = bytes(v)
        out.append({"k": k, "v": v})
    return out


def message_fields(raw: str | None, key: bytes | None, headers: Any, fields: Mapping[str, str]) -> tuple[Any, Any]:
    """The document of a consumed message whose key and headers go into fields (``$source.config``
    ``keyField``, ``keyFormat``, ``keyFormatError``, ``headersField``): ``(document, None)``, or
    ``(None, reason)`` for the DLQ (not a JSON object; a key not of ``keyFormat`` unless
    ``keyFormatError`` is ``passThrough``, which leaves the key field out)."""
    if raw is None:
        return None, "empty input record"
    try:
        doc = ejson.loads(raw)
    except ValueError as exc:
        return None, f"Input is not valid JSON: {exc}"
    if not isinstance(doc, dict):
        return None, f"Input is not a JSON object (found {type(doc).__name__})"
    if fields.get("keyField"):
        try:
            k = decode_key(key, fields.get("keyFormat", "binData"))
            if k is not None:
                doc[fields["keyField"]] = k
        except ValueError as exc:
            if fields.get("keyFormatError", "dlq") != "passThrough":
                return None, f"$source config.keyFormat: {exc}"
    if fields.get("headersField"):
        doc[fields["headersField"]] = decode_headers(headers)
    return doc, None
