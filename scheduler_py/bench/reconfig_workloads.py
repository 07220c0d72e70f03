"""The per-workload part of :mod:`scheduler_py.bench.reconfig_pause`: the workloads, one
drain-out reconfiguration of a running topology followed in the brain's history, and the
table cells and notes made from that history entry.

:func:`run_workload` submits a workload placed by the start algorithm, measures its
throughput (:func:`~scheduler_py.bench.local_cluster.rate_over`), asks the brain to
``replan`` it, follows the reconfiguration until its history entry is terminal
(:func:`reconfigure`), measures again and kills it; any failure is a result with that
outcome, never an exception.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from scheduler_py.bench.local_cluster import BrainCluster, rate_over, say
from scheduler_py.bench.report import MISSING, fmt, ratio
from scheduler_py.reconfig.history import TERMINAL

FOLLOW_POLL_S = 1.0
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


# --------------------------------------------------------------------------- one workload


def reconfigure(
    cluster: BrainCluster, name: str, algorithm: str, timeout: float
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


def run_workload(
    cluster: BrainCluster,
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
        cluster.submit_project(workload.project, name, workload.spout, options)
        result["submit_to_ready_s"] = time.monotonic() - submitted
        step = "measure before"
        time.sleep(settings["warmup"])
        result["workers_before"] = cluster.workers(name)
        result["rate_before"], result["span_before_s"] = rate_over(
            cluster, name, settings["interval"]
        )
        say(f"  {workload.label}: {result['rate_before']:.1f} acked/s before")
        step = "reconfigure"
        outcome, entry, plan, wall = reconfigure(
            cluster, name, settings["algorithm"], settings["timeout"]
        )
        result.update(outcome=outcome, entry=entry, plan=plan, reconfigure_wall_s=wall)
        # an unchanged plan has no entry: its report still says what was compared
        result["numbers"] = entry_numbers(entry or ({"report": plan} if plan else None))
        say(f"  {workload.label}: reconfiguration {outcome} after {wall:.1f} s")
        step = "measure after"
        status = cluster.status(name)
        if status != "ACTIVE":
            result["error"] = f"topology {status or 'gone'} after the reconfiguration"
            return result
        time.sleep(settings["warmup"])
        result["workers_after"] = cluster.workers(name)
        result["rate_after"], result["span_after_s"] = rate_over(
            cluster, name, settings["interval"]
        )
        say(f"  {workload.label}: {result['rate_after']:.1f} acked/s after")
    except Exception as error:  # one workload's failure is a row, not a crash
        result["error"] = f"{step}: {type(error).__name__}: {error}"
        if result["outcome"] == "not run":
            result["outcome"] = "error"
        say(f"  {workload.label}: {result['error']}")
    finally:
        try:
            cluster.kill(name)
        except Exception as error:
            say(f"  {workload.label}: killing {name} failed: {error}")
    return result
