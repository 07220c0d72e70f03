"""Several topologies on one cluster (scheduling/documents.py): the order, each topology seeing
the others' usage (new plans before it, current placements after it), slots, keep_current,
failures, and R-Storm's two-topology run (notes 003 T12)."""

from __future__ import annotations

import pytest

from scheduler_py.bench import paper003_rstorm as rstorm_bench
from scheduler_py.model import Component, Node, Placement, SchedulingError, Topology
from scheduler_py.scheduling.claims import Usage, subtract, usage_of
from scheduler_py.scheduling.documents import plan_cluster


def single(tid: str, cpu: float, memory: float = 0.0, parallelism: int = 1) -> Topology:
    return Topology(tid, (Component("s", parallelism, cpu, memory, is_spout=True),))


NODES = (Node("n1", 100.0, slots=2, memory_mb=1000.0), Node("n2", 100.0, slots=2, memory_mb=1000.0))


def test_each_topology_sees_the_previous_plans():
    result = plan_cluster(NODES, [single("a", 80), single("b", 80)], "rstorm")
    assert result.ok and result.order == ("a", "b")
    assert result.placements["a"].nodes_used == {"n1"}
    assert result.placements["b"].nodes_used == {"n2"}
    remaining = {n.id: (n.cpu, n.slots) for n in result.remaining}
    assert remaining == {"n1": (20.0, 1), "n2": (20.0, 1)}


def test_current_placements_of_later_topologies_occupy_capacity():
    current = {"b": Placement("b", {"s#0": "n1"})}
    result = plan_cluster(NODES, [single("a", 80), single("b", 80)], "rstorm", current)
    # a is planned first but b still runs on n1, so a goes to n2; then b is re-planned
    assert result.placements["a"].nodes_used == {"n2"}
    assert result.placements["b"].nodes_used == {"n1"}


def test_keep_current_leaves_valid_placements_alone():
    current = {"b": Placement("b", {"s#0": "n2"})}
    result = plan_cluster(
        NODES, [single("a", 50), single("b", 80)], "rstorm", current, keep_current=True
    )
    assert result.kept == frozenset({"b"})
    assert result.placements["b"] is current["b"]
    assert result.placements["a"].nodes_used == {"n1"}


@pytest.mark.parametrize(
    ("order", "expected"),
    [("given", ("small", "big")), ("id", ("big", "small")), ("cpu_desc", ("big", "small"))],
)
def test_orders(order, expected):
    topologies = [single("small", 10), single("big", 90)]
    result = plan_cluster(NODES, topologies, "rstorm", order=order)
    assert result.order == expected


def test_a_topology_that_no_longer_fits_fails_alone():
    nodes = (Node("n1", 100.0), Node("n2", 100.0))
    topologies = [single("s1", 60), single("s2", 60), single("big", 140, parallelism=2)]
    result = plan_cluster(nodes, topologies, "rstorm")
    assert set(result.failures) == {"big"}
    error = result.failures["big"]
    assert (error.component, error.resource) == ("s", "cpu")
    assert set(result.placements) == {"s1", "s2"}


def test_failure_keeps_its_current_placement_for_the_next():
    current = {"huge": Placement("huge", {"s#0": "n1"})}
    topologies = [single("huge", 500), single("c", 90)]
    result = plan_cluster(NODES, topologies, "rstorm", current)
    assert "huge" in result.failures
    assert "needs 500.0% CPU" in str(result.failures["huge"])
    # huge still occupies n1 in the model (clamped to zero), so c goes to n2
    assert result.placements["c"].nodes_used == {"n2"}


def test_slots_are_consumed_by_workers():
    nodes = (Node("n1", 400.0, slots=1), Node("n2", 100.0, slots=1))
    result = plan_cluster(nodes, [single("a", 10), single("b", 10)], "rstorm")
    assert result.placements["a"].nodes_used == {"n1"}  # most resources
    assert result.placements["b"].nodes_used == {"n2"}  # n1 has no free slot left


def test_algorithm_choice_forms():
    topologies = [single("a", 30), single("b", 30)]
    by_id = plan_cluster(NODES, topologies, {"a": "t3", "b": ("online", {"load_cap": 0.5})})
    assert by_id.placements["a"].algorithm == "t3"
    assert by_id.placements["b"].algorithm == "online"
    by_function = plan_cluster(NODES, topologies, lambda t: "even")
    assert {p.algorithm for p in by_function.placements.values()} == {"even"}
    missing = plan_cluster(NODES, topologies, {"a": "t3"})
    assert set(missing.failures) == {"b"}
    assert "no algorithm given" in str(missing.failures["b"])


def test_bad_arguments():
    with pytest.raises(SchedulingError, match="duplicate"):
        plan_cluster(NODES, [single("a", 1), single("a", 1)], "rstorm")
    with pytest.raises(SchedulingError, match="order"):
        plan_cluster(NODES, [single("a", 1)], "rstorm", order="random")


def test_usage_and_subtract_clamp_at_zero():
    topology = Topology("t", (Component("s", 2, 300.0, 3000.0, is_spout=True),))
    placement = Placement("t", {"s#0": "n1", "s#1": "n1"}, worker_of={"s#1": 1})
    usage = usage_of(NODES, topology, placement)
    assert usage == {"n1": Usage(300.0, 3000.0, 2)}
    n1, n2 = subtract(NODES, [usage])
    assert (n1.cpu, n1.memory_mb, n1.slots) == (0.0, 0.0, 0)
    assert n2 == NODES[1]


def test_rstorm_two_topologies_split_across_racks():
    nodes = rstorm_bench.cluster(2, 12)
    topologies = [rstorm_bench.topology("PageLoad"), rstorm_bench.topology("Processing")]
    result = plan_cluster(nodes, topologies, "rstorm")
    racks = {n.id: n.rack for n in nodes}
    assert {racks[n] for n in result.placements["pageload"].nodes_used} == {"r1"}
    assert {racks[n] for n in result.placements["processing"].nodes_used} == {"r2"}
    assert len(result.placements["pageload"].nodes_used) == 6
    assert len(result.placements["processing"].nodes_used) == 6
