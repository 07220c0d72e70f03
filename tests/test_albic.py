"""Paper 001 (Madsen, Zhou & Cao 2016): the load-balancing MILP and ALBIC.

Lemma 1 (nothing moves onto nodes marked for removal) and Lemma 2 (they drain within a
bounded number of rounds) as property tests, the migration budget, the guard against the
current allocation, brute-force optimality on tiny instances, and ALBIC's collocation
steps (notes ``docs/001_albic.md`` §4.4).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduler_py.algorithms import registry
from scheduler_py.algorithms.albic import milp as mm
from scheduler_py.algorithms.albic.baselines import cola, flux, lpt
from scheduler_py.algorithms.albic.core import split_set
from scheduler_py.algorithms.albic.plan import build_instance, plan, restarted_workers
from scheduler_py.model.errors import InvalidProblemError, SchedulingError
from scheduler_py.model.types import Component, Edge, Node, Placement, Problem, Topology

FAST = {"time_limit": 0.2}


def make_problem(loads, homes, n_nodes, *, cap=400.0, one_to_one=False, rate=10.0, slots=4):
    """Components a and b (half of the loads each when ``one_to_one``, else one component
    x); executor loads as measured CPU; ``homes`` the current node per executor."""
    nodes = tuple(Node(f"n{i}", cpu=cap, slots=slots) for i in range(n_nodes))
    if one_to_one:
        half = len(loads) // 2
        comps = (Component("a", half, is_spout=True), Component("b", half))
        ids = [f"a#{k}" for k in range(half)] + [f"b#{k}" for k in range(half)]
        traffic = {(f"a#{k}", f"b#{k}"): rate for k in range(half)}
        edges = (Edge("a", "b", rate * half, "fields"),)
    else:
        comps = (Component("x", len(loads)),)
        ids = [f"x#{k}" for k in range(len(loads))]
        traffic, edges = {}, ()
    topology = Topology(
        "t", comps, edges, executor_cpu=dict(zip(ids, loads, strict=True)), pair_traffic=traffic
    )
    current = None
    if homes is not None:
        current = Placement("t", {e: f"n{h}" for e, h in zip(ids, homes, strict=True)})
    return Problem(nodes, topology, current)


@st.composite
def instances(draw, with_removal=True):
    n_nodes = draw(st.integers(3, 6))
    count = draw(st.integers(2, 7)) * 2
    loads = draw(st.lists(st.floats(1.0, 30.0), min_size=count, max_size=count))
    homes = draw(st.lists(st.integers(0, n_nodes - 1), min_size=count, max_size=count))
    removing = []
    if with_removal:
        removing = draw(
            st.lists(st.integers(0, n_nodes - 1), min_size=1, max_size=n_nodes - 1, unique=True)
        )
    budget = draw(st.integers(0 if not with_removal else 1, 5))
    one_to_one = draw(st.booleans())
    return loads, homes, n_nodes, sorted(removing), budget, one_to_one


def _moved_into(before: Placement, after: Placement, nodes: set[str]) -> list[str]:
    return [e for e, n in after.node_of.items() if n in nodes and before.node_of.get(e) != n]


def _moves(before: Placement, after: Placement) -> int:
    return sum(1 for e, n in after.node_of.items() if before.node_of.get(e) != n)


@settings(max_examples=15, deadline=None)
@given(instances())
def test_lemma1_nothing_moves_onto_removed_nodes_and_budget_holds(case):
    loads, homes, n_nodes, removing, budget, one_to_one = case
    problem = make_problem(loads, homes, n_nodes, one_to_one=one_to_one)
    marked = {f"n{i}" for i in removing}
    placement = registry.run(
        "albic",
        problem,
        {**FAST, "remove_nodes": ",".join(sorted(marked)), "max_migrations": budget},
    )
    assert _moved_into(problem.current, placement, marked) == []
    assert placement.report["moves"] == _moves(problem.current, placement) <= budget


@settings(max_examples=8, deadline=None)
@given(instances())
def test_lemma2_removed_nodes_drain_within_bounded_rounds(case):
    loads, homes, n_nodes, removing, budget, one_to_one = case
    marked = {f"n{i}" for i in removing}
    problem = make_problem(loads, homes, n_nodes, one_to_one=one_to_one)
    on_marked = sum(1 for h in homes if f"n{h}" in marked)
    current = problem.current
    for _ in range(on_marked):  # drain_min = 1: at least one key group leaves R per round
        step = Problem(problem.nodes, problem.topology, current)
        placement = registry.run(
            "albic",
            step,
            {**FAST, "remove_nodes": ",".join(sorted(marked)), "max_migrations": budget},
        )
        assert _moved_into(current, placement, marked) == []
        assert placement.report["moves"] <= budget
        current = placement
    assert not [e for e, n in current.node_of.items() if n in marked]


@settings(max_examples=10, deadline=None)
@given(instances(with_removal=False))
def test_guard_never_worse_than_no_move(case):
    loads, homes, n_nodes, _, budget, one_to_one = case
    problem = make_problem(loads, homes, n_nodes, one_to_one=one_to_one)
    for collocation in (False, True):
        report = registry.run(
            "albic", problem, {**FAST, "max_migrations": budget, "collocation": collocation}
        ).report
        assert report["moves"] <= budget
        if not collocation or report["forced_pair"] is None:
            assert report["load_distance"] <= report["load_distance_before"] + 1e-7


def _brute_force(balance: mm.Balance) -> float:
    best = float("inf")
    P, N = balance.n_items, balance.n_nodes
    for combo in itertools.product(range(N), repeat=P):
        a = np.array(combo)
        if (a != balance.home).sum() <= balance.budget:
            best = min(best, mm.assignment_ld(balance, a))
    return best


@pytest.mark.parametrize("seed", range(4))
def test_milp_matches_brute_force_on_tiny_instances(seed):
    rng = np.random.default_rng(seed)
    loads = list(rng.uniform(5, 40, 6))
    homes = list(rng.integers(0, 3, 6))
    problem = make_problem(loads, homes, 3)
    kg, *_ = build_instance(problem, max_migrations=2)
    optimum = _brute_force(kg.balance)
    full = plan(problem, collocation=False, max_migrations=2, neighbourhood="full",
                time_limit=4)  # fmt: skip
    assert full.report["load_distance"] == pytest.approx(optimum, abs=1e-6)
    default = plan(problem, collocation=False, max_migrations=2, time_limit=1)
    assert optimum - 1e-9 <= default.report["load_distance"] <= (
        default.report["load_distance_before"] + 1e-9)  # fmt: skip


def test_restart_budget_and_restart_count():
    rng = np.random.default_rng(3)
    loads = list(rng.uniform(5, 40, 16))
    homes = [0] * 8 + [1] * 4 + [2] * 4
    problem = make_problem(loads, homes, 5)
    limited = registry.run("albic", problem, {"max_restarts": 2, "time_limit": 1})
    assert limited.report["restarts"] <= 2
    free = registry.run("albic", problem, {"time_limit": 1})
    restarted = restarted_workers(problem.current, free)
    assert free.report["restarts"] == len(restarted) >= 2  # a move restarts two workers
    assert limited.report["load_distance"] <= limited.report["load_distance_before"] + 1e-9


def test_albic_collocates_the_heaviest_pair_and_keeps_existing_ones():
    rng = np.random.default_rng(0)
    loads = list(rng.uniform(1, 3, 40))
    homes = [k % 10 for k in range(20)] + [(k + 1) % 10 for k in range(20)]  # worst case
    homes[19 + 1 + 3] = homes[3]  # b#3 already with a#3
    problem = make_problem(loads, homes, 10, cap=100.0, one_to_one=True)
    placement = registry.run("albic", problem, {"max_migrations": 4, "time_limit": 3})
    report = placement.report
    assert report["candidates"] == 20 and report["collocated_candidates"] == 1
    a, b = report["forced_pair"]
    assert placement.node_of[a] == placement.node_of[b] == report["forced_node"]
    assert placement.node_of["a#3"] == placement.node_of["b#3"]
    assert report["collocation_factor"] > report["collocation_factor_before"]
    assert report["moves"] <= 4


def test_max_pl_zero_is_the_pure_milp():
    rng = np.random.default_rng(1)
    loads = list(rng.uniform(1, 20, 10))
    homes = list(rng.integers(0, 3, 10))
    problem = make_problem(loads, homes, 3, one_to_one=True)
    pure = plan(problem, collocation=False, neighbourhood="full", time_limit=60)
    zero = plan(problem, max_pl=0.0, neighbourhood="full", time_limit=60)
    assert zero.report["forced_pair"] is None
    assert [s["max_pl"] for s in zero.report["solves"]] == [0.0]  # straight to the pure MILP
    assert zero.report["load_distance"] == pytest.approx(pure.report["load_distance"], abs=1e-6)


def test_split_set_respects_limits():
    rng = np.random.default_rng(2)
    loads = list(rng.uniform(1, 10, 30))
    problem = make_problem(loads, [0] * 30, 3, one_to_one=True)
    kg, *_ = build_instance(problem, max_migrations=4)
    members = list(range(30))
    parts = split_set(members, kg, max_pl_abs=25.0, budget=4)
    assert sorted(m for p in parts for m in p) == members
    for part in parts:
        assert len(part) == 1 or (len(part) <= 4 and kg.balance.load[part].sum() <= 25.0 + 1e-9)


def test_initial_allocation_without_current():
    rng = np.random.default_rng(4)
    loads = list(rng.uniform(1, 10, 40))
    problem = make_problem(loads, None, 5, cap=100.0, one_to_one=True)
    for initial in ("cola", "lpt"):
        placement = registry.run("albic", problem, {"initial": initial, "remove_nodes": "n4"})
        report = placement.report
        assert report["chosen"] == f"initial-{initial}"
        assert report["moves"] == report["restarts"] == 0
        assert "n4" not in placement.nodes_used
        assert report["load_distance"] <= 10.0  # maxLD
    cola_cf = registry.run("albic", problem).report["collocation_factor"]
    lpt_cf = registry.run("albic", problem, {"initial": "lpt"}).report["collocation_factor"]
    assert cola_cf > lpt_cf


def test_flux_respects_budget_and_lowers_variance():
    rng = np.random.default_rng(5)
    loads = list(rng.uniform(1, 30, 30))
    problem = make_problem(loads, [0] * 15 + [1] * 10 + [2] * 5, 4)
    kg, *_ = build_instance(problem, max_migrations=6)
    b = kg.balance
    a = flux(b)
    assert (a != b.home).sum() <= 6
    var = lambda x: np.var(mm.node_load(x, b.load, b.n_nodes))  # noqa: E731
    assert var(a) < var(b.home)
    assert mm.capacity_ok(b, lpt(b))
    assert (cola(b, {}, 10.0) >= 0).all()


def test_new_and_lost_executors_are_placed_outside_the_budget():
    loads = [10.0] * 8
    problem = make_problem(loads, [0, 0, 1, 1, 2, 2, 3, 3], 4)
    old = dict(problem.current.node_of)
    old["x#6"] = "gone-node"
    del old["x#7"]
    problem = Problem(problem.nodes, problem.topology, Placement("t", old))
    placement = registry.run("albic", problem, {"max_migrations": 0})
    assert placement.report["forced_moves"] == 2 and placement.report["moves"] == 0
    assert {"x#6", "x#7"} <= set(placement.node_of)


def test_capacity_and_parameter_errors():
    loads = [30.0] * 6
    problem = make_problem(loads, [0, 0, 0, 1, 1, 2], 3, cap=100.0)
    placement = registry.run("albic", problem, FAST)  # registry verifies capacity
    assert placement.report["load_distance"] <= placement.report["load_distance_before"]
    with pytest.raises(InvalidProblemError):
        plan(problem, remove_nodes="n0,n1,n2")
    with pytest.raises(SchedulingError):
        plan(problem, neighbourhood="everything")
    unknown = plan(problem, remove_nodes="n9", time_limit=0.4).report
    assert unknown["remove_nodes_unknown"] == ["n9"]
