"""One helper for the compile-time context variables (stage position, batch facts, the active
environment and hoister, the source's fields): set for the duration of a ``with`` block."""
from __future__ import annotations

import contextvars
from contextlib import contextmanager
from typing import Any, Iterator


@contextmanager
def bound(var: contextvars.ContextVar, value: Any) -> Iterator[Any]:
    """``var`` set to ``value`` inside the block (which gets ``value``), then back to what it was."""
    token = var.set(value)
    try:
        yield value
    finally:
        var.reset(token)
