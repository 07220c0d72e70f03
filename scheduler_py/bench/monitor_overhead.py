"""The monitoring pipeline's cost to a saturated JVM word count on a real local cluster,
interleaved runs, workers on C2: acked tuples/s and p99 complete latency (docs/monitoring.md,
"Monitoring cost"; targets: the default monitoring costs <= 3 % of the throughput and <= 10 %
of the p99 latency, and with it the brain's word count is >= Storm RAS's with nothing of ours
installed).

Starts two isolated local clusters (:mod:`scheduler_py.bench.local_cluster`:
``deploy/cluster-up.sh`` in temporary ``CLUSTER_DIR`` directories): **ours**
(``CLUSTER_PORT_OFFSET=3000``: the brain, ``deploy/monitor.yaml``'s worker monitor, the
aggregation *not* started by cluster-up) and a **peer** (``CLUSTER_PORT_OFFSET=4000``: Storm's
ResourceAwareScheduler, no brain, no monitor: nothing of ours configured). Both run their
workers with the JVM's default compiler, C2 (``STORM_WORKER_CHILDOPTS="-Xmx%HEAP-MEM%m
-XX:+UseSerialGC"``, what operators run; ``--set compiler=c1`` gives cluster-up's C1-only
default). The JVM word count (``topologies/jvm``: sentence spout unthrottled -> split -> fields
grouping -> count, one acker, ``topology.workers=3``) is submitted once per run, **one run at a
time**, in interleaved order:

* ``A`` ``off``: nothing of the monitor (``topology.metrics.reporters=[]``, no hooks), no
  aggregation;
* ``B`` ``on``: the cluster's defaults — counts mode (``CountsReporter``: Storm's own task
  counters, CPU sampling, window records and live counters in ZooKeeper, no per-tuple hook) —
  and ``scheduler-py aggregate --every 30s`` running as ``cluster-up.sh`` starts it: one
  long-running process, warmed up on an unmeasured run first (``aggregation_warmup`` seconds),
  paused (SIGSTOP) during the runs that do not use it;
* ``X`` ``exact``: ``scheduler.monitor.mode=exact`` (the per-tuple ``TrafficHook`` as well) and
  the aggregation;
* ``R`` ``RAS``: the peer cluster (``topology.scheduler.strategy``
  DefaultResourceAwareStrategy);
* extras, not in the default order: ``C`` exact hooks without the aggregation, ``D`` ``C``
  without live counters, ``E`` a hook that does nothing (storm_plugin's ``NoopHook``, reporter
  off: Storm's per-tuple hook dispatch alone).

Ours are placed by the brain's shipped default algorithm (``config/keys.py``'s
``DEFAULT_ALGORITHM``: the topology names none); ``--set algorithm=`` names one. After a
warm-up, the spout executors' acked counts are read at both ends of the interval, each end
aligned on a fresh stats heartbeat (:func:`~scheduler_py.bench.local_cluster.step_rate`); the
spouts write cumulative complete-latency histograms (``bench.latency.dir``), so p50/p99 over
the interval come from two snapshots (:func:`percentile`). The aggregation's CPU-seconds (its
process tree: Python and the Spark JVM) over the interval are reported beside.

Options (``--set key=value``): ``warmup``, ``interval`` (seconds), ``order`` (default
``ABXRRXBA`` four times: eight runs of each; quick ``ABXR``), ``algorithm``, ``every`` (the
aggregation period, default 30s), ``aggregation_warmup``, ``deadline`` (``HH:MM`` UTC: no
run starts after it; the summary covers the runs done), ``compiler`` (``c2`` default, or
``c1``), ``worker_childopts`` (``topology.worker.childopts`` added for every variant),
``hosts`` (``local``, the default: every supervisor on this machine's loopback; ``emulated``:
both clusters' supervisors as six emulated hosts of 0.5 core each in two racks, 100 Mbit/s per
host and 50 Mbit/s between the racks, ``deploy/emulated-hosts.sh`` via cluster-up's
``EMU_HOSTS``, each cluster in its own /21 of 198.18.0.0/15, and the word count on
``topology.workers=6``).
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
    compiler_setting,
    mean,
    median,
    step_rate,
    tree_cpu_seconds,
    value_range,
)
from scheduler_py.bench.registry import BenchOptions, SettingError, seconds_setting
from scheduler_py.bench.report import Table, fmt, pct
from scheduler_py.config import keys

NAME = "monitor_overhead"
PAPER = (
    "docs/monitoring.md: monitoring cost (default pipeline overhead <= 3 % throughput, <= 10 % p99)"
)
TARGET = 0.03
P99_TARGET = 0.10
ORDER, QUICK_ORDER = "ABXRRXBA" * 4, "ABXR"
TIMING = Timing(warmup=(15.0, 30.0), interval=(20.0, 45.0), algorithm=keys.DEFAULT_ALGORITHM)
"""Warm-up and interval seconds (quick, full) and the algorithm (``--set`` overrides)."""
EVERY = "30s"
PEER_PORT_OFFSET = "4000"
OFF, ON, EXACT, RAS, HOOKS, NO_LIVE, NOOP = (
    "off",
    "on",
    "exact",
    "RAS",
    "exact, no aggregation",
    "exact, no aggregation, no live counters",
    "no-op hook",
)
NOOP_HOOK = "io.schedulerpy.storm.monitor.NoopHook"
NOTHING: dict[str, object] = {"topology.metrics.reporters": [], "topology.auto.task.hooks": []}
"""Topology conf that turns every part of the worker monitor off."""
RAS_CONF: dict[str, object] = {
    "topology.scheduler.strategy": (
        "org.apache.storm.scheduler.resource.strategies.scheduling.DefaultResourceAwareStrategy"
    )
}
VARIANTS: dict[str, tuple[str, dict[str, object]]] = {
    "A": (OFF, NOTHING),
    "B": (ON, {}),
    "X": (EXACT, {"scheduler.monitor.mode": "exact"}),
    "R": (RAS, RAS_CONF),
    "C": (HOOKS, {"scheduler.monitor.mode": "exact"}),
    "D": (NO_LIVE, {"scheduler.monitor.mode": "exact", "scheduler.monitor.live.secs": 0}),
    "E": (NOOP, {**NOTHING, "topology.auto.task.hooks": [NOOP_HOOK]}),
}
"""A: nothing of the monitor, no aggregation; B: the default pipeline (counts mode +
aggregation); X: exact mode + aggregation; R: Storm RAS on the peer cluster, nothing of ours;
C: exact hooks and ZooKeeper publishing without the aggregation; D: C without the live
counters; E: a hook that does nothing (Storm's per-tuple hook dispatch alone)."""
AGGREGATING = frozenset({ON, EXACT})
"""Variants that run with the aggregation (resumed for their runs, paused otherwise)."""
LABELS = (OFF, ON, EXACT, RAS, HOOKS, NO_LIVE, NOOP)
TOPOLOGY_CONF: dict[str, object] = {"topology.acker.executors": 1}
"""The word count's conf in every run; its ``topology.workers`` comes from :data:`HOSTS`."""
HOSTS: dict[str, tuple[dict[str, str], int]] = {
    "local": ({}, 3),
    "emulated": ({"EMU_HOSTS": "6", "EMU_RACKS": "2", "EMU_HOST_CPU": "0.5"}, 6),
}
"""``--set hosts=``: cluster-up's environment for both clusters and the word count's
``topology.workers``. ``emulated`` is docs/monitoring.md's second setting: six hosts of 0.5 core in
two racks (cluster-up's default links: 100 Mbit/s per host, 50 Mbit/s between racks)."""


def hosts_setting(text: str) -> str:
    """The ``hosts`` setting, checked: one of :data:`HOSTS`."""
    value = text.strip().lower()
    if value not in HOSTS:
        raise SettingError(
            f"--set hosts= expects one of {', '.join(HOSTS)}, found {text!r}; "
            "emulated runs both clusters on emulated hosts (needs root)"
        )
    return value


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


def variant_conf(key: str, settings: Mapping[str, Any], latency_dir: Path) -> dict[str, Any]:
    """The topology conf of one run of variant ``key``: the word count's, the variant's, the
    latency directory, our algorithm when it is not the shipped default (and never for the peer:
    nothing of ours there) and the extra ``worker_childopts``."""
    label, variant = VARIANTS[key]
    conf: dict[str, Any] = {
        **TOPOLOGY_CONF,
        "topology.workers": HOSTS[settings.get("hosts", "local")][1],
        **variant,
        "bench.latency.dir": str(latency_dir),
    }
    if label != RAS and settings["algorithm"] != keys.DEFAULT_ALGORITHM:
        conf["scheduler.brain.algorithm"] = settings["algorithm"]
    if settings["worker_childopts"]:
        conf["topology.worker.childopts"] = settings["worker_childopts"]
    return conf


def _measure(
    clusters: Mapping[str, LocalCluster],
    key: str,
    settings: Mapping[str, Any],
    index: int,
    scratch: Path,
) -> dict[str, Any]:
    label, _ = VARIANTS[key]
    cluster = clusters["peer" if label == RAS else "ours"]
    name = f"wc-overhead-{index}"
    latency_dir = scratch / f"latency-{index}"
    conf = variant_conf(key, settings, latency_dir)
    aggregation_pid = clusters["ours"].pause_aggregation(label not in AGGREGATING)
    if label not in AGGREGATING:
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


def deadline(text: str, now: float | None = None) -> float | None:
    """``--set deadline=HH:MM`` (UTC): the epoch time after which no new run starts (the next
    such time of day from ``now``); ``None`` for an empty text."""
    if not text:
        return None
    hours, _, minutes = text.partition(":")
    if not (hours.isdigit() and minutes.isdigit() and int(hours) < 24 and int(minutes) < 60):
        raise ValueError(f"deadline must be HH:MM (UTC), got {text!r}")
    now = time.time() if now is None else now
    day = now - now % 86400
    at = day + int(hours) * 3600 + int(minutes) * 60
    return at if at > now else at + 86400


def _clusters(
    scratch: Path, order: Sequence[str], compiler: str, hosts: str
) -> dict[str, LocalCluster]:
    ours = LocalCluster(scratch / "cluster")
    clusters = {"ours": ours}
    if RAS in {VARIANTS[k][0] for k in order}:
        peer = LocalCluster(scratch / "peer", port_offset=PEER_PORT_OFFSET)
        peer.env.update(
            STORM_SCHEDULER="org.apache.storm.scheduler.resource.ResourceAwareScheduler",
            BRAIN="no",
            STORM_MONITOR="no",
        )
        clusters["peer"] = peer
    for cluster in clusters.values():
        cluster.use_compiler(compiler)
        cluster.env.update(HOSTS[hosts][0])
    return clusters


def run(options: BenchOptions) -> None:
    extra = options.extra
    settings = {
        **TIMING.settings(options),
        "every": extra.get("every", EVERY),
        "compiler": compiler_setting(extra),
        "worker_childopts": str(extra.get("worker_childopts", "")),
        "hosts": hosts_setting(str(extra.get("hosts", "local"))),
        "aggregation_warmup": seconds_setting(
            extra, "aggregation_warmup", TIMING.warmup[0] if options.quick else 60.0
        ),
    }
    settings["deadline"] = deadline(str(extra.get("deadline", "")))
    order = variant_order(extra.get("order", QUICK_ORDER if options.quick else ORDER))

    report.title("Monitoring overhead (worker monitor + ZooKeeper + aggregation) vs RAS", PAPER)
    report.line(
        f"JVM word count on {settings['hosts']} hosts, topology.workers="
        f"{HOSTS[settings['hosts']][1]}, spout unthrottled, workers on "
        f"{settings['compiler'].upper()}; warm-up {settings['warmup']:g} s, interval "
        f"{settings['interval']:g} s, order {''.join(order)} (A = {OFF}, B = {ON} (counts mode), "
        f"X = {EXACT}, R = {RAS}), algorithm {settings['algorithm']}, aggregation every "
        f"{settings['every']}"
        + (
            f", topology.worker.childopts {settings['worker_childopts']!r}"
            if settings["worker_childopts"]
            else ""
        )
    )
    runs: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="monitor-overhead-") as tmp:
        scratch = Path(tmp)
        clusters = _clusters(scratch, order, settings["compiler"], settings["hosts"])
        try:
            for cluster in clusters.values():
                cluster.up()
            # one long-running aggregation, as in production: warmed up on an unmeasured run
            # (its first cycles compile Spark's code), then paused during the other runs
            if any(VARIANTS[k][0] in AGGREGATING for k in order):
                clusters["ours"].start_aggregation(settings["every"], scratch / "aggregate.log")
                warm = {**settings, "warmup": 0.0, "interval": settings["aggregation_warmup"]}
                _measure(clusters, "B", warm, 0, scratch)
            for index, key in enumerate(
                report.progress(order, total=len(order), desc="runs"), start=1
            ):
                if settings["deadline"] is not None and time.time() >= settings["deadline"]:
                    report.line(
                        f"  deadline reached: {index - 1} of {len(order)} runs done, the rest "
                        "skipped"
                    )
                    break
                result = _measure(clusters, key, settings, index, scratch)
                result["load_average"] = os.getloadavg()[0]
                runs.append(result)
                print(
                    f"  run {index} ({result['variant']}): {result['rate']:,.0f} acked/s, "
                    f"p99 {fmt(result['p99_ms'], '.1f')} ms, load {result['load_average']:.1f}",
                    file=sys.stderr,
                    flush=True,
                )
        finally:
            for cluster in clusters.values():
                cluster.down()
    _summarise(options, settings, order, runs)


def summary(runs: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The medians and ratios of a set of runs (``variant``, ``rate``, ``p99_ms``,
    ``aggregation_cpu_s_per_min`` each): the benchmark's summary fields."""
    by = {label: [r for r in runs if r["variant"] == label] for label in LABELS}
    rates = {label: median([r["rate"] for r in rs]) for label, rs in by.items()}
    p99s = {label: median([r["p99_ms"] for r in rs]) for label, rs in by.items()}

    def p99_overhead(label: str) -> float | None:
        if p99s[label] is None or not p99s[OFF]:
            return None
        return p99s[label] / p99s[OFF] - 1.0

    def percent(value: float | None) -> float | None:
        return None if value is None else 100 * value

    ras_ratio = rates[ON] / rates[RAS] if rates[ON] is not None and rates[RAS] else None
    return {
        "throughput_overhead_pct": percent(overhead(rates[ON], rates[OFF])),
        "p99_overhead_pct": percent(p99_overhead(ON)),
        "median_rate_off": rates[OFF],
        "median_rate_on": rates[ON],
        "median_p99_ms_off": p99s[OFF],
        "median_p99_ms_on": p99s[ON],
        "aggregation_cpu_s_per_min": median([r.get("aggregation_cpu_s_per_min") for r in by[ON]]),
        "hooks_only_overhead_pct": percent(overhead(rates[HOOKS], rates[OFF])),
        "exact_overhead_pct": percent(overhead(rates[EXACT], rates[OFF])),
        "exact_p99_overhead_pct": percent(p99_overhead(EXACT)),
        "median_rate_exact": rates[EXACT],
        "median_p99_ms_exact": p99s[EXACT],
        "median_rate_ras": rates[RAS],
        "median_p99_ms_ras": p99s[RAS],
        "on_vs_ras": ras_ratio,
        "runs_per_variant": {label: len(rs) for label, rs in by.items() if rs},
    }


def _summarise(
    options: BenchOptions,
    settings: Mapping[str, Any],
    order: Sequence[str],
    runs: list[dict[str, Any]],
) -> None:
    labels = [label for label in LABELS if any(r["variant"] == label for r in runs)]
    by = {label: [r for r in runs if r["variant"] == label] for label in LABELS}
    rates = {label: [r["rate"] for r in rs] for label, rs in by.items()}
    p99s = {label: [r["p99_ms"] for r in rs] for label, rs in by.items()}
    medians = {label: median(v) for label, v in rates.items()}
    p99_medians = {label: median(v) for label, v in p99s.items()}
    fields = summary(runs)
    cost = overhead(medians[ON], medians[OFF])
    p99_cost = None if fields["p99_overhead_pct"] is None else fields["p99_overhead_pct"] / 100
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
    if fields["aggregation_cpu_s_per_min"] is not None:
        notes.append(
            f"the aggregation's process tree used {fields['aggregation_cpu_s_per_min']:.2f} "
            "CPU-s per minute (median of the on runs)"
        )
    workers = {label: sorted({len(r["workers"]) for r in by[label]}) for label in labels}
    notes.append("workers used: " + ", ".join(f"{label} {workers[label]}" for label in labels))
    for label, text in (
        (EXACT, "exact mode (per-tuple hooks) with the aggregation (X)"),
        (HOOKS, "exact hooks and ZooKeeper publishing alone (C)"),
        (NO_LIVE, "exact hooks without the live counters (D)"),
        (NOOP, "Storm's hook dispatch alone, a hook that does nothing (E)"),
    ):
        extra_cost = overhead(medians.get(label), medians[OFF])
        if extra_cost is not None:
            notes.append(f"{text}: {pct(extra_cost)} of the throughput")
    table = Table(
        ["variant", "runs", "median acked/s", "range", "median p50 ms", "median p99 ms", "range"],
        caption="JVM word count: monitoring off, default (counts), exact; Storm RAS",
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
        "default monitoring: throughput overhead <= 3 %",
        cost,
        TARGET,
        lambda: f"1 - {medians[ON]:,.0f} / {medians[OFF]:,.0f}",
    )
    p99_passed = _overhead_target(
        "default monitoring: p99 latency overhead <= 10 %",
        p99_cost,
        P99_TARGET,
        lambda: f"{p99_medians[ON]:.2f} ms / {p99_medians[OFF]:.2f} ms - 1",
    )
    ratio = fields["on_vs_ras"]
    ras_passed = None if ratio is None else ratio >= 1.0
    report.target_line(
        "brain with default monitoring >= Storm RAS (nothing of ours)",
        ras_passed,
        "no measurement"
        if ratio is None
        else f"{ratio:.2f}x ({medians[ON]:,.0f} / {medians[RAS]:,.0f} acked/s)",
    )

    report.publish(
        options,
        NAME,
        PAPER,
        lambda axes: _draw(axes, runs, medians, cost),
        {
            "settings": dict(settings),
            "order": "".join(order),
            "runs": runs,
            "summary": fields,
            "targets": [
                {"target": "throughput overhead <= 3 %", "passed": passed, "overhead": cost},
                {"target": "p99 overhead <= 10 %", "passed": p99_passed, "overhead": p99_cost},
                {"target": "on >= RAS", "passed": ras_passed, "ratio": ratio},
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
        EXACT: "tab:red",
        RAS: "tab:gray",
        HOOKS: "tab:green",
        NO_LIVE: "tab:purple",
        NOOP: "tab:brown",
    }
    xs = list(range(1, len(runs) + 1))
    axes.bar(xs, [r["rate"] for r in runs], color=[colours[r["variant"]] for r in runs])
    for label, colour in colours.items():
        if medians.get(label) is not None:
            axes.axhline(medians[label], color=colour, linestyle="--", label=f"{label} (median)")
    axes.figure.set_size_inches(max(6.4, 2.0 + 0.3 * len(runs)), 4.8)
    axes.set_xticks(xs)
    axes.set_xticklabels([str(i) for i in xs], fontsize="small")
    axes.set_xlabel("run, in the order run (bar colour: variant)")
    axes.set_ylabel("acked tuples/s")
    axes.set_title(
        "JVM word count, C2 workers: monitoring off / default (counts) / exact; Storm RAS"
        + (f"\nthe default costs {100 * cost:.1f} % of the throughput" if cost is not None else "")
    )
    axes.legend(loc="lower right", fontsize="small")
