"""The parsed pipeline: frozen dataclasses. Raw MQL (expressions, queries, inner stages) stays as
plain JSON-like values inside them, already validated."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from . import defaults

UNIT_MS = {"ms": 1, "second": 1_000, "minute": 60_000, "hour": 3_600_000, "day": 86_400_000}


@dataclass(frozen=True)
class Duration:
    size: int
    unit: str

    @property
    def ms(self) -> int:
        return self.size * UNIT_MS[self.unit]


@dataclass(frozen=True)
class ReplaySpec:
    arrival_field: str
    partition_field: str | None = None
    partitions: tuple[str, ...] | None = None


@dataclass(frozen=True)
class DedupSpec:
    """``$source.dedup``: drop a record whose id (``idField``, an expression) was seen within
    ``horizon`` of event time (system.md section 2; :mod:`headrace.dedup`)."""

    id_field: Any
    horizon: Duration


@dataclass(frozen=True)
class SourceSpec:
    connection_name: str | None = None
    documents: tuple[Any, ...] | None = None
    replay: ReplaySpec | None = None
    time_field: Any = None
    ts_field_name: str = defaults.TS_FIELD_NAME
    partition_idle_timeout: Duration | None = None
    stream: str | None = None
    config: dict = field(default_factory=dict)
    topics: tuple[str, ...] | None = None      # Kafka: the topic(s) read
    streams: tuple[str, ...] | None = None     # Redis: the stream(s) read (``stream`` is the first)
    db: str | None = None                      # MongoDB change stream: database (None: deployment)
    coll: str | None = None                    # ... and collection (None: the whole database)
    dedup: DedupSpec | None = None

    @property
    def finite(self) -> bool:
        return self.documents is not None


@dataclass(frozen=True)
class Stage:
    """A stage: its MQL name, position in the pipeline, raw (validated) argument and, for the
    stateless stages, the argument read once into its typed spec (:mod:`headrace.spec.stages`)."""

    name: str
    position: int
    arg: Any
    spec: Any = None


@dataclass(frozen=True)
class WindowSpec:
    kind: str                      # "tumbling" | "hopping" | "session"
    position: int
    interval: Duration | None
    hop: Duration | None
    gap: Duration | None
    partition_by: Any
    offset_ms: int
    boundary: str
    allowed_lateness_ms: int
    idle_timeout: Duration | None
    pipeline: tuple[Stage, ...]

    @property
    def name(self) -> str:
        return f"${self.kind}Window"


@dataclass(frozen=True)
class MergeIntoSpec:
    position: int
    connection_name: str
    db: Any
    coll: Any
    on: tuple[str, ...] = defaults.MERGE_ON
    when_matched: Any = defaults.MERGE_WHEN_MATCHED
    when_not_matched: str = defaults.MERGE_WHEN_NOT_MATCHED

    def dynamic(self) -> tuple[tuple[str, Any], ...]:
        """``into.db`` / ``into.coll`` when they are expressions, by name."""
        return tuple((k, v) for k, v in (("db", self.db), ("coll", self.coll)) if is_dynamic(v))


def is_dynamic(target: Any) -> bool:
    """Whether a sink's ``db``/``coll``/``topic``/``stream`` is an expression (a document, or a
    ``"$field"`` path: MongoDB names and Kafka topics cannot contain ``$``) rather than a name."""
    return isinstance(target, dict) or isinstance(target, str) and target.startswith("$")


@dataclass(frozen=True)
class KafkaEmitConfig:
    """``$emit.config`` of a Kafka topic: the message ``key`` (an expression, serialized as
    ``key_format``: ``binData``, ``string``, ``json``, ``int`` or ``long``), the ``headers`` (an
    expression giving a document or an array of ``{k, v}``) and the value's Extended JSON
    ``output_format`` (``relaxedJson`` or ``canonicalJson``)."""

    key: Any = None
    key_format: str = defaults.KAFKA_KEY_FORMAT
    headers: Any = None
    output_format: str = defaults.KAFKA_OUTPUT_FORMAT


@dataclass(frozen=True)
class EmitSpec:
    position: int
    connection_name: str | None = None
    db: str | None = None
    coll: Any = None               # a name, or an expression (see :func:`is_dynamic`)
    path: str | None = None        # JSON-lines file
    config: KafkaEmitConfig | None = None
    # Kafka ``topic`` / Redis ``stream``: parsed into ``coll`` (``db`` is ""), written through
    # :func:`headrace.collections.open_collection` like any other sink

    def dynamic(self) -> tuple[tuple[str, Any], ...]:
        """The expressions evaluated per output document, by name: ``coll`` (topic or stream), ``key``, ``headers``."""
        parts: list[tuple[str, Any]] = [("coll", self.coll)] if is_dynamic(self.coll) else []
        if self.config is not None:
            parts += [(k, v) for k, v in (("key", self.config.key), ("headers", self.config.headers))
                      if v is not None]
        return tuple(parts)


@dataclass(frozen=True)
class DlqSpec:
    connection_name: str
    db: str
    coll: str


@dataclass(frozen=True)
class Options:
    dlq: DlqSpec | None = None
    stream_meta: bool = defaults.STREAM_META
    guarantee: str = defaults.GUARANTEE


@dataclass(frozen=True)
class Pipeline:
    source: SourceSpec
    before: tuple[Stage, ...]              # stateless stages before the window
    window: WindowSpec | None
    after: tuple[Stage, ...]               # stateless stages after the window
    sink: MergeIntoSpec | EmitSpec | None
    options: Options = field(default_factory=Options)
    raw: tuple[Any, ...] = ()

    @property
    def stages(self) -> tuple[Stage, ...]:
        return self.before + self.after
