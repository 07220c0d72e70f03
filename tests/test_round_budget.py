"""The round's time budget (scheduling/round.py, scheduling/planning.py): a topology whose
algorithm overruns gets the fallback plan, the others keep their algorithms' plans in the
same round, and the Storm status says which and why."""

from __future__ import annotations

import threading
import time

import pytest

from scheduler_py.algorithms import registry
from scheduler_py.model.budget import Budget
from scheduler_py.model.errors import BudgetExhaustedError
from scheduler_py.scheduling import planning
from scheduler_py.scheduling.planning import plan_within
from scheduler_py.scheduling.round import RoundConfig
from scheduler_py.service.server import BrainHandler
from scheduler_py.service.wire import wire
from tests.snapshots import answer, snapshot, supervisor, wordcount

SUPERVISORS = [supervisor(f"sup-{x}", (6700 + i, 6701 + i)) for i, x in enumerate("abc")]
RELEASE = threading.Event()


def _slow(problem, *, budget=None):
    """Ignores its budget entirely: waits for the test to release it."""
    RELEASE.wait(30)
    return registry.get("even").plan(problem)


def _cooperative(problem, *, budget):
    """Improves nothing, but stops when its budget runs low, with the plan it has (well
    before the deadline, so that a busy machine cannot make it late)."""
    placement = registry.get("even").plan(problem)
    while budget.remaining() > 0.3:
        time.sleep(0.01)
    report = dict(placement.report) | {"budget_exhausted": True, "budget_note": "3 rounds"}
    return placement.__class__(
        placement.topology_id, placement.node_of, report=report, worker_of=placement.worker_of
    )


@pytest.fixture(autouse=True)
def test_algorithms(monkeypatch):
    for name, plan in (("test-slow", _slow), ("test-cooperative", _cooperative)):
        info = registry.AlgorithmInfo(name, plan, "tests", "a test algorithm")
        monkeypatch.setitem(registry._REGISTRY, name, info)
    RELEASE.clear()
    yield
    RELEASE.set()


def _three(middle_algorithm: str):
    return [
        wordcount("wc-1", conf={"scheduler.brain.algorithm": "even"}),
        wordcount("wc-2", conf={"scheduler.brain.algorithm": middle_algorithm}),
        wordcount("wc-3", conf={"scheduler.brain.algorithm": "td"}),
    ]


def test_a_slow_algorithm_costs_only_its_own_topology():
    snap = snapshot(SUPERVISORS, _three("test-slow"))
    snap.timeout_ms = 2000
    started = time.monotonic()
    reply, decisions = answer(snap, RoundConfig())
    elapsed = time.monotonic() - started
    assert elapsed < 2.0, f"the round took {elapsed:.2f}s, longer than the shim waits"
    assert [d.decision for d in decisions] == ["PLACE", "PLACE", "PLACE"]
    first, slow, last = decisions
    assert (first.algorithm, last.algorithm) == ("even", "td")
    assert slow.algorithm == "td"
    assert "test-slow did not finish within its time budget" in slow.reason
    assert "placed by the fallback td" in slow.reason
    assert reply.plans[1].algorithm == "td" and reply.plans[1].reason == slow.reason
    assert "budget_note" in slow.summary


def test_a_cooperative_algorithm_returns_its_best_plan_so_far():
    snap = snapshot(SUPERVISORS, _three("test-cooperative"))
    snap.timeout_ms = 6000
    _, decisions = answer(snap, RoundConfig())
    middle = decisions[1]
    assert middle.decision == "PLACE" and middle.algorithm == "test-cooperative"
    assert "stopped at its time budget" in middle.reason and "3 rounds" in middle.reason


def test_topology_conf_caps_its_own_budget():
    topo = wordcount(
        "wc-1",
        conf={
            "scheduler.brain.algorithm": "test-cooperative",
            "scheduler.brain.budget.ms": 400,
        },
    )
    started = time.monotonic()
    _, (decision,) = answer(snapshot(SUPERVISORS, [topo]), RoundConfig(round_budget_secs=30.0))
    assert time.monotonic() - started < 5.0, "the topology's own cap, not the round's 30 s"
    assert (
        decision.algorithm == "test-cooperative" and "stopped at its time budget" in decision.reason
    )


def test_bad_budget_conf_is_left_to_storm_with_the_reason():
    topo = wordcount("wc-1", conf={"scheduler.brain.budget.ms": "soon"})
    _, (decision,) = answer(snapshot(SUPERVISORS, [topo]), RoundConfig())
    assert decision.decision == "LEAVE_TO_STORM"
    assert "scheduler.brain.budget.ms must be a number of milliseconds, found 'soon'" in (
        decision.reason
    )


def test_without_fallback_an_overrun_is_an_error_naming_the_budget():
    view_snapshot = snapshot(SUPERVISORS, [wordcount()])
    from tests.snapshots import view_of

    problem = view_of(view_snapshot).problem
    with pytest.raises(BudgetExhaustedError, match="test-slow did not finish"):
        plan_within(problem, "test-slow", {}, Budget.of(0.2), fallback=None)


def test_the_service_answers_within_the_shims_timeout():
    handler = BrainHandler(RoundConfig())
    snap = snapshot(SUPERVISORS, _three("test-slow"))
    snap.timeout_ms = 2000
    started = time.monotonic()
    reply = handler.schedule(snap)
    assert time.monotonic() - started < 2.0
    assert [p.decision for p in reply.plans] == [wire().Decision.PLACE] * 3


@pytest.mark.parametrize(
    ("algorithm", "params"),
    [("tdls", {}), ("optimal", {"method": "milp"}), ("albic", {})],
)
def test_iterating_algorithms_honour_an_expired_budget(algorithm, params):
    """Given no time at all, they still return a valid plan (flagged when they were cut)
    or say plainly that the budget ran out; with time to spare they plan as without one."""
    from tests.snapshots import view_of

    problem = view_of(snapshot(SUPERVISORS, [wordcount()])).problem
    try:
        cut = registry.run(algorithm, problem, params, budget=Budget(0.0))
    except BudgetExhaustedError:
        cut = None
    if cut is not None:
        assert set(cut.node_of) == set(problem.topology.executor_by_id)
    unlimited = registry.run(algorithm, problem, params)
    generous = registry.run(algorithm, problem, params, budget=Budget.of(600))
    assert dict(generous.node_of) == dict(unlimited.node_of)
    assert not generous.report.get("budget_exhausted")


def test_a_round_plans_all_its_topologies_in_one_thread(monkeypatch):
    started = []

    class Counted(threading.Thread):
        def start(self):
            started.append(self.name)
            super().start()

    monkeypatch.setattr(planning.threading, "Thread", Counted)
    topologies = [wordcount(f"wc-{i}", conf={"scheduler.brain.algorithm": "td"}) for i in range(6)]
    snap = snapshot(SUPERVISORS, topologies)
    snap.timeout_ms = 2000
    _, decisions = answer(snap, RoundConfig())
    assert [d.decision for d in decisions] == ["PLACE"] * 6
    assert len(started) == 1


def test_a_worker_abandons_an_overrunning_plan_and_starts_afresh():
    worker = planning.PlanningWorker()
    assert worker.run(lambda: "planned", 5.0) == "planned"
    error = ValueError("a bug")

    def failing():
        raise error

    assert worker.run(failing, 5.0) is error  # handed to the caller, the thread lives on
    assert worker.threads_started == 1
    started = time.monotonic()
    assert worker.run(lambda: RELEASE.wait(30), 0.05) is None
    assert time.monotonic() - started < 1.0
    assert worker.run(lambda: "next", 5.0) == "next"  # not behind the overrunning plan
    assert worker.threads_started == 2
    RELEASE.set()
    worker.close()
    deadline = time.monotonic() + 5
    while any(t.name == "next" for t in threading.enumerate()) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not any(t.name == "next" for t in threading.enumerate()), "closed: the thread ends"
