"""The whole monitoring pipeline's cost to a topology: worker hooks + ZooKeeper publishing +
the PySpark aggregation, on vs off (README "Monitoring cost"; targets: throughput overhead
<= 5 %, p99 complete-latency overhead <= 10 %).

Starts its own isolated local cluster (``deploy/cluster-up.sh`` in a temporary ``CLUSTER_DIR``
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
each end aligned on a fresh stats heartbeat (:func:`step_rate`); the spouts write cumulative
complete-latency histograms (``bench.latency.dir``), so p50/p99 over the interval come from
two snapshots (:func:`percentile`). The aggregation's CPU-seconds (its process tree: Python
and the Spark JVM) over the interval are reported beside.

Options (``--set key=value``): ``warmup``, ``interval`` (seconds), ``order`` (default
``ABBAAB``: three runs each; quick ``AB``; A = off, B = on), ``algorithm``, ``every`` (the
aggregation period, default 30s).
"""

from __future__ import annotations

import json
import math
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from scheduler_py.bench import report
from scheduler_py.bench.registry import BenchOptions, benchmark
from scheduler_py.bench.report import Table, fmt, pct

NAME = "monitor_overhead"
PAPER = "README: monitoring cost (whole pipeline overhead <= 5 % throughput, <= 10 % p99)"
TARGET = 0.05
P99_TARGET = 0.10
PORT_OFFSET = "3000"
WARMUP_S, QUICK_WARMUP_S = 40.0, 15.0
INTERVAL_S, QUICK_INTERVAL_S = 90.0, 20.0
ORDER, QUICK_ORDER = "ABBAAB", "AB"
ALGORITHM = "tdls"
EVERY = "30s"
STEP_TIMEOUT_S = 15.0
"""How long to wait for every spout executor's count to move (3 × the 5 s stats period)."""
POLL_S = 0.5
SPOUT = "sentences"
OFF, ON, HOOKS = "off", "on", "hooks only"
VARIANTS: dict[str, tuple[str, dict[str, object]]] = {
    "A": (OFF, {"topology.auto.task.hooks": []}),
    "B": (ON, {}),
    "C": (HOOKS, {}),
}
"""A: no hooks, no aggregation; B: the whole pipeline; C: hooks and ZooKeeper publishing
without the aggregation (to split the cost between the workers and the aggregation)."""
TOPOLOGY_CONF: dict[str, object] = {"topology.workers": 3, "topology.acker.executors": 1}
REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy"

Sample = tuple[float, Mapping[str, int]]
"""(monotonic seconds, acked count per spout executor)."""


# --------------------------------------------------------------------------- pure helpers


def first_steps(samples: Sequence[Sample]) -> dict[str, tuple[float, int]]:
    """For each executor, the time and count of the first sample whose count differs from
    its count in the first sample (the moment a fresh heartbeat reached Nimbus). An
    executor that never moves keeps its last sample (time and count)."""
    if not samples:
        return {}
    _, base = samples[0]
    steps: dict[str, tuple[float, int]] = {}
    for when, counts in samples[1:]:
        for key, count in counts.items():
            if key not in steps and key in base and count != base[key]:
                steps[key] = (when, count)
    last_time, last_counts = samples[-1]
    for key in base:
        if key not in steps and key in last_counts:
            steps[key] = (last_time, last_counts[key])
    return steps


def step_rate(
    start: Mapping[str, tuple[float, int]], end: Mapping[str, tuple[float, int]]
) -> float:
    """Σ over executors of (count_end − count_start) / (t_end − t_start): acked tuples/s."""
    total = 0.0
    for key, (t0, c0) in start.items():
        if key not in end:
            continue
        t1, c1 = end[key]
        if t1 > t0:
            total += (c1 - c0) / (t1 - t0)
    return total


def overhead(with_rate: float | None, without_rate: float | None) -> float | None:
    """1 − with / without; ``None`` when either is missing or ``without`` is not positive."""
    if with_rate is None or without_rate is None or without_rate <= 0:
        return None
    return 1.0 - with_rate / without_rate


def mean(values: Sequence[float]) -> float | None:
    return statistics.fmean(values) if values else None


def variant_order(text: str) -> list[str]:
    """``"ABBA"`` → ``["A", "B", "B", "A"]``; only A and B are allowed."""
    order = [c for c in text.upper() if not c.isspace()]
    if not order or any(c not in VARIANTS for c in order):
        raise ValueError(f"order must be made of A (off), B (on) and C (hooks only), got {text!r}")
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


def tree_cpu_seconds(pid: int) -> float:
    """CPU-seconds (user + system) of ``pid`` and its live descendants (Linux ``/proc``)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(entry))
    total, stack, tick = 0.0, [pid], os.sysconf("SC_CLK_TCK")
    while stack:
        current = stack.pop()
        try:
            fields = Path(f"/proc/{current}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / tick
        stack += children.get(current, [])
    return total


# --------------------------------------------------------------------------- the cluster


class _Cluster:
    def __init__(
        self, directory: Path, aggregate: bool = False, port_offset: str = PORT_OFFSET
    ) -> None:
        """``aggregate``: cluster-up.sh starts the aggregation for the whole session (this
        benchmark leaves it off and runs its own for the "on" runs only)."""
        self.directory = directory
        self.env = dict(os.environ)
        self.env.update(
            CLUSTER_DIR=str(directory),
            CLUSTER_PORT_OFFSET=port_offset,
            VENV=str(Path(sys.executable).parents[1]),
            BRAIN="yes",
            STORM_SCHEDULER="io.schedulerpy.storm.BrainScheduler",
            AGGREGATE="yes" if aggregate else "no",
        )
        self.nimbus: Any = None
        self.aggregation: subprocess.Popen[bytes] | None = None

    def up(self) -> None:
        from scheduler_py.nimbus import NimbusCtl

        result = self._run("cluster-up.sh", timeout=300)
        if result.returncode != 0:
            raise RuntimeError(f"cluster-up failed:\n{result.stdout}\n{result.stderr}")
        monitor_wanted = self.env.get("STORM_MONITOR", "yes") != "no"
        if monitor_wanted and "worker monitor on" not in result.stdout + result.stderr:
            report.line("  note: cluster-up did not report the worker monitor on")
        for text in (self.directory / "run" / "cluster.env").read_text().splitlines():
            if "=" in text and not text.startswith("#"):
                key, _, value = text.partition("=")
                self.env[key] = value.strip("'")
        self.env["STORM_NIMBUS"] = f"127.0.0.1:{self.env['STORM_NIMBUS_PORT']}"
        host, port = self.env["STORM_NIMBUS"].split(":")
        self.nimbus = NimbusCtl(host, int(port))

    def down(self) -> None:
        self.stop_aggregation()
        result = self._run("cluster-down.sh", timeout=180)
        if result.returncode != 0:
            report.line(f"  note: cluster-down failed:\n{result.stdout}\n{result.stderr}")

    def start_aggregation(self, every: str, log_path: Path) -> int:
        """``scheduler-py aggregate`` with cluster-up.sh's arguments; returns its pid."""
        command = [
            str(Path(sys.executable).with_name("scheduler-py")),
            "aggregate",
            "--every",
            every,
            "--window",
            "60s",
            "--zookeeper",
            f"{self.env['STORM_ZK_HOST']}:{self.env['STORM_ZK_PORT']}",
            "--nimbus",
            self.env["STORM_NIMBUS"],
        ]
        with log_path.open("ab") as log:
            self.aggregation = subprocess.Popen(
                command,
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group: paused and resumed whole
            )
        return self.aggregation.pid

    def pause_aggregation(self, paused: bool) -> int | None:
        """SIGSTOP (``paused``) or SIGCONT the aggregation's process group — the Python
        process and its Spark JVM — so it stays warm but costs nothing during other runs;
        returns its pid."""
        process = self.aggregation
        if process is None or process.poll() is not None:
            return None
        os.killpg(process.pid, signal.SIGSTOP if paused else signal.SIGCONT)
        return process.pid

    def stop_aggregation(self) -> None:
        process, self.aggregation = self.aggregation, None
        if process is None or process.poll() is not None:
            return
        os.killpg(process.pid, signal.SIGCONT)
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=30)

    def submit(self, name: str, conf: Mapping[str, object]) -> None:
        from scheduler_py.devtools import jvm_topologies

        jvm_topologies.submit("wordcount", name, conf, env=self.env)

    def kill(self, name: str) -> None:
        if not self.nimbus.find_topology_id(name):
            return
        self.nimbus.kill(name, 0)
        deadline = time.monotonic() + 90
        while self.nimbus.find_topology_id(name) and time.monotonic() < deadline:
            time.sleep(1)
        # the workers exit ~10 s after Nimbus forgets the topology: wait for free slots
        while time.monotonic() < deadline:
            supervisors = self.nimbus.cluster_summary()["supervisors"]
            if all(s["used_slots"] == 0 for s in supervisors):
                break
            time.sleep(1)

    def spout_counts(self, name: str) -> dict[str, int]:
        return {
            f"{r.task_start}-{r.task_end}@{r.host}:{r.port}": r.acked
            for r in self.nimbus.executor_runs(name)
            if r.component == SPOUT
        }

    def _run(self, script: str, timeout: float) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(DEPLOY / script)],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )


def _aligned(cluster: _Cluster, name: str) -> dict[str, tuple[float, int]]:
    """Poll until every spout executor's acked count has moved once (a fresh heartbeat)."""
    samples: list[Sample] = [(time.monotonic(), cluster.spout_counts(name))]
    deadline = samples[0][0] + STEP_TIMEOUT_S
    while time.monotonic() < deadline:
        time.sleep(POLL_S)
        samples.append((time.monotonic(), cluster.spout_counts(name)))
        steps = first_steps(samples)
        base = samples[0][1]
        if all(steps[k][1] != base[k] for k in base):
            break
    return first_steps(samples)


def _measure(
    cluster: _Cluster,
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
    aggregation_pid = cluster.pause_aggregation(label != ON)
    if label != ON:
        aggregation_pid = None
    submitted = time.monotonic()
    cluster.submit(name, conf)
    try:
        ready = time.monotonic() - submitted
        time.sleep(settings["warmup"])
        start = _aligned(cluster, name)
        histograms_start = read_histograms(latency_dir)
        cpu_start = tree_cpu_seconds(aggregation_pid) if aggregation_pid else None
        time.sleep(settings["interval"])
        end = _aligned(cluster, name)
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


def _median(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None


def _range(values: Sequence[float | None]) -> str:
    present = [v for v in values if v is not None]
    return f"{min(present):,.1f}–{max(present):,.1f}" if present else "–"


@benchmark(
    NAME,
    summary="The whole monitoring pipeline (worker hooks + ZooKeeper publishing + PySpark "
    "aggregation) on vs off with the JVM word count on a real local cluster, interleaved "
    "runs: acked tuples/s and p99 complete latency; overhead targets <= 5 % and <= 10 %.",
    paper=PAPER,
)
def run(options: BenchOptions) -> None:
    extra = options.extra
    settings = {
        "warmup": float(extra.get("warmup", QUICK_WARMUP_S if options.quick else WARMUP_S)),
        "interval": float(extra.get("interval", QUICK_INTERVAL_S if options.quick else INTERVAL_S)),
        "algorithm": extra.get("algorithm", ALGORITHM),
        "every": extra.get("every", EVERY),
        "aggregation_warmup": float(
            extra.get("aggregation_warmup", QUICK_WARMUP_S if options.quick else 75.0)
        ),
    }
    order = variant_order(extra.get("order", QUICK_ORDER if options.quick else ORDER))

    report.title("Monitoring pipeline overhead (hooks + ZooKeeper + aggregation)", PAPER)
    report.line(
        f"JVM word count, topology.workers=3, spout unthrottled; warm-up {settings['warmup']:g} s,"
        f" interval {settings['interval']:g} s, order {''.join(order)} (A = {OFF}, B = {ON}), "
        f"algorithm {settings['algorithm']}, aggregation every {settings['every']}"
    )
    runs: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="monitor-overhead-") as tmp:
        scratch = Path(tmp)
        cluster = _Cluster(scratch / "cluster")
        try:
            cluster.up()
            # one long-running aggregation, as in production: warmed up on an unmeasured run
            # (its first cycles compile Spark's code), then paused during the off runs
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

    labels = [label for label in (OFF, ON, HOOKS) if any(r["variant"] == label for r in runs)]
    by = {label: [r for r in runs if r["variant"] == label] for label in (OFF, ON, HOOKS)}
    rates = {label: [r["rate"] for r in rs] for label, rs in by.items()}
    p99s = {label: [r["p99_ms"] for r in rs] for label, rs in by.items()}
    medians = {label: _median(v) for label, v in rates.items()}
    p99_medians = {label: _median(v) for label, v in p99s.items()}
    cost = overhead(medians[ON], medians[OFF])
    p99_cost = (
        p99_medians[ON] / p99_medians[OFF] - 1.0
        if p99_medians[ON] is not None and p99_medians[OFF]
        else None
    )
    aggregation_cpu = _median([r["aggregation_cpu_s_per_min"] for r in by[ON]])
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
            _range(rates[label]),
            fmt(_median([r["p50_ms"] for r in by[label]]), ".2f"),
            fmt(p99_medians[label], ".2f"),
            _range(p99s[label]),
        )
    table.print()

    report.line()
    report.line("targets:")
    passed = None if cost is None else cost <= TARGET
    report.target_line(
        "throughput overhead <= 5 %",
        passed,
        "no measurement"
        if cost is None
        else f"{pct(cost)} (1 - {medians[ON]:,.0f} / {medians[OFF]:,.0f})",
    )
    p99_passed = None if p99_cost is None else p99_cost <= P99_TARGET
    report.target_line(
        "p99 latency overhead <= 10 %",
        p99_passed,
        "no measurement"
        if p99_cost is None
        else f"{pct(p99_cost)} ({p99_medians[ON]:.2f} ms / {p99_medians[OFF]:.2f} ms - 1)",
    )

    png, json_path = report.output_paths(options, NAME)
    report.plot(png, lambda axes: _draw(axes, runs, medians, cost))
    data = report.common_json(options, NAME, PAPER)
    data.update(
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
        }
    )
    report.write_json(json_path, data)
    report.footer(options, png, json_path)


def _draw(axes: Any, runs: list[dict[str, Any]], medians: dict[str, float | None], cost) -> None:
    colours = {OFF: "tab:blue", ON: "tab:orange", HOOKS: "tab:green"}
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
