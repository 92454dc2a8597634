"""Parse a pipeline document into :class:`~headrace.spec.model.Pipeline`, validating everything.

Shape rules (spec section 1): ``$source`` first and once; then stateless stages; at most one
window stage; one sink last (``$merge`` or ``$emit``), optional in ephemeral runs. ``$group``,
``$sort``, ``$limit`` and ``$count`` only inside a window's ``pipeline``.
"""
from __future__ import annotations

import decimal
import json
from pathlib import Path
from typing import Any, Callable

from .. import ejson
from ..errors import NotSupportedYet, PipelineError
from . import defaults
from .model import (UNIT_MS, DedupSpec, DlqSpec, Duration, EmitSpec, KafkaEmitConfig, MergeIntoSpec, Options, Pipeline,
                    ReplaySpec, SourceSpec, Stage, WindowSpec, is_dynamic)
from .stages import spec_of

STATELESS = ("$validate", "$match", "$project", "$addFields", "$set", "$unset", "$replaceRoot", "$replaceWith",
             "$unwind")
WINDOWS = {"$tumblingWindow": "tumbling", "$hoppingWindow": "hopping", "$sessionWindow": "session"}
WINDOW_ONLY = ("$group", "$sort", "$limit", "$count")
SINKS = ("$merge", "$emit")
NOT_SUPPORTED_YET_STAGES = ("$lookup", "$https", "$setStreamMeta", "$throttle", "$facet", "$bucket", "$bucketAuto",
                            "$graphLookup", "$sample", "$out", "$geoNear", "$densify", "$fill", "$redact",
                            "$sortByCount", "$unionWith", "$changeStream", "$search", "$searchMeta",
                            "$externalFunction", "$cachedLookup", "$documents", "$indexStats", "$collStats",
                            "$setWindowFields", "$skip", "$listSessions", "$currentOp", "$planCacheStats")
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


def _err(code: str, msg: str, pos: int | None, stage: str | None, path: str | None,
         expected: str | None = None, found: Any = ...) -> PipelineError:
    return PipelineError(code, msg, position=pos, stage=stage, path=path, expected=expected, found=found)


class _Ctx:
    """Where we are while parsing: stage position, stage name, path prefix."""

    def __init__(self, pos: int, stage: str, prefix: str = ""):
        self.pos, self.stage, self.prefix = pos, stage, prefix

    def path(self, *parts: Any) -> str:
        items = [self.prefix] if self.prefix else []
        items += [str(p) for p in parts if p != ""]
        return ".".join(items)

    def err(self, code: str, msg: str, *parts: Any, expected: str | None = None, found: Any = ...) -> PipelineError:
        return _err(code, msg, self.pos, self.stage, self.path(*parts) or None, expected, found)

    def wrap(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Run a validator from ``headrace.mql``, placing its error at this stage."""
        try:
            return fn(*args)
        except PipelineError as e:
            raise e.at(self.pos, self.stage)

    def sub(self, key: str) -> "_Ctx":
        return _Ctx(self.pos, self.stage, self.path(key))


def _type_name(v: Any) -> str:
    return {dict: "object", list: "array", str: "string", bool: "bool", int: "int", float: "double",
            type(None): "null"}.get(type(v), type(v).__name__)


def _obj(v: Any, c: _Ctx, *path: Any, what: str = "an object") -> dict:
    if not isinstance(v, dict):
        raise c.err("TYPE_MISMATCH", f"must be {what}", *path, expected=what, found=v)
    return v


def _keys(d: dict, allowed: tuple[str, ...], c: _Ctx, *path: Any, not_yet: tuple[str, ...] = ()) -> None:
    for k in d:
        if k in not_yet:
            raise NotSupportedYet("OPTION_NOT_SUPPORTED_YET", f"option '{k}' is not supported yet",
                                  position=c.pos, stage=c.stage, path=c.path(*path, k))
        if k not in allowed:
            raise c.err("UNKNOWN_OPTION", f"unknown option '{k}'", *path, k,
                        expected="one of " + ", ".join(allowed), found=k)


def _str(v: Any, c: _Ctx, *path: Any, allowed: tuple[str, ...] | None = None) -> str:
    if not isinstance(v, str) or not v:
        raise c.err("TYPE_MISMATCH", "must be a non-empty string", *path, expected="a non-empty string", found=v)
    if allowed and v not in allowed:
        raise c.err("BAD_VALUE", "value not allowed", *path, expected="one of " + ", ".join(map(repr, allowed)),
                    found=v)
    return v


def _bool(v: Any, c: _Ctx, *path: Any) -> bool:
    if not isinstance(v, bool):
        raise c.err("TYPE_MISMATCH", "must be a boolean", *path, expected="true or false", found=v)
    return v


def parse_duration(v: Any, c: _Ctx, *path: Any, allow_zero: bool = False) -> Duration:
    """``{"size": <int>, "unit": "ms"|"second"|"minute"|"hour"|"day"}``."""
    d = _obj(v, c, *path, what='a duration {"size": <int>, "unit": <unit>}')
    _keys(d, ("size", "unit"), c, *path)
    if "size" not in d or "unit" not in d:
        missing = "size" if "size" not in d else "unit"
        raise c.err("MISSING_OPTION", f"duration is missing '{missing}'", *path, missing,
                    expected='{"size": <int>, "unit": <unit>}', found=d)
    size, unit = d["size"], d["unit"]
    if isinstance(size, float) and size.is_integer():
        size = int(size)
    if not isinstance(size, int) or isinstance(size, bool):
        raise c.err("TYPE_MISMATCH", "duration size must be an integer", *path, "size", expected="an integer",
                    found=size)
    if size < 0 or (size == 0 and not allow_zero):
        raise c.err("BAD_VALUE", "duration size out of range", *path, "size",
                    expected="an integer >= 0" if allow_zero else "an integer > 0", found=size)
    if unit not in UNIT_MS:
        raise c.err("BAD_VALUE", "unknown duration unit", *path, "unit",
                    expected="one of " + ", ".join(map(repr, UNIT_MS)), found=unit)
    return Duration(size, unit)


OFFSET_FORM = '{"offsetFromUtc": <int>, "unit": "ms" | "second" | "minute" | "hour" | "day"}'


def parse_offset(v: Any, c: _Ctx, *path: Any) -> int:
    """A window ``offset`` as Atlas Stream Processing writes it, in milliseconds:
    ``{"offsetFromUtc": <int>, "unit": <unit>}`` (negative offsets allowed). The duration form
    ``{size, unit}`` is refused with ``WINDOW_OFFSET_FORM``, showing the right form."""
    d = _obj(v, c, *path, what=OFFSET_FORM)
    if "size" in d and "offsetFromUtc" not in d:
        raise c.err("WINDOW_OFFSET_FORM", "a window offset is written {offsetFromUtc, unit}, not {size, unit}",
                    *path, expected=OFFSET_FORM, found=d)
    _keys(d, ("offsetFromUtc", "unit"), c, *path)
    if "offsetFromUtc" not in d or "unit" not in d:
        missing = "offsetFromUtc" if "offsetFromUtc" not in d else "unit"
        raise c.err("MISSING_OPTION", f"offset is missing '{missing}'", *path, missing, expected=OFFSET_FORM, found=d)
    size, unit = d["offsetFromUtc"], d["unit"]
    if isinstance(size, float) and size.is_integer():
        size = int(size)
    if not isinstance(size, int) or isinstance(size, bool):
        raise c.err("TYPE_MISMATCH", "offsetFromUtc must be an integer", *path, "offsetFromUtc",
                    expected="an integer", found=size)
    if unit not in UNIT_MS:
        raise c.err("BAD_VALUE", "unknown offset unit", *path, "unit",
                    expected="one of " + ", ".join(map(repr, UNIT_MS)), found=unit)
    return size * UNIT_MS[unit]


def _expression(v: Any, c: _Ctx, *path: Any) -> None:
    from ..mql.expressions import validate_expression

    c.wrap(validate_expression, v, c.path(*path))


def _query(v: Any, c: _Ctx, *path: Any) -> None:
    from ..mql.query import validate_query

    _obj(v, c, *path, what="a query document")
    c.wrap(validate_query, v, c.path(*path))


# ---------------------------------------------------------------- $source

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
    _keys(config, ("rate", "devices", "seed", "maxRecordsPerBatch", "parallelism", "backlog", *SOURCE_STRING_CONFIG,
                   *SOURCE_OTHER_CONFIG), c, "config")
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


# ---------------------------------------------------------------- stateless stages

def parse_stateless(name: str, arg: Any, c: _Ctx) -> Stage:
    if name == "$match":
        _query(arg, c)
    elif name == "$validate":
        d = _obj(arg, c)
        _keys(d, ("validator", "validationAction"), c)
        if "validator" not in d:
            raise c.err("MISSING_OPTION", "needs 'validator'", "validator", expected="a query document", found=d)
        _query(d["validator"], c, "validator")
        if "validationAction" in d:
            _str(d["validationAction"], c, "validationAction", allowed=("discard", "dlq"))
    elif name in ("$addFields", "$set"):
        d = _obj(arg, c)
        if not d:
            raise c.err("BAD_VALUE", "needs at least one field", expected="a field", found=d)
        for k, v in d.items():
            _field_name(k, c)
            _expression(v, c, k)
    elif name == "$project":
        _project(arg, c)
    elif name == "$unset":
        fields = [arg] if isinstance(arg, str) else arg
        if not isinstance(fields, list) or not fields or not all(isinstance(f, str) and f for f in fields):
            raise c.err("TYPE_MISMATCH", "must be a field name or an array of field names",
                        expected="a string or array of strings", found=arg)
        for f in fields:
            _field_name(f, c)
    elif name == "$replaceRoot":
        d = _obj(arg, c)
        _keys(d, ("newRoot",), c)
        if "newRoot" not in d:
            raise c.err("MISSING_OPTION", "needs 'newRoot'", "newRoot", expected="an expression", found=d)
        _expression(d["newRoot"], c, "newRoot")
    elif name == "$replaceWith":
        _expression(arg, c)
    elif name == "$unwind":
        d = {"path": arg} if isinstance(arg, str) else _obj(arg, c, what="a field path or an object")
        _keys(d, ("path", "includeArrayIndex", "preserveNullAndEmptyArrays"), c)
        p = d.get("path")
        if not isinstance(p, str) or not p.startswith("$") or p.startswith("$$") or len(p) < 2:
            raise c.err("BAD_VALUE", "path must be a field path starting with '$'", "path",
                        expected='a field path such as "$items"', found=p)
        if "includeArrayIndex" in d:
            f = _str(d["includeArrayIndex"], c, "includeArrayIndex")
            if f.startswith("$"):
                raise c.err("BAD_VALUE", "must be a field name, not a path", "includeArrayIndex",
                            expected="a field name", found=f)
        if "preserveNullAndEmptyArrays" in d:
            _bool(d["preserveNullAndEmptyArrays"], c, "preserveNullAndEmptyArrays")
    return Stage(name, c.pos, arg, spec_of(name, arg))


def _field_name(k: str, c: _Ctx) -> None:
    if not k or k.startswith("$") or any(not part for part in k.split(".")):
        raise c.err("BAD_FIELD_NAME", "invalid field name", k, expected="a field name not starting with '$'",
                    found=k)


def _project(arg: Any, c: _Ctx) -> None:
    d = _obj(arg, c)
    if not d:
        raise c.err("BAD_VALUE", "needs at least one field", expected="a field specification", found=d)
    inclusion = exclusion = False
    for k, v in d.items():
        _field_name(k, c)
        if isinstance(v, bool) or (isinstance(v, (int, float)) and not isinstance(v, bool)):
            if v:
                inclusion = True
            elif k != "_id":
                exclusion = True
        elif isinstance(v, dict) and v and not any(str(x).startswith("$") for x in v):
            _project(v, c.sub(k))
            inclusion = True
        else:
            _expression(v, c, k)
            inclusion = True
        if inclusion and exclusion:
            raise c.err("PROJECT_MIXED", "cannot mix inclusion and exclusion (except _id)", k,
                        expected="only inclusions or only exclusions", found=d)


# ---------------------------------------------------------------- windows

def parse_window(name: str, arg: Any, c: _Ctx) -> WindowSpec:
    kind = WINDOWS[name]
    d = _obj(arg, c)
    common = ("pipeline", "offset", "boundary", "allowedLateness", "idleTimeout")
    allowed = {"tumbling": ("interval",) + common, "hopping": ("interval", "hopSize") + common,
               "session": ("partitionBy", "gap") + common}[kind]
    _keys(d, allowed, c)
    required = {"tumbling": ("interval", "pipeline"), "hopping": ("interval", "hopSize", "pipeline"),
                "session": ("partitionBy", "gap", "pipeline")}[kind]
    for r in required:
        if r not in d:
            raise c.err("MISSING_OPTION", f"needs '{r}'", r, expected=f"'{r}'", found=sorted(d))
    interval = parse_duration(d["interval"], c, "interval") if "interval" in d else None
    hop = parse_duration(d["hopSize"], c, "hopSize") if "hopSize" in d else None
    if hop and interval and hop.ms > interval.ms:
        raise c.err("WINDOW_HOP", "hopSize must not be larger than interval", "hopSize",
                    expected=f"at most {interval.size} {interval.unit}", found=d["hopSize"])
    gap = parse_duration(d["gap"], c, "gap") if "gap" in d else None
    if "partitionBy" in d:
        _expression(d["partitionBy"], c, "partitionBy")
    offset = parse_offset(d["offset"], c, "offset") if "offset" in d else 0
    boundary = _str(d["boundary"], c, "boundary", allowed=("eventTime", "processingTime")) \
        if "boundary" in d else defaults.BOUNDARY
    if boundary == "processingTime":
        for opt in ("allowedLateness", "idleTimeout"):
            if opt in d:
                raise c.err("WINDOW_PROCESSING_TIME_OPTION",
                            f"'{opt}' is not allowed with boundary 'processingTime'", opt,
                            expected="no " + opt + " for processing-time windows", found=d[opt])
    lateness = parse_duration(d["allowedLateness"], c, "allowedLateness", allow_zero=True).ms \
        if "allowedLateness" in d else (0 if boundary == "processingTime" else defaults.ALLOWED_LATENESS_MS)
    idle = parse_duration(d["idleTimeout"], c, "idleTimeout") if "idleTimeout" in d else None
    inner = d["pipeline"]
    if not isinstance(inner, list) or not inner:
        raise c.err("TYPE_MISMATCH", "must be a non-empty array of stages", "pipeline", expected="an array of stages",
                    found=inner)
    stages = tuple(_inner_stage(i, s, c) for i, s in enumerate(inner))
    return WindowSpec(kind, c.pos, interval, hop, gap, d.get("partitionBy"), offset, boundary, lateness, idle,
                      stages)


def _inner_stage(i: int, s: Any, c: _Ctx) -> Stage:
    name, arg = _stage_pair(s, c, "pipeline", i)
    ic = _Ctx(c.pos, c.stage, c.path("pipeline", i, name))
    if name in STATELESS:
        st = parse_stateless(name, arg, ic)
        return Stage(name, i, st.arg, st.spec)
    if name in WINDOW_ONLY:
        from ..mql import accumulators as acc

        validator = {"$group": acc.validate_group, "$sort": acc.validate_sort, "$limit": acc.validate_limit,
                     "$count": acc.validate_count}[name]
        ic.wrap(validator, arg, ic.path())
        return Stage(name, i, arg, spec_of(name, arg))
    if name in NOT_SUPPORTED_YET_STAGES:
        raise NotSupportedYet("STAGE_NOT_SUPPORTED_YET", f"stage {name} is not supported yet",
                              position=c.pos, stage=c.stage, path=c.path("pipeline", i, name))
    if name == "$source" or name in WINDOWS or name in SINKS:
        raise c.err("STAGE_ORDER", f"{name} is not allowed inside a window's pipeline", "pipeline", i,
                    expected="$group, $sort, $limit, $count or a stateless stage", found=name)
    raise c.err("STAGE_UNKNOWN", f"unknown stage {name}", "pipeline", i, expected="a stage name", found=name)


# ---------------------------------------------------------------- sinks and options

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
        _str(wm, c, "whenMatched", allowed=("replace", "keepExisting", "merge", "fail"))
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


def parse_options(opts: Any) -> Options:
    c = _Ctx(None, None, "options")  # type: ignore[arg-type]
    d = _obj(opts, c)
    _keys(d, ("dlq", "streamMeta", "guarantee"), c)
    dlq = None
    if "dlq" in d:
        x = _obj(d["dlq"], c, "dlq")
        _keys(x, ("connectionName", "db", "coll"), c, "dlq")
        for k in ("connectionName", "db", "coll"):
            if k not in x:
                raise c.err("MISSING_OPTION", f"dlq needs '{k}'", "dlq", k, expected="a string", found=x)
        dlq = DlqSpec(*(_str(x[k], c, "dlq", k) for k in ("connectionName", "db", "coll")))
    sm = _bool(d["streamMeta"], c, "streamMeta") if "streamMeta" in d else defaults.STREAM_META
    g = _str(d["guarantee"], c, "guarantee", allowed=("exactlyOnce", "atLeastOnce")) if "guarantee" in d \
        else defaults.GUARANTEE
    return Options(dlq, sm, g)


# ---------------------------------------------------------------- the whole pipeline

def _stage_pair(s: Any, c: _Ctx | None, *path: Any) -> tuple[str, Any]:
    pos = c.pos if c else path[0]
    where = c.path(*path) if c else None
    if not isinstance(s, dict) or len(s) != 1:
        raise _err("STAGE_SHAPE", "a stage must be an object with exactly one key", pos, None, where,
                   expected="an object with exactly one key", found=s)
    (name, arg), = s.items()
    if not isinstance(name, str) or not name.startswith("$"):
        raise _err("STAGE_SHAPE", "a stage name starts with '$'", pos, None, where, expected="a stage name",
                   found=name)
    return name, arg


#: single-key Extended JSON wrappers that stand for one typed BSON value
EJSON_WRAPPERS = ("$date", "$oid", "$numberLong", "$numberInt", "$numberDouble", "$numberDecimal", "$minKey",
                  "$maxKey", "$binary", "$timestamp")


def typed_constants(v: Any, c: _Ctx, *path: Any) -> Any:
    """``v`` with every Extended JSON constant (``{"$date": ...}``, ``{"$numberDecimal": "1.5"}``,
    ``{"$numberLong": "5"}``, ``{"$oid": ...}`` ...) replaced by its typed value of the
    :mod:`headrace.ejson` value model, so expressions, queries and stage options see typed
    literals (the spec reads pipelines as Extended JSON; mongosh's ``NumberDecimal("1.5")`` is
    ``{"$numberDecimal": "1.5"}``). A malformed wrapper is ``BAD_VALUE`` at its path."""
    if isinstance(v, list):
        return [typed_constants(x, c, *path, i) for i, x in enumerate(v)]
    if not isinstance(v, dict):
        return v
    if (len(v) == 1 and next(iter(v)) in EJSON_WRAPPERS) or (len(v) == 2 and set(v) == {"$binary", "$type"}):
        try:
            out = ejson.from_plain(v)
        except (ejson.EJSONError, ValueError, TypeError, decimal.InvalidOperation) as exc:
            key = next(iter(v))
            raise c.err("BAD_VALUE", f"invalid Extended JSON {key}: {exc}", *path, key,
                        expected=f"a valid {key} value", found=v[key]) from None
        if not isinstance(out, dict):
            return out
    return {k: typed_constants(x, c, *path, k) for k, x in v.items()}


def _refuse_python_operators(arg: Any, c: _Ctx) -> None:
    """A stage outside ``PYTHON_OPERATOR_STAGES`` holding an operator that runs in Python."""
    from ..mql.expressions import PYTHON_OPERATOR_PLACES, python_operator_path

    path = python_operator_path(arg)
    if path:
        op = path.rsplit(".", 1)[-1]
        raise NotSupportedYet("EXPR_NOT_SUPPORTED_YET",
                              f"{op} runs in Python: it is supported in {PYTHON_OPERATOR_PLACES}, not in this stage yet",
                              position=c.pos, stage=c.stage, path=f"{c.stage}.{path}",
                              expected="an operator that runs in Spark here", found=op)


def parse_pipeline(obj: Any) -> Pipeline:
    """Validate a whole pipeline (and options) before anything runs."""
    from ..mql.expressions import PYTHON_OPERATOR_STAGES

    options: Any = {}
    stages = obj
    if isinstance(obj, dict):
        extra = set(obj) - {"pipeline", "options"}
        if extra or "pipeline" not in obj:
            raise _err("PIPELINE_SHAPE", "expected {\"pipeline\": [...], \"options\": {...}}", None, None,
                       ", ".join(sorted(extra)) or None, expected="keys 'pipeline' and optional 'options'",
                       found=sorted(obj))
        stages, options = obj["pipeline"], obj.get("options", {})
    if not isinstance(stages, list) or not stages:
        raise _err("PIPELINE_SHAPE", "a pipeline is a non-empty array of stages", None, None, None,
                   expected="an array of stages", found=stages)
    opts = parse_options(options)
    source: SourceSpec | None = None
    before: list[Stage] = []
    after: list[Stage] = []
    window: WindowSpec | None = None
    sink = None
    for pos, s in enumerate(stages):
        name, arg = _stage_pair(s, None, pos)
        c = _Ctx(pos, name)
        arg = typed_constants(arg, c)
        if sink is not None:
            raise c.err("STAGE_ORDER", f"{name} comes after the sink; the sink must be the last stage",
                        expected="no stage after $merge/$emit", found=name)
        if name not in PYTHON_OPERATOR_STAGES:
            _refuse_python_operators(arg, c)
        if name == "$source":
            if pos != 0:
                raise c.err("STAGE_ORDER", "$source must be the first stage and appear once",
                            expected="$source at position 0", found=pos)
            source = parse_source(arg, c)
            continue
        if pos == 0:
            raise c.err("STAGE_ORDER", "a pipeline starts with $source", expected="$source", found=name)
        if name in STATELESS:
            (after if window else before).append(parse_stateless(name, arg, c))
        elif name in WINDOWS:
            if window is not None:
                raise c.err("STAGE_ORDER", "at most one window stage per pipeline",
                            expected="one window stage", found=name)
            window = parse_window(name, arg, c)
        elif name == "$merge":
            sink = parse_merge(arg, c)
        elif name == "$emit":
            sink = parse_emit(arg, c)
        elif name in WINDOW_ONLY:
            raise c.err("STAGE_ORDER", f"{name} is allowed only inside a window's pipeline",
                        expected="a window stage holding " + name, found=name)
        elif name in NOT_SUPPORTED_YET_STAGES:
            raise NotSupportedYet("STAGE_NOT_SUPPORTED_YET", f"stage {name} is not supported yet",
                                  position=pos, stage=name)
        else:
            raise c.err("STAGE_UNKNOWN", f"unknown stage {name}", expected="a MongoDB stream processing stage",
                        found=name)
    assert source is not None
    if window and window.boundary == "processingTime" and source.replay is None and source.documents is not None:
        pass
    return Pipeline(source, tuple(before), window, tuple(after), sink, opts, tuple(stages))


def load_pipeline_file(path: "str | Path") -> Pipeline:
    """Read a pipeline file (JSON array or ``{"pipeline", "options"}``) and parse it."""
    p = Path(path)
    try:
        text = p.read_text()
    except OSError as exc:
        raise PipelineError("PIPELINE_FILE", f"cannot read pipeline file {str(p)!r}: {exc.strerror}")
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise PipelineError("PIPELINE_JSON", f"{p}: not valid JSON at line {exc.lineno} column {exc.colno}: "
                            f"{exc.msg}") from exc
    return parse_pipeline(obj)
