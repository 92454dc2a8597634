"""headrace: stream processors written as MongoDB-style aggregation pipelines, run on Apache Spark.

Layers, pure Python first and Spark last:
``spec`` (parse into frozen dataclasses) -> ``spec.validate`` -> ``plan`` (logical plan)
-> ``spark`` (compile to Spark Structured Streaming). Only ``headrace.spark`` imports pyspark.
"""

__version__ = "0.1.0"
