"""Window operators: one interface, one module per window kind.

A window stage keeps the documents of open windows (in the checkpoint's state files, see
:mod:`headrace.spark.runtime.state`) and a registry of open windows in the engine state. What
differs between kinds is behind :class:`WindowKind`:

- which documents are late against the watermark of the previous batch, and which windows they
  missed;
- how a batch's documents open or grow windows (:meth:`WindowKind.register`);
- which windows are open, and how a closing window finds its documents (:meth:`WindowKind.frame`);
- when a state file holds no document of an open window any more (:meth:`WindowKind.dead`).

:mod:`.fixed` is tumbling and hopping windows, :mod:`.session` session windows. A tumbling or
hopping window whose inner pipeline starts with a decomposable ``$group`` keeps partial
aggregates per (window, group) instead of documents (:mod:`.partial`). The closing
rules themselves (time-semantics.md) are in :mod:`headrace.spark.runtime.batch`.
"""
from __future__ import annotations

from ...spec.model import WindowSpec
from .fixed import FixedWindows
from .kind import Window3, WindowKind
from .session import SessionWindows

__all__ = ["Window3", "WindowKind", "window_kind"]


def window_kind(spec: WindowSpec) -> WindowKind:
    if spec.kind == "session":
        return SessionWindows(spec)
    return FixedWindows(spec)
