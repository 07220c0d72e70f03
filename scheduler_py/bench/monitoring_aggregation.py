"""PySpark aggregation throughput on synthetic window records: pair rows/s on local[2] for 1 M and
10 M rows (quick: 50 k), plus the driver's parse rate.

Throughput of the monitoring aggregation (PySpark, ``local[2]``) on synthetic records.

**Spark aggregation.** Synthetic window records are generated *inside* Spark
(``spark.range``; no driver rows), shaped like a busy topology: 20 workers × 30 windows of
10 s (600 records, all inside the sliding window: the worst case), 10 executors per worker
(200 executors in 4 components of 50, each executor sending to every executor of the next
component, round robin), and N traffic rows ("pair rows": one (source task, destination
task, stream) count of one record) spread evenly over the records, with as many streams
as needed to keep the rows distinct. :func:`~scheduler_py.monitoring.aggregate.
aggregate_frames` runs on them and every table is collected to the driver — exactly the
job's work after parsing. Reported: pair rows per second of wall time (Spark uses both
cores; the timing includes generating the rows, which is a cheap projection of
``range``). One warm-up run (JIT, code generation) precedes the timed ones.

**Driver path.** What a run does before Spark: gzip+JSON decode and validate the records
(:mod:`~scheduler_py.monitoring.records`) and hand the rows to Spark
(``createDataFrame``), timed on the smallest size.

Sizes: 1 M and 10 M pair rows (``--quick``: 50 k); ``--set sizes=200000,1000000``,
``--set repeats=2``, ``--set master=local[2]``.

References: notes ``000_topdown.md`` §3.2 (per-worker monitor → ZooKeeper → PySpark
aggregation); ``docs/monitoring-format.md``.
"""

from __future__ import annotations

import math
import time
from typing import Any

from scheduler_py.bench import report
from scheduler_py.bench.registry import BenchOptions
from scheduler_py.bench.report import Table, fmt

NAME = "monitoring_aggregation"
PAPER = "``docs/algorithms/000-topdown.md`` (monitoring: PySpark aggregation)"
SIZES, QUICK_SIZES = (1_000_000, 10_000_000), (50_000,)
WORKERS, WINDOWS, PER_WORKER, COMPONENTS = 20, 30, 10, 4
WINDOW_MS = 10_000
NOW = 2_000_000_000_000
TARGET_RATE = 100_000.0
"""pair rows/s on local[2]: a 10 M-row window aggregated in under two minutes"""
DRIVER_RECORDS, QUICK_DRIVER_RECORDS = 600, 60


def synthetic_frames(spark, rows: int):
    """The three input tables for ``rows`` traffic rows (see the module docstring)."""
    from pyspark.sql import functions as F

    from scheduler_py.monitoring.aggregate import Frames, _schemas

    records = WORKERS * WINDOWS
    executors = WORKERS * PER_WORKER
    group = executors // COMPONENTS
    per_record = math.ceil(rows / records)
    streams = max(1, math.ceil(per_record / (PER_WORKER * group)))
    record_schema, executor_schema, traffic_schema = _schemas()
    record_schema = record_schema.add("window_cut_ms", "long", False)
    col = F.col

    def idiv(column, n):
        return F.floor(column / n).cast("long")

    worker = col("id") % WORKERS
    window = idiv(col("id"), WORKERS)
    end = F.lit(NOW) - (F.lit(WINDOWS - 1) - window) * WINDOW_MS
    record_frame = spark.range(records).select(
        col("id").alias("record_id"),
        F.lit("bench-1").alias("topology_id"),
        F.concat(F.lit("sup-"), worker.cast("string")).alias("supervisor_id"),
        F.concat(F.lit("127.0.0."), (worker % 250 + 1).cast("string")).alias("host"),
        (worker + 6700).alias("port"),
        window.alias("seq"),
        (end - WINDOW_MS).alias("window_start_ms"),
        end.alias("window_end_ms"),
        (F.rand(1) * 1000).alias("worker_cpu_ms"),
        (F.rand(2) * 100).alias("overhead_cpu_ms"),
        F.lit(0).cast("long").alias("truncated_pairs"),
        F.lit(NOW - WINDOWS * WINDOW_MS).alias("window_cut_ms"),
    )
    rid = idiv(col("id"), PER_WORKER)
    task = (rid % WORKERS) * PER_WORKER + col("id") % PER_WORKER + 1
    executor_frame = spark.range(records * PER_WORKER).select(
        rid.alias("record_id"),
        task.alias("task_start"),
        task.alias("task_end"),
        F.concat(F.lit("c"), idiv(task - 1, group).cast("string")).alias("component"),
        (F.rand(3) * 500).alias("thread_cpu_ms"),
        (F.rand(4) * 500).alias("subprocess_cpu_ms"),
    )
    rid = col("id") % records
    k = idiv(col("id"), records)
    src = (rid % WORKERS) * PER_WORKER + k % PER_WORKER + 1
    target_group = (idiv(src - 1, group) + 1) % COMPONENTS
    dst = target_group * group + idiv(k, PER_WORKER) % group + 1
    stream = idiv(k, PER_WORKER * group) % streams
    tuples = (col("id") * 7919 % 100 + 1).cast("double")
    traffic_frame = spark.range(rows).select(
        rid.alias("record_id"),
        src.alias("src"),
        dst.alias("dst"),
        F.concat(F.lit("s"), stream.cast("string")).alias("stream"),
        tuples.alias("tuples"),
        (tuples * 80.0).alias("bytes"),
    )

    def typed(frame, schema):
        return frame.select([col(f.name).cast(f.dataType) for f in schema.fields])

    return Frames(
        typed(record_frame, record_schema),
        typed(executor_frame, executor_schema),
        typed(traffic_frame, traffic_schema),
    )


def time_spark(spark, rows: int) -> dict[str, Any]:
    from scheduler_py.monitoring.aggregate import aggregate_frames, collect

    frames = synthetic_frames(spark, rows)
    started = time.perf_counter()
    tables = collect(aggregate_frames(frames))
    seconds = time.perf_counter() - started
    return {
        "rows": rows,
        "seconds": seconds,
        "rate": rows / seconds,
        "pairs": len(tables.pairs),
        "executors": len(tables.executors),
        "workers": len(tables.workers),
    }


def time_driver(spark, records: int, rows: int) -> dict[str, Any]:
    """Decode + validate ``records`` gzip records holding ``rows`` traffic rows in all, then
    createDataFrame + count."""
    from scheduler_py.monitoring.aggregate import frames_from_rows
    from scheduler_py.monitoring.records import (
        ExecutorSample,
        TrafficSample,
        WindowRecord,
        encode,
        flatten,
        parse_window,
        record_document,
    )

    per_record = max(1, rows // records)
    blobs = []
    for r in range(records):
        w = r % WORKERS
        tasks = [w * PER_WORKER + i + 1 for i in range(PER_WORKER)]
        record = WindowRecord(
            "bench-1",
            f"sup-{w}",
            f"127.0.0.{w % 250 + 1}",
            6700 + w,
            r,
            NOW - WINDOW_MS * (r // WORKERS + 1),
            NOW - WINDOW_MS * (r // WORKERS),
            800.0,
            80.0,
            tuple(ExecutorSample(t, t, "c", 10.0, 90.0, (1000 + t,)) for t in tasks),
            tuple(
                TrafficSample(tasks[i % PER_WORKER], i % 200 + 1, f"s{i // 2000}", 12.0, 960.0)
                for i in range(per_record)
            ),
        )
        blobs.append(encode(record_document(record)))
    size = sum(len(b) for b in blobs)
    started = time.perf_counter()
    parsed = [parse_window(b) for b in blobs]
    flat = flatten(parsed)
    parse_seconds = time.perf_counter() - started
    started = time.perf_counter()
    frames = frames_from_rows(spark, flat, NOW - WINDOWS * WINDOW_MS)
    frames.traffic.count()
    spark_seconds = time.perf_counter() - started
    total = per_record * records
    return {
        "records": records,
        "rows": total,
        "gzip_bytes": size,
        "parse_seconds": parse_seconds,
        "parse_rate": total / parse_seconds,
        "to_spark_seconds": spark_seconds,
        "to_spark_rate": total / spark_seconds,
    }


def run(options: BenchOptions) -> None:
    from scheduler_py.monitoring.spark import spark_session

    sizes = tuple(int(s) for s in options.extra.get("sizes", "").split(",") if s.strip()) or (
        QUICK_SIZES if options.quick else SIZES
    )
    repeats = int(options.extra.get("repeats", "1"))
    master = options.extra.get("master", "local[2]")
    report.title("Monitoring aggregation throughput (PySpark)", PAPER)
    started = time.perf_counter()
    spark = spark_session(master)
    startup = time.perf_counter() - started
    parallelism = spark.sparkContext.defaultParallelism
    warm = time_spark(spark, min(sizes[0], 20_000))
    results = []
    for rows in report.progress(sizes, desc="aggregation"):
        runs = [time_spark(spark, rows) for _ in range(repeats)]
        best = min(runs, key=lambda r: r["seconds"])
        results.append(best | {"runs": [r["seconds"] for r in runs]})
    driver_records = QUICK_DRIVER_RECORDS if options.quick else DRIVER_RECORDS
    driver = time_driver(spark, driver_records, min(sizes[0], 200_000))

    table = Table(
        ["pair rows", "records", "executors", "pairs out", "seconds", "rows/s"],
        caption=f"{WORKERS} workers × {WINDOWS} windows, {WORKERS * PER_WORKER} executors in "
        f"{COMPONENTS} components; master {master} ({parallelism} cores); best of {repeats}",
        notes=[
            f"Spark session start {startup:.1f} s (once per process); warm-up run "
            f"{warm['seconds']:.1f} s on {warm['rows']:,} rows",
        ],
    )
    for r in results:
        table.add(
            f"{r['rows']:,}",
            f"{WORKERS * WINDOWS:,}",
            f"{r['executors']:,}",
            f"{r['pairs']:,}",
            fmt(r["seconds"], ".1f"),
            fmt(r["rate"], ",.0f"),
        )
    table.print()
    drv = Table(
        ["step", "pair rows", "seconds", "rows/s"],
        caption=f"driver path: {driver['records']} gzip records ({driver['gzip_bytes']:,} bytes)",
    )
    drv.add(
        "decode + validate",
        f"{driver['rows']:,}",
        fmt(driver["parse_seconds"], ".2f"),
        fmt(driver["parse_rate"], ",.0f"),
    )
    drv.add(
        "createDataFrame",
        f"{driver['rows']:,}",
        fmt(driver["to_spark_seconds"], ".2f"),
        fmt(driver["to_spark_rate"], ",.0f"),
    )
    drv.print()

    report.line()
    report.line("targets:")
    largest = results[-1]
    passed = largest["rate"] >= TARGET_RATE
    report.target_line(
        f"aggregation >= {TARGET_RATE:,.0f} pair rows/s on {master}",
        passed,
        f"{largest['rate']:,.0f} rows/s at {largest['rows']:,} rows",
    )

    report.publish(
        options,
        NAME,
        PAPER,
        lambda axes: _draw(axes, results, master),
        {
            "master": master,
            "parallelism": parallelism,
            "spark_startup_seconds": startup,
            "warm_up": warm,
            "shape": {
                "workers": WORKERS,
                "windows": WINDOWS,
                "executors": WORKERS * PER_WORKER,
                "components": COMPONENTS,
            },
            "results": results,
            "driver": driver,
            "targets": [{"target": "rows/s", "passed": passed, "rate": largest["rate"]}],
        },
    )


def _draw(axis, results, master) -> None:
    xs = [r["rows"] for r in results]
    axis.plot(xs, [r["rate"] for r in results], marker="o", label=f"aggregation ({master})")
    axis.axhline(TARGET_RATE, color="tab:red", lw=0.8, ls="--", label="target")
    axis.set_xscale("log")
    axis.set_xlabel("pair rows")
    axis.set_ylabel("pair rows / s")
    axis.set_title("monitoring aggregation throughput")
    axis.legend(fontsize=7)
