"""The one start-up path of a processor: parse -> check connections -> Spark -> processor -> result.

``headrace process``, :mod:`headrace.testing`, ``headrace demo`` and the benchmarks all start
processors through :func:`prepare` and :func:`start`:

    run = prepare(pipeline_json, connections=..., home=...)   # refuses invalid input, no Spark
    proc = start(run, name="x", checkpoint=path, on_output=...)  # Spark session + Processor
    stats = proc.run(duration_s=..., limit=...)

:func:`prepare` is pure Python (parsing, validation, connection checks), so an invalid pipeline
is refused before the JVM starts. :func:`start` creates (or reuses) the process-wide
SparkSession and builds the :class:`headrace.spark.engine.Processor`; ``RunOptions`` fields are
passed as keywords.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .connections import Registry, load_registry
from .spec import parse_pipeline
from .spec.model import Pipeline


@dataclass(frozen=True)
class Prepared:
    pipeline: Pipeline
    registry: Registry


def prepare(pipeline: Any, *, connections: "str | Path | None" = None, home: "str | Path | None" = None,
            registry: Registry | None = None, extra_connections: dict | None = None) -> Prepared:
    """Parse ``pipeline`` (a parsed :class:`Pipeline`, a stage list or ``{"pipeline", "options"}``),
    load the connection registry and check the pipeline's connections against it."""
    from .validate import check_connections

    parsed = pipeline if isinstance(pipeline, Pipeline) else parse_pipeline(
        pipeline if isinstance(pipeline, dict) else {"pipeline": pipeline})
    if registry is None:
        kw = {"extra": extra_connections} if extra_connections else {}
        registry = load_registry(None if connections is None else str(connections),
                                 None if home is None else str(home), **kw)
    check_connections(parsed, registry)
    return Prepared(parsed, registry)


def start(run: Prepared, *, name: str, checkpoint: "str | Path", spark_master: str | None = None,
          jit: str | None = None, **options: Any):
    """The SparkSession (created once per process, in JIT mode ``jit``: see
    :func:`headrace.spark.session.jit_options`) and a :class:`Processor` for ``run``, not yet
    started (``Processor.run`` starts it)."""
    from .spark.session import get_spark

    get_spark(spark_master, jit=jit)  # Column constants need a live session
    from .spark.engine import Processor, RunOptions

    return Processor(run.pipeline, RunOptions(name=name, checkpoint=Path(checkpoint), registry=run.registry,
                                              spark_master=spark_master, **options))
