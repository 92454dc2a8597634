"""Retrying calls to an external server, then failing with a reason that names the connection.

Every call a connector makes to its server (planning a batch, reading a range, writing a
batch) goes through :func:`call`: a failure is retried with exponential backoff; when the
attempts are used up, :class:`ConnectorUnavailable` names the connection, what was being done
and the last error, with any password masked (:func:`headrace.connections.redact`). The
position is never lost: a failed planning or read fails the micro-batch before it commits, so a
restart reads the same range again.

A connection may set ``retry: {attempts, backoffMs, timeoutMs}`` (defaults 5, 200, 5000):
``attempts`` tries in all, the first wait ``backoffMs`` doubling each time (at most 5 s), and
``timeoutMs`` the time one attempt may take where the client has a timeout.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable, Mapping, TypeVar

from ..connections import URL_PASSWORD
from ..errors import HeadraceError

T = TypeVar("T")


class ConnectorUnavailable(HeadraceError):
    """The server of a connection could not be reached (after retries) or refused the call."""

    code = "CONNECTION_UNAVAILABLE"


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int = 5
    backoff_ms: int = 200
    timeout_ms: int = 5000

    @classmethod
    def of(cls, options: Mapping[str, Any]) -> "RetryPolicy":
        r = options.get("retry") or {}
        return cls(int(r.get("attempts", cls.attempts)), int(r.get("backoffMs", cls.backoff_ms)),
                   int(r.get("timeoutMs", cls.timeout_ms)))


def mask(text: str, secrets: tuple[str, ...] = ()) -> str:
    """``text`` with URL passwords and the given secrets masked."""
    out = URL_PASSWORD.sub(r"\1***\3", text)
    for s in secrets:
        if s:
            out = out.replace(s, "***")
    return out


def call(conn_name: str, what: str, fn: Callable[[], T], policy: RetryPolicy, *,
         retryable: Callable[[BaseException], bool] = lambda e: True, secrets: tuple[str, ...] = ()) -> T:
    """``fn()``, retried per ``policy`` while ``retryable(error)``; then :class:`ConnectorUnavailable`."""
    wait = policy.backoff_ms / 1000
    for attempt in range(1, policy.attempts + 1):
        try:
            return fn()
        except Exception as exc:  # noqa: BLE001 - classified below
            last = exc
            if attempt == policy.attempts or not retryable(exc):
                break
            time.sleep(wait)
            wait = min(wait * 2, 5.0)
    raise ConnectorUnavailable(mask(f"connection {conn_name!r}: {what} failed after {attempt} attempt(s): "
                                    f"{type(last).__name__}: {last}", secrets)) from None
