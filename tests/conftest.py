"""Shared fixtures: one local SparkSession for the whole run (it takes ~6 s to start)."""
from __future__ import annotations

import json
import os
import sys

import pytest

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
os.environ.setdefault("HEADRACE_SHUFFLE_PARTITIONS", "2")


@pytest.fixture(scope="session")
def spark():
    from headrace.spark.session import codegen_min_rows, get_spark, use_codegen

    spark = get_spark(os.environ.get("HEADRACE_TEST_MASTER", "local[2]"))
    # the tests' own DataFrames are a few rows, which the engine evaluates without generated code
    # (:func:`headrace.spark.session.use_codegen`); processors still choose per micro-batch
    use_codegen(spark, codegen_min_rows() == 0)
    return spark


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


#: Modules by how long they keep a worker busy (a fresh-clone run's --durations), longest first:
#: the scheduler deals them out before the many short ones, so both workers finish together.
HEAVY = ("integration/test_standalone_cluster", "timesem/test_restart", "integration/test_kafka",
         "integration/test_exactlyonce_pg", "integration/test_redis_streams", "instance/test_instance_faults",
         "keyed_spark/", "spark/test_expressions.py", "instance/test_instance_api", "timesem/test_acceptance",
         "spark/test_window_partial", "timesem/test_random_model", "spark/test_error_isolation",
         "spark/test_window_stages", "instance/", "integration/", "spark/", "golden/")


def _heaviness(item) -> int:
    path = item.nodeid.split("::", 1)[0]
    return next((i for i, h in enumerate(HEAVY) if h in path), len(HEAVY))


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """``make test`` runs the suite in two pytest-xdist workers. Tests that share an expensive
    fixture (a module's ``headrace serve``, a session's PostgreSQL servers, a module's Spark
    results) form one group, run by one worker so the fixture is built once; other tests are
    dealt one by one. A module may also set ``pytest.mark.xdist_group(name)`` itself (e.g. tests
    that must not overlap). Each worker writes the groups where the scheduler below reads them
    (pytest 9.2 ignores xdist's own way of passing ``xdist_group`` to its ``loadgroup``)."""
    groups_dir = os.environ.get("HEADRACE_XDIST_GROUPS")
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if not groups_dir or not worker:
        return
    items.sort(key=_heaviness)
    groups = {}
    for item in items:
        mark = item.get_closest_marker("xdist_group")
        group = (mark.args[0] if mark.args else mark.kwargs.get("name", "default")) if mark else \
            _shared_fixture_group(item)
        if group is not None:
            groups[item.nodeid] = str(group)
    path = os.path.join(groups_dir, f"{worker}.json")
    with open(path + ".tmp", "w") as f:
        json.dump(groups, f)
    os.replace(path + ".tmp", path)


def pytest_configure(config):
    if getattr(config.option, "numprocesses", None) and not hasattr(config, "workerinput"):
        import tempfile

        os.environ["HEADRACE_XDIST_GROUPS"] = tempfile.mkdtemp(prefix="headrace-xdist-groups-")


def pytest_unconfigure(config):
    if not hasattr(config, "workerinput") and os.environ.get("HEADRACE_XDIST_GROUPS"):
        import shutil

        shutil.rmtree(os.environ.pop("HEADRACE_XDIST_GROUPS"), ignore_errors=True)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """Groups (see above) go whole to one worker, in collection order; other tests one by one."""
    from xdist.scheduler import LoadScopeScheduling

    groups_dir = os.environ["HEADRACE_XDIST_GROUPS"]

    class GroupScheduling(LoadScopeScheduling):
        _groups: dict | None = None

        def _split_scope(self, nodeid: str) -> str:
            if self._groups is None:
                import glob

                files = sorted(glob.glob(os.path.join(groups_dir, "*.json")))
                self._groups = json.load(open(files[0])) if files else {}
            group = self._groups.get(nodeid)
            return "group:" + group if group is not None else nodeid

    return GroupScheduling(config, log)
