"""Where every executor of a running topology runs, per Nimbus, next to where the brain
planned it (from the brain's plan log) and the tuples processed so far: the table
``scheduler-py placement TOPOLOGY`` prints (``scheduler_py/cli/placement.py``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from scheduler_py.nimbus.client import ExecutorRun, NimbusCtl


def latest_plan(
    plan_log: Path, topology_id: str, decision: str | None = None
) -> dict[str, Any] | None:
    """The brain's last decision for ``topology_id`` in the plan log (only ``decision``
    ones, e.g. ``PLACE``, when given), if any."""
    if not plan_log.exists():
        return None
    latest = None
    for line in plan_log.read_text(encoding="utf-8").splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if entry.get("topology_id") == topology_id and decision in (None, entry.get("decision")):
            latest = entry
    return latest


def planned_slots(entry: dict[str, Any] | None, hosts: dict[str, str]) -> dict:
    """(task_start, task_end) -> (host, port) of a PLACE plan-log entry."""
    if not entry or entry.get("decision") != "PLACE":
        return {}
    result = {}
    for key, (supervisor, port) in entry.get("storm_placement", {}).items():
        start, end = (int(x) for x in key.split("-"))
        result[(start, end)] = (hosts.get(supervisor, supervisor), int(port))
    return result


def compare(runs: list[ExecutorRun], planned: dict) -> bool:
    """True when every executor runs exactly where the brain planned it."""
    return (
        bool(planned)
        and len(runs) == len(planned)
        and all(planned.get((r.task_start, r.task_end)) == (r.host, r.port) for r in runs)
    )


def render(ctl: NimbusCtl, name: str, plan_log: Path) -> tuple[str, bool]:
    """The table as text, and whether Nimbus's placement equals the brain's plan."""
    state = ctl.topology_state(name)
    if state is None:
        return f"topology {name!r} is not running", False
    entry = latest_plan(plan_log, state.id)
    planned = planned_slots(entry, ctl.supervisor_hosts())
    runs = ctl.executor_runs(state.id)
    lines = [
        f"topology {state.name} ({state.id}): {state.status}, {len(state.workers)} worker(s), "
        f"{len(runs)} executor(s), spout tuples acked {state.acked}, failed {state.failed}",
        f"Storm's scheduler status: {state.sched_status or '-'}",
        "",
        f"{'component':14s} {'tasks':>7s}  {'runs on (Nimbus)':18s} {'planned (brain)':18s}"
        f" {'emitted':>9s} {'acked':>9s}",
    ]
    for run in runs:
        plan = planned.get((run.task_start, run.task_end))
        planned_text = f"{plan[0]}:{plan[1]}" if plan else "-"
        mark = "" if plan is None or plan == (run.host, run.port) else "  <- differs"
        lines.append(
            f"{run.component:14s} {f'{run.task_start}-{run.task_end}':>7s}  "
            f"{f'{run.host}:{run.port}':18s} {planned_text:18s} {run.emitted:9d} {run.acked:9d}"
            f"{mark}"
        )
    matches = compare(runs, planned)
    lines.append("")
    if entry is None:
        lines.append(f"the brain has no plan for this topology in {plan_log}")
    else:
        lines.append(f"brain ({entry.get('algorithm') or '-'}): {entry.get('reason')}")
        lines.append(
            "placement matches the brain's plan"
            if matches
            else "placement DIFFERS from the brain's plan"
        )
    return "\n".join(lines), matches
