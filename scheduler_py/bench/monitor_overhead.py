"""The whole monitoring pipeline (worker hooks + ZooKeeper publishing + PySpark aggregation) on vs
off with the JVM word count on a real local cluster, interleaved runs: acked tuples/s and p99
complete latency; overhead targets <= 5 % and <= 10 %.

The whole monitoring pipeline's cost to a topology: worker hooks + ZooKeeper publishing +
the PySpark aggregation, on vs off (README "Monitoring cost"; targets: throughput overhead
<= 5 %, p99 complete-latency overhead <= 10 %).

Starts its own isolated local cluster (:mod:`scheduler_py.bench.local_cluster`:
``deploy/cluster-up.sh`` in a temporary ``CLUSTER_DIR``
with ``CLUSTER_PORT_OFFSET=3000``, the brain on, the worker monitor on, the aggregation *not*
started by cluster-up) and submits the JVM word count (``topologies/jvm``: sentence spout
unthrottled -> split -> fields grouping -> count, one acker, ``topology.workers=3``) several
times, **one at a time**, in interleaved order:

* ``off``: no hooks (``topology.auto.task.hooks=[]``) and no aggregation;
* ``on``: the cluster's defaults (``TrafficHook``: counters, CPU sampling, window records and
  live counters in ZooKeeper) and ``scheduler-py aggregate --every 30s`` running exactly as
  ``cluster-up.sh`` starts it: one long-running process, warmed up on an unmeasured run
  first (``aggregation_warmup`` seconds), paused (SIGSTOP) during the other variants' runs;
* ``hooks only`` (C): the hooks and ZooKeeper publishing, the aggregation paused.

Both are placed by the same algorithm (``--set algorithm=``, default the brain's ``tdls``).
After a warm-up, the spout executors' acked counts are read at both ends of the interval,
each end aligned on a fresh stats heartbeat
(:func:`~scheduler_py.bench.local_cluster.step_rate`); the spouts write cumulative
complete-latency histograms (``bench.latency.dir``), so p50/p99 over the interval come from
two snapshots (:func:`percentile`). The aggregation's CPU-seconds (its process tree: Python
and the Spark JVM) over the interval are reported beside.

Options (``--set key=value``): ``warmup``, ``interval`` (seconds), ``order`` (default
``ABBAAB``: three runs each; quick ``AB``; A = off, B = on), ``algorithm``, ``every`` (the
aggregation period, default 30s), ``worker_childopts`` (``topology.worker.childopts`` for
every variant: the local cluster's workers run ``-XX:TieredStopAtLevel=1``, C1 only, to start
fast on 2 cores; ``-XX:TieredStopAtLevel=4`` gives them the C2 compiler a production JVM
runs, whose escape analysis can remove the per-tuple hook objects Storm allocates).
"""

from __future__ import annotations

import json
import math
import os
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from scheduler_py.bench import report
from scheduler_py.bench.local_cluster import (
    LocalCluster,
    Timing,
    aligned_counts,
    mean,
    median,
    step_rate,
    tree_cpu_seconds,
    value_range,
)
from scheduler_py.bench.registry import BenchOptions
from scheduler_py.bench.report import Table, fmt, pct

NAME = "monitor_overhead"
PAPER = "README: monitoring cost (whole pipeline overhead <= 5 % throughput, <= 10 % p99)"
TARGET = 0.05
P99_TARGET = 0.10
ORDER, QUICK_ORDER = "ABBAAB", "AB"
TIMING = Timing(warmup=(15.0, 40.0), interval=(20.0, 90.0), algorithm="tdls")
"""Warm-up and interval seconds (quick, full) and the algorithm (``--set`` overrides)."""
EVERY = "30s"
OFF, ON, HOOKS, NO_LIVE, NOOP = (
    "off",
    "on",
    "hooks only",
    "hooks, no live counters",
    "no-op hook",
)
NOOP_HOOK = "io.schedulerpy.storm.monitor.NoopHook"
VARIANTS: dict[str, tuple[str, dict[str, object]]] = {
    "A": (OFF, {"topology.auto.task.hooks": []}),
    "B": (ON, {}),
    "C": (HOOKS, {}),
    "D": (NO_LIVE, {"scheduler.monitor.live.secs": 0}),
    "E": (NOOP, {"topology.auto.task.hooks": [NOOP_HOOK]}),
}
"""A: no hooks, no aggregation; B: the whole pipeline; C: hooks and ZooKeeper publishing
without the aggregation (to split the cost between the workers and the aggregation); D: C
without the live counters (``scheduler.monitor.live.secs`` 0: no ephemeral znode rewritten
every 0.2 s; the drain-out then waits ``topology.message.timeout.secs``), to split the
workers' cost between the live counters and the rest; E: a hook that does nothing
(storm_plugin's ``NoopHook``), to split the hooks' cost between Storm's per-tuple hook
dispatch and the monitor's own work."""
LABELS = (OFF, ON, HOOKS, NO_LIVE, NOOP)
TOPOLOGY_CONF: dict[str, object] = {"topology.workers": 3, "topology.acker.executors": 1}


# --------------------------------------------------------------------------- pure helpers


def overhead(with_rate: float | None, without_rate: float | None) -> float | None:
    """1 − with / without; ``None`` when either is missing or ``without`` is not positive."""
    if with_rate is None or without_rate is None or without_rate <= 0:
        return None
    return 1.0 - with_rate / without_rate


def variant_order(text: str) -> list[str]:
    """``"ABBA"`` → ``["A", "B", "B", "A"]``; only the keys of :data:`VARIANTS` are allowed."""
    order = [c for c in text.upper() if not c.isspace()]
    if not order or any(c not in VARIANTS for c in order):
        raise ValueError(
            "order must be made of "
            + ", ".join(f"{key} ({label})" for key, (label, _) in VARIANTS.items())
            + f", got {text!r}"
        )
    return order


Histogram = dict[str, Any]
"""One spout task's latency file (``topologies/jvm/.../LatencyLog.java``): ``per_unit`` and
cumulative ``counts`` per logarithmic bucket."""


def histogram_delta(start: Mapping[int, Histogram], end: Mapping[int, Histogram]) -> list[int]:
    """Bucket counts recorded between two snapshots, summed over the spout tasks (a task
    missing from ``start`` counts from zero)."""
    total: list[int] = []
    for task, later in end.items():
        counts = later["counts"]
        before = start.get(task, {}).get("counts", [0] * len(counts))
        if len(total) < len(counts):
            total += [0] * (len(counts) - len(total))
        for i, (a, b) in enumerate(zip(before, counts, strict=False)):
            total[i] += b - a
    return total


def percentile(counts: Sequence[int], q: float, per_unit: int = 20) -> float | None:
    """The ``q`` quantile (0..1) in milliseconds of a logarithmic histogram: the geometric
    middle of the bucket that holds it (buckets are ~5 % wide); ``None`` when empty."""
    n = sum(counts)
    if n <= 0:
        return None
    rank = q * n
    seen = 0
    for i, count in enumerate(counts):
        seen += count
        if seen >= rank and count:
            return math.exp((i + 0.5) / per_unit) / 1000.0
    return None


def read_histograms(directory: Path) -> dict[int, Histogram]:
    """Every spout task's latest latency file in ``directory`` (unreadable ones skipped)."""
    found: dict[int, Histogram] = {}
    for path in directory.glob("*.json"):
        try:
            data = json.loads(path.read_text())
            found[int(data["task"])] = data
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return found


# --------------------------------------------------------------------------- one run


def _measure(
    cluster: LocalCluster,
    key: str,
    settings: Mapping[str, Any],
    index: int,
    scratch: Path,
) -> dict[str, Any]:
    label, variant_conf = VARIANTS[key]
    name = f"wc-overhead-{index}"
    latency_dir = scratch / f"latency-{index}"
    conf = {
        **TOPOLOGY_CONF,
        **variant_conf,
        "bench.latency.dir": str(latency_dir),
        "scheduler.brain.algorithm": settings["algorithm"],
    }
    if settings["worker_childopts"]:
        conf["topology.worker.childopts"] = settings["worker_childopts"]
    aggregation_pid = cluster.pause_aggregation(label != ON)
    if label != ON:
        aggregation_pid = None
    submitted = time.monotonic()
    cluster.submit(name, conf)
    try:
        ready = time.monotonic() - submitted
        time.sleep(settings["warmup"])
        start = aligned_counts(cluster, name)
        histograms_start = read_histograms(latency_dir)
        cpu_start = tree_cpu_seconds(aggregation_pid) if aggregation_pid else None
        time.sleep(settings["interval"])
        end = aligned_counts(cluster, name)
        histograms_end = read_histograms(latency_dir)
        cpu_end = tree_cpu_seconds(aggregation_pid) if aggregation_pid else None
        state = cluster.nimbus.topology_state(name)
        rate = step_rate(start, end)
        spans = [end[k][0] - start[k][0] for k in start if k in end]
        counts = histogram_delta(histograms_start, histograms_end)
        span = mean(spans)
        aggregation_cpu = (
            (cpu_end - cpu_start) / span * 60
            if cpu_start is not None and cpu_end is not None and span
            else None
        )
        return {
            "variant": label,
            "topology": name,
            "conf": conf,
            "submit_to_ready_s": ready,
            "rate": rate,
            "span_s": span,
            "latency_samples": sum(counts),
            "p50_ms": percentile(counts, 0.50),
            "p99_ms": percentile(counts, 0.99),
            "spout_executors": len(start),
            "workers": state.workers if state else [],
            "failed_total": state.failed if state else None,
            "aggregation_cpu_s_per_min": aggregation_cpu,
        }
    finally:
        cluster.kill(name)


# --------------------------------------------------------------------------- benchmark


def run(options: BenchOptions) -> None:
    extra = options.extra
    settings = {
        **TIMING.settings(options),
        "every": extra.get("every", EVERY),
        "worker_childopts": str(extra.get("worker_childopts", "")),
        "aggregation_warmup": float(
            extra.get("aggregation_warmup", TIMING.warmup[0] if options.quick else 75.0)
        ),
    }
    order = variant_order(extra.get("order", QUICK_ORDER if options.quick else ORDER))

    report.title("Monitoring pipeline overhead (hooks + ZooKeeper + aggregation)", PAPER)
    report.line(
        f"JVM word count, topology.workers=3, spout unthrottled; warm-up {settings['warmup']:g} s,"
        f" interval {settings['interval']:g} s, order {''.join(order)} (A = {OFF}, B = {ON}, "
        f"C = {HOOKS}, D = {NO_LIVE}, E = {NOOP}), "
        f"algorithm {settings['algorithm']}, aggregation every {settings['every']}"
        + (
            f", topology.worker.childopts {settings['worker_childopts']!r}"
            if settings["worker_childopts"]
            else ""
        )
    )
    runs: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="monitor-overhead-") as tmp:
        scratch = Path(tmp)
        cluster = LocalCluster(scratch / "cluster")
        try:
            cluster.up()
            # one long-running aggregation, as in production: warmed up on an unmeasured run
            # (its first cycles compile Spark's code), then paused during the off runs
            if "B" in order:  # only the "on" runs need it
                cluster.start_aggregation(settings["every"], scratch / "aggregate.log")
                warm = {**settings, "warmup": 0.0, "interval": settings["aggregation_warmup"]}
                _measure(cluster, "B", warm, 0, scratch)
            for index, key in enumerate(
                report.progress(order, total=len(order), desc="runs"), start=1
            ):
                result = _measure(cluster, key, settings, index, scratch)
                result["load_average"] = os.getloadavg()[0]
                runs.append(result)
                print(
                    f"  run {index} ({result['variant']}): {result['rate']:,.0f} acked/s, "
                    f"p99 {fmt(result['p99_ms'], '.1f')} ms, load {result['load_average']:.1f}",
                    file=sys.stderr,
                    flush=True,
                )
        finally:
            cluster.down()

    labels = [label for label in LABELS if any(r["variant"] == label for r in runs)]
    by = {label: [r for r in runs if r["variant"] == label] for label in LABELS}
    rates = {label: [r["rate"] for r in rs] for label, rs in by.items()}
    p99s = {label: [r["p99_ms"] for r in rs] for label, rs in by.items()}
    medians = {label: median(v) for label, v in rates.items()}
    p99_medians = {label: median(v) for label, v in p99s.items()}
    cost = overhead(medians[ON], medians[OFF])
    p99_cost = (
        p99_medians[ON] / p99_medians[OFF] - 1.0
        if p99_medians[ON] is not None and p99_medians[OFF]
        else None
    )
    aggregation_cpu = median([r["aggregation_cpu_s_per_min"] for r in by[ON]])
    cpus = len(os.sched_getaffinity(0))
    peak_load = max([r["load_average"] for r in runs] or [0.0])
    notes = [
        "acked/s: spout tuples acked per second over the interval (per executor, aligned on "
        "the 5 s stats heartbeats); p50/p99: complete latency of the tuples acked in the "
        "interval, from the spouts' histograms (buckets ~5 % wide)",
        "runs in order: "
        + ", ".join(f"{i}. {r['variant']} {r['rate']:,.0f}/s" for i, r in enumerate(runs, 1)),
        f"peak load average {peak_load:.1f} on {cpus} CPU(s)",
    ]
    if aggregation_cpu is not None:
        notes.append(
            f"the aggregation's process tree used {aggregation_cpu:.1f} CPU-s per minute "
            "(median of the on runs)"
        )
    workers = {label: sorted({len(r["workers"]) for r in by[label]}) for label in labels}
    notes.append("workers used: " + ", ".join(f"{label} {workers[label]}" for label in labels))
    hooks_cost = overhead(medians.get(HOOKS), medians[OFF])
    if hooks_cost is not None:
        notes.append(
            f"hooks and ZooKeeper publishing alone (C): {pct(hooks_cost)} of the throughput"
        )
    quiet_cost = overhead(medians.get(NO_LIVE), medians[OFF])
    if quiet_cost is not None:
        notes.append(f"hooks without the live counters (D): {pct(quiet_cost)} of the throughput")
    dispatch_cost = overhead(medians.get(NOOP), medians[OFF])
    if dispatch_cost is not None:
        notes.append(
            f"Storm's hook dispatch alone, a hook that does nothing (E): {pct(dispatch_cost)} "
            "of the throughput"
        )
    table = Table(
        ["variant", "runs", "median acked/s", "range", "median p50 ms", "median p99 ms", "range"],
        caption="JVM word count, monitoring pipeline off vs on",
        notes=notes,
    )
    for label in labels:
        table.add(
            label,
            str(len(by[label])),
            fmt(medians[label], ",.0f"),
            value_range(rates[label]),
            fmt(median([r["p50_ms"] for r in by[label]]), ".2f"),
            fmt(p99_medians[label], ".2f"),
            value_range(p99s[label]),
        )
    table.print()

    report.line()
    report.line("targets:")
    passed = _overhead_target(
        "throughput overhead <= 5 %",
        cost,
        TARGET,
        lambda: f"1 - {medians[ON]:,.0f} / {medians[OFF]:,.0f}",
    )
    p99_passed = _overhead_target(
        "p99 latency overhead <= 10 %",
        p99_cost,
        P99_TARGET,
        lambda: f"{p99_medians[ON]:.2f} ms / {p99_medians[OFF]:.2f} ms - 1",
    )

    report.publish(
        options,
        NAME,
        PAPER,
        lambda axes: _draw(axes, runs, medians, cost),
        {
            "settings": settings,
            "order": "".join(order),
            "runs": runs,
            "summary": {
                "throughput_overhead_pct": None if cost is None else 100 * cost,
                "p99_overhead_pct": None if p99_cost is None else 100 * p99_cost,
                "median_rate_off": medians[OFF],
                "median_rate_on": medians[ON],
                "median_p99_ms_off": p99_medians[OFF],
                "median_p99_ms_on": p99_medians[ON],
                "aggregation_cpu_s_per_min": aggregation_cpu,
                "hooks_only_overhead_pct": None if hooks_cost is None else 100 * hooks_cost,
            },
            "targets": [
                {"target": "throughput overhead <= 5 %", "passed": passed, "overhead": cost},
                {"target": "p99 overhead <= 10 %", "passed": p99_passed, "overhead": p99_cost},
            ],
        },
    )


def _overhead_target(
    label: str, cost: float | None, bound: float, detail: Callable[[], str]
) -> bool | None:
    """Print the PASS/MISS line of one overhead target (``cost <= bound``) with the
    measured overhead and ``detail()`` (how it was computed); ``None``: no measurement."""
    passed = None if cost is None else cost <= bound
    report.target_line(
        label, passed, "no measurement" if cost is None else f"{pct(cost)} ({detail()})"
    )
    return passed


def _draw(axes: Any, runs: list[dict[str, Any]], medians: dict[str, float | None], cost) -> None:
    colours = {
        OFF: "tab:blue",
        ON: "tab:orange",
        HOOKS: "tab:green",
        NO_LIVE: "tab:purple",
        NOOP: "tab:gray",
    }
    xs = list(range(1, len(runs) + 1))
    axes.bar(xs, [r["rate"] for r in runs], color=[colours[r["variant"]] for r in runs])
    for label, colour in colours.items():
        if medians.get(label) is not None:
            axes.axhline(medians[label], color=colour, linestyle="--", label=f"{label} (median)")
    axes.set_xticks(xs)
    axes.set_xticklabels([f"{i}\n{r['variant']}" for i, r in zip(xs, runs, strict=True)])
    axes.set_ylabel("acked tuples/s")
    axes.set_title(
        "JVM word count, monitoring pipeline off/on"
        + (f": overhead {100 * cost:.1f} %" if cost is not None else "")
    )
    axes.legend(loc="lower right")
