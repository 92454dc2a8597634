"""Keyed computations in the style of MillWheel (pure Python; no pyspark import).

- :mod:`.api`: ``Computation``, ``Record``, ``Timer``, state declarations.
- :mod:`.context`: the per-key ``Context`` (state, timers, ``produce``).
- :mod:`.topology`: ``Topology`` (injectors, computations, streams).
- :mod:`.watermark`: low watermarks (injector rule, computation rule).
- :mod:`.reference`: the in-memory reference runner (same semantics as Spark's).
- :mod:`.channel`: the on-disk streams between computations of the Spark runner.
- ``headrace.spark.keyed``: the Spark runner (transformWithStateInPandas + RocksDB).
- :mod:`.zeitgeist`: the Zeitgeist example (generator, detector topology, evaluator, CLI).
"""
from .api import Computation, ListState, MapState, Record, StateSpec, Timer, ValueState
from .errors import KeyedError
from .reference import ReferenceRunner
from .topology import Topology

__all__ = ["Computation", "ListState", "MapState", "Record", "StateSpec", "Timer", "ValueState", "KeyedError",
           "ReferenceRunner", "Topology"]
