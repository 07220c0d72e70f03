"""A plan with more workers than ``topology.workers`` is merged down to it
(``scheduler_py/scheduling/consolidation.py``), in the round and in re-plans."""

from __future__ import annotations

import random
from itertools import combinations

import pytest

from scheduler_py.algorithms import registry
from scheduler_py.model.cost import evaluate, violations
from scheduler_py.model.errors import SchedulingError
from scheduler_py.model.types import Component, Edge, Node, Placement, Problem, Topology
from scheduler_py.scheduling.consolidation import within_workers, worker_count
from scheduler_py.scheduling.round import RoundConfig
from tests.snapshots import answer, snapshot, supervisor, wordcount


def _chain(workers: int, pair_traffic: dict | None = None) -> Topology:
    """a(2) -> b(2) -> c(2), 10 CPU points per executor."""
    components = tuple(Component(name, 2, 20.0, is_spout=name == "a") for name in "abc")
    edges = (Edge("a", "b", 1.0), Edge("b", "c", 1.0))
    return Topology("t", components, edges, workers=workers, pair_traffic=pair_traffic or {})


def _spread(topology: Topology) -> Placement:
    """Every executor on its own node: six workers."""
    return Placement(topology.id, {e.id: f"n{i}" for i, e in enumerate(topology.executors)})


def _nodes(count: int, cpu: float = 100.0, racks: int = 1) -> tuple[Node, ...]:
    return tuple(Node(f"n{i}", cpu, rack=f"r{i % racks}") for i in range(count))


def _together(placement: Placement) -> set[frozenset[str]]:
    return {
        frozenset(pair)
        for pair in combinations(sorted(placement.node_of), 2)
        if placement.worker_key(pair[0]) == placement.worker_key(pair[1])
    }


@pytest.mark.parametrize("allowed", [1, 2, 3, 5])
def test_merged_down_to_the_limit_keeping_what_was_together(allowed):
    topology = _chain(allowed)
    problem = Problem(_nodes(6), topology)
    before = _spread(topology)
    merged = within_workers(problem, before, allowed)
    assert worker_count(merged) == allowed
    assert not violations(problem, merged)
    assert _together(before) <= _together(merged)
    assert evaluate(problem, merged).imc_gain >= evaluate(problem, before).imc_gain
    assert merged.report["workers_merged"] == f"6 → {allowed}"


def test_a_plan_within_the_limit_is_returned_unchanged():
    topology = _chain(6)
    problem = Problem(_nodes(6), topology)
    placement = _spread(topology)
    assert within_workers(problem, placement, 6) is placement


def test_the_pair_of_workers_exchanging_the_most_traffic_merges_first():
    # n0 holds a#0, a#1, b#0 (one worker); b#1, c#0, c#1 are alone on n1..n3. Between
    # workers: n0-n1 carries a -> b#1 (0.5), every other pair 0.25. Allowed 3: one merge, the
    # lighter of n0/n1 (b#1) joins n0
    topology = _chain(3)
    node_of = {"a#0": "n0", "b#0": "n0", "a#1": "n0", "b#1": "n1", "c#0": "n2", "c#1": "n3"}
    problem = Problem(_nodes(4), topology)
    merged = within_workers(problem, Placement("t", node_of), 3)
    assert worker_count(merged) == 3
    assert merged.node_of["b#1"] == "n0"


def test_capacity_is_respected_and_an_impossible_limit_says_why():
    topology = _chain(1)
    problem = Problem(_nodes(6, cpu=30.0), topology)  # 10 points each, 60 in all: 2 nodes
    with pytest.raises(SchedulingError, match=r"needs 2 workers but topology.workers is 1"):
        within_workers(problem, _spread(topology), 1)
    merged = within_workers(problem, _spread(topology), 2)
    assert worker_count(merged) == 2 and not violations(problem, merged)


def test_measured_pair_traffic_decides_the_merge():
    # measured: a#1 -> c#1 carries almost everything; a#1 and c#1 end up together
    pairs = {("a#0", "b#0"): 1.0, ("a#1", "c#1"): 50.0, ("b#1", "c#0"): 2.0}
    topology = _chain(5, pairs)
    problem = Problem(_nodes(6), topology)
    merged = within_workers(problem, _spread(topology), 5)
    assert merged.worker_key("a#1") == merged.worker_key("c#1")


def test_random_plans_always_end_valid_at_the_limit():
    rng = random.Random(7)
    for trial in range(40):
        topology = _chain(rng.randint(1, 6))
        nodes = _nodes(6, cpu=rng.choice([60.0, 100.0]), racks=2)
        node_of = {e.id: f"n{rng.randrange(6)}" for e in topology.executors}
        worker_of = {e: rng.randrange(2) for e in node_of}
        problem = Problem(nodes, topology)
        before = Placement("t", node_of, worker_of=worker_of)
        if violations(problem, before):
            continue
        merged = within_workers(problem, before, topology.workers)
        assert worker_count(merged) <= topology.workers, trial
        assert not violations(problem, merged), trial
        assert _together(before) <= _together(merged), trial


@pytest.fixture
def spreading_algorithm(monkeypatch):
    """Each executor on a node of its own, whatever topology.workers says."""

    def plan(problem, *, budget=None):
        nodes = [n.id for n in problem.nodes]
        return Placement(
            problem.topology.id,
            {e.id: nodes[i % len(nodes)] for i, e in enumerate(problem.topology.executors)},
        )

    info = registry.AlgorithmInfo("test-spread", plan, "tests", "a test algorithm")
    monkeypatch.setitem(registry._REGISTRY, "test-spread", info)


def test_the_round_places_a_plan_that_needed_more_workers_and_says_so(spreading_algorithm):
    sups = [supervisor(f"sup-{i}", (6700 + 2 * i, 6701 + 2 * i)) for i in range(6)]
    topo = wordcount("wc-1", conf={"scheduler.brain.algorithm": "test-spread"}, workers=2)
    reply, decisions = answer(snapshot(sups, [topo]), RoundConfig())
    (decision,) = decisions
    assert decision.decision == "PLACE", decision.reason
    assert "workers merged 6 → 2 to meet topology.workers" in decision.reason
    assert decision.summary["workers_merged"] == "6 → 2"
    slots = {(run.supervisor_id, run.port) for run in decision.runs}
    assert len(slots) == 2
    assert reply.plans[0].reason == decision.reason  # what Storm's status shows
