"""What a reconfiguration costs a running topology — ours against Storm's own
``rebalance -w 0`` (README, "Adaptive re-scheduling").

Why this module is over 500 lines: it is one benchmark's driver (cluster start, workloads,
interleaved runs of both paths, the ledger check, tables and plot); the per-path measurement
lives in ``reconfig_paths.py``. Splitting the driver further would scatter one sequence.

Starts its own isolated local cluster as :mod:`scheduler_py.bench.monitor_overhead` does
(``deploy/cluster-up.sh`` in a temporary ``CLUSTER_DIR``; ``--set port_offset=N``, default
``$CLUSTER_PORT_OFFSET`` or 3000; the brain on with the reconfiguration controller, the
worker monitor on with live counters every 0.2 s from ``deploy/monitor.yaml``).

**The comparison** (always run; :mod:`scheduler_py.bench.reconfig_paths` says
exactly what is measured): word count with a message-id ledger, placed by ``even`` over 3
workers, taken to the ``tdls`` plan by our path and by ``storm rebalance -w 0``,
``repetitions`` (3) runs each, interleaved; a table with medians and ranges, PASS/MISS for
the targets (our pause ≤ 3 s median with one worker restarted, shorter than Storm's, 0
tuples lost), and ``summary.ours`` / ``summary.storm_rebalance`` in the JSON.

**The per-workload table** (only with ``--set topologies=wordcount,linear``), for
each workload one at a time:

1. submit it placed by ``even`` over its 3 workers (``scheduler.brain.algorithm=even``),
   with the monitor's hooks named explicitly (``TrafficHook`` + ``MonitorShellLogHandler``:
   the drain watches the workers' live counters) and the automatic trigger off for it
   (``scheduler.reconfig.enabled=false``: only the operator's replan below happens);
2. warm up, then measure its throughput: spout-acked tuples/s over an interval, aligned on
   the 5 s stats heartbeats (:func:`~scheduler_py.bench.monitor_overhead.step_rate`);
3. ``replan --algorithm td`` through the brain's Thrift API, followed in the brain's
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
(``wordcount,linear``), ``algorithm`` (the re-plan's, default ``td``), ``start`` (the
initial placement's, default ``even``), ``spout_interval_ms`` (default 0 = unthrottled),
``aggregate`` (``yes`` runs the PySpark aggregation, so the controller plans with measured
costs; default ``no``), ``timeout`` (seconds to follow a reconfiguration, default 420).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scheduler_py.bench import reconfig_paths, report
from scheduler_py.bench.monitor_overhead import (
    DEPLOY,
    PORT_OFFSET,
    _aligned,
    _Cluster,
    mean,
    step_rate,
)
from scheduler_py.bench.registry import BenchOptions, benchmark
from scheduler_py.bench.report import MISSING, Table, fmt, ratio
from scheduler_py.reconfig.history import TERMINAL

NAME = "reconfig_pause"
PAPER = "README: adaptive re-scheduling (drain-out pause)"
WARMUP_S, QUICK_WARMUP_S = 30.0, 15.0
INTERVAL_S, QUICK_INTERVAL_S = 60.0, 20.0
START_ALGORITHM = "even"
ALGORITHM = "tdls"
PAUSE_TARGET_S = 3.0
REPETITIONS = 3
COMPARE_SPOUT_INTERVAL_MS = "5"
FOLLOW_TIMEOUT_S = 420.0
"""Following a reconfiguration: the controller's drain (60 s) + apply (120 s) + workers-up
(120 s) timeouts, and some margin."""
FOLLOW_POLL_S = 1.0
NIMBUS_TIMEOUT_MS = 30_000
NIMBUS_ATTEMPTS = 3
"""Nimbus queries wait this long and are tried this often: the unthrottled topologies load the
2-core machine enough that Nimbus now and then answers late."""
SPOUT_INTERVAL_MS = "0"
MONITOR_OPTIONS = (
    'topology.auto.task.hooks=["io.schedulerpy.storm.monitor.TrafficHook"]',
    "topology.multilang.log.handler=io.schedulerpy.storm.monitor.MonitorShellLogHandler",
)
OUTCOME_WIDTH = 48
HEADERS = (
    "topology",
    "workers before→after",
    "restarted",
    "drain s",
    "pause s",
    "throughput before",
    "after",
    "ratio after/before",
    "outcome",
)


@dataclass(frozen=True)
class Workload:
    key: str
    label: str
    project: str
    """streamparse project under ``topologies/``"""
    topology: str
    """name it runs under on the cluster"""
    spout: str
    """the spout component whose acked counts make the throughput"""
    interval_key: str
    """the topology conf key of the spout's pause (ms)"""


WORKLOADS = (
    Workload(
        "wordcount",
        "word count",
        "wordcount",
        "rp-wordcount",
        "sentences",
        "wordcount.spout.interval.ms",
    ),
    Workload("linear", "linear", "linear", "rp-linear", "spout", "linear.spout.interval.ms"),
)


# --------------------------------------------------------------------------- pure helpers


def select_workloads(text: str) -> list[Workload]:
    """``"wordcount,linear"`` → those workloads, in that order; an unknown key raises."""
    known = {w.key: w for w in WORKLOADS}
    keys = [k.strip() for k in text.split(",") if k.strip()]
    unknown = [k for k in keys if k not in known]
    if not keys or unknown:
        raise ValueError(
            f"topologies must be a comma-separated subset of {', '.join(known)}, got {text!r}"
        )
    return [known[k] for k in dict.fromkeys(keys)]


def submit_options(workload: Workload, start: str, spout_interval_ms: str) -> tuple[str, ...]:
    """The ``-o`` conf entries a workload is submitted with."""
    return (
        f"scheduler.brain.algorithm={start}",
        "scheduler.reconfig.enabled=false",
        *MONITOR_OPTIONS,
        f"{workload.interval_key}={spout_interval_ms}",
    )


def entry_numbers(entry: Mapping[str, Any] | None) -> dict[str, Any]:
    """What the table needs from a history entry: its state and timings, and the plan's
    workers and predicted inter-worker traffic (from its ``report``, else its ``numbers``)."""
    if not entry:
        return {}
    plan = {**(entry.get("numbers") or {}), **(entry.get("report") or {})}
    return {
        "state": entry.get("state"),
        "reason": entry.get("reason") or "",
        "pause_secs": _number(entry.get("pause_secs")),
        "drain_secs": _number(entry.get("drain_secs")),
        "applied_secs": _number(entry.get("applied_secs")),
        "workers_restarted": plan.get("workers_restarted"),
        "workers_stopped": plan.get("workers_stopped"),
        "planned_workers_before": plan.get("workers_before"),
        "planned_workers_after": plan.get("workers_after"),
        "interworker_before": _number(plan.get("interworker_before")),
        "interworker_after": _number(plan.get("interworker_after")),
        "total_traffic": _number(plan.get("total_traffic")),
        "costs": plan.get("costs"),
        "workers_note": entry.get("workers"),
        "states": list(entry.get("states") or []),
    }


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def workers_cell(before: int | None, after: int | None) -> str | None:
    """``3→1``; a dash for a side that is unknown; ``None`` when both are."""
    if before is None and after is None:
        return None
    return f"{MISSING if before is None else before}→{MISSING if after is None else after}"


def outcome_text(result: Mapping[str, Any], width: int = OUTCOME_WIDTH) -> str:
    """The outcome cell: the entry's state, or why there is none; a failure's reason
    abbreviated to ``width`` characters (the notes carry it in full)."""
    text = result.get("outcome") or "not run"
    error = result.get("error")
    if error:
        text = f"{text}: {error}"
    elif text not in ("completed", "not run"):
        reason = (result.get("numbers") or {}).get("reason")
        if reason:
            text = f"{text}: {reason}"
    text = " ".join(str(text).split())
    return text if len(text) <= width else text[: width - 1] + "…"


def table_row(result: Mapping[str, Any]) -> list[str | None]:
    """One table row for one workload's result (cells in :data:`HEADERS` order)."""
    numbers = result.get("numbers") or {}
    before, after = result.get("rate_before"), result.get("rate_after")
    return [
        result.get("label") or result.get("topology") or "?",
        workers_cell(result.get("workers_before"), result.get("workers_after")),
        fmt(numbers.get("workers_restarted")),
        fmt(numbers.get("drain_secs"), ".1f"),
        fmt(numbers.get("pause_secs"), ".1f"),
        fmt(before, ".1f"),
        fmt(after, ".1f"),
        ratio(after, before),
        outcome_text(result),
    ]


def traffic_note(result: Mapping[str, Any]) -> str | None:
    """``word count: predicted inter-worker traffic 2 (67%) -> 0 (0%), planned workers 3→1;
    costs: declared``."""
    numbers = result.get("numbers") or {}
    before, after = numbers.get("interworker_before"), numbers.get("interworker_after")
    if before is None or after is None:
        return None
    total = numbers.get("total_traffic") or 0.0

    def share(value: float) -> str:
        return f" ({value / total:.0%})" if total > 0 else ""

    planned = workers_cell(
        numbers.get("planned_workers_before"), numbers.get("planned_workers_after")
    )
    return (
        f"{result.get('label')}: predicted inter-worker traffic {before:.4g}{share(before)} -> "
        f"{after:.4g}{share(after)}, planned workers {planned or '?'}; costs: "
        f"{numbers.get('costs') or '?'}"
    )


# --------------------------------------------------------------------------- the cluster


class _ReconfigCluster(_Cluster):
    """monitor_overhead's cluster, for any project and spout, and with the brain's controls."""

    def __init__(self, directory: Path, aggregate: bool, port_offset: str = PORT_OFFSET) -> None:
        super().__init__(directory, aggregate, port_offset)
        self.spouts: dict[str, str] = {}

    def up(self) -> None:
        super().up()
        self.nimbus.timeout_ms = NIMBUS_TIMEOUT_MS

    def _nimbus(self, method: str, *args: Any) -> Any:
        """``self.nimbus.<method>(*args)``, tried again after a timeout or a lost connection."""
        from thriftpy2.transport import TTransportException

        for attempt in range(1, NIMBUS_ATTEMPTS + 1):
            try:
                return getattr(self.nimbus, method)(*args)
            except (OSError, TTransportException) as error:
                if attempt == NIMBUS_ATTEMPTS:
                    raise
                _say(f"  nimbus {method}: {type(error).__name__}: {error}; trying again")
                time.sleep(1.0)
        raise AssertionError("unreachable")

    def submit_project(self, workload: Workload, options: Sequence[str]) -> None:
        self.spouts[workload.topology] = workload.spout
        args = [str(DEPLOY / "submit-topology.sh"), workload.project, workload.topology]
        args += ["--wait=100"]
        for option in options:
            args += ["-o", option]
        result = subprocess.run(
            args, env=self.env, capture_output=True, text=True, timeout=400, check=False
        )
        if result.returncode != 0:
            raise RuntimeError(
                f"submit {workload.topology} failed:\n{result.stdout[-2000:]}\n"
                f"{result.stderr[-2000:]}"
            )

    def spout_counts(self, name: str) -> dict[str, int]:
        component = self.spouts.get(name, "sentences")
        return {
            f"{r.task_start}-{r.task_end}@{r.host}:{r.port}": r.acked
            for r in self._nimbus("executor_runs", name)
            if r.component == component
        }

    def workers(self, name: str) -> int | None:
        state = self._nimbus("topology_state", name)
        return len(state.workers) if state is not None else None

    def status(self, name: str) -> str | None:
        return self._nimbus("status", name)

    @property
    def brain(self) -> str:
        return f"{self.env.get('BRAIN_HOST', '127.0.0.1')}:{self.env['BRAIN_PORT']}"

    def brain_call(self, method: str, *args: Any, timeout_ms: int = 60_000) -> Any:
        from scheduler_py.service.client import brain_client

        client = brain_client(self.brain, timeout_ms)
        try:
            return getattr(client, method)(*args)
        finally:
            client.close()

    def history(self, name: str) -> list[dict[str, Any]]:
        state_dir = self.env.get("BRAIN_STATE_DIR")
        if state_dir:
            from scheduler_py.reconfig.history import History

            return History(Path(state_dir)).entries(name)
        return json.loads(self.brain_call("history", name))

    def keep_logs(self, into: Path) -> list[Path]:
        """Copy the brain's log and the history journals to ``into``; return what was copied."""
        copied = []
        sources = [self.directory / "logs" / "brain.log"]
        state_dir = self.env.get("BRAIN_STATE_DIR")
        if state_dir:
            sources += sorted((Path(state_dir) / "history").glob("*.jsonl"))
        for source in sources:
            if source.is_file():
                into.mkdir(parents=True, exist_ok=True)
                copied.append(Path(shutil.copy2(source, into / source.name)))
        return copied


def _rate(cluster: _ReconfigCluster, name: str, interval: float) -> tuple[float, float | None]:
    """Spout-acked tuples/s over ``interval`` (heartbeat-aligned) and the mean span (s)."""
    start = _aligned(cluster, name)
    time.sleep(interval)
    end = _aligned(cluster, name)
    spans = [end[k][0] - start[k][0] for k in start if k in end]
    return step_rate(start, end), mean(spans)


def _reconfigure(
    cluster: _ReconfigCluster, name: str, algorithm: str, timeout: float
) -> tuple[str, dict[str, Any] | None, dict[str, Any] | None, float]:
    """Replan ``name`` with ``algorithm`` and follow it: (outcome, entry, report, wall s)."""
    from scheduler_py.service.auth import load_secret
    from scheduler_py.service.wire import wire

    started = time.monotonic()
    secret = load_secret()  # the file the cluster's brain created (service/auth.py)
    try:
        plan = json.loads(
            cluster.brain_call("replan", name, algorithm, False, secret.value if secret else "")
        )
    except wire().BrainError as error:
        return f"refused: {error.message}", None, None, time.monotonic() - started
    entry_id = plan.get("reconfiguration_id")
    if not entry_id:
        reason = plan.get("reconfiguration") or "no reconfiguration started"
        return f"unchanged: {reason}", None, plan, time.monotonic() - started
    deadline = started + timeout
    entry: dict[str, Any] | None = None
    while time.monotonic() < deadline:
        entry = next((e for e in cluster.history(name) if e.get("id") == entry_id), entry)
        if entry is not None and entry.get("state") in TERMINAL:
            return str(entry["state"]), entry, plan, time.monotonic() - started
        time.sleep(FOLLOW_POLL_S)
    state = (entry or {}).get("state", "?")
    return f"timeout (still '{state}' after {timeout:g}s)", entry, plan, time.monotonic() - started


def _run_workload(
    cluster: _ReconfigCluster,
    workload: Workload,
    settings: Mapping[str, Any],
) -> dict[str, Any]:
    result: dict[str, Any] = {
        "label": workload.label,
        "topology": workload.topology,
        "project": workload.project,
        "outcome": "not run",
        "error": None,
        "workers_before": None,
        "workers_after": None,
        "rate_before": None,
        "rate_after": None,
        "numbers": {},
        "entry": None,
    }
    name = workload.topology
    options = submit_options(workload, settings["start"], settings["spout_interval_ms"])
    result["options"] = list(options)
    step = "submit"
    try:
        submitted = time.monotonic()
        cluster.submit_project(workload, options)
        result["submit_to_ready_s"] = time.monotonic() - submitted
        step = "measure before"
        time.sleep(settings["warmup"])
        result["workers_before"] = cluster.workers(name)
        result["rate_before"], result["span_before_s"] = _rate(cluster, name, settings["interval"])
        _say(f"  {workload.label}: {result['rate_before']:.1f} acked/s before")
        step = "reconfigure"
        outcome, entry, plan, wall = _reconfigure(
            cluster, name, settings["algorithm"], settings["timeout"]
        )
        result.update(outcome=outcome, entry=entry, plan=plan, reconfigure_wall_s=wall)
        # an unchanged plan has no entry: its report still says what was compared
        result["numbers"] = entry_numbers(entry or ({"report": plan} if plan else None))
        _say(f"  {workload.label}: reconfiguration {outcome} after {wall:.1f} s")
        step = "measure after"
        status = cluster.status(name)
        if status != "ACTIVE":
            result["error"] = f"topology {status or 'gone'} after the reconfiguration"
            return result
        time.sleep(settings["warmup"])
        result["workers_after"] = cluster.workers(name)
        result["rate_after"], result["span_after_s"] = _rate(cluster, name, settings["interval"])
        _say(f"  {workload.label}: {result['rate_after']:.1f} acked/s after")
    except Exception as error:  # one workload's failure is a row, not a crash
        result["error"] = f"{step}: {type(error).__name__}: {error}"
        if result["outcome"] == "not run":
            result["outcome"] = "error"
        _say(f"  {workload.label}: {result['error']}")
    finally:
        try:
            cluster.kill(name)
        except Exception as error:
            _say(f"  {workload.label}: killing {name} failed: {error}")
    return result


def _compare_paths(
    cluster: _ReconfigCluster, settings: Mapping[str, Any], ledger_dir: Path
) -> dict[str, Any]:
    """Issue 17: ours against ``storm rebalance -w 0`` on word count
    (``scheduler_py/bench/reconfig_paths.py``)."""
    from scheduler_py.monitoring.links import ZooKeeperLink

    workload = WORKLOADS[0]
    name = workload.topology
    options = (
        *submit_options(workload, settings["start"], settings["compare_spout_interval_ms"]),
        f"wordcount.ledger.dir={ledger_dir}",
        "topology.max.spout.pending=100",
    )
    cluster.submit_project(workload, options)
    topology_id = cluster._nimbus("find_topology_id", name)
    link = ZooKeeperLink(f"{cluster.env['STORM_ZK_HOST']}:{cluster.env['STORM_ZK_PORT']}")

    def replan(algorithm: str) -> tuple[str, dict[str, Any] | None]:
        outcome, entry, _, _ = _reconfigure(cluster, name, algorithm, settings["timeout"])
        return outcome, entry

    comparison = reconfig_paths.Comparison(
        cluster,
        name,
        topology_id,
        ledger_dir,
        lambda: link.live(topology_id),
        replan,
        _say,
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
            _say(f"  killing {name} failed: {error}")


def _comparison_table(comparison: Mapping[str, Any], settings: Mapping[str, Any]) -> None:
    summary = comparison["summary"]
    table = Table(
        [
            "path",
            "runs",
            "pause s median",
            "range",
            "steady s median",
            "workers restarted",
            "replayed",
            "lost",
        ],
        caption=f"word count, {settings['start']} (3 workers) → {settings['algorithm']}: "
        "spouts blocked → resumed, from the workers' live counters",
        notes=[
            "steady: from the start of the pause until the acked rate over 2 s is back to 90 % "
            "of its rate before; lost: spout message ids never acked (ledger) after the final "
            "drain; p99 latency spike: not measured (see scheduler_py/bench/reconfig_paths.py)",
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
            str(row["runs"]),
            fmt(row["pause_s_median"], ".2f"),
            f"{fmt(row['pause_s_min'], '.2f')}–{fmt(row['pause_s_max'], '.2f')}",
            fmt(row["steady_s_median"], ".1f"),
            fmt(row["workers_restarted_median"], "g"),
            str(row["replayed"]),
            str(row["lost"]),
        )
    table.print()
    ours, storm = summary["ours"], summary["storm_rebalance"]
    checks = (
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


def _say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- benchmark


@benchmark(
    NAME,
    summary="One drain-out reconfiguration (replan even -> td) of word count and Linear on a "
    "real local cluster: drain and pause from the controller's history, acked tuples/s "
    "before and after.",
    paper=PAPER,
)
def run(options: BenchOptions) -> None:
    extra = options.extra
    settings = {
        "warmup": float(extra.get("warmup", QUICK_WARMUP_S if options.quick else WARMUP_S)),
        "interval": float(extra.get("interval", QUICK_INTERVAL_S if options.quick else INTERVAL_S)),
        "algorithm": extra.get("algorithm", ALGORITHM),
        "start": extra.get("start", START_ALGORITHM),
        "spout_interval_ms": extra.get("spout_interval_ms", SPOUT_INTERVAL_MS),
        "timeout": float(extra.get("timeout", FOLLOW_TIMEOUT_S)),
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
    load_before = _load()
    problems: list[str] = []
    kept: list[Path] = []
    with tempfile.TemporaryDirectory(prefix="reconfig-pause-") as tmp:
        cluster = _ReconfigCluster(Path(tmp) / "cluster", aggregate, settings["port_offset"])
        try:
            cluster.up()
            _say(f"  comparing paths, {settings['repetitions']} repetitions each; {_load()}")
            comparison = _compare_paths(cluster, settings, Path(tmp) / "ledger")
            comparison["load_after"] = _load()
            for workload in report.progress(workloads, total=len(workloads), desc="topologies"):
                results.append(_run_workload(cluster, workload, settings))
        except Exception as error:  # the cluster did not come up (or broke): say so
            problems.append(f"{type(error).__name__}: {error}")
            _say(f"  cluster: {problems[-1]}")
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


def _draw(axes: Any, results: list[dict[str, Any]], settings: Mapping[str, Any]) -> None:
    xs = list(range(len(results)))
    width = 0.38
    before = [r.get("rate_before") or 0.0 for r in results]
    after = [r.get("rate_after") or 0.0 for r in results]
    axes.bar([x - width / 2 for x in xs], before, width, label=f"before ({settings['start']})")
    axes.bar([x + width / 2 for x in xs], after, width, label=f"after ({settings['algorithm']})")
    for x, r in zip(xs, results, strict=True):
        pause = (r.get("numbers") or {}).get("pause_secs")
        label = f"pause {pause:.1f}s" if pause is not None else str(r.get("outcome"))[:20]
        axes.annotate(label, (x, max(before[x], after[x])), ha="center", va="bottom", fontsize=8)
    axes.set_xticks(xs)
    axes.set_xticklabels([str(r.get("label")) for r in results])
    axes.set_ylabel("acked tuples/s")
    axes.set_title("throughput before and after one drain-out reconfiguration")
    axes.legend(loc="upper left")


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


def _load() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())
