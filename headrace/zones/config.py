"""The ``zoned`` connection: YAML shape, validation and the parsed configuration.

Shape (in the connections file)::

    connections:
      pg_alfa: {type: postgres, dsn: "postgresql://app:secret@10.0.1.5:5432/app"}
      events:
        type: zoned
        shardKey: {datacenter: 1, userid: 1}   # compound, ascending; dotted paths allowed
        zoneField: datacenter                  # rewritten on failover; default: first shard-key field
        zones:                                 # order = failover order (next zone, cyclic)
          alfa:    {connection: pg_alfa}                            # another postgres/store connection
          bravo:   {postgres: "postgresql://app@10.0.2.5:5432/app", statementTimeoutMs: 5000}
          charlie: {store: ./data/charlie, value: "charlie"}      # SQLite directory
        ranges:                                # min inclusive, max exclusive
          - {zone: alfa,  min: {datacenter: alfa,  userid: {$minKey: 1}}, max: {datacenter: alfa,  userid: {$maxKey: 1}}}
          - {zone: bravo, min: {datacenter: bravo, userid: $minKey},      max: {datacenter: bravo, userid: $maxKey}}
        defaultZone: alfa                      # for documents in no range; default: homeZone, else first zone
        writer:
          homeZone: alfa
          setZoneField: ifMissing              # ifMissing (default) | always | never
          writeTimeoutMs: 2000                 # per write (batch per zone); default 5000
          probeIntervalMs: 5000                # how often down zones are probed; default 5000
          onAllZonesDown: dlq                  # dlq (per-document errors, default) | fail (raise)
        reads: {dedupeField: message_id, keep: first}   # defaults for broadcast reads
        balancer: {docsPerSecond: 1000, window: "01:00-05:00", batchSize: 100}   # window in UTC
        checkZonesAtStart: true                # unreachable zone when first opened -> ConfigError

A zone's ``value`` is what the zone field is set to when a document is written there
(default: the zone name). Bounds list every shard-key field; ``{$minKey: 1}`` / ``{$maxKey: 1}``
(or the strings ``$minKey`` / ``$maxKey``) are the extremes; other values are Extended JSON.

Every error is a :class:`~headrace.errors.ConfigError` naming the connection and the field, with
a stable code: ``ZONES_INVALID`` (shape, unknown field), ``ZONES_SHARD_KEY``, ``ZONES_ZONE``
(a zone's store), ``ZONES_CONNECTION_UNKNOWN``, ``ZONES_RANGE_ZONE`` (unknown zone),
``ZONES_RANGE_BOUNDS`` (bad bounds), ``ZONES_RANGE_OVERLAP``, ``ZONES_WRITER``, ``ZONES_READS``,
``ZONES_BALANCER``; and ``ZONES_UNREACHABLE`` (see :mod:`headrace.zones.router`).
"""
from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from .. import ejson
from ..connections import Connection, Registry, redact
from ..errors import ConfigError
from .order import key_of, sort_key

TOP_KEYS = {"shardKey", "zoneField", "zones", "ranges", "defaultZone", "writer", "reads", "balancer",
            "checkZonesAtStart"}
ZONE_KEYS = {"connection", "postgres", "store", "value", "statementTimeoutMs", "connectTimeoutS"}
WRITER_KEYS = {"homeZone", "setZoneField", "writeTimeoutMs", "probeIntervalMs", "onAllZonesDown"}
READS_KEYS = {"dedupeField", "keep"}
BALANCER_KEYS = {"docsPerSecond", "window", "batchSize"}
WINDOW = re.compile(r"^\s*([01]?\d|2[0-3]):([0-5]\d)\s*-\s*([01]?\d|2[0-3]):([0-5]\d)\s*$")


@dataclass(frozen=True)
class ZoneSpec:
    name: str
    kind: str                  # "postgres" | "store"
    target: str = field(repr=False)   # DSN (may hold a password: not in repr) or SQLite directory
    value: Any                 # the zone field's value for documents written here
    field: str                 # config path, for messages ("zones.alfa.postgres")
    options: Mapping[str, Any] = field(default_factory=dict)   # postgres store options

    def describe(self) -> str:
        return f"{self.kind} {redact(self.target)}"


@dataclass(frozen=True)
class RangeSpec:
    zone: str
    min: tuple
    max: tuple
    index: int

    @property
    def min_key(self) -> tuple:
        return key_of(self.min)

    @property
    def max_key(self) -> tuple:
        return key_of(self.max)

    def to_plain(self, fields: tuple[str, ...]) -> dict:
        return {"zone": self.zone, "min": ejson.to_plain(dict(zip(fields, self.min))),
                "max": ejson.to_plain(dict(zip(fields, self.max)))}


@dataclass(frozen=True)
class Window:
    """A daily UTC window ``HH:MM-HH:MM``; it may wrap past midnight (``22:00-02:00``)."""

    start: int   # minutes after midnight
    end: int
    text: str

    def contains(self, minute_of_day: int) -> bool:
        if self.start < self.end:
            return self.start <= minute_of_day < self.end
        return minute_of_day >= self.start or minute_of_day < self.end

    def seconds_until_open(self, minute_of_day: int, second: float = 0.0) -> float:
        if self.contains(minute_of_day):
            return 0.0
        return ((self.start - minute_of_day) % 1440) * 60 - second


def parse_window(text: Any, where: str = "window") -> Window:
    m = WINDOW.match(text) if isinstance(text, str) else None
    if not m:
        raise ConfigError(f"{where}: expected a UTC window 'HH:MM-HH:MM' such as '01:00-05:00', found {text!r}",
                          code="ZONES_BALANCER")
    a, b = int(m[1]) * 60 + int(m[2]), int(m[3]) * 60 + int(m[4])
    if a == b:
        raise ConfigError(f"{where}: the window {text!r} is empty (start equals end)", code="ZONES_BALANCER")
    return Window(a, b, text.strip())


@dataclass(frozen=True)
class WriterSpec:
    home_zone: str | None = None
    set_zone_field: str = "ifMissing"
    write_timeout_s: float = 5.0
    probe_interval_s: float = 5.0
    on_all_zones_down: str = "dlq"


@dataclass(frozen=True)
class BalancerSpec:
    docs_per_second: float | None = 1000.0
    window: Window | None = None
    batch_size: int = 100


@dataclass(frozen=True)
class ZonedConfig:
    name: str
    shard_key: tuple[str, ...]
    zone_field: str
    zones: tuple[ZoneSpec, ...]
    ranges: tuple[RangeSpec, ...]
    default_zone: str
    writer: WriterSpec
    dedupe_field: str | None = None
    keep: str = "first"
    balancer: BalancerSpec = BalancerSpec()
    check_at_start: bool = True

    def zone(self, name: str) -> ZoneSpec:
        for z in self.zones:
            if z.name == name:
                return z
        raise KeyError(name)

    @property
    def zone_names(self) -> list[str]:
        return [z.name for z in self.zones]

    def with_ranges(self, ranges: list[Mapping[str, Any]]) -> "ZonedConfig":
        """The same configuration with new (validated) ranges."""
        parsed = _ranges(self.name, ranges, self.shard_key, set(self.zone_names))
        return dataclasses.replace(self, ranges=parsed)


def _err(conn: str, path: str, msg: str, code: str) -> ConfigError:
    return ConfigError(f"connection {conn!r}: {path}: {msg}", code=code)


def _mapping(conn: str, path: str, v: Any, allowed: set[str], code: str) -> dict:
    if not isinstance(v, dict):
        raise _err(conn, path, f"expected a mapping, found {type(v).__name__}", code)
    extra = [k for k in v if k not in allowed]
    if extra:
        raise _err(conn, f"{path}.{extra[0]}" if path else extra[0],
                   f"unknown field; known fields: {sorted(allowed)}", code)
    return v


def _positive(conn: str, path: str, v: Any, code: str) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or v <= 0:
        raise _err(conn, path, f"expected a positive number, found {v!r}", code)
    return float(v)


def _bound_value(v: Any) -> Any:
    if v == "$minKey":
        return ejson.MINKEY
    if v == "$maxKey":
        return ejson.MAXKEY
    return ejson.from_plain(v)


def _ranges(conn: str, raw: Any, shard_key: tuple[str, ...], zones: set[str]) -> tuple[RangeSpec, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise _err(conn, "ranges", f"expected a list of {{zone, min, max}}, found {type(raw).__name__}", "ZONES_INVALID")
    out: list[RangeSpec] = []
    for i, r in enumerate(raw):
        path = f"ranges[{i}]"
        r = _mapping(conn, path, r, {"zone", "min", "max"}, "ZONES_INVALID")
        for k in ("zone", "min", "max"):
            if k not in r:
                raise _err(conn, f"{path}.{k}", "is required", "ZONES_INVALID")
        if r["zone"] not in zones:
            raise _err(conn, f"{path}.zone", f"unknown zone {r['zone']!r}; zones: {sorted(zones)}", "ZONES_RANGE_ZONE")
        bounds = []
        for which in ("min", "max"):
            b = r[which]
            if not isinstance(b, dict):
                raise _err(conn, f"{path}.{which}", f"expected a mapping of the shard key fields {list(shard_key)}, "
                           f"found {b!r}", "ZONES_RANGE_BOUNDS")
            missing = [f for f in shard_key if f not in b]
            extra = [f for f in b if f not in shard_key]
            if missing or extra:
                raise _err(conn, f"{path}.{which}", f"a bound must list exactly the shard key fields {list(shard_key)}"
                           + (f"; missing {missing}" if missing else "") + (f"; not in the shard key {extra}" if extra else ""),
                           "ZONES_RANGE_BOUNDS")
            vals = []
            for f in shard_key:
                v = _bound_value(b[f])
                try:
                    if isinstance(v, (list, tuple)):
                        raise TypeError("a shard key value cannot be an array")
                    sort_key(v)
                except TypeError as exc:
                    raise _err(conn, f"{path}.{which}.{f}", f"invalid bound value {b[f]!r}: {exc}",
                               "ZONES_RANGE_BOUNDS") from exc
                vals.append(v)
            bounds.append(tuple(vals))
        lo, hi = bounds
        if not key_of(lo) < key_of(hi):
            raise _err(conn, path, f"min {ejson.dumps(dict(zip(shard_key, lo)))} must be less than max "
                       f"{ejson.dumps(dict(zip(shard_key, hi)))} (min is inclusive, max exclusive)", "ZONES_RANGE_BOUNDS")
        out.append(RangeSpec(r["zone"], lo, hi, i))
    ordered = sorted(out, key=lambda x: x.min_key)
    for a, b in zip(ordered, ordered[1:]):
        if b.min_key < a.max_key:
            raise _err(conn, f"ranges[{b.index}]", f"overlaps ranges[{a.index}] (zone {a.zone!r}): "
                       f"{ejson.dumps(dict(zip(shard_key, b.min)))} is below that range's max "
                       f"{ejson.dumps(dict(zip(shard_key, a.max)))}", "ZONES_RANGE_OVERLAP")
    return tuple(ordered)


def _zone(conn: str, name: Any, raw: Any, registry: Registry | None) -> ZoneSpec:
    path = f"zones.{name}"
    if not isinstance(name, str) or not name:
        raise _err(conn, "zones", f"zone names must be non-empty strings, found {name!r}", "ZONES_INVALID")
    raw = _mapping(conn, path, raw, ZONE_KEYS, "ZONES_ZONE")
    given = [k for k in ("connection", "postgres", "store") if k in raw]
    if len(given) != 1:
        raise _err(conn, path, "give exactly one of 'connection' (a postgres or store connection), "
                   f"'postgres' (a DSN) or 'store' (a SQLite directory); found {given or 'none'}", "ZONES_ZONE")
    kind = given[0]
    value = ejson.from_plain(raw.get("value", name))
    from ..store.postgres import store_options

    if kind == "connection":
        ref = raw["connection"]
        if registry is None or not isinstance(ref, str) or ref not in registry:
            known = [n for n in (registry.names() if registry else [])]
            raise _err(conn, f"{path}.connection", f"unknown connection {ref!r}; known: {known}",
                       "ZONES_CONNECTION_UNKNOWN")
        other = registry.get(ref)
        if other.type == "postgres":
            opts = store_options(ref, dict(other.options))
            dsn = opts.pop("dsn")
            return ZoneSpec(name, "postgres", dsn, value, f"{path}.connection", opts)
        if other.type == "store":
            return ZoneSpec(name, "store", str(registry.store_path(ref)), value, f"{path}.connection")
        raise _err(conn, f"{path}.connection", f"connection {ref!r} is of type {other.type!r}; "
                   "a zone needs a 'postgres' or 'store' connection", "ZONES_ZONE")
    if kind == "postgres":
        opts = store_options(conn, {"dsn": raw["postgres"], **{k: raw[k] for k in ("statementTimeoutMs", "connectTimeoutS")
                                                                if k in raw}}, f"{path}.")
        dsn = opts.pop("dsn")
        return ZoneSpec(name, "postgres", dsn, value, f"{path}.postgres", opts)
    p = raw["store"]
    if not isinstance(p, str) or not p.strip():
        raise _err(conn, f"{path}.store", f"expected a directory path, found {p!r}", "ZONES_ZONE")
    pp = Path(p).expanduser()
    if not pp.is_absolute() and registry is not None and registry.source:
        pp = Path(registry.source).resolve().parent / pp
    return ZoneSpec(name, "store", str(pp), value, f"{path}.store")


def parse(conn: Connection, registry: Registry | None = None) -> ZonedConfig:
    """Validate a ``zoned`` connection's options; :class:`ConfigError` names connection and field."""
    name = conn.name
    o = _mapping(name, "", dict(conn.options), TOP_KEYS, "ZONES_INVALID")
    # shard key
    sk = o.get("shardKey")
    if isinstance(sk, list) and sk and all(isinstance(x, str) for x in sk):
        sk = {x: 1 for x in sk}
    if not isinstance(sk, dict) or not sk:
        raise _err(name, "shardKey", f"expected a mapping of fields to 1 such as {{datacenter: 1, userid: 1}}, "
                   f"found {sk!r}", "ZONES_SHARD_KEY")
    for f, d in sk.items():
        if not isinstance(f, str) or not f or f.startswith("$") or "" in f.split("."):
            raise _err(name, "shardKey", f"invalid field name {f!r}", "ZONES_SHARD_KEY")
        if d == "hashed":
            raise _err(name, f"shardKey.{f}", "hashed shard keys are not supported: zones need ranged keys",
                       "ZONES_SHARD_KEY")
        if isinstance(d, bool) or d != 1:
            raise _err(name, f"shardKey.{f}", f"expected 1 (ascending), found {d!r}", "ZONES_SHARD_KEY")
    shard_key = tuple(sk)
    zone_field = o.get("zoneField", shard_key[0])
    if zone_field not in shard_key:
        raise _err(name, "zoneField", f"must be one of the shard key fields {list(shard_key)}, found {zone_field!r}",
                   "ZONES_SHARD_KEY")
    # zones
    zr = o.get("zones")
    if not isinstance(zr, dict) or not zr:
        raise _err(name, "zones", "expected a non-empty mapping of zone name to its store", "ZONES_INVALID")
    zones = tuple(_zone(name, zn, zv, registry) for zn, zv in zr.items())
    names = {z.name for z in zones}
    seen_values: dict[str, str] = {}
    for z in zones:
        try:
            sort_key(z.value)
        except TypeError as exc:
            raise _err(name, f"zones.{z.name}.value", str(exc), "ZONES_ZONE") from exc
        k = json.dumps(ejson.to_plain(z.value, relaxed=False))
        if k in seen_values:
            raise _err(name, f"zones.{z.name}.value", f"same zone field value as zone {seen_values[k]!r}", "ZONES_ZONE")
        seen_values[k] = z.name
    ranges = _ranges(name, o.get("ranges"), shard_key, names)
    # writer
    w = _mapping(name, "writer", o.get("writer") or {}, WRITER_KEYS, "ZONES_WRITER")
    home = w.get("homeZone")
    if home is not None and home not in names:
        raise _err(name, "writer.homeZone", f"unknown zone {home!r}; zones: {sorted(names)}", "ZONES_WRITER")
    szf = w.get("setZoneField", "ifMissing")
    if szf not in ("ifMissing", "always", "never"):
        raise _err(name, "writer.setZoneField", f"expected 'ifMissing', 'always' or 'never', found {szf!r}", "ZONES_WRITER")
    if szf == "always" and home is None:
        raise _err(name, "writer.setZoneField", "'always' needs writer.homeZone", "ZONES_WRITER")
    policy = w.get("onAllZonesDown", "dlq")
    if policy not in ("dlq", "fail"):
        raise _err(name, "writer.onAllZonesDown", f"expected 'dlq' or 'fail', found {policy!r}", "ZONES_WRITER")
    writer = WriterSpec(
        home_zone=home, set_zone_field=szf,
        write_timeout_s=_positive(name, "writer.writeTimeoutMs", w.get("writeTimeoutMs", 5000), "ZONES_WRITER") / 1000,
        probe_interval_s=_positive(name, "writer.probeIntervalMs", w.get("probeIntervalMs", 5000), "ZONES_WRITER") / 1000,
        on_all_zones_down=policy)
    default_zone = o.get("defaultZone", home or zones[0].name)
    if default_zone not in names:
        raise _err(name, "defaultZone", f"unknown zone {default_zone!r}; zones: {sorted(names)}", "ZONES_INVALID")
    # reads
    r = _mapping(name, "reads", o.get("reads") or {}, READS_KEYS, "ZONES_READS")
    dedupe = r.get("dedupeField")
    if dedupe is not None and (not isinstance(dedupe, str) or not dedupe):
        raise _err(name, "reads.dedupeField", f"expected a field name, found {dedupe!r}", "ZONES_READS")
    keep = r.get("keep", "first")
    if keep not in ("first", "last"):
        raise _err(name, "reads.keep", f"expected 'first' or 'last', found {keep!r}", "ZONES_READS")
    # balancer
    b = _mapping(name, "balancer", o.get("balancer") or {}, BALANCER_KEYS, "ZONES_BALANCER")
    rate = b.get("docsPerSecond", 1000)
    balancer = BalancerSpec(
        docs_per_second=None if rate is None else _positive(name, "balancer.docsPerSecond", rate, "ZONES_BALANCER"),
        window=parse_window(b["window"], f"connection {name!r}: balancer.window") if b.get("window") is not None else None,
        batch_size=int(_positive(name, "balancer.batchSize", b.get("batchSize", 100), "ZONES_BALANCER")))
    check = o.get("checkZonesAtStart", True)
    if not isinstance(check, bool):
        raise _err(name, "checkZonesAtStart", f"expected true or false, found {check!r}", "ZONES_INVALID")
    return ZonedConfig(name, shard_key, zone_field, zones, ranges, default_zone, writer, dedupe, keep, balancer, check)
