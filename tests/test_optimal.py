"""``optimal``: the exact optimum of φ (notes 000 §5.1), by counting DP and by MILP.

Test vectors from notes §2.9 (TC1-opt, TC5, TC7, TC8, TC9), cross-checks DP == MILP == brute
force on small random instances (uniform, heterogeneous nodes, measured per-executor data,
memory), the MILP's time-limit path and the infeasibility diagnosis.
"""

from __future__ import annotations

import itertools
import math
import random

import pytest

from scheduler_py.algorithms import registry
from scheduler_py.algorithms.baselines import optimal
from scheduler_py.algorithms.topdown import counts
from scheduler_py.model.cost import imc_gain, violations
from scheduler_py.model.errors import InfeasibleError, SchedulingError
from scheduler_py.model.types import Component, Edge, Node, Placement, Problem, Topology


def problem(comps, edges, nodes: int, cap: float, tid: str = "t") -> Problem:
    topology = Topology(
        tid,
        tuple(Component(i, n, pc) for i, n, pc in comps),
        tuple(Edge(a, b, x) for a, b, x in edges),
    )
    return Problem(tuple(Node(f"n{k}", cap) for k in range(nodes)), topology)


FIGURE2 = problem(
    [("v1", 10, 40), ("v2", 20, 40), ("v3", 10, 40), ("v4", 10, 40)],
    [("v1", "v2", 100), ("v2", "v3", 100), ("v3", "v4", 10)],
    4,
    40,
)
VECTORS = {
    "TC5": (problem([("a", 1, 30), ("b", 8, 240)], [("a", "b", 80)], 8, 100), 20.0),
    "TC7": (
        problem(
            [("a", 4, 80), ("b", 4, 80), ("c", 6, 60)], [("a", "b", 100), ("b", "c", 50)], 3, 100
        ),
        200 / 3,
    ),
    "TC8": (problem([("a", 3, 60), ("b", 7, 140)], [("a", "b", 21)], 4, 60), 6.0),
    "TC9": (
        problem(
            [("a", 2, 105.2), ("b", 6, 170.9), ("c", 1, 28.9), ("d", 7, 158.2), ("e", 1, 36.8)],
            [
                ("a", "e", 14.1),
                ("b", "c", 8.9),
                ("b", "d", 13.2),
                ("b", "e", 18.6),
                ("c", "d", 19.4),
                ("c", "e", 15.0),
                ("d", "e", 14.7),
            ],
            8,
            100,
        ),
        22.386,
    ),
}


def solve(p: Problem, **params) -> Placement:
    """Through the registry (which verifies completeness and capacity), φ == objective."""
    placement = registry.run("optimal", p, params)
    phi = imc_gain(p.topology, placement.node_of)
    assert placement.report["objective"] == pytest.approx(phi, rel=1e-9, abs=1e-9)
    assert not violations(p, placement)
    return placement


# -- test vectors ---------------------------------------------------------------------------


def test_tc1_opt_figure2_optimum_is_66() -> None:
    placement = solve(FIGURE2)
    assert placement.report["objective"] == pytest.approx(66.0)
    assert placement.report["method"] == "dp"
    assert placement.report["proven_optimal"] is True
    assert placement.report["gap"] == 0.0


@pytest.mark.parametrize("name", sorted(VECTORS))
@pytest.mark.parametrize("method", ["dp", "milp"])
def test_notes_vectors(name: str, method: str) -> None:
    p, expected = VECTORS[name]
    placement = solve(p, method=method)
    assert placement.report["objective"] == pytest.approx(expected, abs=5e-4)
    assert placement.report["method"] == method
    assert placement.report["status"] == "optimal"


def test_tc9_is_solved_where_td_fails() -> None:
    """TC9: TD-G1 fails on packing; the optimum 22.386 exists (notes §2.6, §2.9)."""
    p, _ = VECTORS["TC9"]
    placement = solve(p)
    assert placement.report["objective"] == pytest.approx(22.386, abs=5e-4)


def test_auto_falls_back_to_milp_beyond_the_dp_budget() -> None:
    p, expected = VECTORS["TC7"]
    placement = solve(p, dp_budget=1)
    assert placement.report["method"] == "milp"
    assert placement.report["objective"] == pytest.approx(expected)
    assert solve(p, dp_max_states=1).report["method"] == "milp"


# -- cross-checks against brute force -------------------------------------------------------


def random_small(seed: int, kind: str) -> Problem:
    """≤ 7 executors on ≤ 4 nodes, so that brute force (≤ 4^7 assignments) is quick."""
    rng = random.Random(seed)
    groups = rng.randint(2, 4)
    sizes = [1] * groups
    for _ in range(rng.randint(groups, 7) - groups):
        sizes[rng.randrange(groups)] += 1
    memory = kind == "memory"
    comps = tuple(
        Component(
            f"c{i}",
            s,
            round(rng.uniform(10, 60) * s, 1),
            memory_mb=rng.choice([100, 300]) * s if memory else 0.0,
        )
        for i, s in enumerate(sizes)
    )
    edges = tuple(
        Edge(f"c{i}", f"c{j}", round(rng.uniform(1, 20), 2))
        for i in range(groups)
        for j in range(i + 1, groups)
        if rng.random() < 0.6
    )
    hetero = kind in ("hetero", "memory")
    nodes = tuple(
        Node(
            f"n{k}",
            rng.choice([60, 100, 150]) if hetero else 100,
            slots=rng.choice([0, 1, 2]) if hetero else 1,
            memory_mb=rng.choice([500, 1000]) if memory else math.inf,
        )
        for k in range(rng.randint(2, 4))
    )
    topology = Topology(f"s{seed}", comps, edges)
    if kind == "measured":
        ids = [e.id for e in topology.executors]
        pairs = {
            (a, b): round(rng.uniform(0.5, 5), 2)
            for a in ids
            for b in ids
            if a != b and rng.random() < 0.3
        }
        cpu = {e: round(rng.uniform(5, 70), 1) for e in ids}
        topology = Topology(f"s{seed}", comps, edges, executor_cpu=cpu, pair_traffic=pairs)
    return Problem(nodes, topology)


def brute_force(p: Problem) -> float | None:
    topology = p.topology
    ids = [e.id for e in topology.executors]
    best = None
    for combo in itertools.product([n.id for n in p.nodes], repeat=len(ids)):
        placement = Placement(topology.id, dict(zip(ids, combo, strict=True)))
        if violations(p, placement):
            continue
        phi = imc_gain(topology, placement.node_of)
        best = phi if best is None else max(best, phi)
    return best


@pytest.mark.parametrize("kind", ["uniform", "hetero", "measured", "memory"])
def test_dp_equals_milp_equals_brute_force(kind: str) -> None:
    for seed in range(6):
        p = random_small(seed, kind)
        expected = brute_force(p)
        for method in ("dp", "milp"):
            if expected is None:
                with pytest.raises(InfeasibleError):
                    solve(p, method=method)
            else:
                got = solve(p, method=method).report["objective"]
                assert got == pytest.approx(expected, abs=1e-7), (kind, seed, method)


def test_dp_equals_milp_on_section73_instances() -> None:
    """Notes §5.1: the DP equals the MILP on instances of the 17-task class."""
    from tests.test_tdls import section73

    for seed in (1, 2):
        p = section73(seed)
        dp = solve(p, method="dp").report["objective"]
        milp = solve(p, method="milp", time_limit=60.0).report
        assert milp["proven_optimal"]
        assert milp["objective"] == pytest.approx(dp, abs=1e-6)


def test_relabelling_identical_nodes_keeps_the_optimum() -> None:
    p, expected = VECTORS["TC7"]
    relabelled = Problem(tuple(reversed(p.nodes)), p.topology)
    assert solve(relabelled).report["objective"] == pytest.approx(expected)


def test_executor_cpu_overrides_split_a_component_into_classes() -> None:
    """Measured per-executor CPU without pair traffic: classes of equal CPU, still exact."""
    base = problem([("a", 3, 90), ("b", 3, 90)], [("a", "b", 9)], 2, 100)
    topology = Topology(
        "t",
        base.topology.components,
        base.topology.edges,
        executor_cpu={"a#0": 60.0, "b#0": 10.0},
    )
    p = Problem(base.nodes, topology)
    model = counts.count_model(p)
    assert len(model.classes) == 4
    got = solve(p).report["objective"]
    assert got == pytest.approx(brute_force(p))
    assert solve(p, method="milp").report["objective"] == pytest.approx(got)


# -- time limit, infeasibility, parameters --------------------------------------------------


def test_milp_time_limit_reports_a_gap() -> None:
    """Figure 2 takes HiGHS seconds to prove; a tiny limit stops it with a proven gap."""
    placement = solve(FIGURE2, method="milp", time_limit=0.2)
    report = placement.report
    assert report["proven_optimal"] is False
    assert report["status"] in ("time_limit", "time_limit_heuristic")
    assert report["bound"] >= 66.0 - 1e-6  # the bound can never be below the optimum
    assert report["objective"] <= 66.0 + 1e-9
    assert report["gap"] == pytest.approx(
        (report["bound"] - report["objective"]) / report["objective"]
    )
    assert report["gap"] > 0


def test_bin_packing_infeasibility_names_cpu() -> None:
    """Total CPU fits (180 ≤ 200) but three 60 % executors cannot share two 100 % nodes."""
    p = problem([("a", 3, 180)], [], 2, 100)
    for method in ("dp", "milp"):
        with pytest.raises(InfeasibleError) as caught:
            optimal.plan(p, method=method)
        assert caught.value.resource == "cpu"
        assert caught.value.component == "a"
        assert "cpu" in str(caught.value)


def test_memory_infeasibility_names_memory() -> None:
    topology = Topology("t", (Component("a", 3, 30, memory_mb=1800),))
    p = Problem((Node("n0", 100, memory_mb=1000), Node("n1", 100, memory_mb=1000)), topology)
    for method in ("dp", "milp"):
        with pytest.raises(InfeasibleError) as caught:
            optimal.plan(p, method=method)
        assert caught.value.resource == "memory"


def test_obvious_infeasibility_uses_the_capacity_check() -> None:
    p = problem([("a", 1, 150)], [], 2, 100)
    with pytest.raises(InfeasibleError) as caught:
        optimal.plan(p)
    assert caught.value.resource == "cpu"
    assert caught.value.needed == pytest.approx(150)


def test_nodes_without_slots_host_nothing() -> None:
    topology = Topology("t", (Component("a", 2, 40), Component("b", 2, 40)), (Edge("a", "b", 8),))
    nodes = (Node("n0", 1000, slots=0), Node("n1", 50), Node("n2", 50))
    placement = solve(Problem(nodes, topology))
    assert "n0" not in placement.nodes_used
    assert placement.report["objective"] == pytest.approx(4.0)  # 2 of the 4 links
    with pytest.raises(InfeasibleError) as caught:
        optimal.plan(Problem((Node("n0", 1000, slots=0),), topology))
    assert caught.value.resource == "slots"


def test_everything_on_one_node_when_it_fits() -> None:
    p = problem([("a", 3, 30), ("b", 2, 20), ("c", 4, 40)], [("a", "b", 6), ("b", "c", 8)], 3, 100)
    placement = solve(p)
    assert len(placement.nodes_used) == 1
    assert placement.report["objective"] == pytest.approx(14.0)


def test_unknown_method_is_rejected() -> None:
    with pytest.raises(SchedulingError):
        optimal.plan(VECTORS["TC5"][0], method="cplex")
