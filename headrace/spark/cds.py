"""A class-data-sharing archive for the driver JVM: Spark starts about 1.5 s sooner.

Starting Spark loads and verifies some 20,000 classes; a JVM started with
``-XX:SharedArchiveFile`` maps the ones a previous run archived instead (Java's dynamic
AppCDS archive). ``make venv`` builds the archive once (:mod:`headrace.spark.cds_build`), beside the
interpreter's environment, named by the pyspark version and the Java runtime.

:func:`java_options` adds the archive to the driver's options when it exists. The JVM checks
that the archive matches its runtime and class path and silently starts without it otherwise
(its CDS log is off: those warnings would go to standard output, where ``process`` prints
documents). ``HEADRACE_CDS=off`` leaves it out. Only the driver uses it: executors of a
standalone cluster start as usual.
"""
from __future__ import annotations

import hashlib
import os
import sys
from importlib.metadata import version
from pathlib import Path

_QUIET = " -Xlog:cds=off -Xlog:cds+dynamic=off"
DUMP_ENV = "HEADRACE_CDS_DUMP"     # set by the builder: the path the JVM writes the archive to


def archive_path() -> Path:
    """Where the archive for this pyspark, ``JAVA_HOME`` and ``SPARK_HOME`` (the class path's
    directory) lives."""
    homes = os.path.realpath(os.environ.get("JAVA_HOME", ""))
    if os.environ.get("SPARK_HOME"):
        homes += "\0" + os.environ["SPARK_HOME"]
    java = hashlib.sha1(homes.encode()).hexdigest()[:10]
    return Path(sys.prefix) / "headrace-java" / f"spark-{version('pyspark')}-{java}.jsa"


def java_options() -> str:
    """The driver JVM's CDS options: dump (while building), use (when built), or none."""
    dump = os.environ.get(DUMP_ENV)
    if dump:
        return f" -XX:ArchiveClassesAtExit={dump}" + _QUIET
    if os.environ.get("HEADRACE_CDS", "on") == "off":
        return ""
    p = archive_path()
    return f" -XX:SharedArchiveFile={p}" + _QUIET if p.is_file() else ""
