"""R-Storm (paper 003): the notes' worked placement cases T1-T12 (notes 003 §2.8), the
paper's machine counts on its 12-machine/2-rack cluster, the variants, clear failures and
a completeness/capacity property."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scheduler_py.algorithms import registry
from scheduler_py.algorithms.rstorm import plan as rstorm
from scheduler_py.bench import paper003_rstorm as bench
from scheduler_py.model import (
    Component,
    Edge,
    InfeasibleError,
    Node,
    Problem,
    SchedulingError,
    Topology,
)
from scheduler_py.model.cost import violations


def comp(cid: str, parallelism: int, cpu: float, memory: float, spout: bool = False) -> Component:
    """A component from per-executor demands (the model stores totals)."""
    return Component(cid, parallelism, cpu * parallelism, memory * parallelism, is_spout=spout)


def topo(components, edges, tid="t") -> Topology:
    return Topology(tid, tuple(components), tuple(Edge(s, t, 1.0) for s, t in edges))


def where(placement, *executors):
    return [placement.node_of[e] for e in executors]


def grouped(placement):
    result: dict[str, list[str]] = {}
    for executor, node in placement.node_of.items():
        result.setdefault(node, []).append(executor)
    return {n: sorted(e) for n, e in result.items()}


# ---------------------------------------------------------------------------- T1, T2, T8


def test_t1_diamond_bfs_and_round_robin():
    t = topo(
        [comp("S", 1, 1, 1, True), comp("A", 2, 1, 1), comp("B", 2, 1, 1), comp("C", 1, 1, 1)],
        [("S", "A"), ("S", "B"), ("A", "C"), ("B", "C")],
    )
    assert rstorm.bfs_components(t) == ["S", "A", "B", "C"]
    assert [e.id for e in rstorm.task_order(t)] == ["S#0", "A#0", "B#0", "C#0", "A#1", "B#1"]


def test_t2_star_reaches_second_spout_through_parents():
    t = topo(
        [
            comp("S1", 1, 1, 1, True),
            comp("S2", 1, 1, 1, True),
            comp("X", 2, 1, 1),
            comp("O1", 1, 1, 1),
            comp("O2", 1, 1, 1),
        ],
        [("S1", "X"), ("S2", "X"), ("X", "O1"), ("X", "O2")],
    )
    assert rstorm.bfs_components(t) == ["S1", "X", "O1", "O2", "S2"]
    order = [e.id for e in rstorm.task_order(t)]
    assert order == ["S1#0", "X#0", "O1#0", "O2#0", "S2#0", "X#1"]


def test_t8_cycle_terminates():
    t = Topology(
        "c",
        (comp("S", 1, 1, 1, True), comp("A", 1, 1, 1), comp("B", 1, 1, 1)),
        (Edge("S", "A"), Edge("A", "B"), Edge("B", "A")),
    )
    assert rstorm.bfs_components(t) == ["S", "A", "B"]


def test_system_and_unreachable_components_come_last():
    t = Topology(
        "sys",
        (
            Component("__acker", 1, 10, 10, is_system=True),
            comp("S", 2, 1, 1, True),
            comp("A", 1, 1, 1),
            comp("lonely", 1, 1, 1),
        ),
        (Edge("S", "A"),),
    )
    # "lonely" is not reachable from a spout: it joins the component list after the BFS
    assert [e.id for e in rstorm.task_order(t)] == ["S#0", "A#0", "lonely#0", "S#1", "__acker#0"]


# ---------------------------------------------------------------------------- T3


def _t3_problem():
    nodes = tuple(
        Node(n, 100, memory_mb=1000, rack=r)
        for n, r in (("n1", "r1"), ("n2", "r1"), ("n3", "r2"), ("n4", "r2"))
    )
    t = topo(
        [comp("S", 2, 30, 200, True), comp("A", 2, 30, 200), comp("B", 2, 30, 200)],
        [("S", "A"), ("A", "B")],
    )
    return Problem(nodes, t)


@pytest.mark.parametrize("variant", ["paper", "proto2015"])
def test_t3_cpu_hard_opens_second_node_in_same_rack(variant):
    placement = rstorm.plan(_t3_problem(), variant=variant)
    assert grouped(placement) == {"n1": ["A#0", "B#0", "S#0"], "n2": ["A#1", "B#1", "S#1"]}


@pytest.mark.parametrize("variant", ["paper", "proto2015"])
def test_t3_cpu_soft_overcommits_to_150_percent(variant):
    problem = _t3_problem()
    placement = rstorm.plan(problem, variant=variant, cpu_hard=False)
    assert grouped(placement) == {"n1": ["A#0", "A#1", "B#0", "S#0", "S#1"], "n2": ["B#1"]}
    assert any("CPU 150.00 exceeds" in v for v in violations(problem, placement))
    with pytest.raises(SchedulingError, match="invalid placement"):
        registry.run("rstorm", problem, {"cpu_hard": False})


def test_t3_cpu_soft_strict_memory():
    placement = rstorm.plan(_t3_problem(), cpu_hard=False, strict_memory=True)
    assert grouped(placement) == {"n1": ["A#0", "B#0", "S#0", "S#1"], "n2": ["A#1", "B#1"]}


# ---------------------------------------------------------------------------- T4


@pytest.mark.parametrize(
    ("weight_network", "expected"),
    [
        (
            1.0,
            {
                "n3": ["A#0", "S#0"],
                "n4": ["A#1", "S#1"],
                "n1": ["A#2", "S#2"],
                "n2": ["A#3", "S#3"],
            },
        ),
        (
            0.0,
            {
                "n3": ["A#0", "S#0"],
                "n1": ["A#1", "S#1"],
                "n2": ["A#2", "S#2"],
                "n4": ["A#3", "S#3"],
            },
        ),
    ],
)
def test_t4_network_term_breaks_ties(weight_network, expected):
    nodes = tuple(
        Node(n, 100, memory_mb=1000, rack=r)
        for n, r in (("n1", "r2"), ("n2", "r2"), ("n3", "r1"), ("n4", "r1"))
    )
    t = topo([comp("S", 4, 40, 100, True), comp("A", 4, 40, 100)], [("S", "A")])
    placement = rstorm.plan(Problem(nodes, t), weight_network=weight_network)
    assert grouped(placement) == expected
    assert placement.report["ref_node"] == "n3"
    assert placement.report["ref_rack"] == "r1"


# ---------------------------------------------------------------------------- T5


def test_t5_infeasible_is_all_or_nothing_and_names_the_resource():
    nodes = (Node("n1", 100, memory_mb=1000), Node("n2", 100, memory_mb=1000))
    t = topo([comp("S", 3, 60, 100, True)], [])
    with pytest.raises(InfeasibleError) as info:
        rstorm.plan(Problem(nodes, t))
    error = info.value
    assert error.component == "S"
    assert error.resource == "cpu"
    assert error.needed == pytest.approx(60)
    assert error.best_available == pytest.approx(40)
    assert "all-or-nothing" in str(error)


def test_executor_larger_than_any_node_fails_before_placing():
    nodes = (Node("n1", 100, memory_mb=1000),)
    t = topo([comp("S", 1, 10, 4000, True)], [])
    with pytest.raises(InfeasibleError) as info:
        rstorm.plan(Problem(nodes, t))
    assert (info.value.component, info.value.resource) == ("S", "memory")
    assert info.value.best_available == pytest.approx(1000)
    assert info.value.best_node == "n1"


def test_no_free_slot_is_infeasible():
    t = topo([comp("S", 1, 10, 10, True)], [])
    with pytest.raises(InfeasibleError, match="free worker slot"):
        rstorm.plan(Problem((Node("n1", 100, slots=0),), t))


# ---------------------------------------------------------------------------- T6


def _t6_problem():
    nodes = (Node("n1", 400, memory_mb=4000), Node("n2", 100, memory_mb=1000))
    t = topo([comp("S", 1, 50, 500, True), comp("A", 2, 50, 500)], [("S", "A")])
    return Problem(nodes, t)


def test_t6_paper_most_resources_then_best_fit_beats_locality():
    placement = rstorm.plan(_t6_problem())
    assert grouped(placement) == {"n1": ["S#0"], "n2": ["A#0", "A#1"]}


def test_t6_proto2015_closest_fit_reference_node():
    placement = rstorm.plan(_t6_problem(), variant="proto2015")
    assert grouped(placement) == {"n2": ["A#0", "S#0"], "n1": ["A#1"]}


# ---------------------------------------------------------------------------- T7


@pytest.mark.parametrize(("strict", "node"), [(False, "n1"), (True, "n2")])
def test_t7_strict_vs_non_strict_memory(strict, node):
    nodes = (Node("n1", 100, memory_mb=2000), Node("n2", 100, memory_mb=1500))
    t = topo([comp("S", 1, 10, 1000, True), comp("A", 1, 10, 1000)], [("S", "A")])
    placement = rstorm.plan(Problem(nodes, t), strict_memory=strict)
    assert where(placement, "S#0", "A#0") == ["n1", node]


# ---------------------------------------------------------------------------- T9-T12


def test_t9_linear_full_placement():
    nodes = bench.cluster()
    problem = Problem(nodes, bench.topology("Linear"))
    for variant in ("paper", "proto2015"):
        table = bench.placement_table(registry.run("rstorm", problem, {"variant": variant}), nodes)
        assert table == {
            "n01": ["word#0", "exclaim1#0", "exclaim2#0"],
            "n02": ["exclaim_output_3#0", "word#1", "exclaim1#1"],
            "n03": ["exclaim2#1", "exclaim_output_3#1", "word#2"],
            "n04": ["exclaim1#2", "exclaim2#2", "exclaim_output_3#2", "exclaim1#3", "exclaim2#3"],
            "n05": ["word#3", "exclaim_output_3#3", "exclaim1#4"],
            "n06": [
                "exclaim2#4",
                "exclaim_output_3#4",
                "exclaim1#5",
                "exclaim2#5",
                "exclaim_output_3#5",
            ],
        }


def test_t10_star_full_placement():
    nodes = bench.cluster()
    problem = Problem(nodes, bench.topology("Star"))
    assert rstorm.bfs_components(problem.topology) == [
        "spout_0",
        "center",
        "bolt_output_0",
        "bolt_output_1",
        "spout_1",
    ]
    table = bench.placement_table(registry.run("rstorm", problem), nodes)
    assert table == {
        "n01": ["spout_0#0", "center#0", "bolt_output_0#0"],
        "n02": ["bolt_output_1#0", "spout_1#0", "center#1"],
        "n03": ["spout_0#1", "bolt_output_0#1", "bolt_output_1#1"],
        "n04": ["spout_1#1", "center#2", "bolt_output_0#2"],
        "n05": ["bolt_output_1#2", "center#3", "bolt_output_0#3", "bolt_output_1#3", "center#4"],
        "n06": [
            "bolt_output_0#4",
            "bolt_output_1#4",
            "center#5",
            "bolt_output_0#5",
            "bolt_output_1#5",
        ],
    }


@pytest.mark.parametrize(
    ("name", "machines", "in_r2"),
    [
        ("Linear", 6, 0),
        ("Diamond", 7, 1),
        ("Star", 6, 0),
        ("PageLoad", 6, 0),
        ("Processing", 6, 0),
    ],
)
def test_t11_machine_counts_on_12_machines_in_2_racks(name, machines, in_r2):
    nodes = bench.cluster()
    problem = Problem(nodes, bench.topology(name))
    placement = registry.run("rstorm", problem)
    used = sorted(placement.nodes_used)
    assert len(used) == machines
    assert used == [f"n{i:02d}" for i in range(1, machines + 1)]
    assert sum(1 for n in used if int(n[1:]) > 6) == in_r2
    assert placement.worker_of == {}  # one worker per node


def test_paper_machine_counts_hold_for_every_variant():
    nodes = bench.cluster()
    for name, machines in bench.PAPER_MACHINES.items():
        for variant in rstorm.VARIANTS:
            placement = registry.run(
                "rstorm", Problem(nodes, bench.topology(name)), {"variant": variant}
            )
            assert len(placement.nodes_used) == machines, (name, variant)


def test_network_metric_matches_notes_reference():
    nodes = bench.cluster()
    for name, reference in bench.NOTES_REFERENCE.items():
        problem = Problem(nodes, bench.topology(name))
        placement = registry.run("rstorm", problem)
        assert bench.network_metric(problem, placement) == pytest.approx(reference[2], abs=0.005)
        assert bench.max_node_cpu(problem, placement) == pytest.approx(reference[1])


def test_t12_two_topologies_split_across_racks():
    assert bench.two_topology_run() == {"pageload": ["r1"], "processing": ["r2"]}


def test_t12_via_plan_cluster_nodes():
    from scheduler_py.scheduling.documents import plan_cluster

    nodes = bench.cluster(2, 12)
    result = plan_cluster(
        nodes, [bench.topology("PageLoad"), bench.topology("Processing")], "rstorm"
    )
    assert result.ok
    assert sorted(result.placements["pageload"].nodes_used) == [f"n{i:02d}" for i in range(1, 7)]
    assert sorted(result.placements["processing"].nodes_used) == [
        f"n{i:02d}" for i in range(13, 19)
    ]


# ---------------------------------------------------------------------------- variants


def test_asf_heap_cap_opens_more_workers():
    nodes = (Node("n1", 400, slots=3, memory_mb=8000),)
    t = topo([comp("S", 4, 10, 300, True)], [])
    placement = registry.run("rstorm", Problem(nodes, t), {"variant": "asf1.0"})
    # 768 MB per worker: two 300 MB executors per worker
    assert sorted(placement.worker_of.values()) == [0, 0, 1, 1]
    placement = registry.run("rstorm", Problem(nodes, t), {"variant": "paper"})
    assert placement.worker_of == {}


def test_asf_heap_cap_respects_slots():
    nodes = (Node("n1", 400, slots=1, memory_mb=8000), Node("n2", 400, slots=1, memory_mb=8000))
    t = topo([comp("S", 4, 10, 300, True)], [])
    placement = registry.run("rstorm", Problem(nodes, t), {"variant": "asf1.0"})
    assert grouped(placement) == {"n1": ["S#0", "S#1"], "n2": ["S#2", "S#3"]}


def test_unknown_memory_drops_memory_term():
    # no memory declared anywhere (Node.memory_mb infinite): CPU best fit still packs
    nodes = tuple(Node(f"n{i}", 100) for i in range(3))
    t = Topology(
        "t",
        (Component("S", 4, 120, is_spout=True), Component("A", 4, 120)),
        (Edge("S", "A", 1),),
    )
    placement = registry.run("rstorm", Problem(nodes, t))
    assert grouped(placement) == {
        "n0": ["A#0", "S#0", "S#1"],
        "n1": ["A#1", "A#2", "S#2"],
        "n2": ["A#3", "S#3"],
    }


def test_bad_variant_is_rejected():
    with pytest.raises(SchedulingError, match="variant"):
        rstorm.plan(_t3_problem(), variant="nope")


# ---------------------------------------------------------------------------- property


@st.composite
def problems(draw):
    n_nodes = draw(st.integers(1, 5))
    racks = draw(st.integers(1, 3))
    nodes = tuple(
        Node(
            f"n{i}",
            float(draw(st.integers(50, 400))),
            slots=draw(st.integers(1, 3)),
            memory_mb=float(draw(st.integers(500, 4000))),
            rack=f"r{i % racks}",
        )
        for i in range(n_nodes)
    )
    n_comp = draw(st.integers(1, 4))
    components = tuple(
        comp(
            f"c{i}",
            draw(st.integers(1, 4)),
            float(draw(st.integers(1, 80))),
            float(draw(st.integers(10, 600))),
            spout=i == 0,
        )
        for i in range(n_comp)
    )
    edges = tuple(Edge(f"c{i}", f"c{i + 1}", 1.0) for i in range(n_comp - 1))
    return Problem(nodes, Topology("p", components, edges))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problem=problems(), variant=st.sampled_from(rstorm.VARIANTS))
def test_property_complete_and_within_capacity_or_clear_failure(problem, variant):
    try:
        placement = rstorm.plan(problem, variant=variant)
    except InfeasibleError as error:
        assert error.component in {c.id for c in problem.topology.components}
        assert error.resource in {"cpu", "memory", "slots"}
        assert error.needed is not None and error.best_available is not None
        return
    assert violations(problem, placement) == []
    assert set(placement.node_of) == set(problem.topology.executor_by_id)
