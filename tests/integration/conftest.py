"""Fixtures that start real servers (see ``servers.py``). Tests skip with a reason when the
server binaries are missing.

- ``pg_factory`` (session): makes private PostgreSQL servers from one ``initdb`` template.
- ``pg_servers`` (session): three running servers, shared by the session's tests.
- ``pg3`` / ``pg2``: the servers (all three, or the first two), each running when the test
  starts and started again afterwards (tests may stop, crash or pause them).
- ``schema``: a fresh database (PostgreSQL schema) name for the test.
"""
from __future__ import annotations

import importlib.util
import sys
import uuid
from pathlib import Path

import pytest


def _load_servers():
    name = "headrace_test_servers"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name("servers.py"))
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
    return sys.modules[name]


servers = _load_servers()


@pytest.fixture(scope="session")
def pg_factory():
    try:
        f = servers.PostgresFactory()
        f.template()
    except servers.ServersUnavailable as exc:
        pytest.skip(str(exc))
    yield f
    f.cleanup()


@pytest.fixture(scope="session")
def pg_servers(pg_factory):
    return [pg_factory.create(f"pg{i}") for i in range(3)]


def _running(srvs):
    for s in srvs:
        s.ensure_running()
    yield srvs
    for s in srvs:
        s.ensure_running()


@pytest.fixture
def pg3(pg_servers):
    yield from _running(pg_servers)


@pytest.fixture
def pg2(pg_servers):
    yield from _running(pg_servers[:2])


@pytest.fixture
def schema():
    return "t_" + uuid.uuid4().hex[:10]
