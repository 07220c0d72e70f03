"""One warm `scheduler-py aggregate` cycle at 10-5,000 executors (synthetic records published to a
real ZooKeeper): CPU-s and wall s per cycle, longest burst above 0.5 core.

What one aggregation cycle costs as topologies grow (docs/monitoring.md, "Monitoring cost").

A real ZooKeeper (``devtools/zkserver.py``) receives synthetic window records published exactly
as the worker monitor publishes them. ``mode=counts`` (the default monitoring, version-2
records: ``monitoring/synthetic_counts.py``, a four-component chain, shuffle → fields →
shuffle, load-aware messaging on, ~8 executors per worker, 4 workers per host; the job
estimates the pairs from Storm's counts) or ``mode=exact`` (version-1 records with the hooks'
traffic: ``monitoring/synthetic.py``, each executor sending to 16 of the next component, one
acker per worker). They are published (gzip JSON at ``<root>/monitor/<topology>/<worker>/w-<end>``,
``MonitorStore.publish_window``). For each size, the retention's worth of windows (30 per
worker, 5 min at 10 s) is published and one cold cycle runs; then, ``cycles`` times, every
worker publishes its next window and one **warm** cycle of ``AggregationJob.run_once`` runs,
as ``scheduler-py aggregate --every`` would, in this process's Spark session (the CLI's
default master and settings). The job aggregates on the driver up to
``monitoring/job.DRIVER_MAX_ROWS`` input rows and with Spark above (``engine=auto``, the
job's default); ``engine=spark`` or ``engine=driver`` forces one path, for comparison.

Per warm cycle: wall seconds, CPU-seconds of this process and its Spark JVM (``/proc``; the
ZooKeeper server excluded), and the longest stretch sampled every 0.25 s above half a core.
Targets: at <= 100 executors <= 1 CPU-s and <= 3 s wall per cycle and no burst above 0.5
core longer than 2 s; at 1,000 executors <= 5 CPU-s; at 5,000 within the default period (30 s).

Options (``--set``): ``mode`` (``counts`` default, ``exact``), ``sizes`` (comma-separated
executors, default 10,100,1000,5000; quick 10,100), ``cycles`` (measured warm cycles per size,
default 3; quick 2), ``warmup`` (unmeasured warm cycles first, default 4; quick 1), ``master``,
``engine`` (``auto`` default, ``spark``, ``driver``).
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from scheduler_py.bench import report
from scheduler_py.bench.local_cluster import tree_cpu_seconds
from scheduler_py.bench.registry import BenchOptions
from scheduler_py.bench.report import Table, fmt
from scheduler_py.bench.sampling import PeriodicSampler

NAME = "aggregate_scale"
PAPER = "docs/monitoring.md: monitoring cost (one warm aggregation cycle vs executors)"
SIZES, QUICK_SIZES = (10, 100, 1000, 5000), (10, 100)
CYCLES, QUICK_CYCLES = 3, 2
WARMUP_CYCLES, QUICK_WARMUP_CYCLES = 4, 1
"""Unmeasured cycles first: a long-running ``--every`` process is JIT-compiled and has its
generated code cached; the first cycles of a size are not representative."""
RETAINED_WINDOWS = 30
WINDOW_MS = 10_000
PERIOD_S = 30.0
"""``scheduler-py aggregate --every`` in ``deploy/cluster-up.sh``"""
SMALL, SMALL_CPU_S, SMALL_WALL_S = 100, 1.0, 3.0
MEDIUM, MEDIUM_CPU_S = 1000, 5.0
BURST_CORES, BURST_S = 0.5, 2.0
SAMPLE_S = 0.25


class CpuSampler(PeriodicSampler):
    """Samples a process tree's CPU every :data:`SAMPLE_S` (and once more at the stop); the
    longest run of samples above ``cores`` is the burst."""

    def __init__(self, pid: int, exclude: set[int]) -> None:
        super().__init__(SAMPLE_S, name="cpu-sampler", final=True)
        self.pid = pid
        self.exclude = exclude
        self.samples: list[tuple[float, float]] = []

    def sample(self) -> None:
        # /proc counts in 10 ms ticks: the tree is read between two reads of what is taken
        # out of it (this process's ticks, the excluded trees) until no tick fell between
        # them; this process itself is then counted to the nanosecond (a cycle on the driver
        # takes a few ticks)
        own = self.pid == os.getpid()

        def outside() -> tuple[float, float]:
            ticks = _own_ticks_seconds() if own else 0.0
            return ticks, sum(tree_cpu_seconds(p) for p in self.exclude)

        for _ in range(10):
            before = outside()
            tree = tree_cpu_seconds(self.pid)
            if outside() == before:
                break
        ticks, excluded = before
        cpu = tree - excluded + (time.process_time() - ticks if own else 0.0)
        self.samples.append((time.monotonic(), cpu))

    @property
    def cpu_seconds(self) -> float:
        return self.samples[-1][1] - self.samples[0][1] if len(self.samples) > 1 else 0.0

    def longest_burst(self, cores: float) -> float:
        """Longest time (s) the tree used more than ``cores`` without a pause."""
        longest = current = 0.0
        for (t0, c0), (t1, c1) in zip(self.samples, self.samples[1:], strict=False):
            span = t1 - t0
            if span > 0 and (c1 - c0) / span > cores:
                current += span
                longest = max(longest, current)
            else:
                current = 0.0
        return longest


def _own_ticks_seconds() -> float:
    """This process's CPU-seconds as ``/proc`` counts them (what ``tree_cpu_seconds`` adds)."""
    fields = Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _publish(store: Any, records: list[Any]) -> None:
    """Publish window records the way a worker monitor does, many at once."""
    from scheduler_py.monitoring.records import encode, record_document
    from scheduler_py.monitoring.zk import WINDOW_PREFIX

    pending = []
    for record in records:
        path = f"{store.monitor_path(record.topology_id, record.worker)}/"
        path += f"{WINDOW_PREFIX}{record.window_end_ms}"
        data = encode(record_document(record))
        pending.append(store.client.create_async(path, data, makepath=True))
    for result in pending:
        result.get()


MODES = ("counts", "exact")


def _generator(mode: str, executors: int, topology: str):
    """``(workers, records(end_ms, windows, seed))`` of the synthetic topology for ``mode``."""
    if mode == "exact":
        from scheduler_py.monitoring.synthetic import Shape, records

        shape = Shape.for_executors(executors)
        return shape.workers, lambda end, windows, seed: records(
            topology, shape, end, windows, seed=seed
        )
    from scheduler_py.monitoring.synthetic_counts import Layout, chain, simulate

    workers = max(1, min(500, executors // 8))
    layout = Layout(workers=workers, hosts=max(1, workers // 4))
    return (
        workers,
        lambda end, windows, seed: (
            simulate(
                chain(executors),
                layout,
                end,
                windows,
                mode="counts",
                topology_id=topology,
                seed=seed,
            ).records
        ),
    )


def _measure_size(
    spark: Any,
    zk_hosts: str,
    zk_pid: int,
    executors: int,
    cycles: int,
    warmup: int,
    mode: str,
    engine: str,
):
    from scheduler_py.monitoring.job import AggregationJob, JobConfig
    from scheduler_py.monitoring.zk import MonitorStore, close_quietly, connect

    topology = f"scale-{executors}"
    workers, records = _generator(mode, executors, topology)
    now = int(time.time() * 1000) // WINDOW_MS * WINDOW_MS
    client = connect(zk_hosts, timeout=30)
    try:
        store = MonitorStore(client, f"/scale-{executors}")
        _publish(store, records(now, RETAINED_WINDOWS, executors))
        job = AggregationJob(spark, store, JobConfig(engine=engine))
        started = time.perf_counter()
        cold = job.run_once(now_ms=now, running={topology})
        cold_s = time.perf_counter() - started
        warm = []
        for cycle in range(1, warmup + cycles + 1):
            end = now + cycle * WINDOW_MS
            fresh = records(end, 1, executors + cycle)
            _publish(store, fresh)
            with CpuSampler(os.getpid(), {zk_pid}) as sampler:
                started = time.perf_counter()
                summary = job.run_once(now_ms=end, running={topology})
                wall = time.perf_counter() - started
            if cycle <= warmup:
                continue
            document = summary.documents[topology]
            warm.append(
                {
                    "wall_s": wall,
                    "cpu_s": sampler.cpu_seconds,
                    "burst_s": sampler.longest_burst(BURST_CORES),
                    "phases": summary.phases,
                    "engine": summary.engine,
                    "new_windows": summary.new_windows,
                    "read_windows": summary.read_windows,
                    "records_in_window": document["records"],
                    "pairs": len(document["pairs"]),
                }
            )
        client.delete(store.root, recursive=True)
        return {
            "executors": executors,
            "workers": workers,
            "cold_wall_s": cold_s,
            "cold_windows": cold.read_windows,
            "engine": warm[-1]["engine"],
            "cycles": warm,
            "cpu_s_per_cycle": statistics.median(c["cpu_s"] for c in warm),
            "wall_s_per_cycle": statistics.median(c["wall_s"] for c in warm),
            "cpu_s_range": [min(c["cpu_s"] for c in warm), max(c["cpu_s"] for c in warm)],
            "wall_s_range": [min(c["wall_s"] for c in warm), max(c["wall_s"] for c in warm)],
            "longest_burst_s": max(c["burst_s"] for c in warm),
            "pairs": warm[-1]["pairs"],
        }
    finally:
        close_quietly(client)


def run(options: BenchOptions) -> None:
    from scheduler_py.devtools.zkserver import LocalZooKeeper
    from scheduler_py.monitoring.spark import DEFAULT_MASTER, spark_session

    extra = options.extra
    sizes = [int(x) for x in extra.get("sizes", "").split(",") if x.strip()] or list(
        QUICK_SIZES if options.quick else SIZES
    )
    cycles = int(extra.get("cycles", QUICK_CYCLES if options.quick else CYCLES))
    warmup = int(extra.get("warmup", QUICK_WARMUP_CYCLES if options.quick else WARMUP_CYCLES))
    master = extra.get("master", DEFAULT_MASTER)
    mode = str(extra.get("mode", "counts"))
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    from scheduler_py.monitoring.job import ENGINES

    engine = str(extra.get("engine", "auto"))
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {', '.join(ENGINES)}, got {engine!r}")
    report.title("Aggregation cost per cycle vs executors", PAPER)
    report.line(
        f"{mode} mode records; sizes {sizes}: a cold cycle, {warmup} unmeasured and "
        f"{cycles} measured warm cycle(s) each, master {master}, engine {engine}, "
        f"load average {os.getloadavg()[0]:.1f} on {len(os.sched_getaffinity(0))} CPU(s)"
    )
    spark = spark_session(master)
    results = []
    with (
        tempfile.TemporaryDirectory(prefix="aggregate-scale-") as tmp,
        LocalZooKeeper(Path(tmp) / "zk") as zookeeper,
    ):
        assert zookeeper.process is not None
        for executors in report.progress(sizes, total=len(sizes), desc="sizes"):
            results.append(
                _measure_size(
                    spark,
                    zookeeper.hosts,
                    zookeeper.process.pid,
                    executors,
                    cycles,
                    warmup,
                    mode,
                    engine,
                )
            )
            results[-1]["load_average"] = os.getloadavg()[0]

    table = Table(
        [
            "executors",
            "workers",
            "pairs",
            "engine",
            "CPU-s/cycle",
            "range",
            "wall s/cycle",
            "range",
            "burst > 0.5 core (s)",
            "cold cycle s",
        ],
        caption="one warm aggregation cycle (median of the warm cycles)",
        notes=[
            "CPU-s: this process and its Spark JVM (user + system), ZooKeeper excluded",
            "phases of the last warm cycle: "
            + "; ".join(
                f"{r['executors']}: "
                + ", ".join(f"{k} {v:.2f}" for k, v in r["cycles"][-1]["phases"].items())
                for r in results
            ),
        ],
    )
    for r in results:
        table.add(
            str(r["executors"]),
            str(r["workers"]),
            str(r["pairs"]),
            r["engine"],
            fmt(r["cpu_s_per_cycle"], ".2f"),
            "–".join(fmt(x, ".2f") for x in r["cpu_s_range"]),
            fmt(r["wall_s_per_cycle"], ".2f"),
            "–".join(fmt(x, ".2f") for x in r["wall_s_range"]),
            fmt(r["longest_burst_s"], ".2f"),
            fmt(r["cold_wall_s"], ".1f"),
        )
    table.print()

    report.line()
    report.line("targets:")
    targets = []

    def target(text: str, passed: bool | None, detail: str) -> None:
        report.target_line(text, passed, detail)
        targets.append({"target": text, "passed": passed, "detail": detail})

    small = [r for r in results if r["executors"] <= SMALL]
    if small:
        cpu = max(r["cpu_s_per_cycle"] for r in small)
        wall = max(r["wall_s_per_cycle"] for r in small)
        burst = max(r["longest_burst_s"] for r in small)
        target(f"<= {SMALL} executors: <= 1 CPU-s per cycle", cpu <= SMALL_CPU_S, f"{cpu:.2f}")
        target(f"<= {SMALL} executors: <= 3 s wall per cycle", wall <= SMALL_WALL_S, f"{wall:.2f}")
        target(
            f"<= {SMALL} executors: no burst above 0.5 core longer than 2 s",
            burst <= BURST_S,
            f"longest {burst:.2f} s",
        )
    for r in results:
        if r["executors"] == MEDIUM:
            cpu = r["cpu_s_per_cycle"]
            target("1,000 executors: <= 5 CPU-s per cycle", cpu <= MEDIUM_CPU_S, f"{cpu:.2f}")
        if r["executors"] >= 5000:
            wall = r["wall_s_per_cycle"]
            target(
                f"{r['executors']:,} executors: a cycle within the default period (30 s)",
                wall <= PERIOD_S,
                f"{wall:.1f} s",
            )

    report.publish(
        options,
        NAME,
        PAPER,
        lambda axes: _draw(axes, results),
        {
            "master": master,
            "mode": mode,
            "engine": engine,
            "cycles": cycles,
            "results": results,
            "summary": {
                "sizes": [
                    {
                        "executors": r["executors"],
                        "cpu_s_per_cycle": r["cpu_s_per_cycle"],
                        "wall_s_per_cycle": r["wall_s_per_cycle"],
                        "longest_burst_s": r["longest_burst_s"],
                    }
                    for r in results
                ]
            },
            "targets": targets,
        },
    )


def _draw(axes: Any, results: list[dict[str, Any]]) -> None:
    xs = [r["executors"] for r in results]
    axes.plot(xs, [r["cpu_s_per_cycle"] for r in results], "o-", label="CPU-s per cycle")
    axes.plot(xs, [r["wall_s_per_cycle"] for r in results], "s--", label="wall s per cycle")
    axes.set_xscale("log")
    axes.set_xlabel("executors")
    axes.set_ylabel("seconds")
    axes.set_title("one warm aggregation cycle")
    axes.legend(loc="upper left")
