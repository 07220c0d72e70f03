"""Issue 6: the worker monitor's overhead on word count's throughput (target < 5 %).

Starts its own isolated local cluster (``deploy/cluster-up.sh`` in a temporary
``CLUSTER_DIR`` with ``CLUSTER_PORT_OFFSET=3000``, the brain on, the worker monitor on as
``cluster-up.sh`` does by default) and submits word count several times, **one at a time**
(each is killed before the next is submitted, so they never compete for the cores):

* ``without monitor``: the monitor's hooks opted out at submit time
  (``-o 'topology.auto.task.hooks=[]'`` and Storm's own multilang log handler,
  ``org.apache.storm.utils.DefaultShellLogHandler``);
* ``with monitor``: the cluster's defaults (``TrafficHook`` + ``MonitorShellLogHandler``).

Both run with the spout unthrottled (``wordcount.spout.interval.ms=0``) and placed by the
same algorithm (``scheduler.brain.algorithm=even``). After a warm-up the spouts' acked
counts are read at the start and at the end of a measurement interval; the order is
A B B A (quick: A B) to cancel drift. Overhead = 1 − with / without (means of the runs).

Executor stats reach Nimbus only every ``executor.metrics.frequency.secs`` (5 s here), per
worker, so the counts move in steps. Each end of the interval is therefore aligned on a
step: Nimbus is polled until every spout executor's count has changed, and each
executor's rate is Δacked / Δt between its own two steps (:func:`step_rate`); the sum
over the spout executors is the topology's acked tuples/s. The PySpark aggregation of the
monitor's records is off by default (``AGGREGATE=no``), since it would run in both variants
alike and only add noise; ``--set aggregate=yes`` turns it on.

Options (``--set key=value``): ``warmup`` and ``interval`` (seconds), ``order`` (e.g.
``ABBA``, ``AB``; A = without, B = with), ``algorithm`` (default ``even``), ``aggregate``.
"""

from __future__ import annotations

import os
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
PAPER = "README: monitoring cost (monitor overhead < 5 %)"
TARGET = 0.05
PORT_OFFSET = "3000"
WARMUP_S, QUICK_WARMUP_S = 20.0, 10.0
INTERVAL_S, QUICK_INTERVAL_S = 60.0, 20.0
ORDER, QUICK_ORDER = "ABBA", "AB"
ALGORITHM = "even"
STEP_TIMEOUT_S = 15.0
"""How long to wait for every spout executor's count to move (3 × the 5 s stats period)."""
POLL_S = 0.5
STORM_SHELL_LOG_HANDLER = "org.apache.storm.utils.DefaultShellLogHandler"
WITHOUT, WITH = "without monitor", "with monitor"
VARIANTS: dict[str, tuple[str, tuple[str, ...]]] = {
    "A": (
        WITHOUT,
        (
            "topology.auto.task.hooks=[]",
            f"topology.multilang.log.handler={STORM_SHELL_LOG_HANDLER}",
        ),
    ),
    "B": (WITH, ()),
}
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
        raise ValueError(f"order must be made of A (without) and B (with), got {text!r}")
    return order


# --------------------------------------------------------------------------- the cluster


class _Cluster:
    def __init__(self, directory: Path, aggregate: bool, port_offset: str = PORT_OFFSET) -> None:
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

    def up(self) -> None:
        from scheduler_py.nimbus import NimbusCtl

        result = self._run("cluster-up.sh", timeout=300)
        if result.returncode != 0:
            raise RuntimeError(f"cluster-up failed:\n{result.stdout}\n{result.stderr}")
        if "worker monitor on" not in result.stdout + result.stderr:
            report.line("  note: cluster-up did not report the worker monitor on")
        for text in (self.directory / "run" / "cluster.env").read_text().splitlines():
            if "=" in text and not text.startswith("#"):
                key, _, value = text.partition("=")
                self.env[key] = value.strip("'")
        host, port = self.env["STORM_NIMBUS"].split(":")
        self.nimbus = NimbusCtl(host, int(port))

    def down(self) -> None:
        result = self._run("cluster-down.sh", timeout=180)
        if result.returncode != 0:
            report.line(f"  note: cluster-down failed:\n{result.stdout}\n{result.stderr}")

    def submit(self, name: str, options: Sequence[str]) -> None:
        args = [str(DEPLOY / "submit-topology.sh"), "wordcount", name, "--wait=100"]
        for option in options:
            args += ["-o", option]
        result = subprocess.run(
            args, env=self.env, capture_output=True, text=True, timeout=400, check=False
        )
        if result.returncode != 0:
            raise RuntimeError(f"submit {name} failed:\n{result.stdout}\n{result.stderr}")

    def kill(self, name: str) -> None:
        if not self.nimbus.find_topology_id(name):
            return
        self.nimbus.kill(name, 0)
        deadline = time.monotonic() + 60
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
            if r.component == "sentences"
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
    label: str,
    options: Sequence[str],
    warmup: float,
    interval: float,
    algorithm: str,
    index: int,
) -> dict[str, Any]:
    name = f"wc-overhead-{index}"
    submitted = time.monotonic()
    cluster.submit(
        name,
        (
            *options,
            "wordcount.spout.interval.ms=0",
            f"scheduler.brain.algorithm={algorithm}",
        ),
    )
    try:
        ready = time.monotonic() - submitted
        time.sleep(warmup)
        total_start = cluster.nimbus.topology_state(name)
        start = _aligned(cluster, name)
        time.sleep(interval)
        end = _aligned(cluster, name)
        total_end = cluster.nimbus.topology_state(name)
        rate = step_rate(start, end)
        spans = [end[k][0] - start[k][0] for k in start if k in end]
        failed = (total_end.failed - total_start.failed) if total_start and total_end else None
        return {
            "variant": label,
            "topology": name,
            "options": list(options),
            "submit_to_ready_s": ready,
            "rate": rate,
            "span_s": mean(spans),
            "spout_executors": len(start),
            "workers": total_end.workers if total_end else [],
            "failed_in_interval": failed,
            "acked_total": total_end.acked if total_end else None,
        }
    finally:
        cluster.kill(name)


# --------------------------------------------------------------------------- benchmark


@benchmark(
    NAME,
    summary="Word count's acked tuples/s with and without the worker monitor's hooks on a "
    "real local cluster (runs A B B A, one at a time); overhead = 1 - with/without, "
    "target < 5 %.",
    paper=PAPER,
)
def run(options: BenchOptions) -> None:
    extra = options.extra
    warmup = float(extra.get("warmup", QUICK_WARMUP_S if options.quick else WARMUP_S))
    interval = float(extra.get("interval", QUICK_INTERVAL_S if options.quick else INTERVAL_S))
    order = variant_order(extra.get("order", QUICK_ORDER if options.quick else ORDER))
    algorithm = extra.get("algorithm", ALGORITHM)
    aggregate = extra.get("aggregate", "no").lower() in ("1", "yes", "true", "on")

    report.title("Worker monitor overhead on word count throughput", PAPER)
    report.line(
        f"warm-up {warmup:g} s, interval {interval:g} s, order {''.join(order)} "
        f"(A = {WITHOUT}, B = {WITH}), algorithm {algorithm}, spout unthrottled"
    )
    load_before = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    runs: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="monitor-overhead-") as tmp:
        cluster = _Cluster(Path(tmp) / "cluster", aggregate)
        try:
            cluster.up()
            for index, key in enumerate(
                report.progress(order, total=len(order), desc="runs"), start=1
            ):
                label, submit_options = VARIANTS[key]
                result = _measure(
                    cluster, label, submit_options, warmup, interval, algorithm, index
                )
                result["load_average"] = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
                runs.append(result)
                print(
                    f"  run {index} ({label}): {result['rate']:.1f} acked/s",
                    file=sys.stderr,
                    flush=True,
                )
        finally:
            cluster.down()

    rates = {label: [r["rate"] for r in runs if r["variant"] == label] for label in (WITHOUT, WITH)}
    means = {label: mean(values) for label, values in rates.items()}
    cost = overhead(means[WITH], means[WITHOUT])
    spread = {
        label: (max(v) - min(v)) / statistics.fmean(v)
        if len(v) > 1 and statistics.fmean(v)
        else None
        for label, v in rates.items()
    }
    load_after = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    notes = [
        "acked/s: spout tuples acked per second over the interval (per-executor, aligned "
        "on the 5 s stats heartbeats)",
        "runs in order: "
        + ", ".join(f"{i}. {r['variant']} {r['rate']:.1f}/s" for i, r in enumerate(runs, 1)),
    ]
    noisy = [s for s in spread.values() if s is not None and s > 2 * TARGET]
    if noisy:
        notes.append(
            f"runs of one variant differ by up to {pct(max(noisy))}: more than the effect "
            "being measured, so the overhead is noisy"
        )
    if cost is not None and cost < 0:
        notes.append(
            "negative overhead: the runs with the monitor were faster, i.e. the difference "
            "is run-to-run noise, not a cost of the monitor"
        )
    peak_load = max(
        [x for x in (load_before, load_after, *(r["load_average"] for r in runs)) if x] or [0.0]
    )
    if cpus and peak_load > cpus:
        notes.append(
            f"load average reached {peak_load:.2f} on {cpus} CPU(s) (the cluster itself "
            "saturates them; other processes add noise): treat the numbers as noisy"
        )
    width = max(len(v) for v in rates.values())
    table = Table(
        ["variant", *(f"run {i + 1}" for i in range(width)), "mean acked/s", "spread"],
        caption="word count, acked tuples/s",
        notes=notes,
    )
    for label in (WITHOUT, WITH):
        cells = [fmt(v, ".1f") for v in rates[label]]
        cells += [None] * (width - len(cells))
        table.add(label, *cells, fmt(means[label], ".1f"), pct(spread[label]))
    table.print()

    report.line()
    report.line("targets:")
    passed = None if cost is None else cost < TARGET
    detail = (
        "no measurement"
        if cost is None
        else f"overhead {pct(cost)} (1 - {means[WITH]:.1f} / {means[WITHOUT]:.1f})"
    )
    report.target_line("monitor overhead < 5 % of acked tuples/s", passed, detail)

    png, json_path = report.output_paths(options, NAME)
    report.plot(png, lambda axes: _draw(axes, runs, means, cost))
    data = report.common_json(options, NAME, PAPER)
    data.update(
        {
            "warmup_s": warmup,
            "interval_s": interval,
            "order": "".join(order),
            "algorithm": algorithm,
            "aggregate": aggregate,
            "runs": runs,
            "means": means,
            "overhead": cost,
            "targets": [{"target": "monitor overhead < 5 %", "passed": passed, "overhead": cost}],
        }
    )
    report.write_json(json_path, data)
    report.footer(options, png, json_path)


def _draw(axes: Any, runs: list[dict[str, Any]], means: dict[str, float | None], cost) -> None:
    colours = {WITHOUT: "tab:blue", WITH: "tab:orange"}
    xs = list(range(1, len(runs) + 1))
    axes.bar(
        xs,
        [r["rate"] for r in runs],
        color=[colours[r["variant"]] for r in runs],
    )
    for label, colour in colours.items():
        if means.get(label) is not None:
            axes.axhline(means[label], color=colour, linestyle="--", label=f"{label} (mean)")
    axes.set_xticks(xs)
    axes.set_xticklabels([f"{i}\n{r['variant']}" for i, r in zip(xs, runs, strict=True)])
    axes.set_ylabel("acked tuples/s")
    axes.set_title(
        "word count with/without the worker monitor"
        + (f": overhead {100 * cost:.1f} %" if cost is not None else "")
    )
    axes.legend(loc="lower right")
