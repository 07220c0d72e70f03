"""What several real-cluster tests do to and read from the cluster: the brain's plan log,
waiting for free supervisors, killing and restarting a supervisor."""

from __future__ import annotations

import contextlib
import json
import os
import signal

from scheduler_py.devtools.storm_daemon import start_daemon
from scheduler_py.nimbus.placement_table import compare, latest_plan, planned_slots
from tests.cluster.waiting import machine_timeout, wait_until


def plans_since(
    cluster, topology_id: str, since_ms: int, decision: str | None = None
) -> list[dict]:
    """The brain's plan-log entries for ``topology_id`` from ``since_ms`` on (only those with
    ``decision``, e.g. ``"PLACE"``, when given)."""
    if not cluster.plan_log.exists():
        return []
    entries = (json.loads(line) for line in cluster.plan_log.read_text().splitlines() if line)
    return [
        e
        for e in entries
        if e.get("topology_id") == topology_id
        and e.get("timestamp_ms", 0) >= since_ms
        and (decision is None or e.get("decision") == decision)
    ]


def placed_by_brain(cluster, name: str) -> bool:
    """Nimbus runs ``name`` where the brain's last plan for it (plan log) put it."""
    topology_id = cluster.nimbus.find_topology_id(name)
    entry = latest_plan(cluster.plan_log, topology_id)
    planned = planned_slots(entry, cluster.nimbus.supervisor_hosts())
    return compare(cluster.nimbus.executor_runs(name), planned)


def wait_for_free_supervisors(cluster, count: int = 3, min_uptime_s: int = 40) -> None:
    """Wait until ``count`` supervisors have a free slot and have been up ``min_uptime_s``: an
    earlier test may have restarted one, and Nimbus blacklists a supervisor that was down for
    30 s (``blacklist.scheduler.resume.time.secs`` in deploy/storm.yaml.template)."""

    def enough() -> bool:
        supervisors = cluster.nimbus.cluster_summary()["supervisors"]
        free = [
            s
            for s in supervisors
            if s["slots"] > s["used_slots"] and s["uptime_secs"] > min_uptime_s
        ]
        return len(free) >= count

    wait_until(
        enough,
        machine_timeout(240),
        f"{count} supervisors with a free slot, up for {min_uptime_s} s",
    )


def supervisor_index(host: str) -> int:
    """127.0.0.i runs supervisor-i (deploy/cluster-common.sh)."""
    return int(host.rsplit(".", 1)[1])


def kill_supervisor(cluster, index: int) -> None:
    """Kill supervisor-i with its workers and Python subprocesses (its process group)."""
    pidfile = cluster.directory / "run" / f"supervisor-{index}.pid"
    pid = int(pidfile.read_text().strip())
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)


def start_supervisor(cluster, index: int) -> None:
    """Start supervisor-i again as deploy/cluster-up.sh does (same conf, state and logs)."""
    venv = cluster.env["VENV"]
    start_daemon(
        cluster.directory,
        cluster.env,
        "supervisor",
        f"supervisor-{index}",
        {
            "STORM_SUPERVISOR_LOG_FILE": f"supervisor-{index}.log",
            "PATH": f"{venv}/bin:{os.environ.get('PATH', '')}",
            "VIRTUAL_ENV": venv,
        },
    )


def _running(pidfile) -> bool:
    """Whether the process of ``pidfile`` runs (an exited child not yet reaped is a zombie:
    ``kill(pid, 0)`` still succeeds on it)."""
    try:
        pid = int(pidfile.read_text().strip())
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, ValueError, IndexError):
        return False


def restart_exited_supervisors(cluster) -> list[int]:
    """Start again every supervisor of the cluster whose process has exited, and wait until
    Nimbus lists them all; returns the indexes restarted. A Storm supervisor halts when its
    heartbeat timer meets a ZooKeeper ConnectionLoss (``DefaultUncaughtExceptionHandler``,
    seen once in CI during the ZooKeeper-restart fault test), and the tests after it need
    every supervisor."""
    pidfiles = sorted((cluster.directory / "run").glob("supervisor-*.pid"))
    restarted = []
    for pidfile in pidfiles:
        index = int(pidfile.stem.rsplit("-", 1)[1])
        if not _running(pidfile):
            start_supervisor(cluster, index)
            restarted.append(index)
    if restarted:
        wait_until(
            lambda: len(cluster.nimbus.cluster_summary()["supervisors"]) >= len(pidfiles),
            machine_timeout(120),
            f"supervisor(s) {restarted} to register again after they exited",
        )
    return restarted


def restart_exited_nimbus(cluster) -> bool:
    """Start Nimbus again if its process has exited, and wait until it answers; whether it
    was restarted. Storm's Nimbus halts when its assignment timer meets a ZooKeeper
    ConnectionLoss (``Utils.exitProcess``: "Halting process: Error while processing event",
    seen once in CI during the ZooKeeper-restart fault test), and the tests after it need
    Nimbus."""
    if _running(cluster.directory / "run" / "nimbus.pid"):
        return False
    cluster.start_nimbus()
    wait_until(
        lambda: _nimbus_summary(cluster) is not None,
        machine_timeout(120),
        "Nimbus to answer again after it exited",
    )
    return True


def _nimbus_summary(cluster) -> dict | None:
    try:
        return cluster.nimbus.cluster_summary()
    except Exception:  # not up yet: any connection or Thrift error means "ask again"
        return None


MONITOR_WINDOW_SECS = 5
LIVE_COUNTERS = (
    'topology.metrics.reporters=[{"class": "io.schedulerpy.storm.monitor.CountsReporter"}]',
    "topology.multilang.log.handler=io.schedulerpy.storm.monitor.MonitorShellLogHandler",
    f"scheduler.monitor.window.secs={MONITOR_WINDOW_SECS}",
)
"""Submit options for the worker monitor (windows and the live counters a drain observes).
deploy/monitor.yaml turns it on cluster-wide; the tests name it so they do not depend on
that."""


def wordcount_files(control, ledger) -> tuple[str, str]:
    """Submit options for the word-count spout's control file (its rate at run time) and its
    message-id ledger (topologies/wordcount/src/spouts/words.py)."""
    return f"wordcount.control.file={control}", f"wordcount.ledger.dir={ledger}"
