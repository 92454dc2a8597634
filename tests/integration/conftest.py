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
    return pg_factory.create_many([f"pg{i}" for i in range(3)])


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


@pytest.fixture
def zoned(tmp_path, schema):
    """``zoned(servers, **overrides) -> ZonedCollection`` on ``<schema>.msgs``: one zone per server
    (alfa, bravo, charlie), shard key {datacenter, userid}, a range per datacenter value, home
    zone alfa, writeTimeoutMs 1500, probeIntervalMs 300, dedupe by message_id."""
    import yaml

    from headrace.collections import open_collection
    from headrace.connections import load_registry
    from headrace.zones import forget_routers

    names = ["alfa", "bravo", "charlie"]

    def make(srvs, coll: str = "msgs", extra_connections: dict | None = None, **over):
        zs = names[:len(srvs)]
        opts = {
            "type": "zoned",
            "shardKey": {"datacenter": 1, "userid": 1},
            "zones": {z: {"postgres": s.dsn} for z, s in zip(zs, srvs)},
            "ranges": [{"zone": z, "min": {"datacenter": z, "userid": "$minKey"},
                        "max": {"datacenter": z, "userid": "$maxKey"}} for z in zs],
            "writer": {"homeZone": "alfa", "writeTimeoutMs": 1500, "probeIntervalMs": 300},
            "reads": {"dedupeField": "message_id"},
        }
        for k, v in over.items():
            opts[k] = {**opts[k], **v} if k in ("writer", "reads", "balancer") else v
        f = tmp_path / "connections.yaml"
        f.write_text(yaml.safe_dump({"connections": {"events": opts, **(extra_connections or {})}}, sort_keys=False))
        reg = load_registry(f, home=tmp_path / ".headrace")
        make.registry, make.file = reg, f
        return open_collection(reg, "events", schema, coll)

    forget_routers()
    yield make
    forget_routers()


@pytest.fixture(scope="session")
def tansu(tmp_path_factory):
    """A Kafka-protocol broker (Tansu, memory storage) for the session's tests (``tansu_on_s3``:
    one whose storage outlives its restart, for one test)."""
    try:
        srv = servers.TansuServer(tmp_path_factory.mktemp("tansu"))
    except servers.ServersUnavailable as exc:
        pytest.skip(str(exc))
    srv.start()
    yield srv
    srv.stop()


@pytest.fixture
def tansu_on_s3(tmp_path):
    """A Tansu broker whose storage outlives it: ``s3://tansu/`` on a private S3-protocol server
    (this Tansu build has no ``postgres://`` storage: it answers ``FeatureNotEnabled``)."""
    try:
        s3 = servers.S3Server(tmp_path / "s3")
        broker = servers.TansuServer(tmp_path / "tansu-s3", storage="s3://tansu/", s3=s3)
    except servers.ServersUnavailable as exc:
        pytest.skip(str(exc))
    s3.start()
    broker.start()
    yield broker
    broker.stop()
    s3.stop()


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory):
    """A private ``redis-server`` (password ``s3cret-pw``) for the session's tests."""
    try:
        srv = servers.RedisServer(tmp_path_factory.mktemp("redis"), password="s3cret-pw")
    except servers.ServersUnavailable as exc:
        pytest.skip(str(exc))
    srv.start()
    yield srv
    srv.stop()


@pytest.fixture(scope="session")
def mongo_server(tmp_path_factory):
    """A MongoDB wire-protocol server (secantusdb, on disk in a temp dir) for the session's tests."""
    try:
        srv = servers.SecantusServer(tmp_path_factory.mktemp("mongo"))
    except servers.ServersUnavailable as exc:
        pytest.skip(str(exc))
    srv.start()
    yield srv
    srv.stop()
