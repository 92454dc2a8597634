"""JIT modes of the JVM (``headrace.spark.session.jit_options``): ``HEADRACE_JIT`` wins, then the
kind of run's preference, then the default; an unknown mode is refused with the choices."""
from __future__ import annotations

import subprocess

import pytest

from headrace.errors import ConfigError
from headrace.spark.session import ensure_java, jit_options
from headrace.spec import defaults


def test_env_wins_over_the_runs_preference(monkeypatch):
    monkeypatch.setenv("HEADRACE_JIT", "full")
    assert jit_options("quick") == " -XX:CompileThresholdScaling=3"
    monkeypatch.setenv("HEADRACE_JIT", "quick")
    assert jit_options(None) == " -XX:TieredStopAtLevel=1"


def test_preference_then_default(monkeypatch):
    monkeypatch.delenv("HEADRACE_JIT", raising=False)
    assert jit_options("quick") == " -XX:TieredStopAtLevel=1"
    assert jit_options(None) == defaults.JIT_MODES[defaults.JIT] == " -XX:CompileThresholdScaling=3"


def test_unknown_mode_is_refused(monkeypatch):
    monkeypatch.setenv("HEADRACE_JIT", "c2")
    with pytest.raises(ConfigError, match=r"HEADRACE_JIT: expected one of \['full', 'quick'\], found 'c2'") as err:
        jit_options(None)
    assert err.value.code == "JIT_MODE_UNKNOWN"


def test_the_java_in_use_accepts_every_mode_and_collector():
    java = f"{ensure_java()}/bin/java"
    for opts in [*defaults.JIT_MODES.values(), *defaults.GC_MODES.values()]:
        r = subprocess.run([java, *opts.split(), "-version"], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
