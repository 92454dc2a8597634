"""Zone health: which errors mean "this zone cannot take writes now" (:func:`is_zone_failure`),
the errors for a write not acknowledged in time (:class:`ZoneWriteTimeout`) and for every zone
down (:class:`ZonesDownError`), and :class:`ZoneState`, one zone's up/down state and counters.
"""
from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from ..errors import HeadraceError


class ZonesDownError(HeadraceError):
    """Every zone of a zoned connection is down and the policy is ``onAllZonesDown: fail``."""

    code = "ZONES_ALL_DOWN"
    exit_code = 1


class ZoneWriteTimeout(TimeoutError):
    """A zone did not acknowledge a write in time (the write may still complete)."""


def is_zone_failure(exc: BaseException) -> bool:
    """Errors that mean "this zone cannot take writes now" (as opposed to "this document is bad")."""
    try:
        import psycopg
    except ImportError:  # pragma: no cover
        psycopg = None
    if psycopg is not None:
        if isinstance(exc, psycopg.errors.TransactionRollback):   # deadlock, serialization: retry here
            return False
        if isinstance(exc, (psycopg.OperationalError, psycopg.InterfaceError)):
            return True
    return isinstance(exc, (TimeoutError, OSError, sqlite3.OperationalError, ConnectionError))


@dataclass
class ZoneState:
    name: str
    up: bool = True
    down_since: float | None = None
    down_since_iso: str | None = None
    next_probe: float = 0.0
    writes: int = 0
    batches: int = 0
    failovers_out: int = 0
    failovers_in: int = 0
    timeouts: int = 0
    errors: int = 0
    probes: int = 0
    last_error: str | None = None
    last_error_at: str | None = None
    probing: bool = False

    def to_dict(self) -> dict:
        return {"up": self.up, "downSince": self.down_since_iso, "writes": self.writes, "batches": self.batches,
                "failoversOut": self.failovers_out, "failoversIn": self.failovers_in, "timeouts": self.timeouts,
                "errors": self.errors, "probes": self.probes, "lastError": self.last_error,
                "lastErrorAt": self.last_error_at}
