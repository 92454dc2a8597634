"""Spark's shuffle partitions (:func:`headrace.spark.session.shuffle_partitions`): a local
master's cores, the environment's choice first, the default on a cluster."""
from __future__ import annotations

import os

from headrace.spec import defaults
from headrace.spark.session import shuffle_partitions


def test_a_local_master_gets_its_cores(monkeypatch):
    monkeypatch.delenv("HEADRACE_SHUFFLE_PARTITIONS", raising=False)
    assert shuffle_partitions("local[*]") == max(1, os.cpu_count() or 1)
    assert shuffle_partitions("local[3]") == 3
    assert shuffle_partitions("local[2, 4]") == 2      # with task retries
    assert shuffle_partitions("local") == 1


def test_a_cluster_gets_the_default(monkeypatch):
    monkeypatch.delenv("HEADRACE_SHUFFLE_PARTITIONS", raising=False)
    assert shuffle_partitions("spark://127.0.0.1:7077") == defaults.SHUFFLE_PARTITIONS


def test_the_environment_decides_first(monkeypatch):
    monkeypatch.setenv("HEADRACE_SHUFFLE_PARTITIONS", "7")
    assert shuffle_partitions("local[*]") == 7
    assert shuffle_partitions("spark://127.0.0.1:7077") == 7
