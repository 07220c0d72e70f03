"""The process's Spark session for the aggregation (``scheduler-py aggregate``), and the
quiet log4j2 configuration of its driver JVM.

The Spark session is small on purpose (:func:`spark_session`): no UI, few shuffle
partitions, modest driver memory; the inputs are a few hundred records per topology. The
defaults and why each is set are beside :data:`SPARK_DEFAULTS` and
:data:`DRIVER_JAVA_OPTIONS`.
"""

from __future__ import annotations

import os
import sys
import tempfile
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING

from scheduler_py.config import env
from scheduler_py.monitoring.masters import master_on_loopback

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

DEFAULT_MASTER = "local[1]"
"""One core: the inputs are small, and a cycle must not take the cores the topologies need
(docs/monitoring.md, "Monitoring cost"); ``--master local[*]`` or a Spark cluster for thousands of
executors."""
SPARK_DEFAULTS: dict[str, str] = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    # the inputs are kilobytes to a few megabytes: one partition per shuffle, and no adaptive
    # execution (it runs every shuffle stage as a job of its own: 32 jobs per cycle instead
    # of 10, docs/monitoring.md, "Monitoring cost")
    "spark.sql.shuffle.partitions": "1",
    "spark.sql.adaptive.enabled": "false",
    # one cycle generates more Java classes than Spark's default cache of 100 holds: with the
    # default, every warm cycle compiled most of them again (Janino took most of its CPU)
    "spark.sql.codegen.cache.maxEntries": "1000",
    # an upper bound: the heap grows only as far as a cycle needs (5,000 executors: ~2 GB)
    "spark.driver.memory": "3g",
    "spark.sql.session.timeZone": "UTC",
}
DRIVER_JAVA_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
"""The driver JVM compiles with C1 only and collects garbage on one thread: a warm cycle costs
half the CPU (the C2 compiler and the parallel collector's threads ran beside every cycle)."""
LOCAL_DEFAULTS: dict[str, str] = {
    "spark.driver.host": "127.0.0.1",
    "spark.driver.bindAddress": "127.0.0.1",
}

_SESSION: SparkSession | None = None

CANCEL_AGAIN_SECS = 0.2
"""Past its deadline, a bounded block's jobs are cancelled again this often, so that a job the
block starts after the first cancellation is cancelled too."""


class SparkDeadline:
    """Whether a :func:`bounded_jobs` block ran past its deadline (its jobs were cancelled)."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.passed = threading.Event()


@contextmanager
def bounded_jobs(spark: SparkSession, seconds: float, tag: str) -> Iterator[SparkDeadline]:
    """The Spark jobs this thread starts inside the block carry the job tag ``tag``; once
    ``seconds`` have passed, a watchdog thread cancels every job with that tag, and again every
    :data:`CANCEL_AGAIN_SECS` until the block ends, so the block's Spark action fails instead of
    waiting on a hung job (an executor lost, a master that grants no cores). ``seconds <= 0``:
    no deadline. The yielded :class:`SparkDeadline` says whether it passed."""
    deadline = SparkDeadline(seconds)
    if seconds <= 0:
        yield deadline
        return
    context = spark.sparkContext
    done = threading.Event()

    def watch() -> None:
        if done.wait(seconds):
            return
        deadline.passed.set()
        while not done.is_set():
            try:
                context.cancelJobsWithTag(tag)
            except Exception:  # the context stopped meanwhile: the block fails on its own
                return
            done.wait(CANCEL_AGAIN_SECS)

    context.addJobTag(tag)
    watchdog = threading.Thread(target=watch, name=f"spark-deadline-{tag}", daemon=True)
    watchdog.start()
    try:
        yield deadline
    finally:
        done.set()
        watchdog.join()
        with suppress(Exception):  # a stopped context keeps no tags
            context.removeJobTag(tag)


def spark_session(
    master: str = DEFAULT_MASTER,
    conf: Mapping[str, str] | None = None,
    app: str = "scheduler-py",
) -> SparkSession:
    """The process's Spark session (created once; later calls return it).

    Defaults: :data:`SPARK_DEFAULTS`, and the loopback driver address for ``local`` masters
    and for standalone masters on loopback (``deploy/spark-up.sh``: their executors reach the
    driver there; elsewhere Spark advertises the host's address); ``conf`` overrides them.
    The JVM inherits nothing from a ``spark-defaults.conf`` beyond what Spark itself reads.
    Executors run ``PYSPARK_PYTHON``, this interpreter unless set: on a standalone worker it
    must exist at the same path (same venv or image).
    """
    global _SESSION
    if _SESSION is not None and _SESSION.sparkContext._jsc is not None:
        return _SESSION
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    settings = dict(SPARK_DEFAULTS)
    if master.startswith("local") or master_on_loopback(master):
        settings.update(LOCAL_DEFAULTS)
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    settings.update(conf or {})
    if "spark.driver.extraJavaOptions" not in settings:
        settings["spark.driver.extraJavaOptions"] = (
            f"{DRIVER_JAVA_OPTIONS} -Dlog4j2.configurationFile={_log4j2_file()}"
        )
    builder = SparkSession.builder.master(master).appName(app)
    for key, value in settings.items():
        builder = builder.config(key, value)
    _SESSION = builder.getOrCreate()
    _SESSION.sparkContext.setLogLevel(env.SPARK_LOG_LEVEL.get() or "ERROR")
    return _SESSION


LOG4J2 = """# scheduler-py aggregate: Spark's driver logs warnings and errors only, to stderr
rootLogger.level = warn
rootLogger.appenderRef.stderr.ref = stderr
appender.console.type = Console
appender.console.name = stderr
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n
logger.native.name = org.apache.hadoop.util.NativeCodeLoader
logger.native.level = error
"""


def _log4j2_file() -> str:
    """A quiet log4j2 configuration for the driver JVM, written once per process."""
    path = Path(tempfile.gettempdir()) / f"scheduler-py-spark-log4j2-{os.getuid()}.properties"
    if not path.exists() or path.read_text() != LOG4J2:
        path.write_text(LOG4J2)
    return str(path)
