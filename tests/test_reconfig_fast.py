"""The fast reconfiguration path's controller logic: drain counting only fresh publications,
the rebalance path confirmed by Nimbus's assignment, staging, the measured gain with its
back-off, and what the history says when a plan did not take effect."""

from __future__ import annotations

import dataclasses
import time

import pytest

from scheduler_py.model.types import WorkerSlot
from scheduler_py.reconfig import measured_gain
from scheduler_py.reconfig.controller import Controller
from scheduler_py.reconfig.execution import (
    Steps,
    drain,
    old_workers_gone,
    placement_now,
    spout_workers,
)
from scheduler_py.reconfig.history import History
from scheduler_py.reconfig.staging import _apply, restart_limit, slot_groups, stage
from scheduler_py.reconfig.trigger import TriggerConfig
from scheduler_py.scheduling.interfaces import LiveTask, LiveWorker
from scheduler_py.scheduling.proposal import propose
from scheduler_py.scheduling.round import RoundConfig
from scheduler_py.service.snapshot import to_state
from tests.snapshots import answer, snapshot, supervisor, view_of, wordcount
from tests.test_reconfig_controller import SPREAD, FakeNimbus, _cluster

FAST = TriggerConfig(
    drain_poll_secs=0.001, drain_timeout_secs=2.0, apply_timeout_secs=3.0, warmup_secs=0
)


def _worker(
    key: str,
    ts: int,
    started: int = 1,
    pending: int = 0,
    acked: int = 0,
    thrift_port: int | None = None,
) -> LiveWorker:
    task = LiveTask(1, "spout", True, 0, 0, acked, 0, pending)
    supervisor = key.split(":")[0]
    return LiveWorker(supervisor, "h", 6700, ts, started, ts, (task,), "", thrift_port)


class Publications:
    """Two workers publishing at different times: most polls see one of them stale."""

    def __init__(self):
        self.polls = 0

    def __call__(self, topology_id):
        self.polls += 1
        return {
            "s1:6700": _worker("s1:6700", self.polls),  # publishes every poll
            "s2:6700": _worker("s2:6700", self.polls // 3),  # every third poll
        }


def _steps(live, nimbus=None):
    clock = iter(i * 0.01 for i in range(100_000))
    return Steps(
        nimbus or FakeNimbus(),
        live,
        lambda plan: None,
        lambda topology_id: None,
        lambda holds, timeout: False,
        clock=lambda: next(clock),
        sleep=lambda s: None,
    )


def test_drain_skips_polls_where_a_worker_has_not_published_again():
    topo = wordcount(current=[(t, t, f"s{(t - 1) % 2 + 1}", 6700) for t in range(1, 12)])
    proposal = propose(view_of(_cluster_two(topo)), "td", {})
    live = Publications()
    drained, detail = drain(_steps(live), topo.id, proposal, FAST)
    assert drained, detail
    # s2 publishes at polls 3 and 6: the stale polls in between neither count nor reset,
    # so the two quiet comparisons are poll 1 -> 3 and poll 3 -> 6
    assert live.polls == 6, live.polls
    assert "polls" in detail


def _cluster_two(topology):
    owners = {6700: topology.id}
    return snapshot([supervisor(f"s{i}", owners=owners) for i in (1, 2, 3)], [topology])


def test_drain_restarts_counting_when_something_moves():
    topo = wordcount(current=SPREAD, needs_scheduling=False)
    proposal = propose(view_of(_cluster(topo)), "td", {})
    acked = iter([0, 5, 5, 9, 9, 9, 9, 9, 9, 9, 9, 9])
    polls = []

    def live(topology_id):
        polls.append(1)
        value = next(acked)
        return {f"s{i}:6700": _worker(f"s{i}:6700", len(polls), acked=value) for i in (1, 2, 3)}

    drained, _ = drain(_steps(live), topo.id, proposal, FAST)
    assert drained and len(polls) == 6  # quiet from poll 4 on: polls 5 and 6 are the 2 quiet


class RebalancingNimbus(FakeNimbus):
    """Nimbus whose rebalance runs a scheduling round at once and reports the assignment."""

    def __init__(self, controller_ref, topology):
        super().__init__()
        self.controller_ref = controller_ref
        self.topology = topology
        self.cluster = _cluster

    def rebalance(self, name, wait_secs=0):
        super().rebalance(name, wait_secs)
        controller = self.controller_ref[0]
        cluster = self.cluster(self.topology)
        reply, records = answer(cluster, RoundConfig(), controller.armed())
        controller.observe_round(to_state(cluster), records)
        plan = reply.plans[0]
        self.placed = {
            (p.executor.task_start, p.executor.task_end, p.supervisor_id, p.port)
            for p in plan.placements
        }

    def assignment(self, name):
        return frozenset(getattr(self, "placed", ()))


def test_rebalance_path_is_confirmed_by_nimbus_assignment_without_waiting_for_a_round(tmp_path):
    topo = wordcount(current=SPREAD, needs_scheduling=False)
    ref: list = []
    nimbus = RebalancingNimbus(ref, topo)
    started = int(time.time() * 1000) - 60_000

    def live(topology_id):
        now = int(time.time() * 1000)
        if "rebalance 0" not in nimbus.calls:  # the old workers
            return {f"s{i}:6700": _worker(f"s{i}:6700", now, started) for i in (1, 2, 3)}
        return {  # the planned workers, started after the rebalance
            f"{sup}:{port}": _worker(f"{sup}:{port}", now, now - 1)
            for _, _, sup, port in nimbus.placed
        }

    warming = dataclasses.replace(FAST, warmup_secs=90.0)
    controller = Controller(RoundConfig(), warming, History(tmp_path), nimbus, live=live)
    ref.append(controller)
    controller.observe_round(to_state(_cluster(topo)), answer(_cluster(topo), RoundConfig())[1])
    controller.replan("wc", "td")
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        entry = controller.history_of("wc")[-1]
        if entry.get("state") == "completed":
            break
        time.sleep(0.02)
    assert entry["state"] == "completed", entry
    assert nimbus.calls == ["deactivate", "rebalance 0", "activate"]
    assert entry["workers_restarted_measured"] >= 1
    assert entry["stages"] == 1 and "measured_before" in entry
    # the td plan puts everything in one worker that restarts: resumed as soon as the old
    # processes are gone, before the new one is up (Storm gates its spouts on connections)
    assert entry["early_resume"] is True
    # its measured gain waits for a window that starts once the new worker has warmed up
    follow = controller._follow[topo.id]
    assert follow.measure_from_ms == int((entry["resumed_at"] + 90.0) * 1000)


def test_slot_groups_link_slots_that_exchange_executors():
    a, b, c, d = (WorkerSlot(n, 6700) for n in "abcd")
    running = {"x": a, "y": b, "z": c, "w": d}
    planned = {"x": b, "y": a, "z": c, "w": d}  # a and b swap; c, d unchanged
    assert slot_groups(running, planned) == [frozenset({a, b})]
    planned2 = {"x": b, "y": a, "z": d, "w": c}
    groups = slot_groups(running, planned2)
    assert groups == [frozenset({a, b}), frozenset({c, d})]
    first = _apply(running, planned2, groups[0])
    assert first == {"x": b, "y": a, "z": c, "w": d}  # only the first group changes


def test_restart_limit_is_a_share_of_the_workers_at_least_one():
    assert restart_limit(3, 0.5) == 1
    assert restart_limit(10, 0.5) == 5
    assert restart_limit(2, 0.0) == 1


def test_a_plan_within_the_limit_is_not_staged():
    topo = wordcount(current=SPREAD, needs_scheduling=False)
    proposal = propose(view_of(_cluster(topo)), "td", {})
    assert stage(proposal, 1.0) == (proposal, 1)


def test_a_single_group_larger_than_the_limit_is_one_stage():
    current = [(t, t, "s1", 6700) for t in range(1, 12)]
    topo = wordcount(current=current, needs_scheduling=False)
    proposal = propose(view_of(_cluster(topo)), "even", {})
    assert proposal.workers_restarted == 3
    first, stages = stage(proposal, 0.1)
    assert stages == 1 and first.workers_restarted == 3


def _aggregate(share_pairs, computed=1000, start=0):
    """executors 1-1 on s1, 2-2 on s1, 3-3 on s2; pairs as (src task, dst task, tuples/s)"""
    where = {1: "s1", 2: "s1", 3: "s2"}
    return {
        "computed_at_ms": computed,
        "window_start_ms": start,
        "executors": [
            {"task_start": t, "task_end": t, "supervisor_id": n, "port": 6700}
            for t, n in where.items()
        ],
        "pairs": [{"src": [s, s], "dst": [d, d], "tuples_per_s": r} for s, d, r in share_pairs],
    }


def test_measured_share_and_negative_gain():
    before = measured_gain.measure(_aggregate([(1, 2, 10.0), (1, 3, 30.0)]))
    assert before.share == pytest.approx(0.75)
    better = measured_gain.measure(_aggregate([(1, 2, 36.0), (1, 3, 4.0)]))
    worse = measured_gain.measure(_aggregate([(1, 2, 2.0), (1, 3, 38.0)]))
    predicted = {"total_traffic": 40.0, "interworker_before": 30.0, "interworker_after": 4.0}
    good = measured_gain.compare(before, better, predicted)
    assert good["gain"] == pytest.approx(0.65) and not good["negative"]
    assert good["predicted_share_after"] == pytest.approx(0.1)
    bad = measured_gain.compare(before, worse, predicted)
    assert bad["negative"] and "NEGATIVE" in measured_gain.summary(bad)
    assert measured_gain.measure({"pairs": []}) is None
    # a plan judged on throughput: the share may rise, the throughput must not fall
    on_rate = predicted | {"objective": "throughput"}
    slower = measured_gain.measure(_aggregate([(1, 2, 2.0), (1, 3, 30.0)]))
    assert not measured_gain.compare(before, worse, on_rate)["negative"]
    regret = measured_gain.compare(before, slower, on_rate)
    assert regret["negative"] and regret["throughput_ratio"] == pytest.approx(0.8)
    assert "NEGATIVE throughput ×0.80" in measured_gain.summary(regret)
    assert "NEGATIVE gain" not in measured_gain.summary(regret)
    assert measured_gain.is_after(_aggregate([], start=5000), 5000)
    assert not measured_gain.is_after(_aggregate([], start=4999), 5000)


class Aggregates:
    def __init__(self):
        self.doc = None

    def aggregate(self, topology_id):
        return self.doc

    def costs_for(self, topology, storm_executor, conf):
        return topology, "declared (test)"

    def stale(self, aggregate, conf):
        return None

    def close(self):
        pass


def test_a_negative_measured_gain_is_recorded_and_the_controller_backs_off(tmp_path):
    costs = Aggregates()
    topo = wordcount(current=SPREAD, needs_scheduling=False)
    controller = Controller(
        RoundConfig(costs=costs),
        FAST,
        History(tmp_path),
        FakeNimbus(),
        references=lambda tid, agg: None,
    )
    controller.observe_round(to_state(_cluster(topo)), answer(_cluster(topo), RoundConfig())[1])
    controller.history.record(
        "wc",
        "r1",
        state="completed",
        topology_id=topo.id,
        measured_before={
            "computed_at_ms": 1,
            "window_start_ms": 0,
            "interworker_tuples_per_s": 10.0,
            "total_tuples_per_s": 40.0,
        },
        report={"total_traffic": 40.0, "interworker_before": 30.0, "interworker_after": 4.0},
    )
    from scheduler_py.reconfig.follow_up import FollowUp

    controller._follow[topo.id] = FollowUp("r1", "wc", 5000)
    costs.doc = _aggregate([(1, 3, 40.0)], computed=9000, start=4000)  # too early
    controller.check_once()
    assert "measured" not in controller.history_of("wc")[-1]
    costs.doc = _aggregate([(1, 3, 40.0)], computed=9001, start=6000)
    controller.check_once()
    measured = controller.history_of("wc")[-1]["measured"]
    assert measured["negative"] and measured["gain"] == pytest.approx(-0.75)
    assert controller._watches[topo.id].quiet_until >= time.time() + 3000


def test_history_shows_the_measured_gain_and_the_stages():
    from scheduler_py.cli.operator import render_history

    before = measured_gain.measure(_aggregate([(1, 2, 10.0), (1, 3, 30.0)]))
    after = measured_gain.measure(_aggregate([(1, 2, 36.0), (1, 3, 4.0)]))
    entry = {
        "started": 0,
        "trigger": "change",
        "state": "completed",
        "pause_secs": 2.4,
        "measured": measured_gain.compare(before, after, {}),
        "stages": 3,
        "plan_workers_restarted": 4,
    }
    text = render_history([entry])
    assert "2.4s" in text
    assert "measured inter-worker 75% → 10% (gain +65 points)" in text
    assert "stage 1 of up to 3 (the whole plan restarts 4 workers)" in text


def test_early_resume_waits_only_for_old_workers_that_ran_a_spout():
    # SPREAD runs the spout's two tasks (10, 11) on s1 and s2; td moves everything into one
    # worker, so every old worker stops or restarts. A supervisor may learn that only at its own
    # sync timer (a rebalance notifies the new assignment's supervisors): s3's old worker holds
    # no spout, so the resume must not wait for it, but it must wait for s1's and s2's.
    topo = wordcount(current=SPREAD, needs_scheduling=False)
    proposal = propose(view_of(_cluster(topo)), "td", {})
    assert spout_workers(proposal) == {"s1:6700", "s2:6700"}
    stale = {"s3:6700": _worker("s3:6700", 5, started=1)}
    assert old_workers_gone(_steps(lambda topology_id: stale), proposal, 0.5, FAST)

    with_spout = stale | {"s2:6700": _worker("s2:6700", 5, started=1)}
    assert not old_workers_gone(_steps(lambda topology_id: with_spout), proposal, 0.5, FAST)

    restarted = stale | {"s2:6700": _worker("s2:6700", 5, started=10_000)}
    assert old_workers_gone(_steps(lambda topology_id: restarted), proposal, 0.5, FAST)


class SyncingNimbus(RebalancingNimbus):
    """Rebalances at once; refuses to sync the supervisors named in ``refuse``."""

    def __init__(self, controller_ref, topology, refuse=()):
        super().__init__(controller_ref, topology)
        self.refuse = set(refuse)

    def sync_supervisor(self, supervisor_id, host, port):
        if supervisor_id in self.refuse:
            raise ConnectionRefusedError(f"{host}:{port} refused")
        super().sync_supervisor(supervisor_id, host, port)


def _run_replan(tmp_path, topo, nimbus, ref, cluster, unpublished=()):
    """replan word count to td; the old workers publish their supervisor's Thrift port (s1 at
    6628, ...) unless their supervisor is in ``unpublished``"""
    started = int(time.time() * 1000) - 60_000

    def live(topology_id):
        now = int(time.time() * 1000)
        old = {  # the old workers run until their supervisor is synced (or forever here)
            f"s{i}:6700": _worker(
                f"s{i}:6700", now, started, thrift_port=None if f"s{i}" in unpublished else 6627 + i
            )
            for i in (1, 2, 3)
        }
        if "rebalance 0" not in nimbus.calls:
            return old
        planned = {f"{sup}:{port}" for _, _, sup, port in nimbus.placed}
        # Nimbus pushes the new assignment to its own supervisors; the others learn it from the
        # controller's sync (or their timer, never within this test)
        told = {sup for _, _, sup, _ in nimbus.placed}
        told |= {call.split()[1] for call in nimbus.calls if call.startswith("sync ")}
        running = {k: w for k, w in old.items() if w.supervisor_id not in told}
        return running | {k: _worker(k, now, now - 1) for k in planned}

    controller = Controller(RoundConfig(), FAST, History(tmp_path), nimbus, live=live)
    ref.append(controller)
    controller.observe_round(to_state(cluster), answer(cluster, RoundConfig())[1])
    controller.replan("wc", "td")
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        entry = controller.history_of("wc")[-1]
        if entry.get("state") == "completed":
            return entry
        time.sleep(0.02)
    raise AssertionError(f"the replan did not complete in 10 s: {entry}")


def test_supervisors_the_plan_vacates_are_synced_once_it_is_in_effect(tmp_path):
    # td puts all of word count into one worker: two of the three supervisors lose every
    # worker of the topology, and Nimbus's rebalance notifies only the new one; the controller
    # hands the other two their assignments itself, after the rebalance, before the resume
    topo = wordcount(current=SPREAD, needs_scheduling=False)
    ref: list = []
    nimbus = SyncingNimbus(ref, topo)
    entry = _run_replan(tmp_path, topo, nimbus, ref, _cluster(topo))
    kept = {p[2] for p in nimbus.placed}
    assert len(kept) == 1
    vacated = sorted({"s1", "s2", "s3"} - kept)
    expected = [f"sync {s} {s}:{6627 + int(s[1])}" for s in vacated]
    assert nimbus.calls == ["deactivate", "rebalance 0", *expected, "activate"]
    assert entry["supervisors_synced"] == vacated
    assert entry["early_resume"] is True  # the old spout workers were gone at once


def test_a_supervisor_that_cannot_be_synced_only_delays_the_resume(tmp_path, caplog):
    topo = wordcount(current=SPREAD, needs_scheduling=False)
    ref: list = []
    nimbus = SyncingNimbus(ref, topo, refuse={"s1", "s2", "s3"})
    with caplog.at_level("WARNING"):
        entry = _run_replan(tmp_path, topo, nimbus, ref, _cluster(topo), unpublished={"s3"})
    assert entry["state"] == "completed" and entry["supervisors_synced"] == []
    assert nimbus.calls == ["deactivate", "rebalance 0", "activate"]
    # the old spout workers never went away here: no early resume, the topology still resumed
    assert not entry.get("early_resume")
    refused = [r for r in caplog.records if "could not hand supervisor" in r.getMessage()]
    kept = {p[2] for p in nimbus.placed}
    # s3's workers published no Thrift port: not even tried; the others were refused
    assert len(refused) == len({"s1", "s2"} - kept)
    assert all("own sync timer" in r.getMessage() for r in refused)


class AssigningNimbus(FakeNimbus):
    """Nimbus whose assignment is a fixed set of (task start, task end, supervisor, port)."""

    def __init__(self, assigned):
        super().__init__()
        self.assigned = assigned

    def assignment(self, name):
        return self.assigned


def test_a_plan_not_in_effect_says_unchanged_only_when_nimbus_shows_the_running_placement():
    topo = wordcount(current=SPREAD, needs_scheduling=False)
    proposal = propose(view_of(_cluster(topo)), "td", {})
    running = frozenset(
        (p.executor.task_start, p.executor.task_end, p.supervisor_id, p.port) for p in topo.current
    )
    unchanged = placement_now(_steps(None, AssigningNimbus(running)), proposal)
    assert unchanged == "with the placement unchanged"
    elsewhere = frozenset((s, e, "s3", 6702) for s, e, _, _ in running)
    fallback = placement_now(_steps(None, AssigningNimbus(elsewhere)), proposal)
    assert "Storm chose" in fallback and "unchanged" not in fallback
    unknown = placement_now(_steps(None, AssigningNimbus(None)), proposal)
    assert "cannot show" in unknown and "unchanged" not in unknown
