"""The Storm ⇄ brain loop on a real local cluster: Nimbus, 3 supervisors, ZooKeeper, the
brain, and streamparse word count submitted with ``sparse submit``."""

from __future__ import annotations

import sys
import time

import pytest

from tests.cluster.operations import placed_by_brain
from tests.cluster.waiting import wait_until as _wait

pytestmark = pytest.mark.cluster

ROUND_SECS = 5  # nimbus.monitor.freq.secs of the test cluster (deploy/cluster-up.sh)


def _acked(cluster, name: str) -> int:
    state = cluster.nimbus.topology_state(name)
    return state.acked if state else 0


def _status(cluster, name: str) -> str:
    state = cluster.nimbus.topology_state(name)
    return (state.sched_status or "") if state else ""


def test_wordcount_runs_where_the_brain_placed_it_and_tuples_flow(cluster):
    cluster.submit(
        "wc-brain",
        "scheduler.brain.algorithm=td",
        "scheduler.brain.balance.alpha=1.2",
        wait_acked=20,
    )
    runs = cluster.nimbus.executor_runs("wc-brain")
    # 2 spouts + 3 split + 3 count + 3 ackers, each exactly once
    assert sorted(r.component for r in runs) == sorted(
        ["sentences"] * 2 + ["split"] * 3 + ["count"] * 3 + ["__acker"] * 3
    )
    assert len({(r.task_start, r.task_end) for r in runs}) == len(runs)
    assert placed_by_brain(cluster, "wc-brain"), "Nimbus placement differs from the brain's plan"
    assert _status(cluster, "wc-brain").startswith("Scheduled by scheduler-py brain (algorithm td)")
    first = _acked(cluster, "wc-brain")
    _wait(lambda: _acked(cluster, "wc-brain") > first, 90, "the acked count to grow")
    # the plan is not re-applied every round: the workers keep running
    uptime = {(r.host, r.port) for r in cluster.nimbus.executor_runs("wc-brain")}
    time.sleep(2 * ROUND_SECS)
    assert {(r.host, r.port) for r in cluster.nimbus.executor_runs("wc-brain")} == uptime
    assert placed_by_brain(cluster, "wc-brain")
    cluster.kill("wc-brain")


def test_brain_down_falls_back_then_the_next_topology_is_placed_by_the_brain(cluster):
    cluster.stop_brain()
    try:
        started = time.monotonic()
        cluster.submit("wc-fallback", "topology.workers=2")
        assigned = _wait(
            lambda: cluster.nimbus.executor_runs("wc-fallback"),
            2 * ROUND_SECS + 30,
            "wc-fallback to be assigned",
        )
        assert all(r.port > 0 for r in assigned)
        status = _status(cluster, "wc-fallback")
        assert status.startswith("Fallback to DefaultScheduler"), status
        assert "unreachable" in status, status
        assert time.monotonic() - started < 400
    finally:
        cluster.start_brain()
    cluster.submit("wc-back", "scheduler.brain.algorithm=even", wait_acked=1)
    assert placed_by_brain(cluster, "wc-back")
    assert "(algorithm even)" in _status(cluster, "wc-back")
    # the fallback topology keeps running where DefaultScheduler put it
    assert _status(cluster, "wc-fallback")
    cluster.kill("wc-fallback")
    cluster.kill("wc-back")


@pytest.mark.parametrize("mode", ["duplicate", "dead-supervisor"])
def test_garbage_plan_falls_back_and_nimbus_keeps_running(cluster, mode):
    name = f"wc-{mode}"
    cluster.start_brain(
        sys.executable,
        "-m",
        "tests.cluster.faulty_brain",
        "--port",
        str(cluster.brain_port),
        "--mode",
        mode,
        "--cluster-dir",
        str(cluster.directory),
    )
    try:
        cluster.submit(name, "topology.workers=1")
        _wait(
            lambda: _status(cluster, name).startswith("Fallback"),
            2 * ROUND_SECS + 30,
            f"{name} to fall back",
            lambda: f"(status: {_status(cluster, name)!r})",
        )
        status = _status(cluster, name)
        assert "brain's plan is invalid" in status, status
        expected = "more than once" if mode == "duplicate" else "no-such-supervisor"
        assert expected in status, status
        assert cluster.nimbus.cluster_summary()["nimbuses"], "Nimbus stopped answering"
        assert _acked(cluster, name) >= 1
    finally:
        cluster.start_brain()
        cluster.kill(name)
