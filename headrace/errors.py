"""Errors with stable codes.

Every error a user can cause carries a stable ``code`` (tests assert it first) and, where it
applies, the pipeline position and stage name, the field path, what was expected and what was
found. ``str(err)`` renders all of it on one line.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


def describe(value: Any) -> str:
    """A short, readable rendering of a found value for error messages."""
    import json

    try:
        text = json.dumps(value, default=str, sort_keys=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


class HeadraceError(Exception):
    """Base class. ``code`` is stable; the message text may change."""

    code = "HR_ERROR"

    def __init__(self, message: str, *, code: str | None = None):
        super().__init__(message)
        if code:
            self.code = code
        self.message = message

    def to_dict(self) -> dict:
        return {"code": self.code, "message": str(self)}


@dataclass
class Where:
    """Where in a pipeline: stage position (0-based), stage name and field path."""

    position: int | None = None
    stage: str | None = None
    path: str | None = None

    def render(self) -> str:
        parts = []
        if self.position is not None or self.stage:
            parts.append(f"stage {self.position} ({self.stage})" if self.stage else f"stage {self.position}")
        if self.path:
            parts.append(f"at '{self.path}'")
        return " ".join(parts)


class PipelineError(HeadraceError):
    """An invalid pipeline, refused before anything runs."""

    code = "PIPELINE_INVALID"

    def __init__(
        self,
        code: str,
        message: str,
        *,
        position: int | None = None,
        stage: str | None = None,
        path: str | None = None,
        expected: str | None = None,
        found: Any = ...,
    ):
        self.code = code
        self.where = Where(position, stage, path)
        self.expected = expected
        self.found = found
        self.detail = message
        text = message
        loc = self.where.render()
        if loc:
            text = f"{loc}: {text}"
        if expected is not None:
            text += f"; expected {expected}"
        if found is not ...:
            text += f", found {describe(found)}"
        super().__init__(text, code=code)

    def to_dict(self) -> dict:
        d = {"code": self.code, "message": str(self), "position": self.where.position,
             "stage": self.where.stage, "path": self.where.path, "expected": self.expected}
        if self.found is not ...:
            d["found"] = self.found
        return d

    def at(self, position: int | None = None, stage: str | None = None, prefix: str | None = None) -> "PipelineError":
        """The same error placed at a stage (and under a path prefix)."""
        path = self.where.path
        if prefix:
            path = f"{prefix}.{path}" if path else prefix
        return PipelineError(
            self.code, self.detail,
            position=self.where.position if position is None else position,
            stage=self.where.stage if stage is None else stage,
            path=path, expected=self.expected, found=self.found,
        )


class ConfigError(HeadraceError):
    """Bad connection registry or CLI configuration."""

    code = "CONFIG_INVALID"


class NotSupportedYet(PipelineError):
    """A real MongoDB stage or operator that headrace does not support yet."""
