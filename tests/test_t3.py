"""T3-Scheduler (paper 002): the appendix cases TC-A, TC-B, TC-C, the notes' edge cases
TC-E1..E3 (notes 002 §2.10), the §5 regression against the notes' reference table and the
exact optimum, measured vs declared costs, the second level, failures and a property."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scheduler_py.algorithms import registry
from scheduler_py.algorithms.t3 import plan as t3
from scheduler_py.algorithms.t3.partition import cut_weight, kway
from scheduler_py.bench import paper002_t3 as bench
from scheduler_py.model import (
    Component,
    Edge,
    InfeasibleError,
    Node,
    Placement,
    Problem,
    Topology,
)
from scheduler_py.model.cost import evaluate, violations

# TC-A's reconstructed rates (notes 002 §2.10): tasks 1,2,3 = A#0..2, 4,5,6 = B#0..2
TC_A_RATES = {
    (1, 4): 10,
    (1, 5): 10,
    (1, 6): 10,
    (2, 4): 9,
    (2, 5): 9,
    (2, 6): 8,
    (3, 4): 9,
    (3, 5): 8,
    (3, 6): 8,
}


def task(number: int) -> str:
    return f"A#{number - 1}" if number <= 3 else f"B#{number - 4}"


def tc_a_topology(extra: dict | None = None, components=()) -> Topology:
    traffic = {(task(a), task(b)): float(r) for (a, b), r in TC_A_RATES.items()}
    traffic |= extra or {}
    return Topology(
        "tca",
        (*components, Component("A", 3, 3.0, is_spout=not components), Component("B", 3, 3.0)),
        (*(Edge(c.id, "A") for c in components), Edge("A", "B")),
        pair_traffic=traffic,
    )


def run(topology: Topology, capacities, **params):
    nodes = tuple(Node(f"n{i + 1}", float(c), slots=4) for i, c in enumerate(capacities))
    problem = Problem(nodes, topology)
    placement = t3.plan(problem, **({"u_max": 1.0} | params))
    assert violations(problem, placement) == []
    return problem, placement


def on(placement, node):
    return sorted(placement.executors_on(node))


# ---------------------------------------------------------------------------- TC-A


def test_tc_a_group_pair_partitioning():
    topology = tc_a_topology()
    assert t3.build_profile(topology).source == "measured"
    problem, placement = run(topology, [4, 2])
    assert on(placement, "n1") == ["A#0", "A#1", "B#0", "B#1"]  # A1 = {1,2}, B1 = {4,5}
    assert on(placement, "n2") == ["A#2", "B#2"]
    assert evaluate(problem, placement).internode_traffic == pytest.approx(35)
    assert placement.report["log"][0].startswith("n1: group pair partitioning of (A, B)")


def test_tc_a_pair_partition_unit():
    graph = t3.SimplifiedGraph.of(t3.build_profile(tc_a_topology()))
    a, b = graph.unassigned()
    room = t3.Bin(Node("n", 4.0), 4.0, float("inf"), float("inf"))
    assert t3.pair_partition(graph, a, b, room) == ["A#0", "A#1", "B#0", "B#1"]


# ---------------------------------------------------------------------------- TC-B


def test_tc_b_single_group_partition_unit():
    graph = t3.SimplifiedGraph.of(t3.build_profile(tc_a_topology()))
    a, b = graph.unassigned()
    room = t3.Bin(Node("n", 5.0), 2.0, float("inf"), float("inf"), tasks=list(a.tasks))
    assert t3.single_partition(graph, b, room) == ["B#0", "B#1"]  # (1,4) then (1,5)


def test_tc_b_end_to_end():
    x = Component("X", 2, 2.0, is_spout=True)
    extra = {(f"X#{i}", f"A#{j}"): 20.0 for i in range(2) for j in range(3)}
    problem, placement = run(tc_a_topology(extra, (x,)), [7, 1])
    assert on(placement, "n1") == ["A#0", "A#1", "A#2", "B#0", "B#1", "X#0", "X#1"]
    assert on(placement, "n2") == ["B#2"]
    singles = [line for line in placement.report["log"] if "single group partitioning" in line]
    assert singles == ["n1: single group partitioning of B [B#0, B#1, B#2] -> [B#0, B#1]"]
    assert evaluate(problem, placement).internode_traffic == pytest.approx(26)


# ---------------------------------------------------------------------------- TC-C


def test_tc_c_top_trending_topics():
    problem, placement = bench.tc_c(3, 2, 1)
    groups = {n: on(placement, n) for n in placement.nodes_used}
    assert groups == {
        "node3": [*(f"A#{i}" for i in range(5)), *(f"B#{i}" for i in range(5))],
        "node1": ["B#5", "B#6", "B#7", "C#0", "C#1", "C#2"],
        "node4": ["B#8", "C#3", "D#0"],
    }
    evaluation = evaluate(problem, placement)
    assert evaluation.internode_traffic == pytest.approx(115)  # 20a + 26b + 3c
    assert evaluation.node_workers == {"node3": 2, "node1": 1, "node4": 1}
    node3 = placement.report["nodes"]["node3"]
    assert node3["worker_cut"] == pytest.approx(39)  # 13a: parts {3A+2B} / {2A+3B}
    parts = {}
    for executor in placement.executors_on("node3"):
        parts.setdefault(placement.worker_of[executor], []).append(executor[0])
    assert sorted(sorted(p) for p in parts.values()) == [
        ["A", "A", "A", "B", "B"],
        ["A", "A", "B", "B", "B"],
    ]


# ---------------------------------------------------------------------------- edge cases


def test_tc_e1_smaller_group_runs_out():
    topology = Topology(
        "e1", (Component("A", 2, 2.0, is_spout=True), Component("B", 6, 6.0)), (Edge("A", "B", 12),)
    )
    problem, placement = run(topology, [6, 3])
    assert on(placement, "n1") == ["A#0", "A#1", "B#0", "B#1", "B#2", "B#3"]
    assert on(placement, "n2") == ["B#4", "B#5"]
    assert evaluate(problem, placement).internode_traffic == pytest.approx(4)


def test_tc_e1_without_single_fallback_the_neighbour_split_fills_the_node():
    topology = Topology(
        "e1", (Component("A", 2, 2.0, is_spout=True), Component("B", 6, 6.0)), (Edge("A", "B", 12),)
    )
    _, placement = run(topology, [6, 3], pair_single_fallback=False)
    assert on(placement, "n1") == ["A#0", "A#1", "B#0", "B#1", "B#2", "B#3"]
    assert placement.report["log"] == [
        "n1: group pair partitioning of (A, B) -> [A#0, A#1, B#0, B#1]",
        "n1: single group partitioning of B [B#2, B#3, B#4, B#5] -> [B#2, B#3]",
    ]


def test_tc_e2_odd_capacity():
    problem, placement = run(tc_a_topology(), [5, 1])
    assert on(placement, "n1") == ["A#0", "A#1", "B#0", "B#1", "B#2"]
    assert on(placement, "n2") == ["A#2"]
    assert evaluate(problem, placement).internode_traffic == pytest.approx(25)


def test_tc_e3_neighbour_expansion_and_single_split():
    ops = [Component(f"o{i}", 2, 2.0, is_spout=i == 0) for i in range(4)]
    topology = Topology(
        "e3",
        tuple(ops),
        (Edge("o0", "o1", 16), Edge("o1", "o2", 12), Edge("o2", "o3", 8)),
    )
    problem, placement = run(topology, [5, 3])
    assert on(placement, "n1") == ["o0#0", "o0#1", "o1#0", "o1#1", "o2#0"]
    assert on(placement, "n2") == ["o2#1", "o3#0", "o3#1"]
    assert evaluate(problem, placement).internode_traffic == pytest.approx(10)


def test_restart_when_no_neighbour_is_left():
    # diamond, 30 tasks on 10 x 4: isolated middle operators must still be placed
    problem = bench.problem("diamond", "hom", 30)
    placement = registry.run("t3", problem, {"u_max": 1.0})
    assert len(placement.node_of) == 30


# ---------------------------------------------------------------------------- §5


@pytest.mark.parametrize("layout", bench.LAYOUTS)
@pytest.mark.parametrize("cluster", list(bench.CLUSTERS))
def test_section5_matches_notes_reference(layout, cluster):
    costs = tuple(int(bench.t3_cost(layout, cluster, n)[0]) for n in bench.SIZES)
    assert costs == bench.NOTES_T3[(layout, cluster)]


@pytest.mark.parametrize(
    ("layout", "cluster"),
    [(lay, cl) for lay in ("diamond", "star") for cl in bench.CLUSTERS],
)
def test_exact_bipartite_optimum_matches_notes(layout, cluster):
    assert (
        tuple(int(bench.optimum(layout, cluster, n)) for n in bench.SIZES)
        == bench.NOTES_OPT[(layout, cluster)]
    )


@pytest.mark.parametrize("cluster", list(bench.CLUSTERS))
def test_t3_equals_optimum_on_linear(cluster):
    sizes = (10, 14, 32) if cluster == "het" else bench.SIZES
    for n in sizes:
        expected = bench.NOTES_OPT[("linear", cluster)][bench.SIZES.index(n)]
        assert bench.optimum("linear", cluster, n) == expected
        assert bench.t3_cost("linear", cluster, n)[0] == expected


def _brute_force_chain(sizes, capacities):
    """Exhaustive Eq. 1 optimum of a unit-rate chain (tiny cases only)."""
    import itertools

    tasks = [(op, i) for op, size in enumerate(sizes) for i in range(size)]
    best = None
    for assignment in itertools.product(range(len(capacities)), repeat=len(tasks)):
        loads = [assignment.count(n) for n in range(len(capacities))]
        if any(load > cap for load, cap in zip(loads, capacities, strict=True)):
            continue
        where = dict(zip(tasks, assignment, strict=True))
        cut = sum(
            1
            for op in range(len(sizes) - 1)
            for i in range(sizes[op])
            for j in range(sizes[op + 1])
            if where[(op, i)] != where[(op + 1, j)]
        )
        best = cut if best is None else min(best, cut)
    return best


@pytest.mark.parametrize(
    ("sizes", "capacities"),
    [
        ([2, 2], [4]),
        ([2, 2], [2, 2]),
        ([2, 2, 2], [3, 3]),
        ([2, 2, 2], [4, 2]),
        ([1, 3, 2], [3, 2, 1]),
        ([2, 2, 2, 2], [3, 3, 2]),
    ],
)
def test_chain_optimum_equals_brute_force(sizes, capacities):
    rates = [1.0] * (len(sizes) - 1)
    assert bench.chain_optimum(sizes, rates, capacities) == _brute_force_chain(sizes, capacities)


# ---------------------------------------------------------------------------- costs


def _chain3(traffic=None, edges=(1.0, 10.0)):
    return Topology(
        "c3",
        (Component("A", 1, 1.0, is_spout=True), Component("B", 1, 1.0), Component("C", 1, 1.0)),
        (Edge("A", "B", edges[0]), Edge("B", "C", edges[1])),
        pair_traffic=traffic or {},
    )


def test_declared_traffic_drives_the_grouping():
    _, placement = run(_chain3(edges=(10.0, 1.0)), [2, 1])
    assert on(placement, "n1") == ["A#0", "B#0"]
    assert placement.report["costs"] == "declared"


def test_measured_traffic_overrides_declared():
    measured = {("A#0", "B#0"): 1.0, ("B#0", "C#0"): 10.0}
    _, placement = run(_chain3(measured, edges=(10.0, 1.0)), [2, 1])
    assert on(placement, "n1") == ["B#0", "C#0"]
    assert placement.report["costs"] == "measured"


def test_measured_cpu_is_the_load():
    topology = Topology(
        "m",
        (Component("A", 2, 20.0, is_spout=True), Component("B", 2, 20.0)),
        (Edge("A", "B", 4.0),),
        executor_cpu={"A#0": 70.0},
    )
    nodes = (Node("big", 100.0), Node("small", 60.0))
    placement = registry.run("t3", Problem(nodes, topology), {"u_max": 1.0})
    assert placement.node_of["A#0"] == "big"
    assert placement.report["costs"] == "measured"


def test_uniform_rates_when_nothing_is_declared():
    topology = Topology(
        "u",
        (Component("A", 2, 2.0, is_spout=True), Component("B", 2, 2.0), Component("C", 2, 2.0)),
        (Edge("A", "B"), Edge("B", "C")),
    )
    _, placement = run(topology, [4, 2])
    assert placement.report["costs"] == "uniform"
    assert on(placement, "n1") == ["A#0", "A#1", "B#0", "B#1"]


def test_heterogeneous_nodes_fill_largest_first_with_u_max():
    topology = Topology(
        "h",
        (Component("A", 4, 160.0, is_spout=True), Component("B", 4, 160.0)),
        (Edge("A", "B", 16),),
    )
    nodes = (Node("low", 200.0, slots=2), Node("high", 400.0, slots=4))
    placement = registry.run("t3", Problem(nodes, topology))  # C = 0.8 × cpu
    loads = evaluate(Problem(nodes, topology), placement).node_cpu
    assert loads["high"] == pytest.approx(320.0)  # 8 tasks of 40 % fit 320 % exactly
    assert loads["low"] == pytest.approx(0.0)


# ---------------------------------------------------------------------------- second level


def test_workers_ceil_t_over_T_and_metis_parts_at_most_T():
    topology = Topology(
        "w", (Component("A", 6, 6.0, is_spout=True), Component("B", 6, 6.0)), (Edge("A", "B", 36),)
    )
    _, placement = run(topology, [12], tasks_per_worker=5)
    sizes = {}
    for worker in placement.worker_of.values():
        sizes[worker] = sizes.get(worker, 0) + 1
    assert len(sizes) == 3  # ⌈12/5⌉
    assert max(sizes.values()) <= 5
    assert sum(sizes.values()) == 12


def test_worker_count_capped_by_slots():
    topology = Topology("w", (Component("A", 12, 12.0, is_spout=True),), ())
    problem = Problem((Node("n", 12.0, slots=2),), topology)
    placement = t3.plan(problem, u_max=1.0, tasks_per_worker=5)
    assert set(placement.worker_of.values()) == {0, 1}
    assert placement.report["capped_workers"] == ["n"]
    assert violations(problem, placement) == []


def test_slot_aware_limits_tasks_per_node():
    topology = Topology("w", (Component("A", 12, 12.0, is_spout=True),), ())
    nodes = (Node("n1", 12.0, slots=2), Node("n2", 12.0, slots=2))
    placement = t3.plan(Problem(nodes, topology), u_max=1.0, tasks_per_worker=5, slot_aware=True)
    assert len(placement.executors_on("n1")) == 10
    assert len(placement.executors_on("n2")) == 2


def test_kway_cut_on_complete_bipartite():
    rates = {}
    for i in range(5):
        for j in range(5):
            rates.setdefault(f"a{i}", {})[f"b{j}"] = 3.0
            rates.setdefault(f"b{j}", {})[f"a{i}"] = 3.0
    tasks = [f"a{i}" for i in range(5)] + [f"b{j}" for j in range(5)]
    parts = kway(tasks, rates, 2, max_part=5)
    assert sorted(len(p) for p in parts) == [5, 5]
    assert cut_weight(parts, rates) == pytest.approx(39)


def test_kway_without_edges_and_degenerate_k():
    assert kway(["a", "b", "c"], {}, 2) == [["a", "b"], ["c"]]
    assert kway(["a", "b"], {}, 5) == [["a"], ["b"]]
    assert kway(["a", "b"], {}, 1) == [["a", "b"]]


# ---------------------------------------------------------------------------- system, failures


def test_system_executors_join_the_spout_worker():
    topology = Topology(
        "s",
        (
            Component("S", 2, 20.0, is_spout=True),
            Component("B", 2, 20.0),
            Component("__acker", 1, 5.0, is_system=True),
        ),
        (Edge("S", "B", 4.0),),
    )
    problem = Problem((Node("n1", 100.0), Node("n2", 100.0)), topology)
    placement = registry.run("t3", problem)
    assert placement.worker_key("__acker#0") == placement.worker_key("S#0")


def test_executor_above_capped_capacity_is_named():
    topology = Topology("f", (Component("big", 1, 90.0, is_spout=True),), ())
    with pytest.raises(InfeasibleError) as info:
        t3.plan(Problem((Node("n1", 100.0),), topology))
    error = info.value
    assert (error.component, error.resource) == ("big", "cpu")
    assert error.needed == pytest.approx(90.0)
    assert error.best_available == pytest.approx(80.0)
    assert error.best_node == "n1"
    assert "u_max" in str(error)


def test_fragmentation_failure_names_the_component():
    topology = Topology("f", (Component("x", 3, 180.0, is_spout=True),), ())
    nodes = (Node("n1", 100.0), Node("n2", 100.0))
    with pytest.raises(InfeasibleError) as info:
        t3.plan(Problem(nodes, topology), u_max=1.0)
    assert info.value.component == "x"
    assert info.value.resource == "cpu"
    assert info.value.needed == pytest.approx(60.0)
    assert info.value.best_available == pytest.approx(40.0)


def test_total_above_capped_capacity():
    topology = Topology("f", (Component("x", 4, 360.0, is_spout=True),), ())
    nodes = (Node("n1", 200.0), Node("n2", 200.0))
    with pytest.raises(InfeasibleError, match="in total"):
        t3.plan(Problem(nodes, topology))


# ---------------------------------------------------------------------------- property


@st.composite
def problems(draw):
    nodes = tuple(
        Node(f"n{i}", float(draw(st.integers(20, 400))), slots=draw(st.integers(1, 4)))
        for i in range(draw(st.integers(1, 5)))
    )
    count = draw(st.integers(1, 4))
    components = tuple(
        Component(
            f"c{i}",
            (p := draw(st.integers(1, 5))),
            float(p * draw(st.integers(1, 60))),
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
    return Problem(nodes, Topology("p", components, edges))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problem=problems(), u_max=st.sampled_from([0.8, 1.0]), T=st.integers(1, 6))
def test_property_complete_and_within_capacity_or_clear_failure(problem, u_max, T):
    try:
        placement = t3.plan(problem, u_max=u_max, tasks_per_worker=T)
    except InfeasibleError as error:
        assert error.component in {c.id for c in problem.topology.components}
        assert error.resource in {"cpu", "memory", "slots"}
        return
    assert violations(problem, placement) == []
    assert set(placement.node_of) == set(problem.topology.executor_by_id)
    cpu = evaluate(problem, placement).node_cpu
    for node in problem.nodes:
        assert cpu[node.id] <= u_max * node.cpu + 1e-6


def test_normalise_speed_scales_measured_cpu_by_the_current_node():
    topology = Topology(
        "fast",
        (Component("x", 2, 40.0, is_spout=True),),
        executor_cpu={"x#0": 60.0},
    )
    nodes = (Node("quick", 100.0, speed=2.0), Node("slow", 100.0))
    current = Placement("fast", {"x#0": "quick", "x#1": "slow"})
    problem = Problem(nodes, topology, current)
    assert violations(problem, t3.plan(problem, u_max=1.0)) == []
    with pytest.raises(InfeasibleError) as info:  # 60 % of a 2× core = 120 reference %
        t3.plan(problem, u_max=1.0, normalise_speed=True)
    assert info.value.needed == pytest.approx(120.0)
