"""The Spark layer: the only package that imports pyspark.

Documents travel as one Spark VARIANT column (``doc``). MQL expressions and queries compile to
native Catalyst Column expressions over it; sources are Python Data Source stream readers; the
engine drives each micro-batch (watermark, windows, DLQ, sinks) from ``foreachBatch``.
"""
