"""Checks that need the connection registry (pure Python): every connection a pipeline names
exists and has a type that can play its role."""
from __future__ import annotations

from .connections import Registry
from .errors import PipelineError
from .spec.model import EmitSpec, MergeIntoSpec, Pipeline

SOURCE_TYPES = ("sample", "stream", "file", "kafka", "redis", "mongodb")
SINK_TYPES = ("store", "postgres", "zoned", "kafka", "redis", "mongodb")
MERGE_TYPES = ("store", "postgres", "zoned", "mongodb")     # Kafka topics and Redis streams take $emit only


def _conn(registry: Registry, name: str, roles: tuple[str, ...], position: int | None, stage: str | None,
          path: str):
    if name not in registry:
        raise PipelineError("CONNECTION_UNKNOWN", f"unknown connection {name!r}", position=position, stage=stage,
                            path=path, expected="one of " + ", ".join(registry.names()), found=name)
    c = registry.get(name)
    if c.type not in roles:
        raise PipelineError("CONNECTION_ROLE", f"connection {name!r} of type {c.type!r} cannot serve here",
                            position=position, stage=stage, path=path, expected="a connection of type " +
                            " or ".join(roles), found=c.type)
    return c


def check_connections(p: Pipeline, registry: Registry) -> None:
    kind = "documents"
    if p.source.connection_name:
        kind = _conn(registry, p.source.connection_name, SOURCE_TYPES, 0, "$source", "connectionName").type
    if "maxBytesPerBatch" in p.source.config and kind != "file":
        what = f"connection {p.source.connection_name!r} is of type {kind!r}" if p.source.connection_name \
            else "this source is the pipeline's own documents"
        raise PipelineError("SOURCE_CONFIG", f"'maxBytesPerBatch' bounds a file's micro-batches; {what} "
                            "(bound it with 'maxRecordsPerBatch')", position=0, stage="$source",
                            path="config.maxBytesPerBatch", expected="a connection of type 'file'", found=kind)
    if isinstance(p.sink, MergeIntoSpec):
        c = _conn(registry, p.sink.connection_name, SINK_TYPES, p.sink.position, "$merge", "into.connectionName")
        if c.type not in MERGE_TYPES:
            what = {"kafka": "a Kafka topic", "redis": "a Redis stream"}[c.type]
            raise PipelineError("MERGE_NOT_SUPPORTED", f"connection {c.name!r} is {what}: it is append-only and takes "
                                f"$emit ({{connectionName, {'topic' if c.type == 'kafka' else 'stream'}}}), not $merge",
                                position=p.sink.position, stage="$merge", path="into.connectionName",
                                expected="a connection of type " + " or ".join(MERGE_TYPES), found=c.type)
    elif isinstance(p.sink, EmitSpec) and p.sink.connection_name:
        c = _conn(registry, p.sink.connection_name, SINK_TYPES, p.sink.position, "$emit", "connectionName")
        if p.sink.config is not None and c.type != "kafka":
            raise PipelineError("EMIT_CONFIG", f"'config' (key, headers, outputFormat) is for Kafka topics; connection "
                                f"{c.name!r} is of type {c.type!r}", position=p.sink.position, stage="$emit",
                                path="config", expected="a connection of type 'kafka'", found=c.type)
    if p.options.dlq:
        _conn(registry, p.options.dlq.connection_name, SINK_TYPES, None, None, "options.dlq.connectionName")
