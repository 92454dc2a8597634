"""headrace: stream processors written as MongoDB-style aggregation pipelines, run on Apache Spark.

Layers, pure Python first and Spark last:
``spec`` (parse into frozen dataclasses) -> ``spec.validate`` -> ``plan`` (logical plan)
-> ``spark`` (compile to Spark Structured Streaming). Only ``headrace.spark`` imports pyspark.
"""

__version__ = "0.1.0"


def __getattr__(name: str):
    """``headrace.Client``: the instance's HTTP client (imported on first use)."""
    if name == "Client":
        from .instance.client import Client

        return Client
    raise AttributeError(name)
