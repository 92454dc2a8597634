"""Garbage collectors of the JVMs (``headrace.spark.session.gc_options``): ``HEADRACE_GC`` wins
over the default; an unknown one is refused with the choices (``tests/unit/test_jit.py`` runs the
Java in use with every collector)."""
from __future__ import annotations

import pytest

from headrace.errors import ConfigError
from headrace.spark.session import gc_options
from headrace.spec import defaults


def test_default_is_the_parallel_collector(monkeypatch):
    monkeypatch.delenv("HEADRACE_GC", raising=False)
    assert gc_options() == defaults.GC_MODES[defaults.GC] == " -XX:+UseParallelGC"


def test_env_chooses(monkeypatch):
    monkeypatch.setenv("HEADRACE_GC", "g1")
    assert gc_options() == " -XX:+UseG1GC"


def test_unknown_collector_is_refused(monkeypatch):
    monkeypatch.setenv("HEADRACE_GC", "zgc")
    with pytest.raises(ConfigError, match=r"HEADRACE_GC: expected one of \['g1', 'parallel', 'serial'\], found 'zgc'") as err:
        gc_options()
    assert err.value.code == "GC_MODE_UNKNOWN"
