"""Storm's locality-aware shuffle as a traffic model (``scheduler_py/model/loadaware.py``)."""

from __future__ import annotations

import pytest

from scheduler_py.model.cost import evaluate
from scheduler_py.model.loadaware import (
    loadaware_internode_traffic,
    loadaware_pair_traffic,
    uniform_pair_traffic,
    user_internode_share,
)
from scheduler_py.model.types import Component, Edge, Node, Placement, Problem, Topology

TWO_STAGE = Topology(
    "t",
    (Component("a", 2, 10, is_spout=True), Component("b", 2, 10), Component("c", 1, 10)),
    (Edge("a", "b", 4.0), Edge("b", "c", 2.0, grouping="fields")),
)
NODES = (
    Node("n1", 100, rack="r1"),
    Node("n2", 100, rack="r1"),
    Node("n3", 100, rack="r2"),
)


def placement(node_of: dict[str, str], worker_of: dict[str, int] | None = None) -> Placement:
    return Placement("t", node_of, worker_of=worker_of or {})


def test_shuffle_stays_in_the_worker_when_a_target_is_there():
    split = placement({"a#0": "n1", "b#0": "n1", "a#1": "n2", "b#1": "n2", "c#0": "n1"})
    problem = Problem(NODES, TWO_STAGE)
    pairs = loadaware_pair_traffic(problem, split)
    assert pairs[("a#0", "b#0")] == pytest.approx(2.0)
    assert ("a#0", "b#1") not in pairs
    # the fields edge keeps the uniform split: b#1 -> c#0 crosses nodes
    assert loadaware_internode_traffic(problem, split) == pytest.approx(1.0)
    # the uniform model would count half of a -> b as crossing too
    assert evaluate(problem, split).internode_traffic == pytest.approx(3.0)


def test_the_scope_widens_to_host_then_rack_then_everything():
    problem = Problem(NODES, TWO_STAGE)
    other_worker = placement(
        {"a#0": "n1", "b#0": "n1", "a#1": "n3", "b#1": "n2", "c#0": "n1"},
        {"a#0": 0, "b#0": 1, "a#1": 0, "b#1": 0, "c#0": 0},
    )
    pairs = loadaware_pair_traffic(problem, other_worker)
    assert pairs[("a#0", "b#0")] == pytest.approx(2.0)  # same host, other worker
    # a#1 on n3 (rack r2) has no target in its rack: every target
    assert pairs[("a#1", "b#0")] == pytest.approx(1.0)
    assert pairs[("a#1", "b#1")] == pytest.approx(1.0)


def test_measured_outflows_are_rerouted_by_the_new_placement():
    measured = Topology(
        "t",
        TWO_STAGE.components,
        TWO_STAGE.edges,
        pair_traffic={("a#0", "b#1"): 5.0, ("a#1", "b#0"): 3.0, ("b#0", "c#0"): 1.0},
    )
    problem = Problem(NODES, measured)
    split = placement({"a#0": "n1", "b#0": "n1", "a#1": "n2", "b#1": "n2", "c#0": "n1"})
    pairs = loadaware_pair_traffic(problem, split)
    assert pairs == {("a#0", "b#0"): 5.0, ("a#1", "b#1"): 3.0, ("b#0", "c#0"): 1.0}


def test_user_share_leaves_out_system_streams():
    with_acker = Topology(
        "t",
        (*TWO_STAGE.components, Component("__acker", 1, 5, is_system=True)),
        (*TWO_STAGE.edges, Edge("a", "__acker", 10.0), Edge("__acker", "a", 10.0)),
    )
    problem = Problem(NODES, with_acker)
    split = placement(
        {"a#0": "n1", "b#0": "n1", "a#1": "n2", "b#1": "n2", "c#0": "n1", "__acker#0": "n3"}
    )
    routed = loadaware_pair_traffic(problem, split)
    # user traffic: a -> b 4 (all worker-local), b -> c 2 (half from b#1 on n2 crosses)
    assert user_internode_share(problem, split, routed) == pytest.approx(1.0 / 6.0)
    # uniform: half of a -> b crosses too
    uniform = uniform_pair_traffic(problem)
    assert user_internode_share(problem, split, uniform) == pytest.approx(3.0 / 6.0)


def test_equal_declared_weights_are_read_as_tuples_per_spout_tuple():
    # Storm's snapshot weighs every edge the same; Star's center sends each output twice
    # what a spout sends it, so the cut after center carries two thirds of the payload
    star = Topology(
        "star",
        (
            Component("s0", 1, 10, is_spout=True),
            Component("s1", 1, 10, is_spout=True),
            Component("center", 1, 10),
            Component("o0", 1, 10),
            Component("o1", 1, 10),
        ),
        (
            Edge("s0", "center", 1.0),
            Edge("s1", "center", 1.0),
            Edge("center", "o0", 1.0),
            Edge("center", "o1", 1.0),
        ),
    )
    problem = Problem(NODES, star)
    after = placement({"s0#0": "n1", "s1#0": "n1", "center#0": "n1", "o0#0": "n2", "o1#0": "n2"})
    before = placement({"s0#0": "n1", "s1#0": "n1", "center#0": "n2", "o0#0": "n2", "o1#0": "n2"})
    for cut, expected in ((after, 2 / 3), (before, 1 / 3)):
        routed = loadaware_pair_traffic(problem, cut)
        assert user_internode_share(problem, cut, routed) == pytest.approx(expected)
        uniform = uniform_pair_traffic(problem)
        assert user_internode_share(problem, cut, uniform) == pytest.approx(expected)
