"""The cost module on hand-computed cases (paper 000 §1.4 counting convention)."""

from __future__ import annotations

import math

import pytest

from scheduler_py.model.capacity import check_feasible
from scheduler_py.model.cost import evaluate, imc_gain, violations
from scheduler_py.model.errors import InfeasibleError
from scheduler_py.model.types import Component, Edge, Node, Placement, Problem, Topology


def _pipeline() -> Topology:
    # a(2 x 10%) -> b(4 x 5%), traffic 8 split over 8 pairs = 1 per pair
    return Topology(
        "t",
        (Component("a", 2, cpu=20.0, memory_mb=200.0), Component("b", 4, cpu=20.0)),
        (Edge("a", "b", 8.0),),
    )


def test_uniform_split_and_phi_by_hand():
    topology = _pipeline()
    assert [e.cpu for e in topology.executors] == [10.0, 10.0, 5.0, 5.0, 5.0, 5.0]
    node_of = {"a#0": "n1", "a#1": "n2", "b#0": "n1", "b#1": "n1", "b#2": "n2", "b#3": "n2"}
    # n1: 1 a x 2 b = 2 links, n2: 1 a x 2 b = 2 links -> phi = 4 x 1.0
    assert imc_gain(topology, node_of) == pytest.approx(4.0)
    problem = Problem((Node("n1", 100.0), Node("n2", 100.0)), topology)
    ev = evaluate(problem, Placement("t", node_of))
    assert ev.imc_gain == pytest.approx(4.0)
    assert ev.internode_traffic == pytest.approx(4.0)
    assert ev.total_traffic == pytest.approx(8.0)
    assert ev.node_cpu == {"n1": 20.0, "n2": 20.0}
    assert ev.node_memory == {"n1": 100.0, "n2": 100.0}
    assert ev.max_node_load == 20.0 and ev.max_node_utilisation == pytest.approx(0.2)
    assert ev.nodes_used == 2 and ev.workers_used == 2 and ev.feasible


def test_interworker_traffic_counts_worker_boundaries():
    topology = _pipeline()
    node_of = dict.fromkeys(("a#0", "a#1", "b#0", "b#1", "b#2", "b#3"), "n1")
    worker_of = {"a#0": 0, "b#0": 0, "b#1": 0, "a#1": 1, "b#2": 1, "b#3": 1}
    problem = Problem((Node("n1", 100.0),), topology)
    ev = evaluate(problem, Placement("t", node_of, worker_of=worker_of))
    assert ev.imc_gain == pytest.approx(8.0)
    assert ev.internode_traffic == 0.0
    assert ev.interworker_traffic == pytest.approx(4.0)
    assert ev.workers_used == 2


def test_measured_pair_traffic_replaces_uniform_split():
    topology = Topology(
        "t",
        (Component("a", 2, cpu=20.0), Component("b", 2, cpu=20.0)),
        (Edge("a", "b", 100.0),),
        pair_traffic={("a#0", "b#0"): 7.0, ("a#1", "b#1"): 3.0},
        executor_cpu={"a#0": 15.0},
    )
    assert topology.executor_by_id["a#0"].cpu == 15.0
    assert topology.executor_by_id["a#1"].cpu == 10.0
    node_of = {"a#0": "n1", "b#0": "n1", "a#1": "n1", "b#1": "n2"}
    assert imc_gain(topology, node_of) == pytest.approx(7.0)


def test_parallel_streams_are_merged():
    topology = Topology(
        "t", (Component("a", 1), Component("b", 1)), (Edge("a", "b", 2.0), Edge("a", "b", 3.0))
    )
    assert [(e.source, e.target, e.traffic) for e in topology.merged_edges] == [("a", "b", 5.0)]


def test_violations_name_what_is_wrong():
    topology = _pipeline()
    problem = Problem((Node("n1", 25.0, slots=1, memory_mb=150.0), Node("n2", 100.0)), topology)
    node_of = {"a#0": "n1", "a#1": "n1", "b#0": "n1", "b#1": "n9"}
    found = violations(problem, Placement("t", node_of, worker_of={"a#1": 1}))
    text = " | ".join(found)
    assert "2 executor(s) not placed: b#2, b#3" in text
    assert "unknown node(s) ['n9']" in text
    assert "node n1: CPU 25.00 exceeds" not in text  # 25 fits exactly (epsilon)
    assert "node n1: memory 200.0 MB exceeds capacity 150.0 MB" in text
    assert "node n1: 2 workers need more than its 1 free slot(s)" in text


def test_capacity_epsilon_three_thirds_fit():
    topology = Topology("t", (Component("a", 3, cpu=100.0),))
    problem = Problem((Node("n1", 100.0),), topology)
    assert not violations(problem, Placement("t", dict.fromkeys(("a#0", "a#1", "a#2"), "n1")))


def test_check_feasible_names_component_resource_need_and_best():
    topology = Topology("t", (Component("small", 2, cpu=20.0), Component("fat", 1, cpu=150.0)))
    problem = Problem((Node("n1", 100.0), Node("n2", 120.0)), topology)
    with pytest.raises(InfeasibleError) as caught:
        check_feasible(problem)
    error = caught.value
    assert (error.component, error.resource, error.best_node) == ("fat", "cpu", "n2")
    assert error.needed == 150.0 and error.best_available == 120.0
    assert "component fat needs 150.0% CPU per executor but the best node n2 has 120.0%" in str(
        error
    )


def test_check_feasible_totals_and_memory_and_slots():
    topology = Topology("t", (Component("a", 4, cpu=160.0, memory_mb=400.0),))
    with pytest.raises(InfeasibleError, match=r"needs 160\.0% CPU in total"):
        check_feasible(Problem((Node("n1", 100.0), Node("n2", 50.0)), topology))
    with pytest.raises(InfeasibleError, match=r"needs 100\.0 MB memory per executor"):
        check_feasible(Problem((Node("n1", 400.0, memory_mb=64.0),), topology))
    with pytest.raises(InfeasibleError, match="no node has a free worker slot"):
        check_feasible(Problem((Node("n1", 400.0, slots=0),), topology))


def test_model_rejects_malformed_values():
    with pytest.raises(ValueError, match="parallelism must be >= 1"):
        Component("a", 0)
    with pytest.raises(ValueError, match="unknown component 'zz'"):
        Topology("t", (Component("a", 1),), (Edge("a", "zz", 1.0),))
    with pytest.raises(ValueError, match="duplicate node ids"):
        Problem((Node("n", 1.0), Node("n", 2.0)), Topology("t", (Component("a", 1),)))
    with pytest.raises(ValueError, match="capacities must be >= 0"):
        Node("n", -1.0)
    assert math.isinf(Node("n", 1.0).memory_mb)
