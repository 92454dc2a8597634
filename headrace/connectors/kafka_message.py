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
