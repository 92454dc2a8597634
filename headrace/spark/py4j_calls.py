"""Fewer py4j round trips while the driver builds Column trees (:func:`install`).

A stage's expressions become a Column tree on the driver once per processor, and every PySpark
call that builds a node crosses to the JVM and back (about 0.2 ms each). Of the 40,000 round
trips of one ``$project`` of fifteen ``$convert``s (``tests/golden/cases/project_convert_bindata``;
7-8 s), most were not node constructions: py4j resolves ``functions.when`` by two reflection
calls before the call itself, converts a Python list into a Java list by one call per element,
and ``F.lit(0)`` or ``F.col("doc")`` built a new JVM object each time. :func:`install` removes
those, without changing what any call returns:

- a class or static method that py4j resolved once is kept on the py4j object that asked
  (``JVMView``, ``JavaPackage``, ``JavaClass``): classes do not change while the JVM lives. A
  ``JVMView`` keeps classes only: a short name it did not know is a package to py4j, and a later
  ``java_import`` may make it a class;
- PySpark's ``_to_seq`` builds a Java list of up to ten elements with one call
  (``java.util.List.of``) instead of one per element;
- ``pyspark.sql.functions.lit`` of ``None``, a bool, an int, a float or a short string, and
  ``pyspark.sql.functions.col`` of a name, reuse the JVM Column of an earlier call with the same
  value (Columns are immutable) inside a new Python ``Column``, so attributes set on one Python
  object stay on it. Keys are ``(type, repr)``: ``1``, ``True``, ``1.0`` and ``-0.0``/``0.0``
  stay apart. The cache belongs to one JVM gateway and is dropped if another one starts.

Measured on the 2-core AMD machine (warm JVM, ``benchmarks/PROFILE.md``): that ``$project``'s
run 12.2 s -> 8.0-9.9 s (compilation 7.3 s -> about 3 s, round trips 40,000 -> 18,000-19,000),
a one-field ``$addFields`` run 1.2 s -> 0.8-1.1 s.
"""
from __future__ import annotations

import threading
from typing import Any, Callable

__all__ = ["install", "installed"]

_LIT_TYPES = (type(None), bool, int, float, str)
_MAX_LIT_STR = 200           # longer strings are built each time
_MAX_ENTRIES = 4096          # per cache; past it, new values are built each time
_LIST_OF_MAX = 10            # java.util.List.of has fixed-arity overloads up to ten elements
_lock = threading.Lock()
_installed = False


def installed() -> bool:
    """Whether :func:`install` ran in this process."""
    return _installed


def install() -> None:
    """Install the three changes of the module docstring (idempotent; the driver process)."""
    global _installed
    with _lock:
        if _installed:
            return
        _cache_reflection()
        _one_call_lists()
        _reuse_constants()
        _installed = True


def _cache_reflection() -> None:
    from py4j import java_gateway as G

    def caching(orig: Callable, keep: tuple) -> Callable:
        def __getattr__(self, name):
            found = orig(self, name)
            if isinstance(found, keep):
                self.__dict__[name] = found     # found by normal attribute lookup from now on
            return found
        return __getattr__

    G.JVMView.__getattr__ = caching(G.JVMView.__getattr__, (G.JavaClass,))
    G.JavaPackage.__getattr__ = caching(G.JavaPackage.__getattr__, (G.JavaClass, G.JavaPackage))
    # a static field's value may change: only methods and nested classes are kept
    G.JavaClass.__getattr__ = caching(G.JavaClass.__getattr__, (G.JavaMember, G.JavaClass))


def _one_call_lists() -> None:
    import pyspark.sql.classic.column as CC

    orig = CC._to_seq

    def _to_seq(sc, cols, converter=None):
        cols = [converter(c) for c in cols] if converter else list(cols)
        if 0 < len(cols) <= _LIST_OF_MAX and all(c is not None for c in cols):   # List.of refuses null
            jvm = sc._jvm
            return jvm.PythonUtils.toSeq(getattr(jvm, "java.util.List").of(*cols))
        return orig(sc, cols)

    _to_seq.__doc__ = orig.__doc__
    CC._to_seq = _to_seq


def _reuse_constants() -> None:
    import pyspark.sql.functions as F
    from pyspark import SparkContext
    from pyspark.sql.classic.column import Column

    state: dict[Any, Any] = {"gateway": None}    # the gateway, and a cache per function

    def reusing(orig: Callable, accepts: Callable[[Any], bool]) -> Callable:
        def build(col):
            if not accepts(col):
                return orig(col)
            if state["gateway"] is not SparkContext._gateway:    # another JVM: forget the old one's
                state.clear()
                state["gateway"] = SparkContext._gateway
            cache = state.setdefault(orig, {})
            key = (type(col), repr(col))
            jc = cache.get(key)
            if jc is None:
                jc = orig(col)._jc
                if len(cache) < _MAX_ENTRIES:
                    cache[key] = jc
            return Column(jc)

        build.__doc__, build.__name__ = orig.__doc__, orig.__name__
        return build

    F.lit = reusing(F.lit, lambda v: type(v) in _LIT_TYPES and not (type(v) is str and len(v) > _MAX_LIT_STR))
    F.col = reusing(F.col, lambda v: type(v) is str)
