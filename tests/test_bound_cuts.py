"""The large-instance traffic bound (scheduler_py/model/bound_cuts.py, through
scheduler_py/model/bound.py): the capacity LP by column generation, its triangle cuts and the
eigenvalue bound never come below the best placement (brute force, or the exact ``optimal``),
the cuts never raise the LP's bound, and small budgets stay as fast as before."""

from __future__ import annotations

import random
import time

import numpy as np
import pytest

from scheduler_py.algorithms import registry
from scheduler_py.model import bound, bound_cuts
from scheduler_py.model.budget import UNLIMITED, Budget
from scheduler_py.model.cost import imc_gain, node_loads
from scheduler_py.model.types import Component, Edge, Node, Problem, Topology
from tests.test_bound import _best_kept, _random_problem


def _wide_problem(rng: random.Random) -> Problem:
    """10 - 30 executors in 3 - 5 components on 3 - 5 heterogeneous nodes (what ``optimal``
    still solves exactly in milliseconds)."""
    count = rng.randint(3, 5)
    components = []
    for i in range(count):
        parallelism = rng.randint(2, 6)
        cpu = parallelism * rng.uniform(8, 30)
        components.append(Component(f"c{i}", parallelism, cpu=cpu, is_spout=i == 0))
    edges = tuple(
        Edge(f"c{i}", f"c{j}", rng.uniform(1, 50))
        for i in range(count)
        for j in range(i + 1, count)
        if j == i + 1 or rng.random() < 0.3
    )
    total = sum(c.cpu for c in components)
    nodes = tuple(
        Node(f"n{i}", rng.choice((0.25, 0.5, 1.0)) * total * 0.9) for i in range(rng.randint(3, 5))
    )
    return Problem(nodes, Topology("t", tuple(components), edges))


@pytest.fixture
def quick_eigen(monkeypatch):
    """Fewer smoothing widths and L-BFGS evaluations: every point visited is a bound anyway."""
    monkeypatch.setattr(bound_cuts, "EIGEN_WIDTHS", (0.3, 0.03, 0.003))
    monkeypatch.setattr(bound_cuts, "EIGEN_EVALUATIONS", 40)


def _every_bound(problem: Problem) -> dict[str, float]:
    """Each bound of the large-instance path on its own, without a budget."""
    pairs = bound._undirected_pairs(problem)
    value, _, _, lp = bound._collocation_lp(problem, pairs, UNLIMITED)
    assert value is not None and lp is not None
    found = {"capacity lp": value, "cuts": bound._safe(bound_cuts.tighten(*lp, UNLIMITED).bound)}
    eigen = bound._eigenvalue_bound(problem, pairs, UNLIMITED)
    if eigen is not None:
        found["eigenvalues"] = eigen[0]
    found["traffic_bound"] = bound.traffic_bound(problem).value
    return found


def test_every_large_instance_bound_stays_above_the_best_placement(monkeypatch, quick_eigen):
    monkeypatch.setattr(bound, "TRIANGLE_LIMIT", 0)  # everything through bound_cuts
    rng = random.Random(11)
    checked = 0
    for _ in range(30):
        problem = _random_problem(rng)
        best = _best_kept(problem)
        if best is None or not bound._undirected_pairs(problem):
            continue
        for name, value in _every_bound(problem).items():
            assert value + 1e-6 >= best, (name, value, best, problem)
        checked += 1
    assert checked >= 15


def test_every_large_instance_bound_stays_above_the_exact_optimum(monkeypatch, quick_eigen):
    monkeypatch.setattr(bound, "TRIANGLE_LIMIT", 4)
    rng = random.Random(5)
    below_lp = 0
    for _ in range(8):
        problem = _wide_problem(rng)
        optimum = imc_gain(problem.topology, registry.run("optimal", problem).node_of)
        found = _every_bound(problem)
        for name, value in found.items():
            assert value + 1e-6 >= optimum, (name, value, optimum)
        below_lp += found["traffic_bound"] < found["capacity lp"] - 1e-6
    assert below_lp >= 4  # the tightenings do tighten


def test_the_eigenvalue_bound_holds_for_any_multipliers():
    """The docstring's claim: any ``u ≥ 0``, ``σ ≥ 0`` and ``d`` give a bound, not only the
    optimised ones."""
    rng = random.Random(3)
    generator = np.random.default_rng(3)
    checked = 0
    for _ in range(30):
        problem = _random_problem(rng)
        best = _best_kept(problem)
        pairs = bound._undirected_pairs(problem)
        executors = problem.topology.executors
        cpu = np.array([e.cpu for e in executors])
        loads = bound._greedy_loads(problem, float(cpu.sum()))
        if best is None or not pairs or loads is None:
            continue
        index = {e.id: i for i, e in enumerate(executors)}
        first = np.array([index[a] for a, _ in pairs])
        second = np.array([index[b] for _, b in pairs])
        rate = np.array(list(pairs.values()))
        scaled = np.zeros((len(cpu), len(cpu)))
        scaled[first, second] = scaled[second, first] = rate / np.sqrt(cpu[first] * cpu[second])
        room = np.maximum(0.0, max(n.cpu for n in problem.nodes) - cpu)
        shared = bound_cuts.shared_cpu(cpu, loads)
        eigen = bound_cuts._Eigen(scaled, cpu, room, loads, shared, UNLIMITED)
        for _ in range(20):
            z = np.concatenate(
                [
                    generator.exponential(1.0, len(cpu) + 1) * generator.integers(0, 2),
                    generator.normal(0.0, 20.0, len(cpu)),
                ]
            )
            eigen.evaluate(z, 0.1)
            assert eigen.best + 1e-6 >= best
            eigen.best = np.inf
        checked += 1
    assert checked >= 15


def test_the_shared_cpu_row_holds_for_every_placement():
    rng = random.Random(9)
    for _ in range(200):
        cpu = [rng.uniform(5, 60) for _ in range(rng.randint(2, 7))]
        capacities = [rng.uniform(40, 160) for _ in range(rng.randint(2, 4))]
        nodes = tuple(Node(f"n{i}", c) for i, c in enumerate(capacities))
        components = tuple(Component(f"c{i}", 1, c, is_spout=i == 0) for i, c in enumerate(cpu))
        problem = Problem(nodes, Topology("t", components))
        loads = bound._greedy_loads(problem, sum(cpu))
        if loads is None:
            continue
        shared = bound_cuts.shared_cpu(np.array(cpu), loads)
        node_of = {e.id: rng.choice(nodes).id for e in problem.topology.executors}
        used, _ = node_loads(problem, node_of)
        if any(used[n.id] > n.cpu + 1e-9 for n in nodes):
            continue
        together = sum(
            a.cpu * b.cpu
            for i, a in enumerate(problem.topology.executors)
            for b in problem.topology.executors[i + 1 :]
            if node_of[a.id] == node_of[b.id]
        )
        assert together <= shared + 1e-9


def _chain(parallelism: int, cpu: float, nodes: int, capacity: float) -> Problem:
    components = tuple(
        Component(f"s{i}", parallelism, cpu * parallelism, is_spout=i == 0) for i in range(3)
    )
    edges = (Edge("s0", "s1", 30.0), Edge("s1", "s2", 20.0))
    return Problem(
        tuple(Node(f"n{i}", capacity) for i in range(nodes)), Topology("t", components, edges)
    )


@pytest.mark.parametrize("seed", range(3))
def test_the_cut_loop_never_raises_the_capacity_lp(seed, monkeypatch):
    monkeypatch.setattr(bound, "TRIANGLE_LIMIT", 4)
    problem = _wide_problem(random.Random(100 + seed))
    pairs = bound._undirected_pairs(problem)
    value, method, _, lp = bound._collocation_lp(problem, pairs, UNLIMITED)
    assert method == "lp (capacity)" and value is not None and lp is not None
    done = bound_cuts.tighten(*lp, UNLIMITED)
    assert done.bound <= lp[1].bound + 1e-9
    assert bound._safe(done.bound) <= value + 1e-9


def test_column_generation_reaches_the_lp_over_every_pair():
    rng = random.Random(4)
    executors = [f"e{i}" for i in range(60)]
    traffic = {(a, b): rng.uniform(0.1, 5.0) for a in executors[:30] for b in executors[30:]}
    index = {e: i for i, e in enumerate(executors)}
    ends = np.array([(index[a], index[b]) for a, b in traffic])
    cpu = np.array([rng.uniform(5.0, 15.0) for _ in executors])
    room = np.maximum(0.0, 80.0 - cpu)
    rates = np.array(list(traffic.values()))
    values = []
    for every_pair in (True, False):
        lp = bound_cuts.PairLP(cpu, room, ends[:, 0], ends[:, 1], rates)
        lp.start(every_pair=every_pair)
        assert every_pair or len(lp.column_pair) < len(rates)  # it does leave pairs out
        last, value = bound_cuts.capacity_lp(lp, UNLIMITED, "highs-ipm")
        assert last is not None
        values.append(value)
    assert values[1] == pytest.approx(values[0], rel=1e-6)


def test_above_the_pair_limit_the_lp_runs_when_the_budget_holds_it(monkeypatch):
    problem = _chain(16, 10.0, 6, 200.0)  # 48 executors, 512 pairs
    pairs = len(bound._undirected_pairs(problem))
    monkeypatch.setattr(bound, "LP_PAIR_LIMIT", pairs // 4)
    monkeypatch.setattr(bound, "TIGHTEN_SECS", 1e9)
    generous = bound.traffic_bound(problem, Budget.of(60))
    assert generous.method == "lp (capacity)"
    monkeypatch.setattr(bound, "LP_PAIR_SECONDS", 10.0)  # as if the LP took 10 s a pair
    short = bound.traffic_bound(problem, Budget.of(60))
    assert short.method == "knapsack" and short.value is not None
    assert f"{pairs} communicating pairs take about" in short.reason
    assert short.value >= generous.value - 1e-9


def test_a_big_budget_tightens_and_names_what_it_used(monkeypatch):
    problem = _chain(15, 9.0, 5, 200.0)  # 45 executors, 450 pairs
    plain = bound.traffic_bound(problem, Budget.of(0.5))
    assert plain.method == "lp (capacity)"
    monkeypatch.setattr(bound, "TIGHTEN_SECS", 0.5)
    monkeypatch.setattr(bound_cuts, "STALL_ROUNDS", 1)
    tight = bound.traffic_bound(problem, Budget.of(2))
    assert tight.value < plain.value
    assert tight.method.startswith("eigenvalues and capacity (")
    monkeypatch.setattr(bound, "SPECTRAL_LIMIT", 0)
    cut = bound.traffic_bound(problem, Budget.of(2))
    assert cut.method.startswith("lp (capacity, ") and "of triangle cuts" in cut.method
    assert tight.value <= cut.value < plain.value


def test_a_tiny_budget_still_returns_at_once():
    wide = Topology(
        "wide",
        (
            Component("a", 150, 1500.0, is_spout=True),
            Component("b", 150, 1500.0),
            Component("c", 150, 1500.0),
        ),
        (Edge("a", "b", 1.0), Edge("b", "c", 1.0)),
    )
    problem = Problem(tuple(Node(f"n{i}", 400.0) for i in range(12)), wide)  # 45,000 pairs
    for seconds in (0.002, 0.05):
        started = time.perf_counter()
        result = bound.traffic_bound(problem, Budget.of(seconds), max_pairs=20_000)
        assert result.value is None and "more than the 20000" in result.reason
        result = bound.traffic_bound(problem, Budget.of(seconds))
        assert time.perf_counter() - started < seconds + 0.5
        assert result.method in ("none", "forced cut", "knapsack")
