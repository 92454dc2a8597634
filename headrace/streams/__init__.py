"""Embedded, durable sharded streams (after Amazon Kinesis Data Streams and its client library).

On disk, under the headrace home (``--home``, ``$HEADRACE_HOME``, default ``./.headrace``)::

    streams/<name>/
      stream.json             shard table (format 1): shards, hash key ranges, lineage, state
      stream.lock             flock: serializes resharding
      shards/<shard>.log      record frames (see headrace.streams.log)
      shards/<shard>.idx      u64 byte offset of each record, in sequence order
      shards/<shard>.lock     flock: serializes appends to the shard (and its closing)
      groups/<group>/leases.json, leases.lock
                              a consumer group's lease table (see headrace.streams.leases)

``stream.json`` is replaced atomically (temp file, fsync, rename, fsync of the directory). A
shard (``shard-NNNNNN``) owns the inclusive hash key range ``[start, end]`` of the 128-bit
space; the hash key of a record is the MD5 of its partition key (UTF-8) as a big-endian
integer. ``create --shards N`` divides the space evenly. Records are ``(partition key, data,
sequence number, arrival time)``; sequence numbers are 0, 1, 2 ... per shard, arrival times
(µs, UTC, stamped by the writer) never decrease within a shard. Data is text: JSON for
records put as values, any text for records put raw.

Guarantees
- Durability: a put is acknowledged (returns, or ``stream put`` prints its line) only after
  the shard log is fsynced. A crash of a writer at any point loses no acknowledged record. A
  put that was not acknowledged may or may not be stored (retrying it may store it twice,
  as with any at-least-once producer).
- Torn writes: a partial or invalid frame at the end of a log is cut by the next writer
  (under the shard lock) before it appends, and by resharding before it closes a shard.
  Readers read only indexed records, which are complete and durable.
- Concurrency: any number of processes may put, reshard and read one stream at once.
- Resharding: ``split`` closes a shard and opens two children that share its range;
  ``merge`` closes two adjacent shards and opens one child. A closed shard takes no more
  writes (a writer that raced with the reshard re-routes under the shard lock) and keeps
  its records and its ``end_seq`` (record count). Lineage: ``parents`` and ``children``.
- Order: per partition key, consumers see records in put order, across any number of
  reshardings, because a child is read only after all its parents are drained
  (:func:`headrace.streams.stream.readable`, the lease table, the Spark source).
- Consumers: see :mod:`headrace.streams.leases` (at-least-once across crashes; re-delivery
  is limited to what a crashed worker delivered after its last checkpoint).
- No retention: records are kept until the stream directory is deleted.
"""
from .errors import (CorruptLog, InvalidArgument, MergeNotAdjacent, ShardClosed, ShardUnknown,
                     SplitKeyOutOfRange, StreamError, StreamExists, StreamUnknown)
from .leases import Lease, LeaseTable, Worker
from .log import Record
from .stream import (MAX_HASH, PutResult, Shard, Stream, create_stream, hash_key, list_streams, readable,
                     watermark_partitions)

__all__ = [
    "CorruptLog", "InvalidArgument", "MergeNotAdjacent", "ShardClosed", "ShardUnknown",
    "SplitKeyOutOfRange", "StreamError", "StreamExists", "StreamUnknown", "Lease", "LeaseTable", "Worker",
    "Record", "MAX_HASH", "PutResult", "Shard", "Stream", "create_stream", "hash_key", "list_streams",
    "readable", "watermark_partitions",
]
