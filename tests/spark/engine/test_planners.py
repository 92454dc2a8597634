"""Spark's Python data source planner workers (:mod:`headrace.spark.planners`) are stopped once a
query is past its first micro-batch, and Spark forks new ones for the next query."""
from __future__ import annotations

import pytest

from headrace.spark.planners import planner_pids
from headrace.testing import run_pipeline

pytestmark = pytest.mark.spark

DOCS = [{"a": i} for i in range(5)]
PIPELINE = [{"$match": {"a": {"$gte": 2}}}, {"$project": {"_id": 0, "a": 1}}]


def _run(tmp_path, name: str) -> list:
    # a checkpoint makes it a streaming query over the inline documents' Python data source
    res = run_pipeline(PIPELINE, DOCS, checkpoint=tmp_path / name)
    return sorted(d["a"] for d in res.outputs)


def test_planners_stop_after_the_first_batch_and_come_back_for_the_next_query(tmp_path, monkeypatch):
    monkeypatch.setenv("HEADRACE_KEEP_PLANNERS", "1")
    assert _run(tmp_path, "kept") == [2, 3, 4]
    assert planner_pids(), "the planner workers of a started query are found"

    monkeypatch.delenv("HEADRACE_KEEP_PLANNERS")
    assert _run(tmp_path, "stopped") == [2, 3, 4]
    assert planner_pids() == []

    # the next query needs them again: their daemons fork new ones
    assert _run(tmp_path, "again") == [2, 3, 4]
    assert planner_pids() == []


def test_stopped_planner_workers_are_gone_before_the_next_query_starts(tmp_path, monkeypatch):
    """``stop_planners`` returns only once the signalled workers have exited: Spark hands the
    next query an idle worker whose process still looks alive, and a worker signalled but not
    yet exited crashed that query's planning (``Python worker exited unexpectedly``)."""
    import os

    from headrace.spark.planners import stop_planners

    monkeypatch.setenv("HEADRACE_KEEP_PLANNERS", "1")
    assert _run(tmp_path, "kept") == [2, 3, 4]
    pids = planner_pids()
    assert pids
    assert stop_planners() == len(pids)
    assert [p for p in pids if os.path.exists(f"/proc/{p}")] == []
    assert _run(tmp_path, "next") == [2, 3, 4]      # at once: the daemons fork new workers


def test_planner_processes_import_the_installed_pyspark(spark):
    """Spark's planner processes (here: creating a Python data source and asking its schema)
    import pyspark from site-packages, not from ``SPARK_HOME``'s zip (headrace.spark.spark_home)."""
    from pyspark.sql.datasource import DataSource

    class WhereFrom(DataSource):
        @classmethod
        def name(cls):
            return "headrace_test_where_from"

        def schema(self):
            import pyspark

            return "zip int" if ".zip" in pyspark.__file__ else "site_packages int"

    spark.dataSource.register(WhereFrom)
    assert spark.read.format("headrace_test_where_from").load().schema.names == ["site_packages"]
