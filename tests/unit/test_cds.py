"""The driver JVM's class archive (headrace.spark.cds): which options, and that a JVM given an
archive it cannot use says nothing on standard output (where ``process`` prints documents)."""
from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from headrace.spark import cds


def test_options_dump_use_or_none(tmp_path, monkeypatch):
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "jdk"))
    monkeypatch.delenv(cds.DUMP_ENV, raising=False)
    monkeypatch.delenv("HEADRACE_CDS", raising=False)
    monkeypatch.setattr(cds.sys, "prefix", str(tmp_path / "env"))
    p = cds.archive_path()
    assert p.parent == tmp_path / "env" / "headrace-java" and p.suffix == ".jsa"
    assert cds.java_options() == ""                      # not built
    p.parent.mkdir(parents=True)
    p.write_bytes(b"x")
    assert cds.java_options().split() == [f"-XX:SharedArchiveFile={p}", "-Xlog:cds=off", "-Xlog:cds+dynamic=off"]
    monkeypatch.setenv("HEADRACE_CDS", "off")
    assert cds.java_options() == ""
    monkeypatch.setenv(cds.DUMP_ENV, str(tmp_path / "new.jsa"))
    assert cds.java_options().split()[0] == f"-XX:ArchiveClassesAtExit={tmp_path / 'new.jsa'}"
    # another Java runtime: another archive
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "jdk2"))
    assert cds.archive_path() != p


@pytest.mark.skipif(shutil.which("java") is None and not os.environ.get("JAVA_HOME"), reason="no java")
def test_an_unusable_archive_is_ignored_silently(tmp_path):
    from headrace.spark.session import ensure_java

    java = os.path.join(ensure_java(), "bin", "java")
    bad = tmp_path / "bad.jsa"
    bad.write_bytes(os.urandom(4096))
    opts = f" -XX:SharedArchiveFile={bad} -Xlog:cds=off -Xlog:cds+dynamic=off".split()
    r = subprocess.run([java, *opts, "-version"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout == ""
