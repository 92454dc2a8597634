"""Errors of the sharded stream service, each with a stable code.

User errors (exit code 2 on the CLI) are :class:`StreamError` subclasses; :class:`CorruptLog`
is a runtime condition (exit code 1). A worker that loses a lease does not raise: it reports a
``lease_lost`` event (see :mod:`headrace.streams.leases`).
"""
from __future__ import annotations

from ..errors import HeadraceError


class StreamError(HeadraceError):
    code = "STREAM_ERROR"


class StreamUnknown(StreamError):
    code = "STREAM_UNKNOWN"


class StreamExists(StreamError):
    code = "STREAM_EXISTS"


class ShardUnknown(StreamError):
    code = "SHARD_UNKNOWN"


class ShardClosed(StreamError):
    code = "SHARD_CLOSED"


class MergeNotAdjacent(StreamError):
    code = "MERGE_NOT_ADJACENT"


class SplitKeyOutOfRange(StreamError):
    code = "SPLIT_KEY_OUT_OF_RANGE"


class InvalidArgument(StreamError):
    """A bad name, shard count, hash key, option value or input record."""

    code = "STREAM_ARGUMENT"


class CorruptLog(StreamError):
    """A shard log or the index has a bad record where durable data must be."""

    code = "STREAM_CORRUPT"
    exit_code = 1
