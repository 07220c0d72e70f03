"""The Spark part of the aggregation: window records → the tables of the aggregate
(contract §4), all topologies in one job (:func:`aggregate_frames`).

The job around it (ZooKeeper, parsing, change signal, writing) is
:mod:`scheduler_py.monitoring.job`; the session is :mod:`scheduler_py.monitoring.spark`;
the Spark-free parts (parsing, documents) live in ``documents.py`` and ``change.py``, and
``aggregate_local.py`` computes the same tables on the driver (the job's path for small
inputs; :func:`collect` derives ``components`` and ``edges`` there from the collected rows).
What the DataFrame plan computes:

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
  window, with ``last_seen_ms``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from scheduler_py.monitoring.aggregate_local import components_from, edges_from
from scheduler_py.monitoring.documents import Tables
from scheduler_py.monitoring.records import (
    EXECUTOR_COLUMNS,
    RECORD_COLUMNS,
    TRAFFIC_COLUMNS,
    FlatRecords,
)

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


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
    """Collect ``workers``, ``executors`` and ``pairs``; derive ``components`` and ``edges``
    from the collected rows on the driver (:mod:`.aggregate_local`, the same rules as the
    lazy frames of :func:`aggregate_frames`, which the Parquet history writes): two Spark
    queries fewer per cycle, over rows that are already small. ``executors`` feeds ``pairs``
    (the observed time per source executor), so it is cached for the duration (measured:
    collects over cached inputs cost less CPU than one unioned query, whose plan Spark
    analyses and optimises as a whole)."""
    result.executors.persist()
    try:
        tables = Tables()
        for name in ("workers", "executors", "pairs"):
            rows = getattr(tables, name)
            rows.extend(row.asDict(recursive=True) for row in getattr(result, name).collect())
    finally:
        result.executors.unpersist()
    tables.components.extend(components_from(tables.executors, tables.pairs))
    tables.edges.extend(edges_from(tables.pairs))
    return tables


def aggregate_rows(spark: SparkSession, flat: FlatRecords, now_ms: int, window_ms: int) -> Tables:
    """Rows in, collected aggregate tables out (no records: empty tables, Spark untouched)."""
    if not flat.records:
        return Tables()
    return collect(aggregate_frames(frames_from_rows(spark, flat, now_ms - window_ms)))


def write_parquet(result: AggregateFrames, directory: Path, now_ms: int) -> None:
    """Append this run's tables to ``directory/<table>/`` (Parquet, partitioned by
    ``topology_id``, each row stamped with ``computed_at_ms``)."""
    from pyspark.sql import functions as F

    for name in ("executors", "pairs", "components", "edges", "workers"):
        frame = getattr(result, name).withColumn("computed_at_ms", F.lit(now_ms))
        frame.write.mode("append").partitionBy("topology_id").parquet(str(directory / name))
