"""``links``: the busiest link lowest under uniform shuffles (``algorithms/links.py``)."""

from __future__ import annotations

import itertools

import pytest

from scheduler_py.algorithms import registry
from scheduler_py.algorithms.links import link_loads, user_pairs
from scheduler_py.config import ConfigValueError
from scheduler_py.model.budget import Budget
from scheduler_py.model.cost import violations
from scheduler_py.model.errors import InfeasibleError
from scheduler_py.model.types import Component, Edge, Node, Placement, Problem, Topology


def topology(name: str, components: list[str], edges: list[tuple[str, str]]) -> Topology:
    """The shape ``bench cluster`` submits: 2 executors per component, 10 CPU points each,
    one acker, every edge declaring the same weight (as Storm's snapshot does)."""
    user = tuple(Component(c, 2, 20, 256, is_spout=c.startswith("spout")) for c in components)
    acker = Component("__acker", 1, 10, 128, is_system=True)
    streams = tuple(Edge(a, b, 1.0) for a, b in edges)
    acks = tuple(Edge(c, "__acker", 1.0) for c in components)
    return Topology(name, (*user, acker), streams + acks, workers=6)


LINEAR = topology(
    "lin", ["spout", "b1", "b2", "sink"], [("spout", "b1"), ("b1", "b2"), ("b2", "sink")]
)
DIAMOND = topology(
    "dia",
    ["spout", "m1", "m2", "m3", "m4", "out"],
    [("spout", f"m{i}") for i in range(1, 5)] + [(f"m{i}", "out") for i in range(1, 5)],
)
STAR = topology(
    "star",
    ["spout_0", "spout_1", "center", "out_0", "out_1"],
    [("spout_0", "center"), ("spout_1", "center"), ("center", "out_0"), ("center", "out_1")],
)


def hosts(cpu: float, racks: int = 2, per_rack: int = 3) -> tuple[Node, ...]:
    return tuple(
        Node(f"h{r * per_rack + i + 1}", cpu, slots=4, memory_mb=4096, rack=f"/rack-{r + 1}")
        for r in range(racks)
        for i in range(per_rack)
    )


def busiest(problem: Problem, placement: Placement, rack_link: float = 0.5) -> float:
    return link_loads(problem, placement, rack_link)[1]


def test_link_loads_of_a_hand_placed_linear():
    # spout#0, b1#0 on h1; spout#1, b1#1 on h2; b2#*, sink#* on h3: every edge carries 2
    # (two spout executors, one tuple each), split 0.5 over each of its 4 executor pairs
    problem = Problem(hosts(100, racks=1), LINEAR)
    node_of = {
        "spout#0": "h1", "b1#0": "h1", "spout#1": "h2", "b1#1": "h2",
        "b2#0": "h3", "b2#1": "h3", "sink#0": "h3", "sink#1": "h3", "__acker#0": "h3",
    }  # fmt: skip
    loads, top = link_loads(problem, Placement("lin", node_of))
    assert loads.node_out == {"h1": 1.5, "h2": 1.5, "h3": 0.0}  # spout→other b1 0.5, b1→b2 1
    assert loads.node_in == {"h1": 0.5, "h2": 0.5, "h3": 2.0}
    assert loads.crossing == pytest.approx(3.0)
    assert loads.rack_out == {} and top == 2.0  # one rack: no rack link


def test_acking_streams_are_not_link_traffic():
    pairs = user_pairs(Problem(hosts(100), LINEAR))
    assert pairs and not any("__acker" in a or "__acker" in b for a, b in pairs)


def exhaustive_best(problem: Problem) -> float:
    """The lowest busiest link over every placement within capacity (small instances)."""
    executors = problem.topology.executors
    nodes = [n.id for n in problem.nodes]
    best = float("inf")
    for choice in itertools.product(nodes, repeat=len(executors)):
        placement = Placement(
            problem.topology.id, dict(zip([e.id for e in executors], choice, strict=True))
        )
        if not violations(problem, placement):
            best = min(best, busiest(problem, placement))
    return best


def test_linear_on_three_hosts_reaches_the_exhaustive_optimum():
    problem = Problem(hosts(30, racks=1), LINEAR)  # 9 executors x 10 points on 3 x 30
    placement = registry.run("links", problem)
    assert not violations(problem, placement)
    assert busiest(problem, placement) == pytest.approx(exhaustive_best(problem))
    assert busiest(problem, placement) == pytest.approx(1.5)  # 3/4 of an edge's traffic


@pytest.mark.parametrize("shape", [LINEAR, DIAMOND, STAR], ids=lambda t: t.id)
def test_the_busiest_link_is_never_worse_than_the_traffic_minimisers(shape):
    problem = Problem(hosts(30), shape)
    placement = registry.run("links", problem)
    assert not violations(problem, placement)
    assert len(placement.nodes_used) <= shape.workers
    mine = busiest(problem, placement)
    for other in ("tdls", "td", "rstorm"):
        assert mine <= busiest(problem, registry.run(other, problem)) + 1e-9, other
    assert placement.report["busiest_link"] == pytest.approx(mine)


def test_a_slow_rack_link_keeps_linear_in_one_rack_and_a_fast_one_spreads_it():
    problem = Problem(hosts(30), LINEAR)
    rack_of = {n.id: n.rack for n in problem.nodes}
    slow = registry.run("links", problem, {"rack_link": 0.5})
    assert len({rack_of[n] for n in slow.nodes_used}) == 1
    fast = registry.run("links", problem, {"rack_link": 4.0})
    assert busiest(problem, fast, 4.0) < busiest(problem, slow, 4.0)
    assert len(fast.nodes_used) > len(slow.nodes_used)


def test_host_bandwidths_weigh_the_links():
    # h1's link is 4x the others': the plan puts the most crossing traffic on it
    fast = Node("h1", 30, memory_mb=4096, bandwidth=4.0)
    slow = tuple(Node(f"h{i}", 30, memory_mb=4096, bandwidth=1.0) for i in (2, 3))
    problem = Problem((fast, *slow), LINEAR)
    placement = registry.run("links", problem)
    loads, top = link_loads(problem, placement)
    assert top == pytest.approx(placement.report["busiest_link"])
    carried = {n: loads.node_out[n] + loads.node_in[n] for n in loads.node_out}
    assert carried["h1"] > max(carried["h2"], carried["h3"])
    assert max(loads.node_out["h2"], loads.node_in["h2"]) <= top + 1e-9  # capacity 1


def test_the_plan_is_reproducible():
    problem = Problem(hosts(30), DIAMOND)
    assert registry.run("links", problem).node_of == registry.run("links", problem).node_of


def test_an_expired_budget_still_gives_a_feasible_plan_and_says_so():
    problem = Problem(hosts(30), DIAMOND)
    placement = registry.run("links", problem, budget=Budget.of(0.0))
    assert not violations(problem, placement)
    assert placement.report.get("budget_exhausted") is True


def test_bad_parameters_and_impossible_capacities_are_named():
    problem = Problem(hosts(30), LINEAR)
    with pytest.raises((ValueError, ConfigValueError), match="rack_link"):
        registry.run("links", problem, {"rack_link": 0})
    with pytest.raises(InfeasibleError):
        registry.run("links", Problem(hosts(10, racks=1, per_rack=2), LINEAR))


def test_locality_without_loadaware_messaging_is_the_links_plan():
    problem = Problem(hosts(30), STAR)
    assert (
        registry.run("locality", problem, {"loadaware": False}).node_of
        == registry.run("links", problem).node_of
    )
