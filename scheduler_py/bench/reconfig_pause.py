"""One drain-out reconfiguration (replan even -> tdls) of word count and Linear on a real local
cluster: drain and pause from the controller's history, acked tuples/s before and after.

What a reconfiguration costs a running topology — ours against Storm's own
``rebalance -w 0`` (docs/reconfiguration.md, "The pause, measured").

Starts its own isolated local cluster (:class:`~scheduler_py.bench.local_cluster.BrainCluster`:
``deploy/cluster-up.sh`` in a temporary ``CLUSTER_DIR``; ``--set port_offset=N``, default
``$CLUSTER_PORT_OFFSET`` or 3000; the brain on with the reconfiguration controller, the
worker monitor on with live counters every 0.2 s from ``deploy/monitor.yaml``).

**The comparison** (always run; :mod:`scheduler_py.bench.reconfig_paths` says
exactly what is measured): word count with a message-id ledger, placed by ``even`` over 3
workers, taken to the ``tdls`` plan by our path and by ``storm rebalance -w 0``,
``repetitions`` (3) runs each, interleaved; a table with medians and ranges, PASS/MISS for
the targets (our pause ≤ 3 s median with one worker restarted, shorter than Storm's, 0
tuples lost), and ``summary.ours`` / ``summary.storm_rebalance`` in the JSON.

**The per-workload table** (only with ``--set topologies=wordcount,linear``;
:mod:`scheduler_py.bench.reconfig_workloads`), for each workload one at a time:

1. submit it placed by ``even`` over its 3 workers (``scheduler.brain.algorithm=even``),
   with the monitor's hooks named explicitly (``TrafficHook`` + ``MonitorShellLogHandler``:
   the drain watches the workers' live counters) and the automatic trigger off for it
   (``scheduler.reconfig.enabled=false``: only the operator's replan below happens);
2. warm up, then measure its throughput: spout-acked tuples/s over an interval, aligned on
   the 5 s stats heartbeats (:func:`~scheduler_py.bench.local_cluster.rate_over`);
3. ``replan --algorithm tdls`` through the brain's Thrift API, followed in the brain's
   history (``$BRAIN_STATE_DIR/history/<name>.jsonl``) until it is terminal: deactivate →
   observed drain → the shim applies the plan at Nimbus's next round → activate;
4. warm up again and measure the throughput after; kill the topology.

Workloads: word count (``topologies/wordcount``) and R-Storm's Linear chain
(``topologies/linear``), both with unthrottled spouts by default. The table shows, per
workload, the workers before → after (as Nimbus reports them), the workers the plan
restarted, the drain and the pause (deactivate → activate) from the history entry, the
throughput before and after, and the outcome; the notes give the inter-worker traffic the
controller predicted before → after (its costs: declared, or measured when aggregates exist).

The ratio after/before also holds whatever drifts between the two measurements (the
topology warming up, the previous topology's workers still exiting): ``--set
algorithm=even`` re-plans to the running placement, i.e. changes nothing ("unchanged"), and
shows that drift on its own (quick mode on the 2-core machine: word count 1.00×, Linear
1.29×).

A reconfiguration that fails, rolls back or is refused is a row with that outcome, not a
crash; the cluster is always stopped. The brain's log and the history journals are copied to
``<output-dir>/reconfig_pause-logs/`` (the cluster directory itself is temporary).

Options (``--set key=value``): ``warmup`` and ``interval`` (seconds), ``topologies``
(``wordcount,linear``), ``algorithm`` (the re-plan's, default ``tdls``), ``start`` (the
initial placement's, default ``even``), ``spout_interval_ms`` (default 0 = unthrottled),
``aggregate`` (``yes`` runs the PySpark aggregation, so the controller plans with measured
costs; default ``no``), ``timeout`` (seconds to follow a reconfiguration, default 420).
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from scheduler_py.bench import reconfig_paths, report
from scheduler_py.bench.local_cluster import BrainCluster, Timing, load_text, say
from scheduler_py.bench.reconfig_workloads import (
    HEADERS,
    WORKLOADS,
    reconfigure,
    run_workload,
    select_workloads,
    submit_options,
    table_row,
    traffic_note,
)
from scheduler_py.bench.registry import BenchOptions, seconds_setting
from scheduler_py.bench.report import Table, fmt

NAME = "reconfig_pause"
PAPER = "docs/reconfiguration.md: adaptive re-scheduling (drain-out pause)"
START_ALGORITHM = "even"
TIMING = Timing(warmup=(15.0, 30.0), interval=(20.0, 60.0), algorithm="tdls")
"""Warm-up and interval seconds (quick, full) and the algorithm (``--set`` overrides)."""
PAUSE_TARGET_S = 3.0
REPETITIONS = 3
COMPARE_SPOUT_INTERVAL_MS = "5"
FOLLOW_TIMEOUT_S = 420.0
"""Following a reconfiguration: the controller's drain (60 s) + apply (120 s) + workers-up
(120 s) timeouts, and some margin."""
SPOUT_INTERVAL_MS = "0"


# --------------------------------------------------------------------------- the comparison


def _compare_paths(
    cluster: BrainCluster, settings: Mapping[str, Any], ledger_dir: Path
) -> dict[str, Any]:
    """Our reconfiguration path against ``storm rebalance -w 0`` on word count
    (``scheduler_py/bench/reconfig_paths.py``)."""
    from scheduler_py.monitoring.links import ZooKeeperLink

    workload = WORKLOADS[0]
    name = workload.topology
    options = (
        *submit_options(workload, settings["start"], settings["compare_spout_interval_ms"]),
        f"wordcount.ledger.dir={ledger_dir}",
        "topology.max.spout.pending=100",
    )
    cluster.submit_project(workload.project, name, workload.spout, options)
    topology_id = cluster._nimbus("find_topology_id", name)
    link = ZooKeeperLink(f"{cluster.env['STORM_ZK_HOST']}:{cluster.env['STORM_ZK_PORT']}")

    def replan(algorithm: str) -> tuple[str, dict[str, Any] | None]:
        outcome, entry, _, _ = reconfigure(cluster, name, algorithm, settings["timeout"])
        return outcome, entry

    comparison = reconfig_paths.Comparison(
        cluster,
        name,
        topology_id,
        ledger_dir,
        lambda: link.live(topology_id),
        replan,
        say,
        start=settings["start"],
        target=settings["algorithm"],
        settle_s=settings["warmup"],
    )
    try:
        time.sleep(settings["warmup"])
        return reconfig_paths.compare(comparison, settings["repetitions"])
    finally:
        link.close()
        try:
            cluster.kill(name)
        except Exception as error:
            say(f"  killing {name} failed: {error}")


def _comparison_table(comparison: Mapping[str, Any], settings: Mapping[str, Any]) -> None:
    summary = comparison["summary"]
    table = Table(
        [
            "path",
            "completed/runs",
            "pause s median",
            "range",
            "steady s median",
            "p99 spike ms median",
            "workers restarted",
            "replayed",
            "lost",
        ],
        caption=f"word count, {settings['start']} (3 workers) → {settings['algorithm']}: "
        "spouts blocked → resumed, from the workers' live counters",
        notes=[
            "steady: from the start of the pause until the acked rate over 2 s is back to 90 % "
            "of its rate before; lost: spout message ids never acked (ledger) after the final "
            "drain; p99 spike: the highest p99 complete latency over 1 s windows after the "
            "action minus the p99 of the 10 s before (ledger times; lost tuples have none; "
            "scheduler_py/bench/reconfig_paths.py)",
            *[
                f"{r['path']} #{r['repetition']}: {r['outcome']}"
                for r in comparison["runs"]
                if r.get("outcome") != "completed"
            ],
        ],
    )
    labels = {"ours": "ours (drain + rebalance -w 0)", "storm_rebalance": "storm rebalance -w 0"}
    for path, label in labels.items():
        row = summary[path]
        table.add(
            label,
            f"{row['completed']}/{row['runs']}",
            fmt(row["pause_s_median"], ".2f"),
            f"{fmt(row['pause_s_min'], '.2f')}–{fmt(row['pause_s_max'], '.2f')}",
            fmt(row["steady_s_median"], ".1f"),
            fmt(row["p99_spike_ms_median"], ".0f"),
            fmt(row["workers_restarted_median"], "g"),
            str(row["replayed"]),
            str(row["lost"]),
        )
    table.print()
    ours, storm = summary["ours"], summary["storm_rebalance"]
    checks = (
        (
            "every run of both paths completed",
            all(row["completed"] == row["runs"] > 0 for row in (ours, storm)),
        ),
        ("our pause ≤ 3 s median", _le(ours["pause_s_median"], PAUSE_TARGET_S)),
        (
            "our pause shorter than Storm's rebalance",
            _lt(ours["pause_s_median"], storm["pause_s_median"]),
        ),
        ("0 tuples lost on our path (ledger)", ours["runs"] > 0 and ours["lost"] == 0),
        ("one worker restarted (median)", ours["workers_restarted_median"] == 1),
    )
    report.line()
    for label, ok in checks:
        report.line(f"{'PASS' if ok else 'MISS'}  {label}")


def _le(value: float | None, bound: float) -> bool:
    return value is not None and value <= bound


def _lt(value: float | None, other: float | None) -> bool:
    return value is not None and other is not None and value < other


# --------------------------------------------------------------------------- benchmark


def run(options: BenchOptions) -> None:
    extra = options.extra
    settings = {
        **TIMING.settings(options),
        "start": extra.get("start", START_ALGORITHM),
        "spout_interval_ms": extra.get("spout_interval_ms", SPOUT_INTERVAL_MS),
        "timeout": seconds_setting(extra, "timeout", FOLLOW_TIMEOUT_S),
        "repetitions": int(extra.get("repetitions", REPETITIONS)),
        "compare_spout_interval_ms": extra.get("spout_interval_ms", COMPARE_SPOUT_INTERVAL_MS),
        "port_offset": str(extra.get("port_offset", os.environ.get("CLUSTER_PORT_OFFSET", "3000"))),
    }
    topologies = extra.get("topologies", "")
    workloads = select_workloads(topologies) if topologies else []
    aggregate = extra.get("aggregate", "no").lower() in ("1", "yes", "true", "on")

    report.title("Drain-out reconfiguration: pause and throughput", PAPER)
    report.line(
        f"placed by {settings['start']}, re-planned by {settings['algorithm']} (operator "
        f"replan); warm-up {settings['warmup']:g} s, interval {settings['interval']:g} s, "
        f"spout interval {settings['compare_spout_interval_ms']} ms, aggregation "
        f"{'on' if aggregate else 'off'}"
    )
    png, json_path = report.output_paths(options, NAME)
    logs_dir = options.output_dir / f"{NAME}-logs"
    results: list[dict[str, Any]] = []
    comparison: dict[str, Any] = {}
    load_before = load_text()
    problems: list[str] = []
    kept: list[Path] = []
    with tempfile.TemporaryDirectory(prefix="reconfig-pause-") as tmp:
        cluster = BrainCluster(Path(tmp) / "cluster", aggregate, settings["port_offset"])
        try:
            cluster.up()
            say(f"  comparing paths, {settings['repetitions']} repetitions each; {load_text()}")
            comparison = _compare_paths(cluster, settings, Path(tmp) / "ledger")
            comparison["load_after"] = load_text()
            for workload in report.progress(workloads, total=len(workloads), desc="topologies"):
                results.append(run_workload(cluster, workload, settings))
        except Exception as error:  # the cluster did not come up (or broke): say so
            problems.append(f"{type(error).__name__}: {error}")
            say(f"  cluster: {problems[-1]}")
        finally:
            try:
                kept = cluster.keep_logs(logs_dir)
            except Exception as error:
                problems.append(f"copying the brain's log failed: {error}")
            cluster.down()
    done = {r["topology"] for r in results}
    for workload in workloads:
        if workload.topology not in done:
            reason = problems[0] if problems else "not run"
            results.append(
                {
                    "label": workload.label,
                    "topology": workload.topology,
                    "outcome": "not run",
                    "error": reason.splitlines()[0],
                }
            )

    notes = [
        "throughput: spout-acked tuples/s over the interval, per executor aligned on the 5 s "
        "stats heartbeats; workers as Nimbus reports them; drain and pause (deactivate -> "
        "activate) from the brain's history entry",
    ]
    notes += [note for note in map(traffic_note, results) if note]
    for result in results:
        outcome = result.get("outcome")
        reason = None if outcome == "completed" else (result.get("numbers") or {}).get("reason")
        details = [d for d in (reason, result.get("error")) if d]
        if outcome != "completed" or details:
            notes.append(": ".join([f"{result['label']}", str(outcome), *details]))
        workers_note = (result.get("numbers") or {}).get("workers_note")
        if workers_note and not str(workers_note).startswith("all "):
            notes.append(f"{result['label']}: when resumed: {workers_note}")
    notes += [f"cluster: {p}" for p in problems]
    report.line(f"load: {load_before} before, {comparison.get('load_after', '?')} after")
    if comparison:
        _comparison_table(comparison, settings)
    if results:
        caption = "acked tuples/s before and after one replan"
        table = Table(list(HEADERS), caption=caption, notes=notes)
        for result in results:
            table.add(*table_row(result))
        table.print()
    if kept:
        report.line()
        report.line(f"brain log and history copied to {logs_dir}")

    report.plot(png, lambda axes: _draw_comparison(axes, comparison))
    data = report.common_json(options, NAME, PAPER)
    data.update(
        {
            "settings": settings,
            "aggregate": aggregate,
            "results": results,
            "summary": comparison.get("summary"),
            "comparison_runs": comparison.get("runs"),
            "load": {"before": load_before, "after": comparison.get("load_after")},
            "problems": problems,
            "logs": [str(p) for p in kept],
        }
    )
    report.write_json(json_path, data)
    report.footer(options, png, json_path)


def _draw_comparison(axes: Any, comparison: Mapping[str, Any]) -> None:
    runs = comparison.get("runs") or []
    for index, path in enumerate(reconfig_paths.PATHS):
        pauses = [r["pause_s"] for r in runs if r["path"] == path and r.get("pause_s") is not None]
        axes.scatter([index] * len(pauses), pauses, label=path)
    axes.axhline(PAUSE_TARGET_S, linestyle="--", color="grey", label="target 3 s")
    axes.set_xticks(range(len(reconfig_paths.PATHS)))
    axes.set_xticklabels(list(reconfig_paths.PATHS))
    axes.set_ylabel("pause (s): spouts blocked → resumed")
    axes.set_title("word count, even → tdls: our path vs storm rebalance -w 0")
    axes.legend(loc="upper left")
