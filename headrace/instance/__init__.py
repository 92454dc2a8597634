"""The stream processing instance: named processors on workers of 4 slots.

Pure Python here (catalog, placement, tokens, control plane, HTTP API, page, client); the
worker process (:mod:`headrace.instance.worker`) imports pyspark lazily, only in itself.
Modules: ``placement`` (the slot rule), ``catalog`` (SQLite), ``compat`` (modify with
resumeFromCheckpoint), ``tokens`` (roles), ``workers`` (worker process handles), ``control``
(lifecycle, faults, sampling), ``api`` (FastAPI), ``metrics`` (Prometheus), ``page`` (HTML),
``client`` (:class:`Client`), ``cli`` (``headrace serve`` and ``headrace sp``).
"""
from .client import ApiError, Client

__all__ = ["ApiError", "Client"]
