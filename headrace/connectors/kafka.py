"""Kafka: client configuration, offsets, reading a partition range, and topics as sinks.

A connection ``{type: kafka, bootstrapServers, security: {protocol}, authentication:
{mechanism, username, password}, retry: {...}}`` (:mod:`headrace.connections`) becomes a
librdkafka configuration (``confluent-kafka``); the password never appears in a message.

**Ends of partitions.** A partition's end is the offset after its last record. Apache Kafka
reports it as the high watermark. Tansu 0.6 (the broker the tests run) reports the *base offset
of the last record batch plus one* instead, which is short of the end whenever the last batch
holds more than one record (a partition of 1,000 records written in one batch reports 1). So
:meth:`KafkaClient.ends` treats the reported value as a lower bound: it fetches from the
reported value minus one and takes the end after the last record that fetch returns (on Apache
Kafka the same probe returns the reported end). A probe is made only when the reported value
changed since the last one.

**Sink.** :class:`KafkaTopic` is a :class:`headrace.store.base.Collection` written by ``$emit``
and the DLQ: each document becomes one message (relaxed Extended JSON, or canonical with
``config.outputFormat``; header ``hr-id`` the canonical Extended JSON of its ``_id``, which is
also the key unless ``config.key`` gives one, :mod:`.kafka_message`; ``config.headers`` come
first), in the topic partition ``crc32(key) mod partitions``, through the idempotent producer (no duplicates from producer retries, order kept
per partition). A replayed micro-batch writes the same documents to the same partitions; before
writing, the sink reads back as many of each partition's last records as it is about to write
there and skips documents whose ``hr-id`` it finds, so a batch that was written (wholly or in
part) before a crash is not written twice. That holds while the processor is the only writer of
the topic; with other writers appending in between it degrades to at-least-once.

The client side (configuration, offsets, reading) is in :mod:`.kafka_client`, the sink in
:mod:`.kafka_sink`; their names stay importable from here.
"""
from __future__ import annotations

from .kafka_client import KafkaClient, client_config, pkey, read_range, secrets, split_pkey
from .kafka_message import message_of
from .kafka_sink import ID_HEADER, KafkaTopic, open_collection

__all__ = ["ID_HEADER", "client_config", "secrets", "pkey", "split_pkey", "KafkaClient", "read_range",
           "open_collection", "KafkaTopic", "message_of"]
