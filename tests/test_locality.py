"""``locality``: slices for Storm's locality-aware shuffle (``algorithms/locality.py``)."""

from __future__ import annotations

import dataclasses
from itertools import pairwise

import pytest

from scheduler_py.algorithms import registry
from scheduler_py.algorithms.locality import (
    component_order,
    executor_weight,
    flows,
    segments,
    slices,
)
from scheduler_py.model.cost import violations
from scheduler_py.model.errors import InfeasibleError
from scheduler_py.model.types import Component, Edge, Node, Problem, Topology
from scheduler_py.scheduling.round import RoundConfig, choose_algorithm

LINEAR = Topology(
    "lin",
    (
        Component("word", 2, 20, 256, is_spout=True),
        Component("exclaim1", 2, 20, 256),
        Component("exclaim2", 2, 20, 256),
        Component("out", 2, 20, 256),
        Component("__acker", 1, 10, 128, is_system=True),
    ),
    (
        Edge("exclaim2", "out", 1.0),  # listed out of order on purpose
        Edge("word", "exclaim1", 1.0),
        Edge("exclaim1", "exclaim2", 1.0),
        Edge("word", "__acker", 0.1),
        Edge("out", "__acker", 0.1),
        Edge("__acker", "word", 0.1),
    ),
    workers=6,
)


def hosts(cpu: float, racks: int = 2, per_rack: int = 3) -> tuple[Node, ...]:
    return tuple(
        Node(f"h{r * per_rack + i + 1}", cpu, slots=4, memory_mb=4096, rack=f"/rack-{r + 1}")
        for r in range(racks)
        for i in range(per_rack)
    )


def slice_nodes(placement, members) -> set[str]:
    return {placement.node_of[e.id] for e in members}


def test_slices_hold_one_executor_of_every_component_in_path_order():
    assert component_order(LINEAR) == ["word", "exclaim1", "exclaim2", "out"]
    found = slices(LINEAR, loadaware=True)
    assert [[e.id for e in s] for s in found] == [
        ["word#0", "exclaim1#0", "exclaim2#0", "out#0"],
        ["word#1", "exclaim1#1", "exclaim2#1", "out#1"],
    ]
    assert [len(s) for s in slices(LINEAR, loadaware=False)] == [8]


def test_a_slice_that_fits_a_node_gets_a_node_of_its_own():
    problem = Problem(hosts(100), LINEAR)
    placement = registry.run("locality", problem)
    first, second = (slice_nodes(placement, s) for s in slices(LINEAR, True))
    assert len(first) == 1 and len(second) == 1 and first != second
    assert set(placement.worker_of.values()) == {0}  # one worker per node
    assert not violations(problem, placement)


def test_slices_too_big_for_a_node_are_cut_into_segments_on_distinct_nodes_of_one_rack():
    # 0.3 core per host (the issue-13 emulation): a slice (4 x 10) does not fit 30
    problem = Problem(hosts(30), LINEAR)
    placement = registry.run("locality", problem)
    rack_of = {n.id: n.rack for n in problem.nodes}
    used = []
    for members in slices(LINEAR, True):
        nodes = slice_nodes(placement, members)
        assert len(nodes) == 2
        assert len({rack_of[n] for n in nodes}) == 1, "a slice's segments stay in one rack"
        used.append(nodes)
    assert not used[0] & used[1], "two slices never share a node while others are free"
    # consecutive segments: the path crosses hosts once
    first = slices(LINEAR, True)[0]
    crossings = sum(placement.node_of[a.id] != placement.node_of[b.id] for a, b in pairwise(first))
    assert crossings == 1
    assert not violations(problem, placement)


def test_the_plan_uses_at_most_topology_workers_nodes_of_one_rack_when_they_suffice():
    problem = Problem(hosts(30), dataclasses.replace(LINEAR, workers=3))
    placement = registry.run("locality", problem)
    rack_of = {n.id: n.rack for n in problem.nodes}
    assert len(placement.nodes_used) == 3
    assert len({rack_of[n] for n in placement.nodes_used}) == 1
    assert not violations(problem, placement)
    # each slice's first three executors share a node: its path crosses hosts once
    for members in slices(LINEAR, True):
        crossings = sum(
            placement.node_of[a.id] != placement.node_of[b.id] for a, b in pairwise(members)
        )
        assert crossings == 1


def test_too_few_workers_for_the_topology_falls_back_to_every_node():
    # 90 points do not fit 2 x 30: the plan uses more nodes, and the round refuses it
    # (the worker merge finds no room on 30-point nodes) with the reason instead of the
    # algorithm failing here
    problem = Problem(hosts(30), dataclasses.replace(LINEAR, workers=2))
    placement = registry.run("locality", problem)
    assert len(placement.nodes_used) > 2


def test_without_loadaware_messaging_linear_stays_in_three_nodes_of_one_rack():
    problem = Problem(hosts(30), LINEAR)
    placement = registry.run("locality", problem, {"loadaware": False})
    assert len(placement.nodes_used) == 3  # 90 points of CPU in 30-point nodes
    assert not violations(problem, placement)


def test_when_nodes_run_out_slices_share_them_within_capacity():
    problem = Problem(hosts(100, racks=1, per_rack=1), LINEAR)
    placement = registry.run("locality", problem)
    assert placement.nodes_used == {"h1"}
    assert not violations(problem, placement)


def test_too_little_capacity_is_a_clear_error():
    with pytest.raises(InfeasibleError, match=r"needs .* in total"):
        registry.run("locality", Problem(hosts(10, racks=1, per_rack=2), LINEAR))
    # enough in total, but fragmented: 9 executors of 10 on nodes of 15 fit only one each
    fragmented = tuple(Node(f"n{i}", 15, memory_mb=4096) for i in range(6))
    with pytest.raises(InfeasibleError, match="no node has room left for executor"):
        registry.run("locality", Problem(fragmented, LINEAR))


def test_a_cycle_between_components_is_ordered_and_placed():
    cyclic = Topology(
        "cyc",
        (Component("a", 2, 10, is_spout=True), Component("b", 2, 10), Component("c", 2, 10)),
        (Edge("a", "b", 1), Edge("b", "c", 1), Edge("c", "b", 1)),
    )
    assert component_order(cyclic) == ["a", "b", "c"]
    problem = Problem(hosts(100), cyclic)
    assert not violations(problem, registry.run("locality", problem))


@pytest.mark.parametrize(
    ("conf", "expected"),
    [
        ({}, True),
        ({"topology.disable.loadaware.messaging": False}, True),
        ({"topology.disable.loadaware.messaging": True}, False),
        ({"topology.disable.loadaware.messaging": "true"}, False),
        (
            {
                "scheduler.brain.params": {"loadaware": True},
                "topology.disable.loadaware.messaging": True,
            },
            True,
        ),
    ],
)
def test_the_round_reads_storms_loadaware_key_for_locality(conf, expected):
    algorithm, params = choose_algorithm(
        {"scheduler.brain.algorithm": "locality", **conf}, RoundConfig()
    )
    assert algorithm == "locality"
    assert params["loadaware"] is expected


def test_other_algorithms_get_no_loadaware_parameter():
    _, params = choose_algorithm(
        {"scheduler.brain.algorithm": "td", "topology.disable.loadaware.messaging": True},
        RoundConfig(),
    )
    assert "loadaware" not in params


STAR = Topology(
    "star",
    (
        Component("spout_0", 2, 20, 256, is_spout=True),
        Component("spout_1", 2, 20, 256, is_spout=True),
        Component("center", 2, 20, 256),
        Component("bolt_output_0", 2, 20, 256),
        Component("bolt_output_1", 2, 20, 256),
        Component("__acker", 1, 10, 128, is_system=True),
    ),
    (
        Edge("spout_0", "center", 1.0),
        Edge("spout_1", "center", 1.0),
        Edge("center", "bolt_output_0", 1.0),
        Edge("center", "bolt_output_1", 1.0),
        Edge("bolt_output_0", "__acker", 0.1),
    ),
    workers=6,
)


def test_declared_flows_follow_the_tuples_a_spout_tuple_causes():
    assert flows(STAR) == {
        ("spout_0", "center"): 2.0,
        ("spout_1", "center"): 2.0,
        ("center", "bolt_output_0"): 4.0,  # what reaches center, sent to each output
        ("center", "bolt_output_1"): 4.0,
    }
    fan_out = Topology(
        "f",
        (Component("s", 1, 10, is_spout=True), Component("b", 3, 30)),
        (Edge("s", "b", 1.0, grouping="all"),),
    )
    assert flows(fan_out) == {("s", "b"): 3.0}  # one copy per target executor


def test_measured_flows_replace_the_declared_ones():
    measured = dataclasses.replace(
        STAR, pair_traffic={("spout_0#0", "center#1"): 5.0, ("center#1", "__acker#0"): 9.0}
    )
    assert flows(measured) == {("spout_0", "center"): 5.0}


def test_star_is_cut_before_center_where_less_crosses():
    # 5 x 10 points per slice on 30-point nodes: two segments; cutting after center would
    # send both outputs' copies across, cutting before it only the spouts' tuples
    problem = Problem(hosts(30), STAR)
    placement = registry.run("locality", problem)
    for members in slices(STAR, True):
        where = {e.component: placement.node_of[e.id] for e in members}
        assert where["center"] == where["bolt_output_0"] == where["bolt_output_1"]
        assert where["spout_0"] == where["spout_1"] != where["center"]
    assert not violations(problem, placement)


def test_segments_prefer_fewest_then_least_crossing_and_refuse_what_cannot_fit():
    members = list(slices(STAR, True)[0])
    weight = executor_weight(STAR)
    cut = segments(members, weight, cpu=30, memory=4096)
    assert [[e.component for e in s] for s in cut] == [
        ["spout_0", "spout_1"],
        ["center", "bolt_output_0", "bolt_output_1"],
    ]
    assert len(segments(members, weight, cpu=50, memory=4096)) == 1
    assert segments(members, weight, cpu=5, memory=4096) is None
