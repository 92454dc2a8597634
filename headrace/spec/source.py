"""``$source`` parsing: the connection or inline ``documents``, ``replay`` mode (arrival order
checked over the documents), ``timeField``, ``tsFieldName``, ``partitionIdleTimeout``, Kafka
topics and Redis streams, MongoDB ``db``/``coll``, the reader ``config`` and ``dedup``.
"""
from __future__ import annotations

from typing import Any

from .. import ejson
from . import defaults
from .checks import _Ctx, _expression, _keys, _obj, _str, parse_duration
from .model import DedupSpec, ReplaySpec, SourceSpec

SOURCE_KEYS = ("connectionName", "documents", "replay", "timeField", "tsFieldName", "partitionIdleTimeout", "stream",
               "config", "topic", "db", "coll", "dedup")
#: ``$source.config`` keys whose values are strings (Kafka and Redis readers), with allowed values if fixed
KEY_FORMATS = ("binData", "string", "json", "int", "long")     # Kafka message keys, both ways
SOURCE_STRING_CONFIG = {"auto_offset_reset": ("earliest", "latest"), "group_id": None, "startAt": None, "field": None,
                        "fullDocument": ("default", "updateLookup", "whenAvailable", "required"),
                        "keyField": None, "keyFormat": KEY_FORMATS, "keyFormatError": ("dlq", "passThrough"),
                        "headersField": None}
#: ``$source.config`` keys of MongoDB change streams with other values (checked by the reader's builder)
SOURCE_OTHER_CONFIG = ("pipeline", "startAtOperationTime")
SOURCE_NOT_SUPPORTED_YET = ("initialSync", "cursor", "fullDocument", "pipeline",
                            "partitionIdleTimeoutMs", "auto_offset_reset")


def parse_source(arg: Any, c: _Ctx) -> SourceSpec:
    d = _obj(arg, c)
    _keys(d, SOURCE_KEYS, c, not_yet=SOURCE_NOT_SUPPORTED_YET)
    has_conn, has_docs = "connectionName" in d, "documents" in d
    if has_conn == has_docs:
        raise c.err("SOURCE_SHAPE", "needs exactly one of 'connectionName' or 'documents'",
                    expected="connectionName or documents", found=sorted(d))
    conn = _str(d["connectionName"], c, "connectionName") if has_conn else None
    docs = None
    if has_docs:
        if not isinstance(d["documents"], list):
            raise c.err("TYPE_MISMATCH", "must be an array of documents", "documents", expected="an array",
                        found=d["documents"])
        docs = tuple(ejson.from_plain(x) for x in d["documents"])
    replay = None
    if "replay" in d:
        if not has_docs:
            raise c.err("SOURCE_SHAPE", "replay mode needs inline 'documents'", "replay")
        r = _obj(d["replay"], c, "replay")
        _keys(r, ("arrivalField", "partitionField", "partitions"), c, "replay")
        if "arrivalField" not in r:
            raise c.err("MISSING_OPTION", "replay needs 'arrivalField'", "replay", "arrivalField",
                        expected="a field name", found=r)
        parts = None
        if "partitions" in r:
            if not isinstance(r["partitions"], list) or not r["partitions"] or \
                    not all(isinstance(p, str) and p for p in r["partitions"]):
                raise c.err("TYPE_MISMATCH", "must be a non-empty array of partition names", "replay", "partitions",
                            expected="an array of strings", found=r["partitions"])
            if len(set(r["partitions"])) != len(r["partitions"]):
                raise c.err("BAD_VALUE", "partition names repeat", "replay", "partitions", found=r["partitions"])
            parts = tuple(r["partitions"])
        pf = _str(r["partitionField"], c, "replay", "partitionField") if "partitionField" in r else None
        replay = ReplaySpec(_str(r["arrivalField"], c, "replay", "arrivalField"), pf, parts)
        _check_replay_docs(docs or (), replay, c)
    elif docs is not None:
        for i, doc in enumerate(docs):
            if not isinstance(doc, dict):
                raise c.err("TYPE_MISMATCH", "every document must be an object", "documents", i,
                            expected="an object", found=doc)
    tf = d.get("timeField")
    if "timeField" in d:
        _expression(tf, c, "timeField")
    tsn = _str(d["tsFieldName"], c, "tsFieldName") if "tsFieldName" in d else defaults.TS_FIELD_NAME
    pit = parse_duration(d["partitionIdleTimeout"], c, "partitionIdleTimeout") if "partitionIdleTimeout" in d else None
    streams = _names(d["stream"], c, "stream") if "stream" in d else None
    topics = _names(d["topic"], c, "topic") if "topic" in d else None
    config = _obj(d.get("config", {}), c, "config")
    _keys(config, ("rate", "devices", "seed", "maxRecordsPerBatch", "maxBytesPerBatch", "parallelism", "backlog",
                   *SOURCE_STRING_CONFIG, *SOURCE_OTHER_CONFIG), c, "config")
    for k, v in config.items():
        if k == "pipeline" and not (isinstance(v, list) and all(isinstance(x, dict) for x in v)):
            raise c.err("TYPE_MISMATCH", "must be an array of change stream stages", "config", k,
                        expected="an array of objects", found=v)
        if k in SOURCE_OTHER_CONFIG:
            continue
        if k in SOURCE_STRING_CONFIG:
            _str(v, c, "config", k, allowed=SOURCE_STRING_CONFIG[k])
        elif not isinstance(v, (int, float)) or isinstance(v, bool) or v <= 0:
            raise c.err("BAD_VALUE", "must be a positive number", "config", k, expected="a number > 0", found=v)
    stream = streams[0] if streams and isinstance(d["stream"], str) else None
    db = _str(d["db"], c, "db") if "db" in d else None
    coll = _str(d["coll"], c, "coll") if "coll" in d else None
    if coll and not db:
        raise c.err("MISSING_OPTION", "'coll' needs 'db'", "db", expected="a database name", found=sorted(d))
    dedup = parse_dedup(d["dedup"], c) if "dedup" in d else None
    return SourceSpec(conn, docs, replay, tf, tsn, pit, stream, dict(config), topics, streams, db, coll, dedup)


def _names(v: Any, c: _Ctx, key: str) -> tuple[str, ...]:
    """A name or a non-empty array of distinct names (Kafka topics, Redis streams)."""
    vals = v if isinstance(v, list) else [v]
    if not vals:
        raise c.err("TYPE_MISMATCH", "must be a name or a non-empty array of names", key,
                    expected="a string or an array of strings", found=v)
    out = tuple(_str(x, c, key) for x in vals)
    if len(set(out)) != len(out):
        raise c.err("BAD_VALUE", "names repeat", key, found=v)
    return out


DEDUP_FORM = '{"idField": <expression, e.g. "$msgId">, "horizon": {"size": <int>, "unit": <unit>}}'


def parse_dedup(v: Any, c: _Ctx) -> DedupSpec:
    """``$source.dedup: {idField, horizon}``. Codes: ``TYPE_MISMATCH`` (not an object),
    ``UNKNOWN_OPTION``, ``MISSING_OPTION``, ``DEDUP_ID_CONSTANT`` (an ``idField`` that is the same
    for every record, such as ``"msgId"`` without ``$``), the expression's own codes, the
    duration's codes, ``DEDUP_HORIZON_RANGE`` (a horizon outside [1 second, 30 days])."""
    from ..mql.expressions import is_constant

    d = _obj(v, c, "dedup", what=DEDUP_FORM)
    _keys(d, ("idField", "horizon"), c, "dedup")
    for k in ("idField", "horizon"):
        if k not in d:
            raise c.err("MISSING_OPTION", f"dedup needs '{k}'", "dedup", k, expected=DEDUP_FORM, found=d)
    idf = d["idField"]
    _expression(idf, c, "dedup", "idField")
    if is_constant(idf):
        hint = f" (a field path starts with '$': \"${idf}\")" if isinstance(idf, str) else ""
        raise c.err("DEDUP_ID_CONSTANT", "idField is the same for every record" + hint, "dedup", "idField",
                    expected="an expression over the record, e.g. \"$msgId\"", found=idf)
    h = parse_duration(d["horizon"], c, "dedup", "horizon")
    if not defaults.DEDUP_MIN_HORIZON_MS <= h.ms <= defaults.DEDUP_MAX_HORIZON_MS:
        raise c.err("DEDUP_HORIZON_RANGE", "horizon out of range", "dedup", "horizon",
                    expected="between 1 second and 30 days", found={"size": h.size, "unit": h.unit})
    return DedupSpec(idf, h)


def _check_replay_docs(docs: tuple, r: ReplaySpec, c: _Ctx) -> None:
    prev = None
    for i, doc in enumerate(docs):
        if not isinstance(doc, dict):
            raise c.err("TYPE_MISMATCH", "every document must be an object", "documents", i, expected="an object",
                        found=doc)
        if r.arrival_field not in doc:
            raise c.err("REPLAY_ARRIVAL", f"document has no arrival field '{r.arrival_field}'", "documents", i,
                        expected=f"a date in '{r.arrival_field}'", found=doc)
        a = doc[r.arrival_field]
        try:
            when = a if hasattr(a, "tzinfo") else ejson.parse_iso(a) if isinstance(a, str) else None
        except ejson.EJSONError:
            when = None
        if when is None:
            raise c.err("REPLAY_ARRIVAL", "arrival must be a date or ISO-8601 string", "documents", i,
                        r.arrival_field, expected="a date", found=ejson.to_plain(a))
        if prev is not None and when < prev:
            raise c.err("REPLAY_ORDER", "arrival instants must not decrease in array order", "documents", i,
                        r.arrival_field, expected=f">= {ejson.format_date(prev)}", found=ejson.format_date(when))
        prev = when
        if r.partition_field:
            p = doc.get(r.partition_field)
            if r.partition_field in doc and (not isinstance(p, str) or (r.partitions and p not in r.partitions)):
                raise c.err("REPLAY_PARTITION", "unknown partition", "documents", i, r.partition_field,
                            expected="one of " + ", ".join(r.partitions or ()) if r.partitions else "a string",
                            found=p)
