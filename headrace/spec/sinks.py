"""Sink parsing: ``$merge`` into a collection, and ``$emit`` to a collection, a JSON-lines
file, a Kafka topic (with its ``config``: key, key format, headers, output format) or a Redis
stream. A sink's database, collection, topic or stream may be an expression per document.
"""
from __future__ import annotations

from typing import Any

from ..errors import NotSupportedYet
from . import defaults
from .checks import _Ctx, _expression, _keys, _obj, _str
from .model import EmitSpec, KafkaEmitConfig, MergeIntoSpec, is_dynamic
from .source import KEY_FORMATS


def parse_merge(arg: Any, c: _Ctx) -> MergeIntoSpec:
    d = _obj(arg, c)
    _keys(d, ("into", "on", "whenMatched", "whenNotMatched", "parallelism"), c)
    if "into" not in d:
        raise c.err("MISSING_OPTION", "needs 'into'", "into", expected="{connectionName, db, coll}", found=d)
    into = _obj(d["into"], c, "into")
    _keys(into, ("connectionName", "db", "coll"), c, "into")
    for k in ("connectionName", "db", "coll"):
        if k not in into:
            raise c.err("MISSING_OPTION", f"'into' needs '{k}'", "into", k, expected="a string", found=into)
    conn = _str(into["connectionName"], c, "into", "connectionName")
    for k in ("db", "coll"):
        _target(into[k], c, "into", k)
    on = d.get("on", list(defaults.MERGE_ON))
    on_t = (on,) if isinstance(on, str) else tuple(on) if isinstance(on, list) else None
    if not on_t or not all(isinstance(x, str) and x for x in on_t):
        raise c.err("TYPE_MISMATCH", "must be a field name or an array of field names", "on",
                    expected="a string or array of strings", found=on)
    wm = d.get("whenMatched", defaults.MERGE_WHEN_MATCHED)
    if isinstance(wm, list):
        raise NotSupportedYet("OPTION_NOT_SUPPORTED_YET", "a whenMatched pipeline is not supported yet",
                              position=c.pos, stage=c.stage, path=c.path("whenMatched"))
    else:
        _str(wm, c, "whenMatched", allowed=("replace", "keepExisting", "merge", "delete", "fail"))
    wnm = _str(d.get("whenNotMatched", defaults.MERGE_WHEN_NOT_MATCHED), c, "whenNotMatched",
               allowed=("insert", "discard", "fail"))
    return MergeIntoSpec(c.pos, conn, into["db"], into["coll"], on_t, wm, wnm)


def _target(v: Any, c: _Ctx, *path: Any) -> Any:
    """A sink's database, collection, topic or stream: a name, or an expression evaluated per
    document (a document, or a ``"$field"`` path) that must give a non-empty string."""
    if is_dynamic(v):
        _expression(v, c, *path)
        return v
    return _str(v, c, *path)


OUTPUT_FORMATS = ("relaxedJson", "canonicalJson")


def _kafka_config(v: Any, c: _Ctx) -> KafkaEmitConfig:
    d = _obj(v, c, "config")
    _keys(d, ("key", "keyFormat", "headers", "outputFormat"), c, "config",
          not_yet=("acks", "compression_type", "dateFormat", "tombstoneWhen"))
    for k in ("key", "headers"):
        if k in d:
            _expression(d[k], c, "config", k)
    if "keyFormat" in d and "key" not in d:
        raise c.err("MISSING_OPTION", "'config.keyFormat' needs 'config.key'", "config", "key",
                    expected="an expression", found=sorted(d))
    return KafkaEmitConfig(
        key=d.get("key"),
        key_format=_str(d.get("keyFormat", defaults.KAFKA_KEY_FORMAT), c, "config", "keyFormat", allowed=KEY_FORMATS),
        headers=d.get("headers"),
        output_format=_str(d.get("outputFormat", defaults.KAFKA_OUTPUT_FORMAT), c, "config", "outputFormat",
                           allowed=OUTPUT_FORMATS))


def parse_emit(arg: Any, c: _Ctx) -> EmitSpec:
    d = _obj(arg, c)
    _keys(d, ("connectionName", "db", "coll", "path", "topic", "stream", "config"), c, not_yet=("timeseries",))
    for k in ("topic", "stream"):   # Kafka topic / Redis stream: written as the collection ``coll``
        if k in d:
            shape = {k, "connectionName"} | ({"config"} if k == "topic" else set())
            if set(d) - shape or "connectionName" not in d:
                raise c.err("EMIT_SHAPE", f"a '{k}' sink takes " + ", ".join(f"'{x}'" for x in sorted(shape))
                            + " only", found=sorted(d))
            config = _kafka_config(d["config"], c) if "config" in d else None
            return EmitSpec(c.pos, _str(d["connectionName"], c, "connectionName"), "", _target(d[k], c, k),
                            config=config)
    if "config" in d:
        raise c.err("EMIT_SHAPE", "'config' belongs to a Kafka sink ({connectionName, topic, config})", "config",
                    found=sorted(d))
    if "path" in d:
        if set(d) - {"path"}:
            raise c.err("EMIT_SHAPE", "a JSON-lines file sink takes only 'path'", found=sorted(d))
        return EmitSpec(c.pos, path=_str(d["path"], c, "path"))
    for k in ("connectionName", "db", "coll"):
        if k not in d:
            raise c.err("MISSING_OPTION", f"needs '{k}' (or 'path' for a JSON-lines file)", k, expected="a string",
                        found=sorted(d))
    return EmitSpec(c.pos, _str(d["connectionName"], c, "connectionName"), _str(d["db"], c, "db"),
                    _str(d["coll"], c, "coll"))
