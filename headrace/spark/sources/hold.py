"""A stop that lets the running micro-batch finish: the source holds still first.

:meth:`headrace.spark.engine.Processor.stop` writes the processor's hold file before it stops the
streaming query. A reader opened with the hold file's path (:func:`holding`) answers
``latestOffset`` with the batch's own start while the file exists, so Spark plans no further
micro-batch (no new data; our queries have no no-data batches); the batch already running
finishes and commits, and the query is stopped idle instead of having a write job cancelled
under it. The processor removes the file when it starts again.
"""
from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

#: the reader option naming the hold file
OPTION = "holdFile"


def holding(reader: Any, path: str | None) -> Any:
    """``reader`` (an admission-controlled ``DataSourceStreamReader``), answering no new data while
    ``path`` exists; unchanged without a path."""
    if not path:
        return reader
    base = type(reader)

    def latestOffset(self, start: dict, limit: Any) -> dict:  # noqa: N802 - Spark's name
        if start is not None and os.path.exists(path):
            return start
        return base.latestOffset(self, start, limit)

    reader.__class__ = type(f"Holding{base.__name__}", (base,), {"latestOffset": latestOffset})
    return reader


def hold_still(path: Path, query: Any, wait_s: float) -> None:
    """Write the hold file, then wait (at most ``wait_s``) until the streaming query ``query``
    runs no trigger: the batch it was running has committed and no other will start."""
    try:
        path.touch()
        deadline = time.monotonic() + wait_s
        while query.isActive and query.status["isTriggerActive"] and time.monotonic() < deadline:
            time.sleep(0.05)
    except Exception:  # noqa: BLE001 - a failed query: its caller stops it all the same
        pass
