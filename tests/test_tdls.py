"""``tdls``: TD + group-count iterated local search.

Properties (never below TD, never infeasible when TD is feasible, deterministic), the notes'
vectors, and a small ratio sanity check against the exact optimum. :func:`measure` prints the
§7.3 ratio and time per graph (the benchmark proper lives in ``scheduler_py.bench``)::

    .venv/bin/python -c "from tests.test_tdls import measure; measure(2000)"
"""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scheduler_py.algorithms import registry
from scheduler_py.algorithms.topdown import tdls
from scheduler_py.bench.generators import section73_instance
from scheduler_py.model.cost import imc_gain, violations
from scheduler_py.model.errors import InfeasibleError, SchedulingError
from scheduler_py.model.types import Component, Edge, Node, Problem, Topology
from tests.test_optimal import FIGURE2, VECTORS


def section73(seed: int) -> Problem:
    """A private generator of the paper's §7.3 class, per notes §5.1.

    3-7 groups sharing 17 tasks (random composition), PC ∝ task count with ±50 % noise
    summing to 500 % (rejecting a task above 100 %), fanout 1/2/3 at 70/25/5 % towards later
    groups, IMC U(5, 20) per edge, 8 nodes × 100 %.
    """
    rng = random.Random(seed)
    while True:
        groups = rng.randint(3, 7)
        cuts = sorted(rng.sample(range(1, 17), groups - 1))
        sizes = [b - a for a, b in zip([0, *cuts], [*cuts, 17], strict=True)]
        weights = [s * rng.uniform(0.5, 1.5) for s in sizes]
        pcs = [500 * w / sum(weights) for w in weights]
        if all(pc / s <= 100 for pc, s in zip(pcs, sizes, strict=True)):
            break
    edges = []
    for i in range(groups - 1):
        fanout = min(rng.choices([1, 2, 3], [0.70, 0.25, 0.05])[0], groups - 1 - i)
        for j in sorted(rng.sample(range(i + 1, groups), fanout)):
            edges.append(Edge(f"g{i}", f"g{j}", rng.uniform(5, 20)))
    components = tuple(
        Component(f"g{i}", s, pc) for i, (s, pc) in enumerate(zip(sizes, pcs, strict=True))
    )
    topology = Topology(f"s73-{seed}", components, tuple(edges))
    return Problem(tuple(Node(f"n{k}", 100.0) for k in range(8)), topology)


def phi_of(name: str, p: Problem, **params) -> float:
    return imc_gain(p.topology, registry.run(name, p, params).node_of)


# -- properties ----------------------------------------------------------------------------


def test_never_below_td_and_never_infeasible_on_section73() -> None:
    for seed in range(40):
        p = section73(seed)
        td = phi_of("td", p)  # td is feasible on these
        placement = registry.run("tdls", p)
        assert not violations(p, placement)
        got = imc_gain(p.topology, placement.node_of)
        assert got >= td - 1e-9, seed
        assert placement.report["phi"] == pytest.approx(got)


@st.composite
def random_problems(draw) -> Problem:
    """Mixed shapes: heterogeneous nodes, memory, zero-slot nodes, measured data."""
    node_count = draw(st.integers(1, 6))
    bounded = draw(st.booleans())
    nodes = tuple(
        Node(
            f"n{i}",
            draw(st.sampled_from([50.0, 100.0, 200.0])),
            slots=draw(st.sampled_from([0, 1, 2])) if i else 1,
            memory_mb=draw(st.sampled_from([1000.0, 4000.0])) if bounded else float("inf"),
        )
        for i in range(node_count)
    )
    groups = draw(st.integers(1, 5))
    components = tuple(
        Component(
            f"c{i}",
            draw(st.integers(1, 8)),
            draw(st.floats(0.0, 120.0)),
            memory_mb=draw(st.sampled_from([0.0, 500.0, 1500.0])),
        )
        for i in range(groups)
    )
    edges = tuple(
        Edge(f"c{i}", f"c{j}", draw(st.floats(0.0, 50.0)))
        for i in range(groups)
        for j in range(i + 1, groups)
        if draw(st.booleans())
    )
    topology = Topology("h", components, edges)
    if draw(st.booleans()):
        ids = [e.id for e in topology.executors]
        pairs = {(a, b): draw(st.floats(0.1, 9.0)) for a in ids for b in ids if a < b}
        cpu = {e: draw(st.floats(0.0, 40.0)) for e in ids[::2]}
        topology = Topology("h", components, edges, executor_cpu=cpu, pair_traffic=pairs)
    return Problem(nodes, topology)


@given(random_problems())
@settings(
    max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
def test_tdls_is_feasible_whenever_td_is_and_never_worse(p: Problem) -> None:
    try:
        td = registry.run("td", p)
    except InfeasibleError:
        return
    placement = registry.run("tdls", p)  # the registry rejects invalid placements
    assert imc_gain(p.topology, placement.node_of) >= imc_gain(p.topology, td.node_of) - 1e-6


def test_deterministic() -> None:
    p = section73(7)
    first = tdls.plan(p)
    assert tdls.plan(p).node_of == first.node_of
    assert tdls.plan(p, seed=3).report["rounds"] == first.report["rounds"]


# -- vectors and starts ---------------------------------------------------------------------


def test_figure2_reaches_the_optimum_td_misses() -> None:
    """TD gets 55 on Figure 2 (TC1); the two-node polish finds the optimum 66 (TC1-opt)."""
    assert phi_of("td", FIGURE2) == pytest.approx(55.0)
    assert phi_of("tdls", FIGURE2) == pytest.approx(66.0)
    assert phi_of("tdls", FIGURE2, polish=False) >= 55.0


@pytest.mark.parametrize("name", sorted(VECTORS))
def test_notes_vectors_reach_their_optimum(name: str) -> None:
    p, optimum = VECTORS[name]
    assert phi_of("tdls", p) == pytest.approx(optimum, abs=5e-4)


def test_tc9_starts_from_the_td_fallback() -> None:
    p, _ = VECTORS["TC9"]
    placement = registry.run("tdls", p)
    assert placement.report["start"] == "td→tl"
    assert placement.report["phi"] >= placement.report["start_phi"]


def test_first_fit_start_and_plain_descent() -> None:
    p = section73(3)
    for params in ({"start": "ffd"}, {"max_rounds": 0, "polish": False}):
        placement = registry.run("tdls", p, params)
        assert placement.report["phi"] >= placement.report["start_phi"] - 1e-9
    assert registry.run("tdls", p, {"start": "ffd"}).report["start"] == "ffd"


def test_evaluation_budget_bounds_the_work() -> None:
    p = section73(11)
    placement = tdls.plan(p, max_evaluations=50, polish=False)
    assert placement.report["evaluations"] < 50 + 200  # stops within one entry scan


def test_unpackable_problem_raises() -> None:
    topology = Topology("t", (Component("a", 3, 180),))
    p = Problem((Node("n0", 100), Node("n1", 100)), topology)
    with pytest.raises(InfeasibleError):
        tdls.plan(p)
    with pytest.raises(SchedulingError):
        tdls.plan(p, start="metis")


def test_close_to_the_optimum_on_a_sample() -> None:
    """A sanity check, not the benchmark: ≥ 98 % of Σ optimum on 30 §7.3 graphs."""
    from scheduler_py.algorithms.baselines import optimal

    total = best = 0.0
    for seed in range(100, 130):
        p = section73(seed)
        best += optimal.plan(p, method="dp").report["objective"]
        total += phi_of("tdls", p)
    assert total / best >= 0.98


# -- measurement (not a test) -------------------------------------------------------------


def measure(graphs: int = 200, **params) -> None:  # pragma: no cover - manual benchmark
    """Print Σφ(tdls)/Σφ*, Σφ(td)/Σφ* and CPU ms per graph on ``graphs`` §7.3 seeds."""
    import time

    from scheduler_py.algorithms.baselines import optimal
    from scheduler_py.algorithms.topdown import td as topdown

    sums = {"opt": 0.0, "td": 0.0, "tdls": 0.0}
    cpu = {"opt": 0.0, "td": 0.0, "tdls": 0.0}
    for seed in range(graphs):
        p = section73(seed)
        for name, run in (
            ("opt", lambda q: optimal.plan(q, method="dp")),
            ("td", topdown.plan),
            ("tdls", lambda q: tdls.plan(q, **params)),
        ):
            fresh = Problem(
                p.nodes, Topology(p.topology.id, p.topology.components, p.topology.edges)
            )
            started = time.process_time()
            placement = run(fresh)
            cpu[name] += time.process_time() - started
            sums[name] += imc_gain(fresh.topology, placement.node_of)
    print(f"graphs {graphs}, Σ optimum {sums['opt']:.1f}")
    for name in ("td", "tdls"):
        print(
            f"{name:5s} ratio {sums[name] / sums['opt']:.5f}  "
            f"CPU {cpu[name] / graphs * 1000:.3f} ms/graph"
        )
    print(f"dp    CPU {cpu['opt'] / graphs * 1000:.2f} ms/graph")


def test_improve_starts_from_any_feasible_plan_and_never_loses_traffic():
    for seed in range(6):
        problem = section73_instance(seed)
        for start in ("metis", "rstorm", "td"):
            base = registry.run(start, problem)
            better = tdls.improve(problem, base, origin=start)
            assert not violations(problem, better)
            assert imc_gain(problem.topology, better.node_of) + 1e-9 >= imc_gain(
                problem.topology, base.node_of
            )
            assert better.report["start"] == start


def test_improve_stops_after_the_stalled_rounds():
    problem = section73_instance(0)
    best = registry.run("tdls", problem)
    again = tdls.improve(problem, best, origin="tdls", max_rounds=10_000, stall_rounds=7, seed=1)
    assert again.report["rounds"] - again.report["accepted"] >= 7
    assert again.report["rounds"] < 10_000
