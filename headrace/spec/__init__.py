"""Parse and validate pipelines into frozen dataclasses (pure Python, no Spark).

``parse_pipeline(obj)`` accepts a JSON array of stages or ``{"pipeline": [...], "options": {...}}``
and returns a :class:`~headrace.spec.model.Pipeline`, or raises
:class:`~headrace.errors.PipelineError` naming the stage position and name, the field path,
what was expected and what was found. Every default lives in :mod:`headrace.spec.defaults`.
"""
from .model import (Duration, EmitSpec, MergeIntoSpec, Options, Pipeline, ReplaySpec, SourceSpec, Stage,
                    WindowSpec)
from .parse import load_pipeline_file, parse_pipeline

__all__ = ["Duration", "EmitSpec", "MergeIntoSpec", "Options", "Pipeline", "ReplaySpec", "SourceSpec", "Stage",
           "WindowSpec", "parse_pipeline", "load_pipeline_file"]
