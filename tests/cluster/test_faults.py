"""Faults on the real local cluster (docs/reliability.md), each with its outcome asserted and its
recovery time printed on one line (``recovery: <fault> → <what> in X s``):

* Nimbus killed (SIGKILL) and started again as deploy/cluster-up.sh starts it: the brain gets
  rounds again without a restart, the running topology keeps its assignment, a topology
  submitted afterwards is placed by the brain, and the reconfiguration controller carries out
  an operator ``replan`` against the new Nimbus;
* ZooKeeper killed (SIGKILL) for a while and started again on the same data: the worker
  monitor publishes windows again, ``scheduler-py aggregate --every`` (running throughout)
  writes aggregates again, and the brain prices the topology with measured costs again —
  none of them restarted;
* ``scheduler-py aggregate`` killed (SIGKILL): once its last aggregate is older than
  ``scheduler.brain.metrics.max.age.secs`` the brain plans on declared costs and says so with
  the aggregate's age (``replan --dry-run``, the plan log and Storm's status of a placement),
  the reconfiguration trigger ignores the stale aggregate (the status's trigger state says
  why; the history stays empty), and the aggregation started again brings measured costs
  back;
* the brain slow (answers after the shim's ``scheduler.brain.timeout.ms``): the round falls
  back to DefaultScheduler, the next rounds use the brain again, the fallback's placement is
  kept (Nimbus assigns the topology once), the brain's plan log does not claim the late
  rounds' plans, and a new topology is placed by the brain.

Brain down, garbage plans (test_storm_loop.py), the brain killed at each step of a reconfiguration
(test_reconfiguration.py) and a killed supervisor (test_monitoring.py) are covered elsewhere.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

import pytest

from scheduler_py.monitoring.measured import MAX_AGE_KEY
from scheduler_py.monitoring.zk import MonitorStore, close_quietly, connect
from scheduler_py.nimbus.client import NimbusUnreachable
from scheduler_py.reconfig.history import TERMINAL, History
from scheduler_py.service.client import call_brain
from tests.cluster import aggregation
from tests.cluster.aggregation import ROOT, SCHEDULER_PY
from tests.cluster.operations import (
    LIVE_COUNTERS,
    placed_by_brain,
    plans_since,
    restart_exited_nimbus,
    restart_exited_supervisors,
)
from tests.cluster.waiting import machine_timeout, wait_until

pytestmark = pytest.mark.cluster

ROUND_SECS = 5  # nimbus.monitor.freq.secs of the test cluster (deploy/cluster-up.sh)
SHIM_TIMEOUT_S = 5  # scheduler.brain.timeout.ms of the test cluster (deploy/cluster-up.sh)
MONITOR_OPTIONS = (
    *LIVE_COUNTERS,
    "scheduler.monitor.zk.root=" + ROOT,
)
BRAIN_STATUS = "Scheduled by scheduler-py brain"
FALLBACK_STATUS = "Fallback to DefaultScheduler"


def _report(fault: str, what: str, seconds: float, note: str = "") -> None:
    print(f"recovery: {fault} → {what} in {seconds:.1f} s{note}")


def _brain(cluster) -> str:
    return f"127.0.0.1:{cluster.brain_port}"


def _brain_status(cluster) -> dict | None:
    """The brain's status document, or ``None`` while it does not answer."""
    try:
        return json.loads(call_brain(_brain(cluster), "status", timeout_ms=10_000))
    except Exception:
        return None


def _rounds_seen(cluster) -> int:
    return (_brain_status(cluster) or {}).get("rounds_seen", -1)


def _wait_rounds(cluster, count: int, what: str) -> None:
    """Wait until the brain has answered ``count`` more rounds."""
    start = _rounds_seen(cluster)
    wait_until(
        lambda: _rounds_seen(cluster) >= start + count,
        machine_timeout(count * ROUND_SECS + 60),
        f"{count} more brain rounds ({what})",
        lambda: f"(rounds seen: {_rounds_seen(cluster)}, before: {start})",
    )


def _nimbus_answers(cluster, call):
    """``call()`` on Nimbus, or ``None`` while Nimbus does not answer."""
    try:
        return call()
    except Exception:
        return None


def _status(cluster, name: str) -> str:
    state = _nimbus_answers(cluster, lambda: cluster.nimbus.topology_state(name))
    return (state.sched_status or "") if state else ""


def _acked(cluster, name: str) -> int:
    state = _nimbus_answers(cluster, lambda: cluster.nimbus.topology_state(name))
    return state.acked if state else -1


def _placement(cluster, name: str) -> frozenset[tuple[int, int, str, int]]:
    runs = _nimbus_answers(cluster, lambda: cluster.nimbus.executor_runs(name)) or []
    return frozenset((r.task_start, r.task_end, r.host, r.port) for r in runs)


def _assignments_logged(cluster, topology_id: str) -> int:
    """How many times Nimbus wrote a new assignment for ``topology_id`` (nimbus.log)."""
    log = (cluster.directory / "logs" / "nimbus.log").read_text(errors="replace")
    return log.count(f"Setting new assignment for topology id {topology_id}:")


def _shim_adopted(cluster, topology_id: str) -> bool:
    """The shim logged that the brain kept ``topology_id``'s placement, which it did not make
    (a KEEP answered in time after a fallback; ``RoundReporter.adopted``)."""
    log = (cluster.directory / "logs" / "nimbus.log").read_text(errors="replace")
    return f"({topology_id}) keeps the placement it has; the brain did not make it" in log


def _dry_run_costs(cluster, name: str) -> str:
    """The cost basis the brain would plan ``name`` on now (``replan --dry-run``): ``measured
    (…)`` when it read the topology's aggregate from ZooKeeper, ``declared (…)`` otherwise."""
    try:
        report = call_brain(_brain(cluster), "replan", name, "", True, "", "", timeout_ms=30_000)
    except Exception as error:
        return f"error: {error}"
    return json.loads(report)["costs"]


@pytest.fixture(scope="module")
def faults(cluster):
    """The cluster with the real brain (as cluster-up.sh starts it) before and after."""
    cluster.start_brain()
    yield cluster
    cluster.start_brain()


def test_nimbus_restart_keeps_the_placement_and_the_brain_and_controller_carry_on(faults):
    cluster = faults
    name, later = "wc-nimbus", "wc-after-nimbus"
    topology_id = cluster.submit(
        name,
        "topology.workers=2",
        "scheduler.brain.algorithm=even",
        "scheduler.reconfig.replan.on.measured=false",
        wait_acked=5,
    )
    try:
        assert _status(cluster, name).startswith(BRAIN_STATUS), _status(cluster, name)
        assert placed_by_brain(cluster, name)
        before = _placement(cluster, name)
        assert len(before) == 2 + 3 + 3 + 3, before  # 2 spouts, 3 split, 3 count, 3 ackers
        brain_pid = cluster.brain_pidfile.read_text().strip()
        rounds_before = _rounds_seen(cluster)
        killed_ms = int(time.time() * 1000)
        cluster.crash("nimbus")
        down_started = time.monotonic()
        time.sleep(ROUND_SECS)  # a round Nimbus misses
        cluster.start_nimbus()
        started = time.monotonic()
        wait_until(
            lambda: _rounds_seen(cluster) > rounds_before,
            machine_timeout(240),
            "a scheduling round from the restarted Nimbus at the brain",
            lambda: f"(rounds seen {_rounds_seen(cluster)}, before the kill {rounds_before})",
        )
        recovered = time.monotonic() - started
        _report(
            "nimbus restart",
            "brain round again",
            recovered,
            f" (Nimbus down {started - down_started:.1f} s)",
        )
        assert cluster.brain_pidfile.read_text().strip() == brain_pid, "the brain was restarted"
        # a few rounds of the new Nimbus: the topology is kept where it ran, not re-placed
        _wait_rounds(cluster, 3, "after the Nimbus restart")
        assert _placement(cluster, name) == before, "the running topology was re-placed"
        assert plans_since(cluster, topology_id, killed_ms, "PLACE") == [], (
            "the brain re-planned it"
        )
        status = _status(cluster, name)
        assert not status.startswith(FALLBACK_STATUS), status
        acked = _acked(cluster, name)
        wait_until(
            lambda: _acked(cluster, name) > acked,
            machine_timeout(90),
            f"{name}'s acked count to grow after the Nimbus restart",
        )

        # a topology submitted to the new Nimbus is placed by the brain
        cluster.submit(later, "topology.workers=1", "scheduler.brain.algorithm=td")
        assert _status(cluster, later).startswith(BRAIN_STATUS), _status(cluster, later)
        assert placed_by_brain(cluster, later)

        # the controller talks to the new Nimbus: an operator replan completes
        count = len(History(cluster.brain_state_dir).entries(name))
        replan_started = time.monotonic()
        result = subprocess.run(
            [SCHEDULER_PY, "replan", name, "--algorithm", "td", "--brain", _brain(cluster)],
            capture_output=True,
            text=True,
            timeout=machine_timeout(300),
            check=False,
        )
        assert result.returncode == 0, f"replan failed:\n{result.stdout}\n{result.stderr}"
        entries = History(cluster.brain_state_dir).entries(name)
        assert len(entries) == count + 1 and entries[-1]["state"] == "completed", entries[-1:]
        assert entries[-1]["state"] in TERMINAL
        print(
            f"nimbus restart: the controller's replan {entries[-1]['states']} took "
            f"{time.monotonic() - replan_started:.1f} s"
        )
        assert _placement(cluster, name) != before
        wait_until(
            lambda: cluster.nimbus.status(name) == "ACTIVE", machine_timeout(60), f"{name} active"
        )
    finally:
        cluster.kill(name)
        cluster.kill(later)


def _windows_after(store: MonitorStore, topology_id: str, after_ms: int) -> set[str]:
    """The workers with a window that ended after ``after_ms``."""
    return {
        w.worker
        for w in store.load_windows(topology_id)
        if w.path_end_ms is not None and w.path_end_ms > after_ms
    }


class ZooKeeperProbe:
    """Reads the monitoring znodes on a connection of its own for each look (ZooKeeper goes
    away under it); every look answers ``None`` while ZooKeeper does not."""

    def __init__(self, hosts: str) -> None:
        self.hosts = hosts

    def look(self, read):
        client = None
        try:
            client = connect(self.hosts, timeout=5)
            return read(MonitorStore(client, ROOT, operation_timeout=5))
        except Exception:
            return None
        finally:
            close_quietly(client)


def test_zookeeper_restart_monitor_aggregation_and_brain_recover_without_restart(faults):
    cluster = faults
    name = "wc-zookeeper"
    probe = ZooKeeperProbe(aggregation.zookeeper(cluster))
    aggregator = aggregation.start_periodic(cluster, "faults")
    try:
        topology_id = cluster.submit(
            name,
            "topology.workers=2",
            "scheduler.brain.algorithm=even",
            "scheduler.brain.metrics.max.age.secs=900",
            "scheduler.reconfig.replan.on.measured=false",
            *MONITOR_OPTIONS,
            wait_acked=5,
        )
        workers = {(r.host, r.port) for r in cluster.nimbus.executor_runs(name)}
        assert len(workers) == 2, workers
        wait_until(
            lambda: probe.look(lambda s: s.read_aggregate(topology_id)),
            machine_timeout(240),
            f"a first aggregate of {name}",
        )
        wait_until(
            lambda: _dry_run_costs(cluster, name).startswith("measured"),
            machine_timeout(60),
            "the brain to price the topology with measured costs",
            lambda: f"(costs: {_dry_run_costs(cluster, name)})",
        )
        brain_pid = cluster.brain_pidfile.read_text().strip()
        last_before = probe.look(lambda s: s.read_aggregate(topology_id))["computed_at_ms"]

        cluster.crash("zookeeper")
        down_started = time.monotonic()
        # the brain notices: declared costs while ZooKeeper is away (nothing waits on it)
        noticed = wait_until(
            lambda: (costs := _dry_run_costs(cluster, name)).startswith("declared") and costs,
            machine_timeout(60),
            "the brain to fall back to declared costs while ZooKeeper is down",
            lambda: f"(costs: {_dry_run_costs(cluster, name)})",
        )
        print(f"zookeeper down: the brain plans on {noticed}")
        assert "ZooKeeper" in noticed, f"the declared costs do not say why: {noticed}"
        time.sleep(max(0.0, 10 - (time.monotonic() - down_started)))  # down ≥ 10 s
        started_ms = int(time.time() * 1000)
        zookeeper = cluster.start_zookeeper()
        started = time.monotonic()
        down = started - down_started
        # ZooKeeper itself first, so that a ZooKeeper that does not come back is told apart
        # from a monitor, an aggregation or a brain that does not recover
        wait_until(
            lambda: zookeeper.poll() is not None or probe.look(lambda s: True),
            machine_timeout(120),
            "ZooKeeper to accept connections again after its restart",
            lambda: _zookeeper_tail(cluster),
        )
        assert zookeeper.poll() is None, f"ZooKeeper exited on restart: {_zookeeper_tail(cluster)}"
        # Storm's Nimbus may not survive the outage (its assignment timer halts it on a lost
        # connection): what this test checks is that our parts recover without a restart
        if restart_exited_nimbus(cluster):
            print("zookeeper restart: Nimbus had halted during the outage; started again")

        first_after: list[int] = []

        def fresh_aggregate():
            doc = probe.look(lambda s: s.read_aggregate(topology_id))
            if doc and doc["computed_at_ms"] > started_ms:
                first_after.append(doc["computed_at_ms"])
            return bool(first_after)

        checks = {
            "worker monitors publish again": lambda: (
                len(probe.look(lambda s: _windows_after(s, topology_id, started_ms)) or ())
                >= len(workers)
            ),
            "aggregation writes again": fresh_aggregate,
            "brain plans on measured costs again": lambda: _dry_run_costs(cluster, name).startswith(
                "measured"
            ),
        }
        recovered: dict[str, float] = {}

        def all_recovered() -> bool:
            for what, check in checks.items():
                if what not in recovered and check():
                    recovered[what] = time.monotonic() - started
            return len(recovered) == len(checks)

        wait_until(
            all_recovered,
            machine_timeout(240),
            "a window from every worker monitor and an aggregate, both after ZooKeeper was "
            "back, and the brain on measured costs",
            lambda: f"(recovered: {sorted(recovered)})",
        )
        gap = (first_after[0] - last_before) / 1000
        notes = {
            "worker monitors publish again": f" (ZooKeeper down {down:.1f} s)",
            # a run that was under way goes on: its Spark phase bounds this on a busy machine
            # (each run's phases: logs/aggregate-faults.out)
            "aggregation writes again": f" ({gap:.1f} s between the aggregates around the fault)",
        }
        for what, seconds in recovered.items():
            _report("zookeeper restart", what, seconds, notes.get(what, ""))
        assert aggregator.poll() is None, "scheduler-py aggregate exited"
        assert cluster.brain_pidfile.read_text().strip() == brain_pid, "the brain was restarted"
        # Storm itself came through: Nimbus answers, the topology runs and acks. Nimbus may
        # also halt after ZooKeeper is back, while its sessions expire (seen in a CI run
        # during the recovery wait above): started again, as at the restart
        seen_status: list[str] = []

        def topology_active() -> bool:
            if restart_exited_nimbus(cluster):
                print("zookeeper restart: Nimbus halted during the recovery; started again")
            try:
                seen_status.append(cluster.nimbus.status(name))
            except NimbusUnreachable as error:
                seen_status.append(f"Nimbus unreachable: {error}")
                return False
            return seen_status[-1] == "ACTIVE"

        wait_until(
            topology_active,
            machine_timeout(120),
            f"Nimbus to answer with {name} ACTIVE after the ZooKeeper restart",
            lambda: f"(last seen: {seen_status[-1] if seen_status else 'nothing'})",
        )
        acked = _acked(cluster, name)
        wait_until(
            lambda: _acked(cluster, name) > acked,
            machine_timeout(90),
            f"{name}'s acked count to grow after the ZooKeeper restart",
        )
    finally:
        aggregation.stop(aggregator)
        # Storm's own daemons may not survive the outage (a timer or a heartbeat on a lost
        # connection halts Nimbus or a supervisor): the later tests need all of them
        if restart_exited_nimbus(cluster):
            print("zookeeper restart: Nimbus had exited; started again")
        cluster.kill(name)
        restarted = restart_exited_supervisors(cluster)
        if restarted:
            print(f"zookeeper restart: supervisor(s) {restarted} had exited; started again")


def _zookeeper_tail(cluster) -> str:
    """The end of the restarted ZooKeeper's output (``logs/zookeeper.out``)."""
    out = cluster.directory / "logs" / "zookeeper.out"
    lines = out.read_text(errors="replace").splitlines() if out.exists() else ["(no output)"]
    return "\n".join(lines[-15:])


def _trigger_stale(cluster, name: str) -> str:
    """Why the brain's reconfiguration trigger ignores ``name``'s aggregate (the status's
    ``trigger.stale_aggregates``), or ``""``."""
    trigger = (_brain_status(cluster) or {}).get("trigger") or {}
    return (trigger.get("stale_aggregates") or {}).get(name, "")


def test_aggregation_killed_its_stale_aggregate_gives_declared_costs_and_no_trigger(faults):
    """``scheduler-py aggregate --every 5s`` SIGKILLed: once its last aggregate is older than
    the topology's ``scheduler.brain.metrics.max.age.secs`` (60 s × the machine's load) the
    brain prices on declared costs and says why with the age (``replan --dry-run``, and the
    plan log and Storm status of a placement: a ``storm rebalance``), the trigger ignores the
    aggregate (the status's trigger state names it, nothing in the history); started again,
    the aggregation brings measured costs back."""
    cluster = faults
    # a Spark run of the aggregation takes ~20 s on an idle machine and minutes on a loaded
    # one: the aggregate must be fresh when written, and stale soon after the kill
    name, max_age = "wc-stale", round(machine_timeout(60))
    cluster.start_brain(*cluster.brain_command("--reconfig-check-secs", "2"))
    probe = ZooKeeperProbe(aggregation.zookeeper(cluster))
    aggregator = aggregation.start_periodic(cluster, "stale")
    try:
        topology_id = cluster.submit(
            name,
            "topology.workers=2",
            "scheduler.brain.algorithm=even",
            f"scheduler.brain.metrics.max.age.secs={max_age}",
            "scheduler.reconfig.replan.on.measured=false",
            *MONITOR_OPTIONS,
            wait_acked=5,
        )
        wait_until(
            lambda: _dry_run_costs(cluster, name).startswith("measured"),
            machine_timeout(300),
            "a first aggregate and the brain pricing the topology with measured costs",
            lambda: f"(costs: {_dry_run_costs(cluster, name)})",
        )
        wait_until(
            lambda: not _trigger_stale(cluster, name),
            machine_timeout(30),
            "the trigger to watch the fresh aggregate (its checks run every 2 s)",
            lambda: f"(trigger: {_trigger_stale(cluster, name)!r})",
        )
        last_ms = probe.look(lambda s: s.read_aggregate(topology_id))["computed_at_ms"]
        aggregation.stop(aggregator, signal.SIGKILL)
        killed, killed_ms = time.monotonic(), int(time.time() * 1000)
        note = (
            f" (last aggregate {(killed_ms - last_ms) / 1000:.1f} s old at the kill, "
            f"{MAX_AGE_KEY} = {max_age})"
        )

        costs = wait_until(
            lambda: (c := _dry_run_costs(cluster, name)).startswith("declared (stale") and c,
            max_age + machine_timeout(90),
            "the brain to price the topology on declared costs (stale aggregate)",
            lambda: f"(costs: {_dry_run_costs(cluster, name)})",
        )
        _report(
            "aggregation killed",
            "brain plans on declared costs (stale)",
            time.monotonic() - killed,
            note,
        )
        print(f"aggregation killed: the brain plans on {costs}")
        assert f"s old > {MAX_AGE_KEY} = {max_age})" in costs, costs
        ignored = wait_until(
            lambda: _trigger_stale(cluster, name),
            machine_timeout(60),
            "the trigger state to name the stale aggregate",
        )
        _report(
            "aggregation killed",
            "trigger ignores the stale aggregate",
            time.monotonic() - killed,
            note,
        )
        assert ignored.startswith("stale: ") and f"> {MAX_AGE_KEY} = {max_age}" in ignored, ignored

        # a placement made now (Storm's rebalance) is planned on declared costs and says why
        rebalanced_ms = int(time.time() * 1000)
        cluster.nimbus.rebalance(name, 0)
        plans = wait_until(
            lambda: plans_since(cluster, topology_id, rebalanced_ms, "PLACE"),
            machine_timeout(120),
            f"the brain to place {name} again after `storm rebalance`",
        )
        assert "costs: declared (stale: " in plans[-1]["reason"], plans[-1]["reason"]
        status = wait_until(
            lambda: "costs: declared (stale: " in (st := _status(cluster, name)) and st,
            machine_timeout(60),
            "Storm's status of the topology to say it was planned on declared costs",
            lambda: f"(status: {_status(cluster, name)!r})",
        )
        print(f"aggregation killed: Storm's status says {status!r}")
        # several trigger checks (every 2 s) on the stale aggregate: no reconfiguration
        _wait_rounds(cluster, 2, "trigger checks on the stale aggregate")
        assert _trigger_stale(cluster, name).startswith("stale: ")
        # only the change trigger reads the aggregate; a supervisor that missed heartbeats
        # (this module's ZooKeeper restart, a loaded machine) may fire the membership trigger,
        # which is not what this test is about (seen once in CI: a supervisor "not alive" for
        # a few seconds, then a re-plan on membership)
        fired = [
            entry
            for entry in History(cluster.brain_state_dir).entries(name)
            if entry.get("trigger") != "membership"
        ]
        assert fired == [], f"the trigger fired on the stale aggregate: {fired}"
        wait_until(
            lambda: cluster.nimbus.status(name) == "ACTIVE", machine_timeout(60), f"{name} active"
        )

        # recovery: the aggregation started again brings measured costs back
        aggregator = aggregation.start_periodic(cluster, "stale")
        restarted = time.monotonic()
        wait_until(
            lambda: (
                _dry_run_costs(cluster, name).startswith("measured")
                and not _trigger_stale(cluster, name)
            ),
            machine_timeout(300),
            "measured costs again and the trigger watching the aggregate again",
            lambda: (
                f"(costs: {_dry_run_costs(cluster, name)}, "
                f"trigger: {_trigger_stale(cluster, name)!r})"
            ),
        )
        _report(
            "aggregation restarted",
            "brain plans on measured costs again",
            time.monotonic() - restarted,
        )
        acked = _acked(cluster, name)
        wait_until(
            lambda: _acked(cluster, name) > acked,
            machine_timeout(90),
            f"{name}'s acked count to grow",
        )
    finally:
        aggregation.stop(aggregator)
        cluster.kill(name)
        cluster.start_brain()


def test_slow_brain_falls_back_once_and_the_next_rounds_use_the_brain(faults, tmp_path):
    cluster = faults
    name, later = "wc-slow", "wc-after-slow"
    flag = tmp_path / "slow"
    flag.touch()
    cluster.start_brain(
        sys.executable,
        "-m",
        "tests.cluster.slow_brain",
        "--port",
        str(cluster.brain_port),
        "--flag",
        str(flag),
        "--delay",
        str(SHIM_TIMEOUT_S + 3),
        "--plan-log",
        str(cluster.plan_log),
        "--cluster-dir",
        str(cluster.directory),
    )
    try:
        topology_id = cluster.submit(name, "topology.workers=2", "scheduler.brain.algorithm=td")
        first = wait_until(
            lambda: _placement(cluster, name),
            machine_timeout(2 * ROUND_SECS + 30),
            f"{name} to be assigned",
        )
        status = _status(cluster, name)
        assert status.startswith(FALLBACK_STATUS), status
        assert f"did not reply within {SHIM_TIMEOUT_S * 1000} ms" in status, status
        assert _assignments_logged(cluster, topology_id) == 1

        assert not _shim_adopted(cluster, topology_id)
        flag.unlink()
        started = time.monotonic()
        wait_until(
            lambda: _shim_adopted(cluster, topology_id),
            machine_timeout(3 * ROUND_SECS + 60),
            "a round the brain answers in time (the shim keeps the fallback's placement)",
            lambda: f"(status: {_status(cluster, name)!r})",
        )
        _report("slow brain", "brain round again", time.monotonic() - started)
        # the brain keeps the fallback's placement: Nimbus assigned the topology once; the
        # status keeps saying why the brain did not place it (RoundReporter.adopted)
        _wait_rounds(cluster, 3, "after the brain is fast again")
        status = _status(cluster, name)
        assert status.startswith(FALLBACK_STATUS), status
        assert _placement(cluster, name) == first, "the topology was placed again"
        assert _assignments_logged(cluster, topology_id) == 1, "Nimbus assigned it twice"
        # the late rounds' plans were never applied: the brain does not claim them
        assert plans_since(cluster, topology_id, 0, "PLACE") == [], (
            "the plan log claims a late round's plan"
        )

        cluster.submit(later, "topology.workers=1", "scheduler.brain.algorithm=td")
        assert _status(cluster, later).startswith(BRAIN_STATUS), _status(cluster, later)
        assert placed_by_brain(cluster, later)
        assert _placement(cluster, name) == first
    finally:
        flag.unlink(missing_ok=True)
        cluster.start_brain()
        cluster.kill(name)
        cluster.kill(later)
