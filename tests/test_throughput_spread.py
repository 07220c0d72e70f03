"""The throughput model's per-resource loads summed per route (``_spread_loads`` in
``scheduler_py/model/throughput.py``) against the same loads summed pair by pair, and the
``throughput`` algorithm's canonical node order kept up to date across a round's tables
(``scheduler_py/algorithms/fastest.py``) against a fresh sort, on random cases."""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from scheduler_py.algorithms.fastest import _CanonicalOrder, _node_key
from scheduler_py.model.throughput import (
    SCOPES,
    Shape,
    ThroughputInputs,
    _Round,
    _spread_loads,
    throughput,
)
from scheduler_py.model.types import Component, Edge, Node, Placement, Problem, Topology

GROUPINGS = ("shuffle", "local_or_shuffle", "fields", "all", "global", "none", "direct")


@st.composite
def cases(draw: st.DrawFn) -> tuple[Problem, Placement, ThroughputInputs, dict]:
    """A random DAG of 2-5 components (the first one or two spouts), random groupings and
    parallelism, on 1-6 nodes in 1-3 racks, with 1-2 workers per node and random scope
    levels per sender."""
    count = draw(st.integers(2, 5))
    spouts = draw(st.integers(1, min(2, count - 1)))
    components = tuple(
        Component(f"c{i}", draw(st.integers(1, 5)), 10.0, is_spout=i < spouts) for i in range(count)
    )
    edges = []
    for target in range(spouts, count):
        sources = draw(st.sets(st.integers(0, target - 1), min_size=1, max_size=2))
        for source in sorted(sources):
            edges.append(
                Edge(
                    f"c{source}",
                    f"c{target}",
                    draw(st.floats(0.1, 10.0)),
                    draw(st.sampled_from(GROUPINGS)),
                )
            )
    topology = Topology("t", components, tuple(edges), workers=12)
    size = draw(st.integers(1, 6))
    racks = draw(st.integers(1, 3))
    nodes = tuple(Node(f"h{i}", 100.0, slots=4, rack=f"/r{i % racks}") for i in range(size))
    problem = Problem(nodes, topology)
    node_of = {e.id: f"h{draw(st.integers(0, size - 1))}" for e in topology.executors}
    worker_of = {e: draw(st.integers(0, 1)) for e in node_of}
    placement = Placement("t", node_of, worker_of=worker_of)
    inputs = ThroughputInputs(
        loadaware=draw(st.booleans()),
        payload_bytes=draw(st.sampled_from([64.0, 1024.0, 8192.0])),
        host_bandwidth=12.5e6,
        rack_bandwidth=draw(st.sampled_from([None, 6.25e6])),
        in_flight=draw(st.sampled_from([None, 1000.0])),
        acking=draw(st.booleans()),
    )
    levels = {
        (edge.source, edge.target, (node, worker)): draw(st.integers(0, len(SCOPES) - 1))
        for edge in edges
        for node in {n.id for n in nodes}
        for worker in (0, 1)
        if draw(st.booleans())
    }
    return problem, placement, inputs, levels


def _pairwise(state: _Round, spread: dict, lists: dict) -> tuple[dict[str, float], float]:
    """The loads of every (sender worker, receiver worker) flow, one pair at a time."""
    constants = state.inputs.constants
    tuple_bytes = state.inputs.payload_bytes + constants.framing_bytes
    load: dict[str, float] = defaultdict(float)
    crossing = 0.0
    for (sender, list_id), share in spread.items():
        counts: dict[tuple, int] = defaultdict(int)
        for target in lists[list_id]:
            counts[state.placement.worker_key(target)] += 1
        for receiver, count in counts.items():
            tuples = share * count
            if sender != receiver:
                load[f"{sender[0]} cpu"] += tuples * constants.remote_cpu
                load[f"{receiver[0]} cpu"] += tuples * constants.remote_cpu
            if sender[0] != receiver[0]:
                crossing += tuples
                load[f"{sender[0]} out"] += tuples * tuple_bytes
                load[f"{receiver[0]} in"] += tuples * tuple_bytes
                out_rack, in_rack = state.rack_of[sender[0]], state.rack_of[receiver[0]]
                if out_rack != in_rack:
                    load[f"{out_rack} out"] += tuples * tuple_bytes
                    load[f"{in_rack} in"] += tuples * tuple_bytes
    return dict(load), crossing


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)


@settings(max_examples=300, deadline=None)
@given(cases())
def test_loads_summed_per_route_equal_the_pairwise_sums(case: tuple) -> None:
    problem, placement, inputs, levels = case
    state = _Round(problem, placement, inputs, Shape(problem.topology))
    state.level = dict(levels)
    _, spread, lists = state.route()
    summed: dict[str, float] = defaultdict(float)
    crossing = _spread_loads(state, spread, lists, summed)
    pairs, pair_crossing = _pairwise(state, spread, lists)
    assert _close(crossing, pair_crossing)
    for resource in set(summed) | set(pairs):
        assert _close(summed.get(resource, 0.0), pairs.get(resource, 0.0)), resource


@settings(max_examples=150, deadline=None)
@given(cases())
def test_a_topology_shape_scored_many_times_scores_as_a_fresh_one(case: tuple) -> None:
    problem, placement, inputs, _ = case
    shape = Shape(problem.topology)
    once = throughput(problem, placement, inputs)
    for _ in range(2):  # the scorer's reuse of one shape over many plans
        again = throughput(problem, placement, inputs, shape)
        assert again.bottleneck == once.bottleneck
        assert again.rate == once.rate or _close(again.rate, once.rate)


NODE = st.builds(
    Node,
    st.just("x"),
    st.sampled_from([0.0, 50.0, 100.0, 400.0]),
    slots=st.integers(0, 4),
    memory_mb=st.sampled_from([0.0, 1024.0, 4096.0]),
    rack=st.sampled_from(["", "/r1", "/r2"]),
    speed=st.sampled_from([1.0, 2.0]),
)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(NODE, min_size=1, max_size=40),
    st.lists(st.lists(st.tuples(st.integers(0, 39), NODE), max_size=4), max_size=6),
)
def test_canonical_order_follows_a_rounds_tables_as_a_fresh_sort(
    nodes: list[Node], claims: list[list[tuple[int, Node]]]
) -> None:
    named = [
        Node(f"s{i:02d}", n.cpu, n.slots, n.memory_mb, n.rack, None, n.speed)
        for i, n in enumerate(nodes)
    ]
    table = Problem(tuple(named), Topology("t", (Component("c", 1),))).table
    order = _CanonicalOrder()
    assert order.ordered(table) == sorted(table, key=_node_key)
    for claim in claims:  # each claim replaces a few nodes, as a round's claims do
        changed = {}
        for index, node in claim:
            old = table[index % len(table)]
            changed[old.id] = Node(
                old.id, node.cpu, node.slots, node.memory_mb, old.rack, None, node.speed
            )
        table = table.replaced(changed.values())
        assert order.ordered(table) == sorted(table, key=_node_key)
        if len(claim) % 2:  # a topology's own table beside the round's (it holds a slot there)
            side = table.replaced([replace(table[0], cpu=table[0].cpu + 1.0)])
            assert order.ordered(side) == sorted(side, key=_node_key)
