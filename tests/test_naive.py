"""The naive fusion baseline (``naive``, paper 000 §3.1)."""

from __future__ import annotations

import pytest
from hypothesis import given

from scheduler_py.algorithms import registry
from scheduler_py.model.cost import imc_gain
from scheduler_py.model.errors import InfeasibleError
from scheduler_py.model.types import Component, Edge, Node, Problem, Topology
from tests.test_paper000_vectors import FIG2, counts
from tests.test_topdown import FAST, check_complete, feasible_problems, oversized_problems


def test_no_parameters():
    assert registry.get("naive").params == {}


def test_pairs_by_task_imc_fill_the_largest_node_first():
    # c-d has the highest per-pair IMC (20 vs 10/4): it is placed first, on the big node
    comps = (
        Component("a", 2, 40),
        Component("b", 2, 40),
        Component("c", 1, 30),
        Component("d", 1, 30),
    )
    topology = Topology("n", comps, (Edge("a", "b", 10), Edge("c", "d", 20)))
    problem = Problem((Node("small", 90), Node("big", 100)), topology)
    placement = registry.run("naive", problem)
    assert placement.node_of["c#0"] == placement.node_of["d#0"] == "big"
    check_complete(problem, placement)


def test_cursor_only_moves_forward():
    # (a,b) fills n0 to 90; (c,d) needs 60, so the cursor moves to n1; (e,f) needs only 10,
    # which n0 still has, but the cursor never goes back: it joins (c,d) on n1
    comps = tuple(
        Component(name, 1, cpu)
        for name, cpu in (("a", 50), ("b", 40), ("c", 30), ("d", 30), ("e", 5), ("f", 5))
    )
    edges = (Edge("a", "b", 100), Edge("c", "d", 50), Edge("e", "f", 10))
    problem = Problem((Node("n0", 100), Node("n1", 100)), Topology("cur", comps, edges))
    placement = registry.run("naive", problem)
    assert counts(placement.node_of) == {
        "n0": {"a": 1, "b": 1},
        "n1": {"c": 1, "d": 1, "e": 1, "f": 1},
    }


def test_figure2_lexicographic_behaviour():
    placement = registry.run("naive", FIG2)
    check_complete(FIG2, placement)
    assert imc_gain(FIG2.topology, placement.node_of) == pytest.approx(19.8)


def test_measured_pair_traffic_orders_the_pairs():
    traffic = {("a#0", "b#1"): 50.0, ("a#1", "b#0"): 1.0}
    topology = Topology(
        "m",
        (Component("a", 2, 40), Component("b", 2, 40)),
        (Edge("a", "b", 51),),
        pair_traffic=traffic,
    )
    problem = Problem((Node("n0", 40), Node("n1", 40)), topology)
    placement = registry.run("naive", problem)
    assert placement.node_of["a#0"] == placement.node_of["b#1"]
    assert placement.node_of["a#1"] == placement.node_of["b#0"]
    assert imc_gain(topology, placement.node_of) == pytest.approx(51.0)


def test_deterministic():
    assert registry.run("naive", FIG2).node_of == registry.run("naive", FIG2).node_of


@FAST
@given(feasible_problems(measured=True))
def test_random_feasible_problems_are_placed_completely_within_capacity(problem):
    check_complete(problem, registry.run("naive", problem))


@FAST
@given(oversized_problems())
def test_oversized_executor_raises_naming_the_resource(case):
    problem, resource, component = case
    with pytest.raises(InfeasibleError) as error:
        registry.run("naive", problem)
    assert error.value.resource == resource and error.value.component == component
