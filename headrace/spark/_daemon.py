"""Spark's Python worker daemon (``spark.python.daemon.module``), importing pyspark from the
installed package instead of Spark's ``pyspark.zip``.

Spark puts ``.../pyspark/python/lib/pyspark.zip`` (and py4j's zip) first on every worker's
path; modules imported from a zip are compiled from source in each new process (no bytecode
cache), about a second per data-source planning or reading process. When the same pyspark is
installed beside it (the zip lives inside that package), the zips are dropped and
``pyspark.daemon`` runs unchanged. (With the linked ``SPARK_HOME`` of :mod:`.spark_home` those
zips do not exist; this matters where ``HEADRACE_SPARK_HOME=pyspark`` keeps pyspark's own.)

The daemon also imports what every worker it forks imports anyway (pandas, numpy, pyarrow,
``pyspark.worker``) and freezes those objects out of the garbage collector's scans, so the
workers share those pages with it instead of each loading its own copy: the daemon and its two
workers of a solar drain held 193 MB of PSS against 244 MB (PROFILE.md). BLAS stays one thread,
so the daemon starts no thread a fork would lose.
"""
import os
import runpy
import sys


def _drop_spark_zips() -> None:
    keep = []
    for p in sys.path:
        marker = os.sep + os.path.join("pyspark", "python", "lib") + os.sep
        if p.endswith(".zip") and marker in p:
            site = p.split(marker)[0]
            if site in sys.path or os.path.realpath(site) in map(os.path.realpath, sys.path):
                continue
        keep.append(p)
    sys.path[:] = keep


def _preload() -> None:
    """Modules every worker imports, loaded once before the daemon forks workers."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    import gc
    import importlib

    for name in ("pandas", "pyarrow", "pyspark.worker"):
        importlib.import_module(name)
    gc.freeze()


if __name__ == "__main__":
    _drop_spark_zips()
    _preload()
    runpy.run_module("pyspark.daemon", run_name="__main__", alter_sys=True)
