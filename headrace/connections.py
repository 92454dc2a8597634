"""The connection registry: named connections read from a YAML file, plus built-ins.

File shape (``headrace.yaml``)::

    connections:
      mystore: {type: store, path: ./data/store}
      events:  {type: stream, home: ./.headrace}
      pg:      {type: postgres, dsn: "postgresql://user:secret@127.0.0.1:5432/app"}
      lines:   {type: file, path: ./input.jsonl}
      events:  {type: zoned, shardKey: {datacenter: 1, userid: 1}, zones: {...}, ranges: [...]}  # headrace.zones.config
      kafka:   {type: kafka, bootstrapServers: "host:9092,host2:9092",
                security: {protocol: SASL_SSL},                    # optional: PLAINTEXT (default), SSL, SASL_...
                authentication: {mechanism: PLAIN, username: u, password: p}}   # optional
      redis:   {type: redis, url: "redis://:password@127.0.0.1:6379/0"}
      mongo:   {type: mongodb, uri: "mongodb://user:password@127.0.0.1:27017/"}

Built-in: ``sample_stream_solar`` (type ``sample``) and ``store`` (the embedded store under the
headrace home). Secrets are never printed: :func:`redact` masks them.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from .errors import ConfigError

KNOWN_TYPES = {"sample", "file", "store", "stream", "postgres", "redis", "zoned", "kafka", "mongodb", "https"}
NOT_SUPPORTED_YET = {"https"}
SECRET_KEYS = re.compile(r"(pass(word)?|secret|token|api[_-]?key|credential)", re.I)
URL_PASSWORD = re.compile(r"(://[^:/@\s]*:)([^@/\s]+)(@)")
DEFAULT_FILE = "headrace.yaml"


def headrace_home(explicit: "str | os.PathLike[str] | None" = None) -> Path:
    """``--home``, else ``$HEADRACE_HOME``, else ``./.headrace``."""
    return Path(explicit or os.environ.get("HEADRACE_HOME") or ".headrace")


@dataclass(frozen=True)
class Connection:
    name: str
    type: str
    options: Mapping[str, Any] = field(default_factory=dict)

    def redacted(self) -> dict:
        return {"name": self.name, "type": self.type, **redact(dict(self.options))}


def redact(value: Any, key: str = "") -> Any:
    """A copy with secret values masked as ``"***"`` (keys like password/token, URL passwords)."""
    if isinstance(value, dict):
        return {k: redact(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [redact(v, key) for v in value]
    if isinstance(value, str):
        if key and SECRET_KEYS.search(key):
            return "***"
        return URL_PASSWORD.sub(r"\1***\3", value)
    return value


class Registry:
    """Named connections. ``get`` raises :class:`ConfigError` naming the unknown connection."""

    def __init__(self, connections: Mapping[str, Connection], home: Path, source: str | None = None):
        self._c = dict(connections)
        self.home = home
        self.source = source

    def get(self, name: str) -> Connection:
        if name not in self._c:
            raise ConfigError(
                f"unknown connection {name!r}; known: {sorted(self._c)}"
                + (f" (from {self.source})" if self.source else ""), code="CONNECTION_UNKNOWN")
        return self._c[name]

    def __contains__(self, name: str) -> bool:
        return name in self._c

    def names(self) -> list[str]:
        return sorted(self._c)

    def list(self) -> list[dict]:
        return [self._c[n].redacted() for n in self.names()]

    def store_path(self, name: str) -> Path:
        """The directory of a ``store`` connection."""
        c = self.get(name)
        if c.type != "store":
            raise ConfigError(f"connection {name!r} is of type {c.type!r}, not 'store'", code="CONNECTION_TYPE")
        return Path(c.options.get("path") or (self.home / "store"))


def builtin(home: Path) -> dict[str, Connection]:
    return {
        "sample_stream_solar": Connection("sample_stream_solar", "sample", {}),
        "store": Connection("store", "store", {"path": str(home / "store")}),
        "stream": Connection("stream", "stream", {"home": str(home)}),
    }


def load_registry(path: "str | os.PathLike[str] | None" = None, home: "str | os.PathLike[str] | None" = None,
                  extra: Mapping[str, Mapping[str, Any]] | None = None) -> Registry:
    """Built-ins, then the YAML file (``path``, else ``./headrace.yaml`` when present), then ``extra``."""
    home_p = headrace_home(home)
    conns = builtin(home_p)
    source = None
    if path is None and Path(DEFAULT_FILE).exists():
        path = DEFAULT_FILE
    raw: dict[str, Any] = {}
    if path is not None:
        import yaml

        p = Path(path)
        if not p.exists():
            raise ConfigError(f"connections file {str(p)!r} does not exist", code="CONNECTIONS_FILE")
        try:
            data = yaml.safe_load(p.read_text()) or {}
        except yaml.YAMLError as exc:
            raise ConfigError(f"{p}: not valid YAML: {exc}", code="CONNECTIONS_FILE") from exc
        if not isinstance(data, dict) or not isinstance(data.get("connections", {}), dict):
            raise ConfigError(f"{p}: expected a mapping with a 'connections' mapping", code="CONNECTIONS_FILE")
        raw.update(data.get("connections") or {})
        source = str(p)
    raw.update(extra or {})
    for name, opts in raw.items():
        where = f"{source or 'connections'}: connection {name!r}"
        if not isinstance(opts, dict):
            raise ConfigError(f"{where}: expected a mapping, found {type(opts).__name__}", code="CONNECTION_INVALID")
        ctype = opts.get("type")
        if ctype not in KNOWN_TYPES:
            raise ConfigError(f"{where}: 'type' must be one of {sorted(KNOWN_TYPES - NOT_SUPPORTED_YET)}, found {ctype!r}",
                              code="CONNECTION_INVALID")
        if ctype in NOT_SUPPORTED_YET:
            raise ConfigError(f"{where}: type {ctype!r} is not supported yet", code="NOT_SUPPORTED_YET")
        options = {k: v for k, v in opts.items() if k != "type"}
        if ctype == "file" and not isinstance(options.get("path"), str):
            raise ConfigError(f"{where}: a file connection needs 'path' (a JSON-lines file)", code="CONNECTION_INVALID")
        if ctype == "kafka":
            _check_kafka(options, where)
        if ctype == "redis" and not (isinstance(options.get("url"), str) and options["url"].startswith(("redis://", "rediss://", "unix://"))):
            raise ConfigError(f"{where}: a redis connection needs 'url' (redis://[:password@]host:port/db)",
                              code="CONNECTION_INVALID")
        if ctype == "mongodb" and not (isinstance(options.get("uri"), str)
                                       and options["uri"].startswith(("mongodb://", "mongodb+srv://"))):
            raise ConfigError(f"{where}: a mongodb connection needs 'uri' (mongodb://[user:password@]host:port/...)",
                              code="CONNECTION_INVALID")
        if ctype in ("store", "file") and "path" in options and source:
            base = Path(source).parent
            options["path"] = str((base / options["path"]) if not Path(options["path"]).is_absolute() else options["path"])
        conns[name] = Connection(name, ctype, options)
    return Registry(conns, home_p, source)


KAFKA_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
KAFKA_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")


def _check_kafka(options: dict, where: str) -> None:
    bs = options.get("bootstrapServers")
    if not isinstance(bs, str) or not bs.strip():
        raise ConfigError(f"{where}: a kafka connection needs 'bootstrapServers' (\"host:port,...\")",
                          code="CONNECTION_INVALID")
    extra = set(options) - {"bootstrapServers", "security", "authentication", "retry"}
    if extra:
        raise ConfigError(f"{where}: unknown kafka option(s) {sorted(extra)}; expected bootstrapServers, security,"
                          " authentication, retry", code="CONNECTION_INVALID")
    sec = options.get("security", {})
    if not isinstance(sec, dict) or set(sec) - {"protocol"} or sec.get("protocol", "PLAINTEXT") not in KAFKA_PROTOCOLS:
        raise ConfigError(f"{where}: 'security' must be {{protocol: one of {', '.join(KAFKA_PROTOCOLS)}}}",
                          code="CONNECTION_INVALID")
    auth = options.get("authentication")
    if auth is not None:
        if not isinstance(auth, dict) or set(auth) - {"mechanism", "username", "password"} or \
                auth.get("mechanism", "PLAIN") not in KAFKA_MECHANISMS or not isinstance(auth.get("username"), str):
            raise ConfigError(f"{where}: 'authentication' must be {{mechanism: one of {', '.join(KAFKA_MECHANISMS)},"
                              " username, password}", code="CONNECTION_INVALID")
