"""Topology declaration: named injectors, computations and the streams between them.

    topo = Topology()
    topo.injector("queries", outputs=["searches"], partitions=["dc1", "dc2"], lateness_ms=5000)
    topo.computation("counter", WindowCounter, inputs=["searches"], outputs=["counts"])
    topo.computation("model", Model, inputs=["counts"], outputs=["anomalies"], params={"k": 3})

A stream is named by what produces into it; any number of producers (fan-in) and consumers
(fan-out). Every input stream must have a producer; the graph must be acyclic. Records of a stream
are ``(key, value, timestamp)``; a consumer sees them grouped by their key. Declaring is pure: no
runner is involved, and the same object runs on the reference runner and on Spark.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from . import defaults
from .api import Computation, StateSpec
from .errors import KeyedError

RESERVED_PREFIX = "__"


@dataclass(frozen=True)
class InjectorSpec:
    """A source. Its low watermark follows time-semantics.md per partition: ``M_p`` = largest
    event time read from partition ``p``; low watermark = ``min`` over non-idle partitions of
    ``M_p`` minus ``lateness_ms``, never decreasing; ``END_MS`` once a finite input is over.
    ``idle_timeout_ms``: a partition with nothing for that long (processing time) is idle.
    ``adaptive``: each partition's lateness grows to 1.25 times the largest disorder seen in it
    (how far behind its ``M_p`` a record came), never below ``lateness_ms`` (a heuristic watermark
    that learns how out of order the source is, as MillWheel's injectors estimate theirs)."""

    name: str
    outputs: tuple[str, ...]
    partitions: tuple[str, ...] = ("p0",)
    lateness_ms: int = defaults.INJECTOR_LATENESS_MS
    idle_timeout_ms: int | None = None
    adaptive: bool = False


@dataclass(frozen=True)
class ComputationSpec:
    name: str
    cls: type
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    params: tuple[tuple[str, Any], ...] = ()

    def make(self) -> Computation:
        return self.cls(**dict(self.params))

    @property
    def states(self) -> dict[str, StateSpec]:
        return dict(getattr(self.cls, "state", {}) or {})

    @property
    def domain(self) -> str:
        return getattr(self.cls, "timer_domain", defaults.TIMER_DOMAIN)


@dataclass
class Topology:
    injectors: dict[str, InjectorSpec] = field(default_factory=dict)
    computations: dict[str, ComputationSpec] = field(default_factory=dict)

    def _name(self, name: str) -> None:
        if not isinstance(name, str) or not name or name.startswith(RESERVED_PREFIX) or "/" in name:
            raise KeyedError("KEYED_NAME", f"a name must be a non-empty string without '/' not starting with"
                                           f" {RESERVED_PREFIX!r}; found {name!r}")
        if name in self.injectors or name in self.computations:
            raise KeyedError("KEYED_NAME", f"name {name!r} is used twice")

    def injector(self, name: str, outputs: list[str], partitions: list[str] | None = None,
                 lateness_ms: int = defaults.INJECTOR_LATENESS_MS, idle_timeout_ms: int | None = None,
                 adaptive: bool = False) -> "Topology":
        self._name(name)
        for s in outputs:
            self._stream_name(s)
        self.injectors[name] = InjectorSpec(name, tuple(outputs), tuple(partitions or ("p0",)), lateness_ms,
                                            idle_timeout_ms, adaptive)
        return self

    def computation(self, name: str, cls: type, inputs: list[str], outputs: list[str] = (),
                    params: dict[str, Any] | None = None) -> "Topology":
        self._name(name)
        if not (isinstance(cls, type) and issubclass(cls, Computation)):
            raise KeyedError("KEYED_NAME", f"computation {name!r}: expected a Computation subclass, found {cls!r}")
        if not inputs:
            raise KeyedError("KEYED_STREAM_UNKNOWN", f"computation {name!r}: expected at least one input stream")
        for s in list(inputs) + list(outputs):
            self._stream_name(s)
        domain = getattr(cls, "timer_domain", defaults.TIMER_DOMAIN)
        if domain not in ("event", "processing"):
            raise KeyedError("KEYED_TIMER", f"computation {name!r}: timer_domain must be 'event' or 'processing',"
                                            f" found {domain!r}")
        self.computations[name] = ComputationSpec(name, cls, tuple(inputs), tuple(outputs),
                                                  tuple(sorted((params or {}).items())))
        return self

    def remove(self, name: str) -> "Topology":
        """Drop a computation (its streams stay readable to others)."""
        self.computations.pop(name, None)
        return self

    @staticmethod
    def _stream_name(s: str) -> None:
        if not isinstance(s, str) or not s or s.startswith(RESERVED_PREFIX) or "/" in s or "." in s:
            raise KeyedError("KEYED_NAME", f"a stream name must be a non-empty string without '/' or '.' not"
                                           f" starting with {RESERVED_PREFIX!r}; found {s!r}")

    # -- queries
    def producers(self, stream: str) -> list[str]:
        """Names of injectors and computations producing into ``stream``, sorted."""
        out = [i.name for i in self.injectors.values() if stream in i.outputs]
        out += [c.name for c in self.computations.values() if stream in c.outputs]
        return sorted(out)

    def upstream(self, name: str) -> list[str]:
        """Producers of the computation's input streams, sorted."""
        c = self.computations[name]
        return sorted({p for s in c.inputs for p in self.producers(s)})

    def streams(self) -> list[str]:
        out = {s for i in self.injectors.values() for s in i.outputs}
        out |= {s for c in self.computations.values() for s in c.inputs + c.outputs}
        return sorted(out)

    def consumers(self, stream: str) -> list[str]:
        return sorted(c.name for c in self.computations.values() if stream in c.inputs)

    def validate(self) -> list[str]:
        """Check every input has a producer and the graph is acyclic; return the computations in
        topological order (ties by name)."""
        for c in self.computations.values():
            for s in c.inputs:
                if not self.producers(s):
                    raise KeyedError("KEYED_STREAM_UNKNOWN", f"computation {c.name!r} reads stream {s!r}; expected"
                                                             f" a producer of it, found none")
        order: list[str] = []
        done: set[str] = set(self.injectors)
        left = dict(self.computations)
        while left:
            ready = sorted(n for n in left if all(p in done for p in self.upstream(n)))
            if not ready:
                raise KeyedError("KEYED_CYCLE", f"topology has a cycle among {sorted(left)}; expected a directed"
                                                f" acyclic graph")
            for n in ready:
                order.append(n)
                done.add(n)
                del left[n]
        return order
