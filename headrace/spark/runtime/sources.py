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
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from pyspark.sql import DataFrame

from ...connections import Registry
from ...errors import HeadraceError
from ...spec.model import SourceSpec

TICK_MS = "1000"    # clock-tick period of live sources when windows need the clock to move


@dataclass(frozen=True)
class SourceContext:
    spec: SourceSpec
    registry: Registry
    state_dir: Path        # the processor's own directory in its checkpoint
    ticks: bool            # idle timeouts or processing-time windows: the clock must move without data


@dataclass
class OpenedSource:
    df: DataFrame
    source_type: str
    partitions: list[str]
    #: for sources that reshard: watermark partitions given the positions read so far
    partitions_fn: Callable[[dict], list[str]] | None = None


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
    df = spark.readStream.format("headrace_documents").option("path", str(path)).load()
    return OpenedSource(df, "replay" if s.replay else "documents", json.loads(parts_file.read_text()))


def one_batch(batches: list[dict]) -> list[dict]:
    """Inline documents without ``replay`` are one micro-batch read at start (time-semantics.md):
    the end of input travels in that same batch, so a finite run is one micro-batch (``W``
    becomes +infinity at its end, as it would one empty batch later at the same instant)."""
    if len(batches) < 2:
        return batches
    return [{"arrival": batches[0]["arrival"], "rows": [r for b in batches for r in b["rows"]]}]


@source("sample")
def _sample(spark, ctx: SourceContext, conn) -> OpenedSource:
    r = _options(spark.readStream.format("headrace_sample"), {**conn.options, **ctx.spec.config})
    return OpenedSource(r.load(), "generated", ["0"])


@source("file")
def _file(spark, ctx: SourceContext, conn) -> OpenedSource:
    r = spark.readStream.format("headrace_file").option("path", str(conn.options["path"]))
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
    r = spark.readStream.format("headrace_stream").option("home", home).option("stream", s.stream)
    if ctx.ticks:
        r = r.option("tickMs", TICK_MS)
    fn = lambda positions: watermark_partitions(home, s.stream, positions)  # noqa: E731
    return OpenedSource(_options(r, s.config).load(), "stream", fn({}), fn)
