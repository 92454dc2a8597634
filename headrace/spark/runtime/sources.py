"""Where a processor's input comes from: a registry from source kind to reader set-up.

A builder, registered under a connection type (or ``documents`` for inline documents and
replay mode) with :func:`source`, opens the Spark stream for a ``$source`` and says what the
engine needs of it: the watermark partitions (possibly changing with resharding) and the
source type shown in ``_stream_meta``. Every reader yields rows of
:data:`headrace.spark.sources.SOURCE_SCHEMA`.
"""
from __future__ import annotations

import datetime as _dt
import json
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from pyspark.sql import DataFrame

from ...connections import Registry
from ...errors import HeadraceError
from ...spec.model import SourceSpec
from ..sources import SOURCE_SCHEMA

TICK_MS = "1000"    # clock-tick period of live sources when windows need the clock to move


@dataclass(frozen=True)
class SourceContext:
    spec: SourceSpec
    registry: Registry
    state_dir: Path        # the processor's own directory in its checkpoint
    ticks: bool            # idle timeouts or processing-time windows: the clock must move without data
    once: bool = False     # an ephemeral run (RunOptions.once): a one-batch source gives that batch only
    tag: str = field(default_factory=lambda: uuid.uuid4().hex[:12])    # this processor's data sources
    hold: Path | None = None   # the processor's hold file (sources/hold.py): no new batches while it exists


def read_stream(spark, cls, tag: str, hold: Path | None = None):
    """``spark.readStream`` of the Python data source ``cls`` registered under a name of its own
    (``<name>_<tag>``), so no two streaming queries of one JVM share its registration; with
    ``hold``, its reader plans nothing new while that file exists (:mod:`..sources.hold`).

    Why: Spark builds every Python function of a data source (planning, reading) with the
    registration's environment map, and the driver-side runner of a Python streaming source adds
    to that map when a query starts (``StreamingPythonRunner.init``). Two queries sharing one
    registration (two processors in one worker) could have one query's start mutate the map while
    the scheduler serialized the other's read tasks: the task then failed to deserialize
    (``java.io.OptionalDataException``; seen in the kill -9 trials, which run two processors)."""
    from ..sources.hold import OPTION, holding

    name = f"{cls.name()}_{tag}"

    def stream_reader(self, schema):
        return holding(cls.streamReader(self, schema), self.options.get(OPTION))

    spark.dataSource.register(type(f"{cls.__name__}_{tag}", (cls,), {"name": classmethod(lambda c: name),
                                                                    "streamReader": stream_reader}))
    r = spark.readStream.format(name)
    return r if hold is None else r.option(OPTION, str(hold))


@dataclass
class OpenedSource:
    df: DataFrame | None       # the streaming DataFrame; None when ``once`` replaces it
    source_type: str
    partitions: list[str]
    #: for sources that reshard: watermark partitions given the positions read so far
    partitions_fn: Callable[[dict], list[str]] | None = None
    #: with ``SourceContext.once``, a finite source's whole input as one batch DataFrame (its single
    #: micro-batch), else None
    once: DataFrame | None = None


Builder = Callable[[object, SourceContext, object], OpenedSource]
BUILDERS: dict[str, Builder] = {}


def source(*kinds: str) -> Callable[[Builder], Builder]:
    def reg(fn: Builder) -> Builder:
        for k in kinds:
            BUILDERS[k] = fn
        return fn
    return reg


def open_source(spark, ctx: SourceContext) -> OpenedSource:
    """Open the Spark stream of ``ctx.spec``; a connection type without a reader is an error."""
    if ctx.spec.documents is not None:
        return BUILDERS["documents"](spark, ctx, None)
    conn = ctx.registry.get(ctx.spec.connection_name or "")
    builder = BUILDERS.get(conn.type)
    if builder is None:
        raise HeadraceError(f"connection {conn.name!r} of type {conn.type!r} cannot be a source yet",
                            code="SOURCE_TYPE")
    return builder(spark, ctx, conn)


def _options(reader, options: dict):
    for k, v in options.items():
        reader = reader.option(k, str(v))
    return reader


@source("documents")
def _documents(spark, ctx: SourceContext, _conn) -> OpenedSource:
    from ..sources.documents import prepare_batches, write_batches

    s = ctx.spec
    path = ctx.state_dir / "input.jsonl"
    parts_file = ctx.state_dir / "partitions.json"
    if not path.exists():     # prepared once: a restart replays the same batches
        batches, parts = prepare_batches(s, _dt.datetime.now(_dt.timezone.utc))
        write_batches(path, one_batch(batches) if s.replay is None else batches)
        parts_file.write_text(json.dumps(parts))
    from ..sources.documents import DocumentsDataSource, source_rows

    kind, parts = "replay" if s.replay else "documents", json.loads(parts_file.read_text())
    if ctx.once and s.replay is None:
        # one micro-batch run as a batch job: the pipeline's own documents, already on the driver,
        # as a local relation (no Python process to plan or read a source, no stream to open)
        once = spark.createDataFrame(list(source_rows(str(path))), SOURCE_SCHEMA).coalesce(1)
        return OpenedSource(None, kind, parts, once=once)
    df = read_stream(spark, DocumentsDataSource, ctx.tag, ctx.hold).option("path", str(path)).load()
    return OpenedSource(df, kind, parts)


def one_batch(batches: list[dict]) -> list[dict]:
    """Inline documents without ``replay`` are one micro-batch read at start (time-semantics.md):
    the end of input travels in that same batch, so a finite run is one micro-batch (``W``
    becomes +infinity at its end, as it would one empty batch later at the same instant)."""
    if len(batches) < 2:
        return batches
    return [{"arrival": batches[0]["arrival"], "rows": [r for b in batches for r in b["rows"]]}]


@source("sample")
def _sample(spark, ctx: SourceContext, conn) -> OpenedSource:
    from ..sources.sample import SampleDataSource

    r = _options(read_stream(spark, SampleDataSource, ctx.tag, ctx.hold), {**conn.options, **ctx.spec.config})
    return OpenedSource(r.load(), "generated", ["0"])


@source("file")
def _file(spark, ctx: SourceContext, conn) -> OpenedSource:
    from ..sources.file import FileDataSource

    r = read_stream(spark, FileDataSource, ctx.tag, ctx.hold).option("path", str(conn.options["path"]))
    if ctx.ticks:
        r = r.option("tickMs", TICK_MS)
    return OpenedSource(_options(r, ctx.spec.config).load(), "file", ["0"])


@source("stream")
def _stream(spark, ctx: SourceContext, conn) -> OpenedSource:
    from ...streams import watermark_partitions

    s = ctx.spec
    if not s.stream:
        raise HeadraceError(f"$source on stream connection {conn.name!r} needs 'stream'",
                            code="SOURCE_STREAM_REQUIRED")
    home = conn.options.get("home") or str(ctx.registry.home)
    from ..sources.stream import StreamDataSource

    r = read_stream(spark, StreamDataSource, ctx.tag, ctx.hold).option("home", home).option("stream", s.stream)
    if ctx.ticks:
        r = r.option("tickMs", TICK_MS)
    fn = lambda positions: watermark_partitions(home, s.stream, positions)  # noqa: E731
    return OpenedSource(_options(r, s.config).load(), "stream", fn({}), fn)


def _secret_options(conn) -> str:
    """A connection's options for a reader (under an option key Spark redacts when printing)."""
    return json.dumps(dict(conn.options))


@source("kafka")
def _kafka(spark, ctx: SourceContext, conn) -> OpenedSource:
    from ...connectors.kafka import KafkaClient, pkey
    from ..sources.kafka import KafkaDataSource

    s = ctx.spec
    if not s.topics:
        raise HeadraceError(f"$source on kafka connection {conn.name!r} needs 'topic'", code="SOURCE_TOPIC_REQUIRED")
    cfg = s.config
    r = (read_stream(spark, KafkaDataSource, ctx.tag, ctx.hold).option("connection", conn.name)
         .option("connectionSecret", _secret_options(conn)).option("topics", json.dumps(list(s.topics)))
         .option("startingPosition", cfg.get("auto_offset_reset", "earliest")))
    if "maxRecordsPerBatch" in cfg:
        r = r.option("maxRecordsPerBatch", str(int(cfg["maxRecordsPerBatch"])))
    if cfg.get("group_id"):
        r = r.option("groupId", cfg["group_id"])
    fields = {k: cfg[k] for k in ("keyField", "keyFormat", "keyFormatError", "headersField") if k in cfg}
    if fields:
        r = r.option("messageFields", json.dumps(fields))
    if ctx.ticks:
        r = r.option("tickMs", TICK_MS)

    def parts(_positions: dict) -> list[str]:
        client = KafkaClient(conn.name, conn.options)
        try:
            return [pkey(*tp) for tp in client.partitions(s.topics)] or [pkey(t, 0) for t in s.topics]
        finally:
            client.close()

    return OpenedSource(r.load(), "kafka", parts({}), parts)


@source("redis")
def _redis(spark, ctx: SourceContext, conn) -> OpenedSource:
    from ..sources.redis_stream import RedisDataSource

    s = ctx.spec
    if not s.streams:
        raise HeadraceError(f"$source on redis connection {conn.name!r} needs 'stream'", code="SOURCE_STREAM_REQUIRED")
    from ...connectors.redis_stream import RedisClient

    client = RedisClient(conn.name, conn.options)     # fails early, naming the connection, when unreachable
    try:
        client.last_id(s.streams[0])
    finally:
        client.close()
    cfg = s.config
    r = (read_stream(spark, RedisDataSource, ctx.tag, ctx.hold).option("connection", conn.name)
         .option("connectionSecret", _secret_options(conn)).option("streams", json.dumps(list(s.streams)))
         .option("startAt", cfg.get("startAt", "earliest")).option("field", cfg.get("field", "doc")))
    if "maxRecordsPerBatch" in cfg:
        r = r.option("maxRecordsPerBatch", str(int(cfg["maxRecordsPerBatch"])))
    if ctx.ticks:
        r = r.option("tickMs", TICK_MS)
    return OpenedSource(r.load(), "redis", sorted(s.streams))


@source("mongodb")
def _mongodb(spark, ctx: SourceContext, conn) -> OpenedSource:
    from ..sources.mongodb import MongoDataSource

    from ...connectors.mongodb import ChangeStreams

    s = ctx.spec
    probe = ChangeStreams(conn.name, conn.options, s.db, s.coll)   # fails early, naming the connection
    try:
        probe._call("connecting", lambda: probe._c().admin.command("ping"))
    finally:
        probe.close()
    cfg = s.config
    r = (read_stream(spark, MongoDataSource, ctx.tag, ctx.hold).option("connection", conn.name)
         .option("connectionSecret", _secret_options(conn)).option("db", s.db or "").option("coll", s.coll or "")
         .option("pipeline", json.dumps(cfg.get("pipeline", []))))
    if cfg.get("fullDocument"):
        r = r.option("fullDocument", cfg["fullDocument"])
    if "startAtOperationTime" in cfg:
        r = r.option("startAtOperationTime", _operation_time(cfg["startAtOperationTime"]))
    if "maxRecordsPerBatch" in cfg:
        r = r.option("maxRecordsPerBatch", str(int(cfg["maxRecordsPerBatch"])))
    if ctx.ticks:
        r = r.option("tickMs", TICK_MS)
    part = ".".join(x for x in (s.db, s.coll) if x) or "*"
    return OpenedSource(r.load(), "mongodb", [part])


def _operation_time(v) -> str:
    """``startAtOperationTime`` (``{"$timestamp": {t, i}}``, a date, or epoch seconds) as ``t.i``."""
    from ... import ejson

    if isinstance(v, ejson.Timestamp):
        return f"{v.t}.{v.i}"
    if isinstance(v, dict) and isinstance(v.get("$timestamp"), dict):
        return f"{int(v['$timestamp']['t'])}.{int(v['$timestamp'].get('i', 0))}"
    if isinstance(v, int) and not isinstance(v, bool) and v >= 2 ** 32:
        return f"{v >> 32}.{v & 0xFFFFFFFF}"       # {"$timestamp": {t, i}} read as a packed 64-bit value
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return f"{int(v)}.0"
    try:
        d = ejson.from_plain(v)
        d = ejson.parse_iso(d) if isinstance(d, str) else d
        return f"{ejson.datetime_to_millis(d) // 1000}.0"
    except Exception as exc:  # noqa: BLE001
        raise HeadraceError(f"$source.config.startAtOperationTime: expected a timestamp or a date, found {v!r}",
                            code="SOURCE_OPTION") from exc
