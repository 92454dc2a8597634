"""A ``SPARK_HOME`` whose Python processes import the installed pyspark, not Spark's zip of it.

Spark puts ``$SPARK_HOME/python/lib/pyspark.zip`` and py4j's zip first on the path of every
Python process it starts. Python compiles modules imported from a zip anew in each process (a
zip gets no bytecode cache): importing a data-source planner's modules took 0.65-0.75 s from the
zip against 0.18-0.27 s from the installed package. Spark starts such a process to look the
Python data sources up, to create each one and for every streaming query's source runner,
one after another before a processor's first micro-batch. The workers forked by
:mod:`._daemon` drop the zips themselves, but Spark starts the planners' daemons as plain
``pyspark.daemon``.

So, when ``SPARK_HOME`` is unset (or is the installed pyspark's own directory), it becomes a
directory beside the interpreter's environment that links the pyspark package's entries that are
not Python (``bin``, ``jars``, ``sbin``...) and has an empty ``python/lib``: the zips Spark names
there do not exist, and its Python processes import pyspark and py4j from site-packages. A first solar micro-batch came
3.4 s sooner, each later query start about 0.9 s (PROFILE.md). ``HEADRACE_SPARK_HOME=pyspark``
keeps pyspark's own directory; a ``SPARK_HOME`` that names another Spark is left as it is.
"""
from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path


def pyspark_dir() -> Path:
    """The installed pyspark package's directory (Spark's own home as pip installs it)."""
    import pyspark

    return Path(pyspark.__file__).resolve().parent


def _link_tree(home: Path, pkg: Path) -> None:
    """``home`` links the entries of ``pkg`` that are not Python (``bin``, ``jars``, ``sbin``,
    ``data``...); ``home/python/lib`` is empty."""
    (home / "python" / "lib").mkdir(parents=True, exist_ok=True)
    for entry in pkg.iterdir():
        if entry.name in ("python", "__pycache__") or entry.suffix in (".py", ".pyi", ".typed") \
                or (entry / "__init__.py").exists():
            continue
        link = home / entry.name
        if link.is_symlink() and Path(os.readlink(link)) == entry:
            continue
        tmp = home / f".{entry.name}.{os.getpid()}"
        tmp.unlink(missing_ok=True)
        tmp.symlink_to(entry)
        os.replace(tmp, link)


def ensure_spark_home(bases: "list[str] | None" = None) -> str | None:
    """Set ``SPARK_HOME`` to the linked directory (built on first use) and return it (also when
    it is set to one already, as in a child process); None when it is left as it was (another
    Spark, ``HEADRACE_SPARK_HOME=pyspark``, nowhere writable)."""
    if os.environ.get("HEADRACE_SPARK_HOME") == "pyspark":
        return None
    current = os.environ.get("SPARK_HOME")
    if current and Path(current).parent.name == "headrace-spark":
        return current
    pkg = pyspark_dir()
    if current and Path(current).resolve() != pkg:
        return None
    from importlib.metadata import version

    name = f"spark-{version('pyspark')}"
    for base in bases or [sys.prefix, tempfile.gettempdir()]:
        home = Path(base) / "headrace-spark" / name
        try:
            _link_tree(home, pkg)
        except OSError:
            continue
        os.environ["SPARK_HOME"] = str(home)
        return str(home)
    return None
