"""Connectors to external systems: Kafka topics and Redis Streams as sources and sinks.

Pure Python (no pyspark): the clients, retries and the sink side (a :class:`Collection` per
topic or stream, opened through :func:`headrace.collections.open_collection`, so ``$emit`` and
the DLQ write to them like to any other backend). The Spark readers live in
:mod:`headrace.spark.sources.kafka` and :mod:`headrace.spark.sources.redis_stream`.
"""
