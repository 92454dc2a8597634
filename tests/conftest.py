"""Shared fixtures: one local SparkSession for the whole run (it takes ~6 s to start)."""
from __future__ import annotations

import os
import sys

import pytest

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
os.environ.setdefault("HEADRACE_SHUFFLE_PARTITIONS", "2")


@pytest.fixture(scope="session")
def spark():
    from headrace.spark.session import get_spark

    return get_spark(os.environ.get("HEADRACE_TEST_MASTER", "local[2]"))


@pytest.fixture(autouse=True)
def _headrace_home(tmp_path, monkeypatch):
    """Every test gets its own headrace home, never the working directory's."""
    monkeypatch.setenv("HEADRACE_HOME", str(tmp_path / "home"))
