"""The per-key context handed to computations, over a state backend.

``Context`` checks every call against the computation's declarations and collects what the call
produces (records, timer changes); a backend stores state and timers of the current key. Two
backends exist: :class:`MemoryBackend` here (reference runner) and the Spark one in
``headrace.spark.keyed.processor`` (transformWithStateInPandas state variables). Values must be
JSON-serialisable; both backends store them as JSON text, so what comes back equals
``json.loads(json.dumps(value))`` in either runner.
"""
from __future__ import annotations

import json
from typing import Any, Iterator

from .api import StateSpec
from .errors import KeyedError

_MISSING = object()


def _dump(v: Any) -> str:
    try:
        return json.dumps(v, separators=(",", ":"), sort_keys=True)
    except (TypeError, ValueError) as exc:
        raise KeyedError("KEYED_STATE", f"state and record values must be JSON values: {exc}") from None


class ValueHandle:
    def __init__(self, ctx: "Context", name: str):
        self._c, self._n = ctx, name

    def get(self, default: Any = None) -> Any:
        found, v = self._c._b.get_value(self._n)
        return json.loads(v) if found else default

    def set(self, value: Any) -> None:
        self._c._b.set_value(self._n, _dump(value))

    def clear(self) -> None:
        self._c._b.clear_value(self._n)


class ListHandle:
    def __init__(self, ctx: "Context", name: str):
        self._c, self._n = ctx, name

    def get(self) -> list:
        return [json.loads(v) for v in self._c._b.get_list(self._n)]

    def append(self, value: Any) -> None:
        self._c._b.append_list(self._n, [_dump(value)])

    def extend(self, values: list) -> None:
        if values:
            self._c._b.append_list(self._n, [_dump(v) for v in values])

    def set(self, values: list) -> None:
        if values:
            self._c._b.set_list(self._n, [_dump(v) for v in values])
        else:
            self._c._b.clear_list(self._n)

    def clear(self) -> None:
        self._c._b.clear_list(self._n)


class MapHandle:
    def __init__(self, ctx: "Context", name: str):
        self._c, self._n = ctx, name

    def get(self, k: str, default: Any = None) -> Any:
        found, v = self._c._b.map_get(self._n, str(k))
        return json.loads(v) if found else default

    def contains(self, k: str) -> bool:
        return self._c._b.map_get(self._n, str(k))[0]

    def put(self, k: str, value: Any) -> None:
        self._c._b.map_put(self._n, str(k), _dump(value))

    def remove(self, k: str) -> None:
        self._c._b.map_remove(self._n, str(k))

    def items(self) -> list[tuple[str, Any]]:
        """All entries, sorted by key."""
        return sorted((k, json.loads(v)) for k, v in self._c._b.map_items(self._n))

    def keys(self) -> list[str]:
        return sorted(k for k, _ in self._c._b.map_items(self._n))

    def clear(self) -> None:
        self._c._b.map_clear(self._n)


class Context:
    """What a computation sees for one key during one batch.

    - ``key``; ``low_watermark``: the computation's input low watermark as this batch started
      (ms; event timers at or before it fire); ``processing_time``: the batch's processing
      instant (ms; virtual in replay).
    - ``value(name)``, ``list(name)``, ``map(name)``: declared state of this key.
    - ``set_timer(ts)``, ``delete_timer(ts)``, ``timers()``: this key's timers (one per
      timestamp) in the computation's ``timer_domain``.
    - ``produce(stream, key, value, timestamp)``: a record into a declared output stream.
    """

    def __init__(self, backend: Any, specs: dict[str, StateSpec], outputs: frozenset[str], domain: str,
                 key: str, low_watermark: int, processing_time: int, computation: str = ""):
        self._b, self._specs, self._outputs, self._domain = backend, specs, outputs, domain
        self._computation = computation
        self.key = key
        self.low_watermark = low_watermark
        self.processing_time = processing_time
        self.produced: list[tuple[str, str, str, int]] = []   # (stream, key, value JSON, ts)
        self.timer_delta: list[tuple[int, int]] = []           # (ts, +1 | -1)

    def _spec(self, name: str, kind: str) -> None:
        spec = self._specs.get(name)
        if spec is None or spec.kind != kind:
            found = "undeclared" if spec is None else f"a {spec.kind} state"
            raise KeyedError("KEYED_STATE", f"computation {self._computation!r}: state {name!r} used as a {kind}"
                                            f" state; expected a declared {kind} state, found {found}")

    def value(self, name: str) -> ValueHandle:
        self._spec(name, "value")
        return ValueHandle(self, name)

    def list(self, name: str) -> ListHandle:
        self._spec(name, "list")
        return ListHandle(self, name)

    def map(self, name: str) -> MapHandle:
        self._spec(name, "map")
        return MapHandle(self, name)

    def _check_domain(self, ts: Any, domain: str | None) -> int:
        if domain is not None and domain != self._domain:
            raise KeyedError("KEYED_TIMER", f"computation {self._computation!r} has {self._domain}-time timers"
                                            f" (timer_domain); found a {domain}-time timer")
        if isinstance(ts, bool) or not isinstance(ts, int):
            raise KeyedError("KEYED_TIMER", f"computation {self._computation!r}: a timer timestamp must be integer"
                                            f" milliseconds, found {ts!r}")
        return ts

    def timers(self, domain: str | None = None) -> list[int]:
        self._check_domain(0, domain)
        return sorted(self._b.timers())

    def set_timer(self, ts: int, domain: str | None = None) -> None:
        ts = self._check_domain(ts, domain)
        if self._b.add_timer(ts):
            self.timer_delta.append((ts, 1))

    def delete_timer(self, ts: int, domain: str | None = None) -> None:
        ts = self._check_domain(ts, domain)
        if self._b.del_timer(ts):
            self.timer_delta.append((ts, -1))

    def produce(self, stream: str, key: str, value: Any, timestamp: int) -> None:
        if stream not in self._outputs:
            raise KeyedError("KEYED_PRODUCE", f"computation {self._computation!r} produced into {stream!r}; expected"
                                              f" one of its outputs {sorted(self._outputs)}")
        if not isinstance(key, str) or isinstance(timestamp, bool) or not isinstance(timestamp, int):
            raise KeyedError("KEYED_PRODUCE", f"computation {self._computation!r}: a record is (str key, JSON value,"
                                              f" int ms timestamp); found ({key!r}, ..., {timestamp!r})")
        self.produced.append((stream, key, _dump(value), timestamp))


class MemoryBackend:
    """Per-key state and timers in dicts (the reference runner). Values are JSON text; TTL is
    processing time: an entry written at clock ``c`` is gone from ``c + ttl_ms`` on."""

    def __init__(self, specs: dict[str, StateSpec]):
        self.specs = specs
        self.data: dict[str, dict[str, Any]] = {}   # key -> name -> stored
        self.timer_sets: dict[str, set[int]] = {}
        self.key = ""
        self.clock = 0

    def bind(self, key: str, clock: int) -> None:
        self.key, self.clock = key, clock

    # -- helpers
    def _exp(self, name: str) -> int | None:
        ttl = self.specs[name].ttl_ms
        return None if ttl is None else self.clock + ttl

    def _alive(self, exp: int | None) -> bool:
        return exp is None or self.clock < exp

    def _slot(self, name: str, create: bool = False) -> Any:
        d = self.data.get(self.key)
        if d is None:
            if not create:
                return None
            d = self.data[self.key] = {}
        return d.get(name) if not create else d

    def _drop_empty(self) -> None:
        d = self.data.get(self.key)
        if d is not None and not d:
            del self.data[self.key]

    # -- value
    def get_value(self, name: str) -> tuple[bool, str | None]:
        s = self._slot(name)
        if s is None or not self._alive(s[1]):
            return False, None
        return True, s[0]

    def set_value(self, name: str, v: str) -> None:
        self._slot(name, True)[name] = (v, self._exp(name))

    def clear_value(self, name: str) -> None:
        d = self.data.get(self.key)
        if d:
            d.pop(name, None)
            self._drop_empty()

    # -- list
    def get_list(self, name: str) -> list[str]:
        s = self._slot(name) or []
        return [v for v, e in s if self._alive(e)]

    def set_list(self, name: str, vals: list[str]) -> None:
        e = self._exp(name)
        self._slot(name, True)[name] = [(v, e) for v in vals]

    def append_list(self, name: str, vals: list[str]) -> None:
        e = self._exp(name)
        cur = [(v, x) for v, x in (self._slot(name) or []) if self._alive(x)]
        self._slot(name, True)[name] = cur + [(v, e) for v in vals]

    clear_list = clear_value

    # -- map
    def map_get(self, name: str, k: str) -> tuple[bool, str | None]:
        s = self._slot(name)
        if not s or k not in s or not self._alive(s[k][1]):
            return False, None
        return True, s[k][0]

    def map_put(self, name: str, k: str, v: str) -> None:
        d = self._slot(name, True)
        d.setdefault(name, {})[k] = (v, self._exp(name))

    def map_remove(self, name: str, k: str) -> None:
        s = self._slot(name)
        if s and k in s:
            del s[k]
            if not s:
                self.clear_value(name)

    def map_items(self, name: str) -> Iterator[tuple[str, str]]:
        s = self._slot(name) or {}
        return [(k, v) for k, (v, e) in s.items() if self._alive(e)]

    map_clear = clear_value

    # -- timers (return True when the set changed)
    def timers(self) -> list[int]:
        return list(self.timer_sets.get(self.key, ()))

    def add_timer(self, ts: int) -> bool:
        s = self.timer_sets.setdefault(self.key, set())
        if ts in s:
            return False
        s.add(ts)
        return True

    def del_timer(self, ts: int) -> bool:
        s = self.timer_sets.get(self.key)
        if not s or ts not in s:
            return False
        s.discard(ts)
        if not s:
            del self.timer_sets[self.key]
        return True

    def state_size(self) -> tuple[int, int]:
        """(keys with state, approximate bytes of the stored JSON)."""
        n = 0
        for d in self.data.values():
            for name, s in d.items():
                kind = self.specs[name].kind
                if kind == "value":
                    n += len(s[0])
                elif kind == "list":
                    n += sum(len(v) for v, _ in s)
                else:
                    n += sum(len(k) + len(v) for k, (v, _) in s.items())
        return len(self.data), n
