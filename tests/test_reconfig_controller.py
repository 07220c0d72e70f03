"""The reconfiguration controller's state machine, with Nimbus and the workers' live
counters scripted (the real-cluster tests in tests/cluster/test_reconfiguration.py run the
same paths against Storm)."""

from __future__ import annotations

import threading
import time

import pytest

from scheduler_py.reconfig.controller import Controller, ReconfigError
from scheduler_py.reconfig.history import History
from scheduler_py.reconfig.trigger import TriggerConfig
from scheduler_py.scheduling.interfaces import LiveTask, LiveWorker
from scheduler_py.scheduling.round import RoundConfig
from scheduler_py.service.snapshot import to_state
from tests.snapshots import aggregate_doc, answer, snapshot, supervisor, wordcount

SPREAD = [(t, t, f"s{(t - 1) % 3 + 1}", 6700) for t in range(1, 12)]
FAST = TriggerConfig(
    drain_poll_secs=0.01, drain_timeout_secs=2.0, apply_timeout_secs=3.0, warmup_secs=0
)


class FakeNimbus:
    def __init__(self, status="ACTIVE"):
        self.calls: list[str] = []
        self.state = status

    def status(self, name):
        return self.state

    def deactivate(self, name):
        self.calls.append("deactivate")
        self.state = "INACTIVE"

    def activate(self, name):
        self.calls.append("activate")
        self.state = "ACTIVE"

    def rebalance(self, name, wait_secs=0):
        self.calls.append(f"rebalance {wait_secs}")

    def assignment(self, name):
        return None  # like a cluster whose supervisors share a host: the round's snapshot tells

    def sync_supervisor(self, supervisor_id, host, port):
        self.calls.append(f"sync {supervisor_id} {host}:{port}")


class ScriptedLive:
    """Pending trees drain away over the first polls; restarted workers come back."""

    def __init__(self, pending=(3, 1, 0)):
        self.pending = list(pending)
        self.polls = 0
        self.workers = {f"s{i}:6700" for i in (1, 2, 3)}
        self.started = int(time.time() * 1000) - 60_000

    def __call__(self, topology_id):
        self.polls += 1
        left = self.pending.pop(0) if len(self.pending) > 1 else self.pending[0]
        now = int(time.time() * 1000)
        if self.polls > 8:  # by then the plan is applied: its workers restarted
            self.started = now - 1
        return {
            key: LiveWorker(
                key.split(":")[0],
                "h",
                6700,
                now + self.polls,
                self.started,
                self.polls,
                (LiveTask(1, "spout", True, 0, 0, 10 - left, 0, left if key == "s1:6700" else 0),),
            )
            for key in self.workers
        }


def _cluster(topology):
    owners = {6700: topology.id}
    return snapshot([supervisor(f"s{i}", owners=owners) for i in (1, 2, 3)], [topology])


def _controller(tmp_path, nimbus, live, trigger=FAST):
    return Controller(
        RoundConfig(),
        trigger,
        History(tmp_path),
        nimbus,
        live=live,
        sleep=lambda s: time.sleep(s),
    )


def _round(controller, snap):
    """What the Thrift handler does each Nimbus round."""
    reply, records = answer(snap, RoundConfig(), controller.armed())
    controller.observe_round(to_state(snap), records)
    return reply


class FakeShim:
    """Plays Nimbus's rounds: applies a PLACE the brain returns, like the Java shim."""

    def __init__(self, controller, topology):
        self.controller = controller
        self.topology = topology
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self.stop.wait(0.05):
            reply = _round(self.controller, _cluster(self.topology))
            plan = reply.plans[0]
            if plan.decision == 1:
                self.topology = wordcount(
                    current=[
                        (p.executor.task_start, p.executor.task_end, p.supervisor_id, p.port)
                        for p in plan.placements
                    ],
                    needs_scheduling=False,
                )

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()


def _wait_terminal(controller, name="wc", timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        entries = controller.history_of(name)
        if entries and entries[-1].get("state") in ("completed", "rolled_back", "failed"):
            return entries[-1]
        time.sleep(0.02)
    raise AssertionError(f"no terminal state: {controller.history_of(name)}")


def test_dry_run_changes_nothing(tmp_path):
    nimbus = FakeNimbus()
    controller = _controller(tmp_path, nimbus, ScriptedLive())
    _round(controller, _cluster(wordcount(current=SPREAD, needs_scheduling=False)))
    report = controller.replan("wc", "td", dry_run=True)
    assert report["dry_run"] and report["workers_after"] < report["workers_before"]
    assert "reconfiguration_id" not in report
    assert nimbus.calls == [] and controller.armed() == {}
    assert controller.history_of("wc") == []


def test_replan_drains_applies_and_resumes(tmp_path):
    nimbus = FakeNimbus()
    live = ScriptedLive()
    controller = _controller(tmp_path, nimbus, live)
    topo = wordcount(current=SPREAD, needs_scheduling=False)
    _round(controller, _cluster(topo))
    with FakeShim(controller, topo) as shim:
        report = controller.replan("wc", "td")
        entry = _wait_terminal(controller)
    assert entry["state"] == "completed", entry
    assert entry["states"] == ["accepted", "draining", "applying", "resuming", "completed"]
    assert nimbus.calls == ["deactivate", "rebalance 0", "activate"]
    assert nimbus.state == "ACTIVE"
    assert entry["id"] == report["reconfiguration_id"]
    assert entry["pause_secs"] >= 0 and "drained after" in entry["drain"]
    applied = {(p[0], p[3], p[4]) for p in entry["storm_placement"]}
    assert {
        (p.executor.task_start, p.supervisor_id, p.port)
        for p in _cluster(shim.topology).topologies[0].current
    } == applied
    assert controller.armed() == {}


def test_drain_timeout_rolls_back_and_resumes(tmp_path):
    nimbus = FakeNimbus()
    controller = _controller(tmp_path, nimbus, ScriptedLive(pending=(5,)))
    _round(controller, _cluster(wordcount(current=SPREAD, needs_scheduling=False)))
    controller.replan("wc", "td")
    entry = _wait_terminal(controller)
    assert entry["state"] == "rolled_back" and "drain did not finish" in entry["reason"]
    assert "pending" in entry["reason"]
    assert nimbus.calls == ["deactivate", "activate"]
    assert controller.armed() == {}


def test_plan_never_in_effect_rolls_back(tmp_path):
    nimbus = FakeNimbus()
    controller = _controller(tmp_path, nimbus, ScriptedLive())
    _round(controller, _cluster(wordcount(current=SPREAD, needs_scheduling=False)))
    controller.replan("wc", "td")  # no shim rounds: Nimbus never applies it
    entry = _wait_terminal(controller)
    assert entry["state"] == "rolled_back" and "did not put the plan in effect" in entry["reason"]
    assert nimbus.calls == ["deactivate", "rebalance 0", "activate"]
    assert controller.armed() == {}


def test_inactive_topology_is_not_touched(tmp_path):
    nimbus = FakeNimbus(status="INACTIVE")
    controller = _controller(tmp_path, nimbus, ScriptedLive())
    _round(controller, _cluster(wordcount(current=SPREAD, needs_scheduling=False)))
    controller.replan("wc", "td")
    entry = _wait_terminal(controller)
    assert entry["state"] == "failed" and "not ACTIVE" in entry["reason"]
    assert nimbus.calls == []


def test_unknown_topology_and_no_round_yet_are_clear_errors(tmp_path):
    controller = _controller(tmp_path, FakeNimbus(), ScriptedLive())
    with pytest.raises(ReconfigError, match="not seen a scheduling round"):
        controller.replan("wc")
    _round(controller, _cluster(wordcount(current=SPREAD, needs_scheduling=False)))
    with pytest.raises(ReconfigError, match=r"no running topology named .nope.*running: wc"):
        controller.replan("nope")


@pytest.mark.parametrize("state", ["draining", "applying"])
def test_a_restarted_brain_resumes_and_records_rollback(tmp_path, state):
    nimbus = FakeNimbus(status="INACTIVE")
    history = History(tmp_path)
    history.record(
        "wc",
        "r1",
        state="accepted",
        topology_id="wc-1",
        storm_placement=[[t, t, "x", "s1", 6700] for t in range(1, 12)],
    )
    history.record("wc", "r1", state=state, deactivated_at=time.time())
    controller = Controller(RoundConfig(), FAST, history, nimbus, sleep=lambda s: None)
    _round(controller, _cluster(wordcount(current=SPREAD, needs_scheduling=False)))
    controller.recover()
    entry = history.entries("wc")[-1]
    assert entry["state"] == "rolled_back" and "brain restarted" in entry["reason"]
    assert nimbus.calls == ["activate"]


def test_a_restarted_brain_records_completion_when_the_plan_is_in_effect(tmp_path):
    nimbus = FakeNimbus(status="INACTIVE")
    history = History(tmp_path)
    components = {e.task_start: e.component for e in wordcount().executors}
    placed = [[t, t, components[t], "s1", 6700] for t in range(1, 12)]
    history.record("wc", "r1", state="accepted", topology_id="wc-1", storm_placement=placed)
    history.record("wc", "r1", state="applying", deactivated_at=time.time())
    controller = Controller(RoundConfig(), FAST, history, nimbus, sleep=lambda s: None)
    current = [(t, t, "s1", 6700) for t in range(1, 12)]
    _round(controller, _cluster(wordcount(current=current, needs_scheduling=False)))
    controller.recover()
    entry = history.entries("wc")[-1]
    assert entry["state"] == "completed" and nimbus.calls == ["activate"]


def test_trigger_declines_and_records_the_numbers(tmp_path):
    """A consolidated topology whose costs 'changed' has nothing better on traffic (a re-plan
    by tdls): declined, logged."""
    from scheduler_py.monitoring.measured import StaticAggregates

    nimbus = FakeNimbus()
    current = [(t, t, "s1", 6700) for t in range(1, 12)]
    topo = wordcount(current=current, needs_scheduling=False)
    now_ms = int(time.time() * 1000)
    measured = StaticAggregates()
    aggregates = measured.aggregates
    controller = Controller(
        RoundConfig(costs=measured),
        TriggerConfig(algorithm="tdls", warmup_secs=0, change_windows=1),
        History(tmp_path),
        nimbus,
        live=ScriptedLive(),
        references=lambda tid, agg: None,
    )
    _round(controller, _cluster(topo))
    for i, change in enumerate((0.0, 0.9)):
        aggregates[topo.id] = aggregate_doc(topo.id, now_ms + i, change)
        controller.check_once()
    entries = controller.history_of("wc")
    assert [e["state"] for e in entries] == ["declined"]
    assert entries[0]["trigger"] == "change"
    assert entries[0]["numbers"]["workers_restarted"] == 0
    assert nimbus.calls == []


def test_a_placement_made_on_declared_costs_is_replanned_on_its_first_steady_aggregate(tmp_path):
    """The brain placed wc before anything was measured; the first aggregate after the warm-up
    fires the `measured` trigger once (judged like any other); a second aggregate does not."""
    measured, controller = _measuring_controller(tmp_path)
    reply = _round(controller, _cluster(wordcount()))  # PLACE on declared costs
    placed = wordcount(
        current=[
            (p.executor.task_start, p.executor.task_end, p.supervisor_id, p.port)
            for p in reply.plans[0].placements
        ],
        needs_scheduling=False,
    )
    _round(controller, _cluster(placed))
    now_ms = int(time.time() * 1000)
    for i in range(2):
        measured.aggregates[placed.id] = aggregate_doc(placed.id, now_ms + i)
        controller.check_once()
    entries = controller.history_of("wc")
    assert [e["trigger"] for e in entries] == ["measured"], entries
    # re-planned by throughput, the algorithm that placed it, on the same costs: the same plan
    assert entries[0]["state"] == "declined" and entries[0]["algorithm"] == "throughput"


def test_a_placement_made_on_measured_costs_is_not_replanned_for_it(tmp_path):
    measured, controller = _measuring_controller(tmp_path)
    placed = wordcount(current=[(t, t, "s1", 6700) for t in range(1, 12)], needs_scheduling=False)
    _round(controller, _cluster(placed))  # KEEP: Storm placed it; no declared-cost plan of ours
    measured.aggregates[placed.id] = aggregate_doc(placed.id, int(time.time() * 1000))
    controller.check_once()
    assert controller.history_of("wc") == []


def _measuring_controller(tmp_path):
    """A controller reading aggregates from memory, no warm-up, no back-off."""
    from scheduler_py.monitoring.measured import StaticAggregates

    measured = StaticAggregates()
    controller = Controller(
        RoundConfig(costs=measured),
        TriggerConfig(warmup_secs=0, decline_backoff_secs=0),
        History(tmp_path),
        FakeNimbus(),
        live=ScriptedLive(),
        references=lambda tid, agg: None,
    )
    return measured, controller


def test_the_trigger_ignores_a_stale_aggregate_and_says_why(tmp_path):
    """The aggregation stopped: its last aggregate (changed by 90 %) grows old; the trigger
    does not fire on it and the trigger state names it with its age. A fresh aggregate saying
    the same fires."""
    measured, controller = _measuring_controller(tmp_path)
    controller.trigger = TriggerConfig(warmup_secs=0, change_windows=1)
    placed = wordcount(current=SPREAD, needs_scheduling=False)
    _round(controller, _cluster(placed))
    now_ms = int(time.time() * 1000)
    measured.aggregates[placed.id] = aggregate_doc(placed.id, now_ms)  # the reference
    controller.check_once()
    old = aggregate_doc(placed.id, now_ms - 400_000, change=0.9)
    measured.aggregates[placed.id] = old | {"window_end_ms": now_ms - 390_000}
    controller.check_once()
    assert controller.history_of("wc") == []
    stale = controller.trigger_state()["stale_aggregates"]
    assert list(stale) == ["wc"] and stale["wc"].startswith("stale: aggregate 4"), stale
    assert "s old > scheduler.brain.metrics.max.age.secs = 180" in stale["wc"]
    measured.aggregates[placed.id] = aggregate_doc(placed.id, now_ms + 1, change=0.9)
    controller.check_once()
    assert [e["trigger"] for e in controller.history_of("wc")] == ["change"]
    assert controller.trigger_state()["stale_aggregates"] == {}


def test_a_throughput_replan_is_accepted_on_the_predicted_rate_and_recorded_with_it(tmp_path):
    """scheduler.reconfig.algorithm=throughput with hosts=all: wc runs on one supervisor; the
    re-plan spreads it (more inter-worker traffic, more CPU), judged on the model's rate, not
    on traffic. (With the default, hosts=packed, its declared resources fit one supervisor,
    so the re-plan keeps it there: ``tests/test_host_cap.py``.)"""
    from scheduler_py.monitoring.measured import StaticAggregates

    nimbus = FakeNimbus()
    packed = wordcount(current=[(t, t, "s1", 6700) for t in range(1, 12)], needs_scheduling=False)
    measured = StaticAggregates()
    controller = Controller(
        RoundConfig(costs=measured, default_params={"throughput": {"hosts": "all"}}),
        TriggerConfig(
            algorithm="throughput",
            warmup_secs=0,
            change_windows=1,
            drain_poll_secs=0.01,
            drain_timeout_secs=2.0,
            apply_timeout_secs=3.0,
        ),
        History(tmp_path),
        nimbus,
        live=ScriptedLive(),
        references=lambda tid, agg: None,
    )
    _round(controller, _cluster(packed))
    now_ms = int(time.time() * 1000)
    with FakeShim(controller, packed):
        for i, change in enumerate((0.0, 0.9)):
            measured.aggregates[packed.id] = aggregate_doc(packed.id, now_ms + i, change)
            controller.check_once()
        entry = _wait_terminal(controller)
    assert entry["trigger"] == "change" and entry["algorithm"] == "throughput", entry
    numbers = entry["numbers"]
    assert numbers["objective"] == "throughput"
    assert numbers["interworker_after"] > numbers["interworker_before"]
    assert numbers["predicted_ratio"] > numbers["required_ratio"]
    assert "predicted throughput" in entry["reason"]
    assert entry["report"]["objective"] == "throughput"


def test_the_default_replan_keeps_the_objective_the_topology_was_placed_for(tmp_path):
    """scheduler.reconfig.algorithm empty (the default): a topology placed by throughput (the
    service default) is re-planned by throughput, one placed by another algorithm by tdls."""
    controller = _controller(tmp_path, FakeNimbus(), ScriptedLive())
    assert TriggerConfig().algorithm == ""
    packed = [(t, t, "s1", 6700) for t in range(1, 12)]
    for conf, expected in (({}, "throughput"), ({"scheduler.brain.algorithm": "even"}, "tdls")):
        topo = wordcount(conf=conf, current=packed, needs_scheduling=False)
        _round(controller, _cluster(topo))
        report = controller.replan("wc", dry_run=True)
        assert report["algorithm"] == expected, (conf, report["algorithm"])
        assert report["objective"] == ("throughput" if expected == "throughput" else "traffic")
        # what the operator or the topology names wins
        assert controller.replan("wc", "td", dry_run=True)["algorithm"] == "td"
