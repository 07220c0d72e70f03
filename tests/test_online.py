"""Aniello et al.'s online scheduler (OLS): hand-checked small cases of both phases, the
α/β/δ knobs, the load cap, the adaptive trigger against ``problem.current``, failures and
a completeness/capacity property."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scheduler_py.algorithms import registry
from scheduler_py.algorithms.baselines import online
from scheduler_py.bench import paper003_rstorm
from scheduler_py.model import (
    Component,
    Edge,
    InfeasibleError,
    Node,
    Placement,
    Problem,
    SchedulingError,
    Topology,
)
from scheduler_py.model.cost import evaluate, violations


def groups(placement):
    result: dict[str, list[str]] = {}
    for executor, node in placement.node_of.items():
        result.setdefault(node, []).append(executor)
    return {n: sorted(e) for n, e in sorted(result.items())}


def pair_topology(workers=2):
    return Topology(
        "ab",
        (Component("a", 2, 40.0, is_spout=True), Component("b", 2, 40.0)),
        (Edge("a", "b", 8.0),),
        workers=workers,
    )


def chain3():
    # A -> B carries 10, B -> C carries 1; every executor 10 % CPU
    return Topology(
        "abc",
        (
            Component("A", 1, 10.0, is_spout=True),
            Component("B", 1, 10.0),
            Component("C", 1, 10.0),
        ),
        (Edge("A", "B", 10.0), Edge("B", "C", 1.0)),
        workers=2,
    )


TWO_NODES = (Node("n1", 100.0), Node("n2", 100.0))


def test_complete_bipartite_pairs_one_slot_per_node():
    # phase 1 (traced by hand in the module's terms): (a0,b0) -> slot0; (a0,b1): lifting
    # a0 and trying slot0/slot1 combinations keeps a0 with b0 and sends b1 to slot1;
    # (a1,b0): a1 joins b1 in slot1 (cost 2 < 6). Phase 2 (β = 1, δ = 0): one slot per node.
    placement = online.plan(Problem(TWO_NODES, pair_topology()))
    assert groups(placement) == {"n1": ["a#0", "b#0"], "n2": ["a#1", "b#1"]}
    assert placement.report["workers"] == 2
    assert placement.report["nodes_target"] == 2


def test_heaviest_pair_is_collocated_first():
    placement = online.plan(Problem(TWO_NODES, chain3()))
    assert groups(placement) == {"n1": ["A#0", "B#0"], "n2": ["C#0"]}
    assert evaluate(Problem(TWO_NODES, chain3()), placement).internode_traffic == pytest.approx(1)


def test_beta_zero_uses_the_fewest_nodes():
    placement = online.plan(Problem(TWO_NODES, pair_topology()), beta=0.0)
    assert groups(placement) == {"n1": ["a#0", "a#1", "b#0", "b#1"]}
    assert sorted(set(placement.worker_of.values())) == [0, 1]  # two OLS slots on n1


def test_alpha_one_allows_uneven_slots():
    topology = Topology(
        "c",
        (Component("x", 4, 40.0, is_spout=True), Component("y", 1, 10.0)),
        (Edge("x", "y", 4.0),),
        workers=2,
    )
    balanced = online.plan(Problem(TWO_NODES, topology))
    assert balanced.report["executors_per_slot"] == 3  # ⌈5/2⌉ + ⌈0·…⌉
    loose = online.plan(Problem(TWO_NODES, topology), alpha=1.0)
    assert loose.report["executors_per_slot"] == 4  # E − k + 1


def test_load_cap_limits_every_node():
    topology = Topology(
        "cap",
        (Component("a", 2, 60.0, is_spout=True), Component("b", 2, 60.0)),
        (Edge("a", "b", 8.0),),
        workers=1,
    )
    problem = Problem(TWO_NODES, topology)
    placement = registry.run("online", problem, {"load_cap": 0.6})
    cpu = evaluate(problem, placement).node_cpu
    assert max(cpu.values()) <= 60.0 + 1e-9
    assert placement.report["workers"] >= 2  # k raised from topology.workers = 1


def test_executors_without_traffic_are_placed():
    topology = Topology(
        "iso",
        (
            Component("a", 1, 10.0, is_spout=True),
            Component("b", 1, 10.0),
            Component("lonely", 2, 20.0, is_spout=True),
        ),
        (Edge("a", "b", 5.0),),
        workers=2,
    )
    problem = Problem(TWO_NODES, topology)
    placement = registry.run("online", problem)
    assert set(placement.node_of) == set(topology.executor_by_id)
    assert placement.node_of["a#0"] == placement.node_of["b#0"]


# ---------------------------------------------------------------------------- adaptive trigger


def _current(node_of, topology_id="abc"):
    return Placement(topology_id, node_of)


def test_better_current_placement_is_kept():
    current = _current({"A#0": "n1", "B#0": "n1", "C#0": "n1"})
    placement = online.plan(Problem(TWO_NODES, chain3(), current))
    assert placement.report["kept_current"] is True
    assert dict(placement.node_of) == dict(current.node_of)
    assert placement.report["current_internode"] == 0


def test_worse_current_placement_is_replaced():
    current = _current({"A#0": "n1", "B#0": "n2", "C#0": "n1"})
    placement = online.plan(Problem(TWO_NODES, chain3(), current))
    assert placement.report["kept_current"] is False
    assert placement.report["current_internode"] == pytest.approx(11)
    assert placement.report["new_internode"] == pytest.approx(1)


def test_min_improvement_threshold():
    current = _current({"A#0": "n1", "B#0": "n2", "C#0": "n1"})
    kept = online.plan(Problem(TWO_NODES, chain3(), current), min_improvement=95.0)
    assert kept.report["kept_current"] is True  # 1 > 0.05 × 11
    moved = online.plan(Problem(TWO_NODES, chain3(), current), min_improvement=90.0)
    assert moved.report["kept_current"] is False  # 1 ≤ 0.10 × 11


def test_invalid_current_is_ignored():
    current = _current({"A#0": "n1"})  # incomplete
    placement = online.plan(Problem(TWO_NODES, chain3(), current))
    assert "kept_current" in placement.report and placement.report["kept_current"] is False
    assert "current_internode" not in placement.report


# ---------------------------------------------------------------------------- failures


def test_executor_above_capped_capacity_is_named():
    topology = Topology("big", (Component("fat", 1, 90.0, is_spout=True),), ())
    with pytest.raises(InfeasibleError) as info:
        online.plan(Problem(TWO_NODES, topology), load_cap=0.8)
    error = info.value
    assert (error.component, error.resource) == ("fat", "cpu")
    assert error.needed == pytest.approx(90.0)
    assert error.best_available == pytest.approx(80.0)


def test_bad_knobs_are_rejected():
    with pytest.raises(SchedulingError, match="beta"):
        online.plan(Problem(TWO_NODES, chain3()), beta=2.0)


def test_rstorm_workloads_are_complete_and_within_capacity():
    nodes = paper003_rstorm.cluster()
    for name in paper003_rstorm.LAYOUTS:
        problem = Problem(nodes, paper003_rstorm.topology(name))
        placement = registry.run("online", problem)
        assert len(placement.nodes_used) == 12  # OLS spreads over every node (β = 1)


# ---------------------------------------------------------------------------- property


@st.composite
def problems(draw):
    nodes = tuple(
        Node(
            f"n{i}",
            float(draw(st.integers(30, 400))),
            slots=draw(st.integers(1, 4)),
            memory_mb=float(draw(st.integers(500, 4000))),
        )
        for i in range(draw(st.integers(1, 5)))
    )
    count = draw(st.integers(1, 4))
    components = tuple(
        Component(
            f"c{i}",
            (p := draw(st.integers(1, 5))),
            float(p * draw(st.integers(0, 60))),
            float(p * draw(st.integers(0, 300))),
            is_spout=i == 0,
        )
        for i in range(count)
    )
    edges = tuple(
        Edge(f"c{i}", f"c{j}", float(draw(st.integers(0, 50))))
        for i in range(count)
        for j in range(i + 1, count)
        if draw(st.booleans())
    )
    workers = draw(st.integers(1, 6))
    return Problem(nodes, Topology("p", components, edges, workers=workers))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    problem=problems(),
    load_cap=st.sampled_from([0.8, 1.0]),
    beta=st.sampled_from([0.0, 1.0]),
    alpha=st.sampled_from([0.0, 0.5]),
)
def test_property_complete_and_within_capacity_or_clear_failure(problem, load_cap, beta, alpha):
    try:
        placement = online.plan(problem, load_cap=load_cap, beta=beta, alpha=alpha)
    except InfeasibleError as error:
        assert error.component in {c.id for c in problem.topology.components}
        assert error.resource in {"cpu", "memory", "slots"}
        return
    assert violations(problem, placement) == []
    assert set(placement.node_of) == set(problem.topology.executor_by_id)
    cpu = evaluate(problem, placement).node_cpu
    for node in problem.nodes:
        assert cpu[node.id] <= load_cap * node.cpu + 1e-6


def test_normalise_speed_scales_measured_cpu_by_the_current_node():
    topology = Topology(
        "fast",
        (Component("x", 2, 40.0, is_spout=True),),
        executor_cpu={"x#0": 60.0},
        workers=2,
    )
    current = Placement("fast", {"x#0": "n1", "x#1": "n2"})
    nodes = (Node("n1", 100.0, speed=2.0), Node("n2", 100.0))
    problem = Problem(nodes, topology, current)
    assert violations(problem, online.plan(problem)) == []
    with pytest.raises(InfeasibleError) as info:
        online.plan(problem, normalise_speed=True)
    assert info.value.needed == pytest.approx(120.0)
