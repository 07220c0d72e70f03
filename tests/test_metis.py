"""``metis``: METIS partition + capacity repair; always complete and within capacity."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scheduler_py.algorithms import registry
from scheduler_py.algorithms.baselines import metis
from scheduler_py.model.cost import imc_gain, violations
from scheduler_py.model.errors import InfeasibleError, SchedulingError
from scheduler_py.model.types import Component, Edge, Node, Problem, Topology
from tests.test_optimal import FIGURE2, VECTORS
from tests.test_tdls import section73


@st.composite
def packable_problems(draw) -> Problem:
    """Problems where a packing surely exists: every executor needs at most half of the
    smallest usable node and the total at most half of the usable capacity (CPU and
    memory). Heterogeneous nodes, zero-slot nodes, memory, measured traffic."""
    node_count = draw(st.integers(1, 8))
    caps = [draw(st.sampled_from([60.0, 100.0, 200.0])) for _ in range(node_count)]
    bounded = draw(st.booleans())
    memories = [draw(st.sampled_from([2000.0, 4000.0])) if bounded else float("inf")] * node_count
    slots = [1] + [draw(st.sampled_from([0, 1, 3])) for _ in range(node_count - 1)]
    nodes = tuple(
        Node(f"n{i}", caps[i], slots=slots[i], memory_mb=memories[i]) for i in range(node_count)
    )
    usable = [n for n in nodes if n.slots > 0]
    smallest = min(n.cpu for n in usable)
    budget = sum(n.cpu for n in usable) / 2
    groups = draw(st.integers(1, 6))
    sizes = [draw(st.integers(1, 10)) for _ in range(groups)]
    per_task = [draw(st.floats(0.0, smallest / 2)) for _ in range(groups)]
    scale = min(1.0, budget / max(sum(s * c for s, c in zip(sizes, per_task, strict=True)), 1e-9))
    mem = min(n.memory_mb for n in usable) / 2 if bounded else 500.0
    mem_scale = (
        1.0 if not bounded else min(1.0, sum(n.memory_mb for n in usable) / 2 / (mem * sum(sizes)))
    )
    components = tuple(
        Component(
            f"c{i}",
            sizes[i],
            sizes[i] * per_task[i] * scale,
            memory_mb=sizes[i] * mem * mem_scale,
        )
        for i in range(groups)
    )
    edges = tuple(
        Edge(f"c{i}", f"c{j}", draw(st.floats(0.0, 30.0)))
        for i in range(groups)
        for j in range(i + 1, groups)
        if draw(st.booleans())
    )
    topology = Topology("m", components, edges)
    if draw(st.booleans()):
        ids = [e.id for e in topology.executors]
        pairs = {(a, b): draw(st.floats(0.1, 9.0)) for a in ids[:12] for b in ids[:12] if a < b}
        topology = Topology("m", components, edges, pair_traffic=pairs)
    return Problem(nodes, topology)


@given(packable_problems(), st.integers(0, 3))
@settings(
    max_examples=80, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
def test_placements_are_complete_and_within_capacity(p: Problem, k: int) -> None:
    placement = metis.plan(p, k=k)
    assert not violations(p, placement)
    assert set(placement.node_of) == set(p.topology.executor_by_id)
    assert all(p.node_by_id[n].slots > 0 for n in placement.nodes_used)
    assert placement.report["phi"] == pytest.approx(imc_gain(p.topology, placement.node_of))


def test_deterministic_and_registered() -> None:
    p = section73(5)
    first = registry.run("metis", p)
    assert registry.run("metis", p).node_of == first.node_of
    assert first.report["k"] >= 5  # 500 % of CPU needs at least 5 of the 100 % nodes


def test_auto_k_tries_the_feasible_range_and_keeps_the_best() -> None:
    p = section73(9)
    placement = metis.plan(p)
    tried = {int(k): phi for k, phi in placement.report["tried"].items()}
    assert min(tried) == 5 and max(tried) == 8
    assert placement.report["phi"] == max(phi for phi in tried.values() if phi is not None)
    assert metis.plan(p, max_tries=2).report["tried"].keys() == {"5", "8"}


def test_notes_vectors_are_feasible_and_below_the_optimum() -> None:
    for p, optimum in [(FIGURE2, 66.0), *VECTORS.values()]:
        placement = registry.run("metis", p)
        assert imc_gain(p.topology, placement.node_of) <= optimum + 1e-6


def test_repair_moves_cheapest_executors_off_an_overloaded_node() -> None:
    """One 4-executor component heavier than the node METIS would give it: the repair
    moves executors off until every node fits, and the result stays valid."""
    topology = Topology(
        "t",
        (Component("a", 4, 160), Component("b", 2, 20), Component("c", 2, 10)),
        (Edge("a", "b", 40), Edge("b", "c", 5)),
    )
    nodes = (Node("n0", 100), Node("n1", 100), Node("n2", 50))
    for k in (0, 1, 2, 3):
        placement = metis.plan(Problem(nodes, topology), k=k)
        assert not violations(Problem(nodes, topology), placement)


def test_no_traffic_still_places_everything() -> None:
    topology = Topology("t", (Component("a", 5, 150), Component("b", 3, 90)))
    p = Problem(tuple(Node(f"n{i}", 100) for i in range(4)), topology)
    placement = metis.plan(p)
    assert not violations(p, placement)
    assert placement.report["phi"] == 0.0


def test_unpackable_problem_raises() -> None:
    topology = Topology("t", (Component("a", 3, 180),))
    with pytest.raises(InfeasibleError):
        metis.plan(Problem((Node("n0", 100), Node("n1", 100)), topology))
    with pytest.raises(InfeasibleError) as caught:
        metis.plan(Problem((Node("n0", 100, slots=0),), topology))
    assert caught.value.resource == "slots"


def test_bad_parameters() -> None:
    with pytest.raises(SchedulingError):
        metis.plan(VECTORS["TC5"][0], k=-1)
    with pytest.raises(SchedulingError):
        metis.plan(VECTORS["TC5"][0], scheme="spectral")
