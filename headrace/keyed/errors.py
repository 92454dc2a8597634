"""Errors of keyed computations, with stable codes (``KEYED_*``)."""
from __future__ import annotations

from ..errors import HeadraceError


class KeyedError(HeadraceError):
    """A keyed-computation error. Codes:

    - ``KEYED_NAME``: a computation, injector or stream name is empty, reserved or used twice.
    - ``KEYED_STREAM_UNKNOWN``: a computation reads a stream that nothing produces.
    - ``KEYED_CYCLE``: the topology has a cycle (topologies are directed acyclic graphs).
    - ``KEYED_PRODUCE``: a computation produced into a stream it did not declare as output, or
      a record that is not ``(str key, JSON value, int timestamp)``.
    - ``KEYED_STATE``: a state name the computation did not declare, or of another kind.
    - ``KEYED_TIMER``: a timer of the wrong domain, or not an integer timestamp.
    - ``KEYED_NOT_SUPPORTED``: supported by the reference runner but not (yet) by this runner.
    - ``KEYED_TOPOLOGY_CHANGE``: a running topology cannot follow the requested change.
    """

    code = "KEYED_ERROR"

    def __init__(self, code: str, message: str):
        super().__init__(message, code=code)
