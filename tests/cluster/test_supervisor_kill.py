"""A supervisor killed under load, with the message-id ledger (docs/reliability.md).

Word count (two spout tasks) runs on the three supervisors of the local cluster, placed by
the brain with ``even``, its spouts writing every message id to a ledger
(scheduler_py/devtools/ledger.py). The test SIGKILLs a supervisor with its workers (its
process group, test_monitoring.py's helper) and checks:

* Nimbus reassigns the executors that ran there, placed by the brain: timed from the kill,
  and counted in Nimbus scheduling rounds (``nimbus.monitor.freq.secs``, 5 s on the test
  cluster, deploy/cluster-up.sh) after the brain's snapshot lost the supervisor;
* the brain's first plan after the kill (its plan log) does not use the dead supervisor;
* every message id emitted by a spout process that survived is acked (tuples that died in
  the killed worker time out, are failed and replayed: replays allowed).

The victim is a supervisor that runs no spout executor, so every spout process survives
and its in-flight ids can still be acked. (A spout that dies with its supervisor takes its
pending ids with it: its replacement is a new process that never saw them, so they could
only be counted as lost, see ``LedgerSummary.unacked_by_file``.)
"""

from __future__ import annotations

import json
import os
import time

import pytest

from scheduler_py.devtools.ledger import read_ledgers
from scheduler_py.service.client import call_brain
from tests.cluster.operations import (
    kill_supervisor,
    plans_since,
    start_supervisor,
    supervisor_index,
    wait_for_free_supervisors,
    wordcount_files,
)
from tests.cluster.waiting import machine_timeout, wait_until

pytestmark = pytest.mark.cluster

NAME = "wc-supervisor-kill"
ROUND_SECS = 5  # nimbus.monitor.freq.secs of the test cluster (deploy/cluster-up.sh)
# a tuple tree that died in the killed worker is failed (and replayed) after this
MESSAGE_TIMEOUT_SECS = 15
EXECUTORS = 2 + 3 + 3 + 3  # 2 spouts, 3 split, 3 count, 3 ackers


def _brain_status(cluster) -> dict:
    return json.loads(call_brain(f"127.0.0.1:{cluster.brain_port}", "status", timeout_ms=10_000))


def _ledger_pid(name: str) -> int:
    """The spout process of a ledger file ``<component>-<task>-<pid>-<start_ns>.ledger``."""
    return int(name.split("-")[-2])


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.fixture()
def loaded(cluster, tmp_path):
    control, ledger = tmp_path / "control.json", tmp_path / "ledger"
    control.write_text(json.dumps({"interval_ms": 20}))
    cluster.start_brain()

    wait_for_free_supervisors(cluster)  # an earlier test may have restarted one
    try:
        topology_id = cluster.submit(
            NAME,
            "topology.workers=3",
            "topology.max.spout.pending=50",
            f"topology.message.timeout.secs={MESSAGE_TIMEOUT_SECS}",
            "scheduler.brain.algorithm=even",
            # the brain places it; the reconfiguration controller leaves it alone
            "scheduler.reconfig.enabled=false",
            "scheduler.reconfig.replan.on.measured=false",
            *wordcount_files(control, ledger),
            wait_acked=20,
        )
        yield cluster, topology_id, ledger
    finally:
        cluster.kill(NAME)


def test_killed_supervisor_executors_reassigned_and_surviving_spouts_lose_nothing(loaded):
    cluster, topology_id, ledger = loaded
    wait_until(
        lambda: len(cluster.nimbus.executor_runs(NAME)) == EXECUTORS,
        machine_timeout(60),
        f"all {EXECUTORS} executors running",
    )
    runs = cluster.nimbus.executor_runs(NAME)
    hosts = {r.host for r in runs}
    assert len(hosts) == 3, f"even should use the three supervisors: {runs}"
    spout_hosts = {r.host for r in runs if r.component == "sentences"}
    # a supervisor without a spout: every spout process survives the kill
    victim = max(hosts - spout_hosts, key=supervisor_index)
    index = supervisor_index(victim)
    victim_id = {h: s for s, h in cluster.nimbus.supervisor_hosts().items()}[victim]
    lost = sorted((r.component, r.task_start) for r in runs if r.host == victim)
    acked = read_ledgers(ledger).acked
    wait_until(
        lambda: read_ledgers(ledger).acked >= acked + 100,
        machine_timeout(60),
        "100 more message ids acked before the kill (the topology is under load)",
    )
    round_at_kill = _brain_status(cluster)["round"]
    killed_ms = int(time.time() * 1000)
    killed = time.monotonic()
    kill_supervisor(cluster, index)
    try:
        gone: list[tuple[int, float]] = []  # (brain round, seconds after the kill)

        def reassigned():
            status = _brain_status(cluster)
            if not gone and victim not in {s["host"] for s in status["supervisors"]}:
                gone.append((status["round"], time.monotonic() - killed))
            now = cluster.nimbus.executor_runs(NAME)
            if gone and len(now) == EXECUTORS and all(r.host != victim for r in now):
                return status["round"], time.monotonic() - killed
            return None

        # Nimbus drops the supervisor after nimbus.supervisor.timeout.secs and its workers
        # after nimbus.task.timeout.secs (30 s each, deploy/storm.yaml.template)
        done_round, seconds = wait_until(
            reassigned,
            machine_timeout(180),
            f"the executors on the killed supervisor-{index} ({victim}) to be reassigned",
            lambda: f"(the brain's snapshot lost it: {gone or 'not yet'})",
        )
        gone_round, gone_secs = gone[0]
        rounds = done_round - gone_round
        print(
            f"\nrecovery: supervisor killed → its {len(lost)} executors {lost} reassigned in "
            f"{seconds:.1f} s ({seconds / ROUND_SECS:.1f} Nimbus rounds of {ROUND_SECS} s; the "
            f"brain's snapshot lost supervisor-{index} after {gone_secs:.1f} s, "
            f"{gone_round - round_at_kill} rounds after the kill, and the executors were "
            f"reassigned {rounds} round(s) later)"
        )
        assert rounds <= 2, f"reassigned {rounds} rounds after the brain's snapshot lost it"
        status = cluster.nimbus.topology_state(NAME).sched_status or ""
        assert status.startswith("Scheduled by scheduler-py brain"), status

        # the brain's first plan after the kill does not use the dead supervisor
        plans = plans_since(cluster, topology_id, killed_ms, "PLACE")
        assert plans, "no plan of the brain in its plan log since the kill"
        used = {supervisor for supervisor, _ in plans[0]["storm_placement"].values()}
        assert victim_id not in used, f"the brain planned onto the dead {victim}: {plans[0]}"

        # every id of the surviving spout processes is acked (replays allowed)
        acked = read_ledgers(ledger).acked
        wait_until(
            lambda: read_ledgers(ledger).acked >= acked + 100,
            machine_timeout(90),
            "100 more message ids acked after the reassignment",
        )
        cluster.nimbus.deactivate(NAME)

        def surviving_all_acked():
            summary = read_ledgers(ledger)
            dead = {f for f in summary.files if not _alive(_ledger_pid(f))}
            pending = any(summary.unacked_by_file.get(f) for f in summary.files if f not in dead)
            return summary.emitted > 0 and not pending and (summary, dead)

        summary, dead = wait_until(
            surviving_all_acked,
            # failed trees are replayed after the message timeout
            machine_timeout(3 * MESSAGE_TIMEOUT_SECS + 60),
            "every message id of the surviving spout processes to be acked",
            lambda: read_ledgers(ledger).describe(),
        )
        lost_dead = sum(len(summary.unacked_by_file.get(f, ())) for f in dead)
        print(
            f"recovery: supervisor killed → ledger: {summary.emitted} ids emitted, "
            f"{summary.acked} acked, {len(summary.unacked)} never acked ({lost_dead} of them "
            f"emitted by {len(dead)} spout process(es) that did not survive), "
            f"{summary.failed} fails, {summary.replays} replays, {summary.duplicate_acks} "
            f"duplicate acks, {len(summary.unknown_ids)} unknown, over {len(summary.files)} "
            "spout process(es)"
        )
        # the victim ran no spout, and the brain moved no spout: both spout processes survived
        assert not dead, f"spout processes gone: {sorted(dead)}; {summary.describe()}"
        assert summary.acked == summary.emitted, summary.describe()
        assert not summary.unknown_ids, sorted(summary.unknown_ids)[:10]
        assert summary.duplicate_acks <= summary.replays, summary.describe()
    finally:
        start_supervisor(cluster, index)
        wait_until(
            lambda: len(cluster.nimbus.cluster_summary()["supervisors"]) == 3,
            machine_timeout(120),
            f"supervisor-{index} to register again",
        )
