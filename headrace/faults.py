"""Crash injection for the exactly-once trials (tests only; a no-op unless configured).

``HEADRACE_CRASH_AT="<point>:<batch>"`` (or ``"<point>:*"``) makes the process group of the
processor die by ``SIGKILL`` when it reaches ``point`` in micro-batch ``batch``, as a machine
losing power would: the driver, its Spark JVM and the Python workers all at once, with no
clean-up. Points: ``after_dedup`` (the de-duplication catalog's version for the batch is
written, nothing else), ``pg_in_txn`` (inside the PostgreSQL sink's transaction, documents
written, not committed), ``after_sink`` (sink and DLQ written, engine state not),
``after_state`` (engine state written, Spark's commit log not). Works on executors too (the
environment is inherited by the Spark JVM and its Python workers): set ``HEADRACE_CRASH_PGID``
to the processor's process group before Spark starts, since Spark's Python daemon puts its
workers in a process group of their own.
"""
from __future__ import annotations

import os
import signal


def maybe_crash(point: str, batch: int | None) -> None:
    spec = os.environ.get("HEADRACE_CRASH_AT")
    if not spec:
        return
    want, _, b = spec.partition(":")
    if want != point or (b not in ("", "*") and str(batch) != b):
        return
    marker = os.environ.get("HEADRACE_CRASH_MARKER")
    if marker:       # tell the test which point was reached before dying
        with open(marker, "a") as f:
            f.write(f"{point}:{batch}\n")
            f.flush()
            os.fsync(f.fileno())
    # the processor's group (set by the process that started the processor), then our own: the
    # Python daemon of Spark puts its workers in a group of their own
    for pg in (os.environ.get("HEADRACE_CRASH_PGID"), os.getpgid(0)):
        try:
            if pg:
                os.killpg(int(pg), signal.SIGKILL)
        except (ProcessLookupError, PermissionError, ValueError):
            pass
    os.kill(os.getpid(), signal.SIGKILL)
