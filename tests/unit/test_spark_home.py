"""The linked ``SPARK_HOME`` (headrace.spark.spark_home): where it is, what it holds, when it is
left alone."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pyspark

from headrace.spark import cds
from headrace.spark.spark_home import ensure_spark_home

PKG = Path(pyspark.__file__).resolve().parent


def test_links_spark_but_not_its_python(tmp_path, monkeypatch):
    monkeypatch.delenv("SPARK_HOME", raising=False)
    monkeypatch.delenv("HEADRACE_SPARK_HOME", raising=False)
    home = Path(ensure_spark_home([str(tmp_path)]))
    assert os.environ["SPARK_HOME"] == str(home) and home.parent == tmp_path / "headrace-spark"
    assert (home / "jars").resolve() == PKG / "jars" and (home / "bin" / "spark-submit").exists()
    assert list((home / "python" / "lib").iterdir()) == []
    assert not any(p.suffix == ".py" or (p / "__init__.py").exists() for p in home.iterdir())
    assert ensure_spark_home([str(tmp_path)]) == str(home)          # again: the same, kept


def test_pyspark_own_directory_is_replaced_another_spark_kept(tmp_path, monkeypatch):
    monkeypatch.delenv("HEADRACE_SPARK_HOME", raising=False)
    monkeypatch.setenv("SPARK_HOME", str(PKG))
    assert ensure_spark_home([str(tmp_path)]).startswith(str(tmp_path))
    monkeypatch.setenv("SPARK_HOME", str(tmp_path / "spark-4.1-bin"))
    assert ensure_spark_home([str(tmp_path)]) is None and os.environ["SPARK_HOME"] == str(tmp_path / "spark-4.1-bin")
    monkeypatch.delenv("SPARK_HOME")
    monkeypatch.setenv("HEADRACE_SPARK_HOME", "pyspark")
    assert ensure_spark_home([str(tmp_path)]) is None and "SPARK_HOME" not in os.environ


def test_an_unwritable_base_falls_back(tmp_path, monkeypatch):
    monkeypatch.delenv("SPARK_HOME", raising=False)
    monkeypatch.delenv("HEADRACE_SPARK_HOME", raising=False)
    blocked = tmp_path / "file"
    blocked.write_text("not a directory")
    assert ensure_spark_home([str(blocked), str(tmp_path / "ok")]).startswith(str(tmp_path / "ok"))


def test_spark_python_path_imports_the_installed_pyspark(tmp_path, monkeypatch):
    """What Spark puts first on a Python process's path from this home (its two zips) imports
    pyspark and py4j from site-packages; from pyspark's own directory, from the zip."""
    monkeypatch.delenv("SPARK_HOME", raising=False)
    monkeypatch.delenv("HEADRACE_SPARK_HOME", raising=False)
    code = "import pyspark, py4j; print(pyspark.__file__, py4j.__file__)"

    zips = sorted(p.name for p in (PKG / "python" / "lib").glob("*.zip"))     # pyspark's and py4j's

    def imported(home: Path) -> str:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(str(home / "python" / "lib" / z) for z in zips)}
        return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                              check=True).stdout

    assert ".zip" not in imported(Path(ensure_spark_home([str(tmp_path)])))
    assert ".zip" in imported(PKG)


def test_another_spark_home_another_class_archive(tmp_path, monkeypatch):
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "jdk"))
    monkeypatch.delenv("SPARK_HOME", raising=False)
    plain = cds.archive_path()
    monkeypatch.setenv("SPARK_HOME", str(tmp_path / "a"))
    a = cds.archive_path()
    monkeypatch.setenv("SPARK_HOME", str(tmp_path / "b"))
    assert len({plain, a, cds.archive_path()}) == 3
