"""The upper bound on kept traffic (scheduler_py/model/bound.py): never below what any
feasible placement keeps (checked against every placement of small random problems and
against the algorithms on the paper-000 §7.3 class), and computed within a budget."""

from __future__ import annotations

import itertools
import random

import pytest

from scheduler_py.algorithms import registry
from scheduler_py.bench.generators import section73_instance
from scheduler_py.model.bound import fewest_nodes, traffic_bound
from scheduler_py.model.budget import Budget
from scheduler_py.model.cost import imc_gain, node_loads
from scheduler_py.model.types import EPSILON, Component, Edge, Node, Problem, Topology


def _random_problem(rng: random.Random) -> Problem:
    count = rng.randint(2, 4)
    components = tuple(
        Component(f"c{i}", rng.randint(1, 2), cpu=rng.uniform(10, 90), is_spout=i == 0)
        for i in range(count)
    )
    edges = tuple(
        Edge(f"c{i}", f"c{j}", rng.uniform(1, 50))
        for i in range(count)
        for j in range(i + 1, count)
        if rng.random() < 0.7
    )
    nodes = tuple(Node(f"n{i}", rng.uniform(40, 160)) for i in range(rng.randint(2, 3)))
    return Problem(nodes, Topology("t", components, edges))


def _best_kept(problem: Problem) -> float | None:
    executors = [e.id for e in problem.topology.executors]
    nodes = [n.id for n in problem.nodes]
    best = None
    for choice in itertools.product(nodes, repeat=len(executors)):
        node_of = dict(zip(executors, choice, strict=True))
        cpu, _ = node_loads(problem, node_of)
        if all(cpu[n.id] <= n.cpu + EPSILON for n in problem.nodes):
            kept = imc_gain(problem.topology, node_of)
            best = kept if best is None else max(best, kept)
    return best


def test_the_bound_is_never_below_the_best_feasible_placement():
    rng = random.Random(7)
    checked = 0
    for _ in range(80):
        problem = _random_problem(rng)
        best = _best_kept(problem)
        if best is None:  # nothing fits: no placement to bound
            continue
        bound = traffic_bound(problem)
        assert bound.value is not None
        assert bound.value + 1e-6 >= best, (problem, bound, best)
        assert bound.gap(best) is not None and 0.0 <= bound.gap(best) <= 1.0
        checked += 1
    assert checked >= 40


@pytest.mark.parametrize("seed", range(6))
def test_the_bound_holds_for_the_algorithms_on_the_section73_class(seed):
    problem = section73_instance(seed)
    bound = traffic_bound(problem)
    total = sum(rate for _, _, rate in problem.topology.pair_traffics())
    assert bound.value is not None and bound.value <= total + 1e-6
    for name in ("td", "tdls", "rstorm", "even"):
        kept = imc_gain(problem.topology, registry.run(name, problem).node_of)
        assert kept <= bound.value + 1e-6, (name, kept, bound)
    # 17 tasks over 500 % of CPU on 100 % nodes: at least 5 nodes, so something is cut
    assert fewest_nodes(problem) == 5
    assert bound.value < total


def test_a_topology_that_fits_one_node_may_keep_everything():
    topology = Topology(
        "t",
        (Component("a", 2, cpu=20, is_spout=True), Component("b", 2, cpu=20)),
        (Edge("a", "b", 10),),
    )
    bound = traffic_bound(Problem((Node("n1", 100), Node("n2", 100)), topology))
    assert bound.value == pytest.approx(10.0) and bound.gap(10.0) == 0.0


def test_no_traffic_no_gap():
    topology = Topology("t", (Component("a", 3, cpu=30, is_spout=True),))
    bound = traffic_bound(Problem((Node("n1", 50), Node("n2", 50)), topology))
    assert bound.value == 0.0 and bound.gap(0.0) == 0.0


def test_every_plan_of_a_round_reports_its_gap_in_the_status_and_the_log():
    from scheduler_py.scheduling.round import RoundConfig
    from tests.snapshots import answer, snapshot, supervisor, wordcount

    cluster = snapshot([supervisor(f"s{i}") for i in (1, 2, 3)], [wordcount()])
    _, decisions = answer(cluster, RoundConfig("td"))
    placed = [d for d in decisions if d.decision == "PLACE"]
    assert placed
    for decision in placed:
        summary = decision.log_entry()["summary"]
        assert summary["bound"] is not None and summary["bound"] + 1e-6 >= summary["imc_gain"]
        assert 0.0 <= summary["gap"] <= 1.0 and summary["bound_method"]
        assert "gap ≤" in decision.reason and "to the bound" in decision.reason


def test_too_many_pairs_or_no_time_give_no_bound_with_the_reason():
    problem = section73_instance(2)
    from scheduler_py.model.bound import estimated_pairs

    pairs = estimated_pairs(problem)
    assert pairs == sum(1 for _ in problem.topology.pair_traffics())
    refused = traffic_bound(problem, max_pairs=pairs - 1)
    assert refused.value is None and refused.gap(1.0) is None
    assert f"{pairs} communicating pairs" in refused.reason
    late = traffic_bound(problem, Budget(0.0))
    assert late.value is None and "no time left" in late.reason


def test_a_budget_shorter_than_listing_the_pairs_gives_no_bound_at_once():
    from scheduler_py.model.bound import PAIR_SECONDS, estimated_pairs

    wide = Topology(
        "wide",
        (Component("a", 100, 100.0, is_spout=True), Component("b", 100, 100.0)),
        (Edge("a", "b", 1.0),),
    )
    problem = Problem(tuple(Node(f"n{i}", 400.0) for i in range(5)), wide)
    pairs = estimated_pairs(problem)
    short = Budget.of(pairs * PAIR_SECONDS / 4)
    bound = traffic_bound(problem, short)
    assert bound.value is None
    assert f"{pairs} communicating pairs take about" in bound.reason
    assert bound.seconds == 0.0  # refused before listing a pair
    assert traffic_bound(problem).value is not None  # unlimited: bounded
