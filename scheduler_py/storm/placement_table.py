"""``scheduler-py placement TOPOLOGY``: where every executor runs, per Nimbus, next to
where the brain planned it (from the brain's plan log) and the tuples processed so far."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from scheduler_py.storm.nimbus import executor_runs, nimbus_client, topology_summary


def latest_plan(plan_log: Path, topology_id: str) -> dict[str, Any] | None:
    """The brain's last PLACE decision for ``topology_id`` in the plan log, if any."""
    if not plan_log.exists():
        return None
    latest = None
    for line in plan_log.read_text(encoding="utf-8").splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if entry.get("topology_id") == topology_id:
            latest = entry
    return latest


def planned_slots(entry: dict[str, Any] | None, supervisor_host: dict[str, str]) -> dict:
    """(task_start, task_end) -> (host, port) from a plan-log entry."""
    if not entry or entry.get("decision") != "PLACE":
        return {}
    result = {}
    for key, (supervisor, port) in entry.get("storm_placement", {}).items():
        start, end = (int(x) for x in key.split("-"))
        result[(start, end)] = (supervisor_host.get(supervisor, supervisor), int(port))
    return result


def render(name: str, client: Any, plan_log: Path) -> tuple[str, bool]:
    """The table as text, and whether Nimbus's placement equals the brain's plan."""
    summary = topology_summary(client, name)
    if summary is None:
        return f"topology {name!r} is not running", False
    hosts = {s.supervisor_id: s.host for s in client.getClusterInfo().supervisors}
    entry = latest_plan(plan_log, summary.id)
    planned = planned_slots(entry, hosts)
    runs = executor_runs(client, summary.id)
    lines = [
        f"topology {name} ({summary.id}) status {summary.status}, "
        f"{summary.num_workers} worker(s), {summary.num_executors} executor(s)",
        f"scheduler: {summary.sched_status or '-'}",
        "",
        f"{'component':14s} {'tasks':>7s}  {'runs on (Nimbus)':22s} {'planned (brain)':22s} "
        f"{'emitted':>9s} {'acked':>9s}",
    ]
    matches = bool(planned)
    for run in runs:
        where = f"{run.host}:{run.port}"
        plan = planned.get((run.task_start, run.task_end))
        planned_text = f"{plan[0]}:{plan[1]}" if plan else "-"
        if plan != (run.host, run.port):
            matches = False
        tasks = f"{run.task_start}-{run.task_end}"
        lines.append(
            f"{run.component:14s} {tasks:>7s}  {where:22s} {planned_text:22s} "
            f"{run.emitted:9d} {run.acked:9d}"
        )
    algorithm = entry.get("algorithm") if entry else None
    lines += [
        "",
        f"brain plan: {entry.get('reason') if entry else 'none in ' + str(plan_log)}",
        f"placement {'matches' if matches else 'DIFFERS from'} the brain's plan"
        + (f" ({algorithm})" if algorithm else ""),
    ]
    return "\n".join(lines), matches


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scheduler-py placement")
    parser.add_argument("topology", help="topology name")
    parser.add_argument("--nimbus", default="127.0.0.1:6627", help="host:port of Nimbus")
    parser.add_argument(
        "--plan-log", default="build/cluster/brain/plans.jsonl", help="the brain's plan log"
    )
    args = parser.parse_args(argv)
    host, _, port = args.nimbus.partition(":")
    with nimbus_client(host, int(port or 6627)) as client:
        text, _ = render(args.topology, client, Path(args.plan_log))
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
