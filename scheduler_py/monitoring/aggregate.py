"""The PySpark aggregation job: window records → the aggregate of contract §4.

Why this module is over 500 lines: the Spark DataFrame plan of one aggregation
(:func:`aggregate_frames`) is a single expression pipeline best read in one place; the
Spark-free parts live in ``documents.py`` and ``change.py``.

One run (:meth:`AggregationJob.run_once`):

1. cleanup: with the list of running topologies (from Nimbus), every monitoring znode of a
   topology that no longer runs is deleted;
2. read every window znode of every running topology (:mod:`.zk`), parse and validate it
   on the driver (:mod:`.records`): corrupt ones (bad gzip/JSON, missing fields, negative
   numbers, a record published under another worker's znode…) are skipped and counted;
3. aggregate with Spark DataFrames (:func:`aggregate_frames`), all topologies in one job:

   * **duplicates**: records of the same worker (supervisor id + port) with the same
     ``window_end_ms``; the one with the highest ``seq`` is kept (then the first read);
   * **sliding window**: a record belongs to the window iff ``window_end_ms > now − W``
     (``--window``, default 60 s). Arrival and ``seq`` order play no role: out-of-order
     records land where their window math puts them;
   * **executor CPU %** = Σ(thread + subprocess CPU ms) / Σ(window ms) × 100 over the
     executor's records in the window, i.e. percent of one core averaged over the time the
     executor was actually observed (a worker that started 20 s ago is not diluted);
   * **pairs**: traffic rows summed per (source executor, destination executor), streams
     merged. The source task maps to the executor of the *publishing* record; the
     destination task to the executor that most recently listed it in any retained record
     (a task no record lists stays a one-task range). Rates are per second of the source
     executor's observed time;
   * **components**: Σ CPU, ``cpu_cv`` = coefficient of variation (population σ / mean) of
     the executors' CPU, ``in_tuples_cv`` the same for inbound tuples/s, in/out totals;
     **edges**: pairs summed per (source component, destination component);
   * **workers**: per ``supervisor:port`` CPU % of the JVM and of its overhead threads;
     **missing**: workers with records earlier (within the retention) but none in the
     window, with ``last_seen_ms``;
4. change signal (``monitoring/change.py``): the mean of ``‖x − ref‖₁ / ‖ref‖₁`` over
   x = CPU % per executor and x = tuples/s per pair, against
   ``<root>/reference/<topology-id>`` (the first aggregate becomes the reference;
   ``reset_reference`` replaces it);
5. write ``<root>/aggregate/<topology-id>`` (gzip JSON; pairs beyond the znode limit are
   dropped, smallest first, and counted in ``truncated_output_pairs``), optionally append
   the tables to a Parquet dataset, and delete window znodes older than the retention.

The Spark session is small on purpose (:func:`spark_session`): no UI, few shuffle
partitions, modest driver memory; the inputs are a few hundred records per topology.
"""

from __future__ import annotations

import logging
import os
import sys
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scheduler_py.monitoring.change import apply_change, fit_reference
from scheduler_py.monitoring.documents import (
    ParseCache,
    Tables,
    build_documents,
    fit_znode,
    parse_windows,
)
from scheduler_py.monitoring.masters import master_on_loopback
from scheduler_py.monitoring.records import (
    EXECUTOR_COLUMNS,
    RECORD_COLUMNS,
    TRAFFIC_COLUMNS,
    FlatRecords,
    flatten,
)

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from scheduler_py.monitoring.zk import MonitorStore, RawWindow

log = logging.getLogger(__name__)

DEFAULT_MASTER = "local[1]"
"""One core: the inputs are small, and a cycle must not take the cores the topologies need
(README "Monitoring cost"); ``--master local[*]`` or a Spark cluster for thousands of
executors."""
DEFAULT_WINDOW_MS = 60_000
DEFAULT_RETENTION_MS = 300_000
"""30 windows of the monitor's default 10 s (``scheduler.monitor.retention.windows``)."""

SPARK_DEFAULTS: dict[str, str] = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    # the inputs are kilobytes to a few megabytes: one partition per shuffle, and no adaptive
    # execution (it runs every shuffle stage as a job of its own: 32 jobs per cycle instead
    # of 10, README "Monitoring cost")
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
    _SESSION.sparkContext.setLogLevel(os.environ.get("SCHEDULER_PY_SPARK_LOG_LEVEL", "ERROR"))
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


# --------------------------------------------------------------------------- Spark part


def _schemas():
    from pyspark.sql.types import (
        DoubleType,
        LongType,
        StringType,
        StructField,
        StructType,
    )

    types = {
        "record_id": LongType(),
        "topology_id": StringType(),
        "supervisor_id": StringType(),
        "host": StringType(),
        "port": LongType(),
        "seq": LongType(),
        "window_start_ms": LongType(),
        "window_end_ms": LongType(),
        "worker_cpu_ms": DoubleType(),
        "overhead_cpu_ms": DoubleType(),
        "truncated_pairs": LongType(),
        "task_start": LongType(),
        "task_end": LongType(),
        "component": StringType(),
        "thread_cpu_ms": DoubleType(),
        "subprocess_cpu_ms": DoubleType(),
        "src": LongType(),
        "dst": LongType(),
        "stream": StringType(),
        "tuples": DoubleType(),
        "bytes": DoubleType(),
    }

    def schema(columns):
        return StructType([StructField(c, types[c], False) for c in columns])

    return schema(RECORD_COLUMNS), schema(EXECUTOR_COLUMNS), schema(TRAFFIC_COLUMNS)


@dataclass
class Frames:
    """The three input tables (columns :data:`~.records.RECORD_COLUMNS`, ...); ``records``
    also has ``window_cut_ms``: a record is in the window iff ``window_end_ms`` is above it.

    The cut travels as data, not as a literal in the query: Spark inlines literals into the
    Java code it generates and compiles (Janino), so a cut that changes every cycle would
    make every cycle compile its code afresh.
    """

    records: DataFrame
    executors: DataFrame
    traffic: DataFrame


def frames_from_rows(spark: SparkSession, flat: FlatRecords, window_cut_ms: int) -> Frames:
    """The three input tables, handed to the JVM as Arrow columns.

    Not ``createDataFrame(list_of_tuples)``: that pickles the rows and re-serialises them in
    Python worker processes (``pyspark.daemon``) on every cycle; an Arrow table goes to the
    JVM in one stream and no Python worker starts.
    """
    import pyarrow as pa

    def table(rows: list[tuple], columns: tuple[str, ...], schema, **constant) -> DataFrame:
        arrays = {name: [row[i] for row in rows] for i, name in enumerate(columns)}
        for name, value in constant.items():
            arrays[name] = [value] * len(rows)
        return spark.createDataFrame(pa.table(arrays), schema)

    record_schema, executor_schema, traffic_schema = _schemas()
    record_schema = record_schema.add("window_cut_ms", "long", False)
    return Frames(
        table(flat.records, RECORD_COLUMNS, record_schema, window_cut_ms=window_cut_ms),
        table(flat.executors, EXECUTOR_COLUMNS, executor_schema),
        table(flat.traffic, TRAFFIC_COLUMNS, traffic_schema),
    )


TABLES = ("workers", "executors", "pairs", "components", "edges")


@dataclass
class AggregateFrames:
    """The aggregate as lazy DataFrames, keyed by ``topology_id`` (:func:`collect` runs them)."""

    workers: DataFrame
    executors: DataFrame
    pairs: DataFrame
    components: DataFrame
    edges: DataFrame


def aggregate_frames(frames: Frames) -> AggregateFrames:
    """The Spark side of the job (see the module docstring for every rule)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    col = F.col
    one = F.lit(1)

    dedup = Window.partitionBy("topology_id", "supervisor_id", "port", "window_end_ms").orderBy(
        col("seq").desc(), col("record_id").asc()
    )
    ranked = frames.records.withColumn("keep", F.row_number().over(dedup) == 1)
    duration = col("window_end_ms") - col("window_start_ms")
    in_window = col("keep") & (col("window_end_ms") > col("window_cut_ms"))

    def when_in(expr):
        return F.when(in_window, expr)

    workers = ranked.groupBy("topology_id", "supervisor_id", "port").agg(
        F.count(one).alias("valid"),
        F.sum(col("keep").cast("long")).alias("kept"),
        F.max("window_end_ms").alias("last_seen_ms"),
        F.max_by("host", "window_end_ms").alias("host"),
        F.coalesce(F.sum(in_window.cast("long")), F.lit(0)).alias("records"),
        F.min(when_in(col("window_start_ms"))).alias("window_start_ms"),
        F.max(when_in(col("window_end_ms"))).alias("window_end_ms"),
        F.sum(when_in(duration)).alias("covered_ms"),
        F.sum(when_in(col("worker_cpu_ms"))).alias("worker_cpu_ms"),
        F.sum(when_in(col("overhead_cpu_ms"))).alias("overhead_cpu_ms"),
        F.coalesce(F.sum(when_in(col("truncated_pairs"))), F.lit(0)).alias("truncated_pairs"),
    )

    kept = ranked.filter(col("keep")).drop("keep")
    current = kept.filter(col("window_end_ms") > col("window_cut_ms")).select(
        "record_id",
        "topology_id",
        "supervisor_id",
        "host",
        "port",
        "window_end_ms",
        duration.alias("duration_ms"),
    )

    executors = (
        frames.executors.join(current, "record_id")
        .groupBy("topology_id", "task_start", "task_end", "component")
        .agg(
            F.sum("thread_cpu_ms").alias("thread_cpu_ms"),
            F.sum("subprocess_cpu_ms").alias("subprocess_cpu_ms"),
            F.sum("duration_ms").alias("covered_ms"),
            F.count(one).alias("windows"),
            F.max_by(F.struct("supervisor_id", "host", "port"), "window_end_ms").alias("at"),
        )
        .select(
            "topology_id",
            "task_start",
            "task_end",
            "component",
            ((col("thread_cpu_ms") + col("subprocess_cpu_ms")) * 100.0 / col("covered_ms")).alias(
                "cpu_percent"
            ),
            (col("thread_cpu_ms") * 100.0 / col("covered_ms")).alias("thread_cpu_percent"),
            (col("subprocess_cpu_ms") * 100.0 / col("covered_ms")).alias("subprocess_cpu_percent"),
            "covered_ms",
            "windows",
            col("at.supervisor_id").alias("supervisor_id"),
            col("at.host").alias("host"),
            col("at.port").alias("port"),
        )
    )

    # destination task -> the executor that most recently listed it
    latest = Window.partitionBy("topology_id", "task").orderBy(
        col("window_end_ms").desc(), col("task_start").asc()
    )
    task_map = (
        frames.executors.join(kept.select("record_id", "topology_id", "window_end_ms"), "record_id")
        .select(
            "topology_id",
            F.explode(F.sequence("task_start", "task_end")).alias("task"),
            "task_start",
            "task_end",
            "component",
            "window_end_ms",
        )
        .withColumn("rank", F.row_number().over(latest))
        .filter(col("rank") == 1)
        .select(
            "topology_id",
            col("task").alias("dst"),
            col("task_start").alias("dst_start"),
            col("task_end").alias("dst_end"),
            col("component").alias("dst_component"),
        )
    )
    sources = frames.executors.select(
        col("record_id").alias("src_record"),
        col("task_start").alias("src_start"),
        col("task_end").alias("src_end"),
        col("component").alias("src_component"),
    )
    traffic = frames.traffic.join(current.select("record_id", "topology_id"), "record_id")
    traffic = traffic.join(
        sources,
        (traffic["record_id"] == sources["src_record"])
        & (traffic["src"] >= sources["src_start"])
        & (traffic["src"] <= sources["src_end"]),
        "left",
    ).join(task_map, ["topology_id", "dst"], "left")
    sums = traffic.groupBy(
        "topology_id",
        F.coalesce("src_start", "src").alias("src_start"),
        F.coalesce("src_end", "src").alias("src_end"),
        F.coalesce("src_component", F.lit("?")).alias("src_component"),
        F.coalesce("dst_start", "dst").alias("dst_start"),
        F.coalesce("dst_end", "dst").alias("dst_end"),
        F.coalesce("dst_component", F.lit("?")).alias("dst_component"),
    ).agg(F.sum("tuples").alias("tuples"), F.sum("bytes").alias("bytes"))
    observed = executors.select(
        "topology_id",
        col("task_start").alias("src_start"),
        col("task_end").alias("src_end"),
        "covered_ms",
    )
    pairs = sums.join(observed, ["topology_id", "src_start", "src_end"], "left").select(
        "topology_id",
        "src_start",
        "src_end",
        "src_component",
        "dst_start",
        "dst_end",
        "dst_component",
        (col("tuples") * 1000.0 / col("covered_ms")).alias("tuples_per_s"),
        (col("bytes") * 1000.0 / col("covered_ms")).alias("bytes_per_s"),
    )

    inbound = pairs.groupBy(
        "topology_id", col("dst_start").alias("task_start"), col("dst_end").alias("task_end")
    ).agg(F.sum("tuples_per_s").alias("in_tuples_per_s"))
    spread = (
        executors.join(inbound, ["topology_id", "task_start", "task_end"], "left")
        .fillna(0.0, ["in_tuples_per_s"])
        .groupBy("topology_id", "component")
        .agg(
            F.count(one).alias("executors"),
            F.sum("cpu_percent").alias("cpu_percent"),
            _cv(F, "cpu_percent").alias("cpu_cv"),
            _cv(F, "in_tuples_per_s").alias("in_tuples_cv"),
        )
    )
    into = pairs.groupBy("topology_id", col("dst_component").alias("component")).agg(
        F.sum("tuples_per_s").alias("in_tuples_per_s"),
        F.sum("bytes_per_s").alias("in_bytes_per_s"),
    )
    out = pairs.groupBy("topology_id", col("src_component").alias("component")).agg(
        F.sum("tuples_per_s").alias("out_tuples_per_s"),
        F.sum("bytes_per_s").alias("out_bytes_per_s"),
    )
    components = (
        spread.join(into, ["topology_id", "component"], "full")
        .join(out, ["topology_id", "component"], "full")
        .fillna(0)
    )
    edges = pairs.groupBy(
        "topology_id", col("src_component").alias("from"), col("dst_component").alias("to")
    ).agg(
        F.sum("tuples_per_s").alias("tuples_per_s"),
        F.sum("bytes_per_s").alias("bytes_per_s"),
        F.count(one).alias("pairs"),
    )
    return AggregateFrames(workers, executors, pairs, components, edges)


def _cv(F, column: str):
    """Population coefficient of variation; 0 for a zero mean or a single executor."""
    mean = F.avg(column)
    return F.when(mean > 0, F.coalesce(F.stddev_pop(column), F.lit(0.0)) / mean).otherwise(0.0)


def collect(result: AggregateFrames) -> Tables:
    """Collect every table. ``executors`` and ``pairs`` feed the later tables, so they are
    cached for the duration (measured: one collect per table over cached inputs costs less
    CPU than one unioned query, whose plan Spark analyses and optimises as a whole)."""
    shared = (result.executors, result.pairs)
    for frame in shared:
        frame.persist()
    try:
        tables = Tables()
        for name in TABLES:
            rows = getattr(tables, name)
            rows.extend(row.asDict(recursive=True) for row in getattr(result, name).collect())
        return tables
    finally:
        for frame in shared:
            frame.unpersist()


def aggregate_rows(spark: SparkSession, flat: FlatRecords, now_ms: int, window_ms: int) -> Tables:
    """Rows in, collected aggregate tables out (no records: empty tables, Spark untouched)."""
    if not flat.records:
        return Tables()
    return collect(aggregate_frames(frames_from_rows(spark, flat, now_ms - window_ms)))


# --------------------------------------------------------------------------- the job


@dataclass
class JobConfig:
    window_ms: int = DEFAULT_WINDOW_MS
    retention_ms: int = DEFAULT_RETENTION_MS
    parquet: Path | None = None


@dataclass
class RunSummary:
    """What one run did (the CLI prints it)."""

    documents: dict[str, dict[str, Any]]
    deleted_topologies: list[str]
    deleted_windows: int
    read_windows: int
    seconds: float
    reasons: dict[str, list[str]]
    new_windows: int = 0
    """window znodes not seen by an earlier run of this job (read and parsed this run)"""
    skipped: bool = False
    """no new window since the last run: no Spark work, the aggregates were left as they are"""
    phases: dict[str, float] = field(default_factory=dict)
    """seconds per phase: ``zookeeper`` (listing and reading), ``parse``, ``spark``, ``write``"""


class AggregationJob:
    """Aggregates every running topology's windows into its aggregate znode.

    The job keeps what it read: a window znode is read and parsed once, and a run that finds
    no window it has not seen does no Spark work and rewrites nothing (the aggregates keep
    their ``computed_at_ms``, so the brain's freshness rule sees that nothing new arrived).
    """

    def __init__(self, spark: SparkSession, store: MonitorStore, config: JobConfig) -> None:
        self.spark = spark
        self.store = store
        self.config = config
        self._windows: dict[str, RawWindow] = {}
        self._parsed: ParseCache = {}
        self._runs = 0

    def run_once(
        self,
        now_ms: int | None = None,
        running: set[str] | None = None,
        reset_reference: bool = False,
    ) -> RunSummary:
        """One aggregation. ``running``: topology ids Nimbus lists (``None`` = unknown: no
        topology is deleted and every monitored one is aggregated)."""
        started = time.perf_counter()
        phases: dict[str, float] = {}
        now = int(time.time() * 1000) if now_ms is None else int(now_ms)
        deleted = []
        if running is not None:
            for topology_id in sorted(self.store.known_topologies() - set(running)):
                self.store.delete_topology(topology_id)
                deleted.append(topology_id)
                log.info("deleted the monitoring znodes of %s (no longer running)", topology_id)
        topologies = self.store.topologies()
        raw: list[RawWindow] = []
        for topology_id in topologies:
            raw.extend(self.store.load_windows(topology_id, self._windows))
        seen = {self.store.window_path(window): window for window in raw}
        new_windows = len(seen.keys() - self._windows.keys())
        self._windows = seen
        phases["zookeeper"] = time.perf_counter() - started
        skip = self._runs > 0 and new_windows == 0 and not reset_reference
        self._runs += 1
        documents: dict[str, dict[str, Any]] = {}
        reasons: dict[str, list[str]] = {}
        if not skip:
            documents, reasons = self._aggregate(raw, topologies, now, reset_reference, phases)
        mark = time.perf_counter()
        deleted_windows = self.store.delete_old_windows(
            raw, now - self.config.retention_ms, topologies
        )
        phases["write"] = phases.get("write", 0.0) + time.perf_counter() - mark
        return RunSummary(
            documents,
            deleted,
            deleted_windows,
            len(raw),
            time.perf_counter() - started,
            reasons,
            new_windows=new_windows,
            skipped=skip,
            phases=phases,
        )

    def _aggregate(
        self,
        raw: list[RawWindow],
        topologies: list[str],
        now: int,
        reset_reference: bool,
        phases: dict[str, float],
    ) -> tuple[dict[str, dict[str, Any]], dict[str, list[str]]]:
        mark = time.perf_counter()
        parsed = parse_windows(raw, cache=self._parsed, now_ms=now)
        for topology_id, reasons in parsed.reasons.items():
            log.warning(
                "%s: %d corrupt record(s) skipped, e.g. %s",
                topology_id,
                parsed.corrupt[topology_id],
                "; ".join(reasons[:3]),
            )
        window = self.config.window_ms
        flat = flatten(parsed.records, traffic_after_ms=now - window)
        phases["parse"] = time.perf_counter() - mark
        mark = time.perf_counter()
        if flat.records:
            result = aggregate_frames(frames_from_rows(self.spark, flat, now - window))
            tables = collect(result)
            if self.config.parquet is not None:
                write_parquet(result, self.config.parquet, now)
        else:
            tables = Tables()
        phases["spark"] = time.perf_counter() - mark
        mark = time.perf_counter()
        documents = build_documents(tables, topologies, now, window, parsed.corrupt)
        for topology_id, document in documents.items():
            stored = self.store.read_reference(topology_id)
            new_reference = apply_change(document, stored, reset_reference)
            if new_reference is not None:
                self.store.write_reference(topology_id, fit_reference(new_reference))
            self.store.write_aggregate(topology_id, fit_znode(document))
        phases["write"] = time.perf_counter() - mark
        return documents, dict(parsed.reasons)


def write_parquet(result: AggregateFrames, directory: Path, now_ms: int) -> None:
    """Append this run's tables to ``directory/<table>/`` (Parquet, partitioned by
    ``topology_id``, each row stamped with ``computed_at_ms``)."""
    from pyspark.sql import functions as F

    for name in ("executors", "pairs", "components", "edges", "workers"):
        frame = getattr(result, name).withColumn("computed_at_ms", F.lit(now_ms))
        frame.write.mode("append").partitionBy("topology_id").parquet(str(directory / name))
