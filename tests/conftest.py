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

    spark = get_spark(os.environ.get("HEADRACE_TEST_MASTER", "local[2]"))
    if os.environ.get("HEADRACE_TEST_DF_DEBUG", "0") != "1":
        _no_dataframe_debugging(spark)
    return spark


def _no_dataframe_debugging(spark) -> None:
    """PySpark 4 wraps every Column function in a call-site recorder (DataFrame debugging): about
    five extra py4j round trips per function call, and MQL expressions compile to thousands of
    calls. It only adds Python call sites to Spark's own exception context, which no test reads;
    ``HEADRACE_TEST_DF_DEBUG=1`` keeps it."""
    import pyspark.errors.utils as perr

    spark.conf.set("spark.python.sql.dataFrameDebugging.enabled", "false")
    perr._enable_debugging_cache = None   # PySpark caches the setting at its first Column call


@pytest.fixture(autouse=True)
def _headrace_home(tmp_path, monkeypatch):
    """Every test gets its own headrace home, never the working directory's."""
    monkeypatch.setenv("HEADRACE_HOME", str(tmp_path / "home"))


def _shared_fixture_group(item) -> str | None:
    """The xdist group of a test that uses one of the suite's own module- or session-scoped
    fixtures (other than the per-process ``spark``): the test module for a module fixture, the
    fixture's name for a session one (its users across modules run where it was built)."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return None
    session, module = [], False
    for name, defs in info.name2fixturedefs.items():
        d = defs[-1] if defs else None
        if d is None or name == "spark" or not d.baseid:   # plugins' fixtures have no baseid
            continue
        if d.scope in ("session", "package"):
            session.append(name)
        elif d.scope in ("module", "class"):
            module = True
    if session:
        return "fixture:" + min(session)
    if module:
        return "module:" + item.nodeid.split("::", 1)[0]
    return None


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """``make test`` runs the suite in two pytest-xdist workers (``--dist loadgroup``). Tests that
    share an expensive fixture (a module's ``headrace serve``, a session's PostgreSQL servers, a
    module's Spark results) get one ``xdist_group`` so one worker builds it once. A test module can
    also set ``pytest.mark.xdist_group(name)`` itself (e.g. tests that must not overlap)."""
    if not config.pluginmanager.hasplugin("xdist"):
        return
    for item in items:
        if item.get_closest_marker("xdist_group") is not None:
            continue
        group = _shared_fixture_group(item)
        if group is not None:
            item.add_marker(pytest.mark.xdist_group(group))
