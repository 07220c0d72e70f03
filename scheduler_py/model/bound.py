"""An upper bound on the traffic any feasible placement keeps on-node, so that every plan can
say how far it may be from the best possible (its ``gap``).

The kept traffic of a placement is φ (paper 000 §3, Eq. 4; :func:`scheduler_py.model.cost.
imc_gain`): the traffic of executor pairs that share a node. Two bounds are valid for every
placement that respects the nodes' CPU capacities; :func:`traffic_bound` reports the smaller.
Memory and slots are left out, which only loosens them.

1. **Collocation LP.** With ``y(e, f) = 1`` when executors *e* and *f* share a node, every
   placement satisfies: the executors sharing *e*'s node fit in what that node has beside
   *e*, ``Σ_f cpu(f)·y(e, f) ≤ C_max − cpu(e)`` (``C_max`` the largest node capacity), and
   sharing a node is transitive, ``y(e, f) + y(f, g) − y(e, g) ≤ 1`` (the triangle
   inequalities of clique partitioning). The LP maximum of ``Σ traffic(e, f)·y(e, f)`` over
   ``0 ≤ y ≤ 1`` is therefore a bound (HiGHS, through SciPy). Up to
   :data:`TRIANGLE_LIMIT` executors with the triangle inequalities; up to
   :data:`LP_PAIR_LIMIT` communicating pairs with the capacity rows only (``y`` of silent
   pairs set to 0, which loosens them); beyond, or out of time, the same capacity rows
   solved for each executor alone (a fractional knapsack over its neighbours; each kept pair
   counted from both ends: φ ≤ ½ Σ_e K(e)).
2. **Forced cut.** At least ``k`` nodes are needed (the fewest of the largest nodes whose CPU
   holds the topology). A traffic graph with ``c`` connected components split over ``k`` or
   more nodes loses at least ``k − c`` pairs, so φ ≤ total − (the ``k − c`` lightest pairs).

The plain LP relaxation of the assignment MILP (000 §3, ``x(e, n)``) does not help: spreading
every executor evenly over the nodes satisfies it as soon as the total CPU fits, and keeps all
the traffic; the pair formulation above does not have that symmetry.
"""

from __future__ import annotations

import itertools
import time
from collections import defaultdict
from dataclasses import dataclass

import numpy as np
from scipy import sparse
from scipy.optimize import linprog

from scheduler_py.model.budget import UNLIMITED, Budget
from scheduler_py.model.types import EPSILON, Problem

CHECK_EVERY = 512
"""executors between two looks at the budget"""
TRIANGLE_LIMIT = 40
"""executors up to which the LP carries the triangle inequalities (3·C(40, 3) ≈ 30k rows)"""
LP_PAIR_LIMIT = 20_000
"""communicating pairs up to which the capacity-only LP is solved"""
PAIR_SECONDS = 5e-7
"""what listing one communicating pair and cutting the graph take, about (0.67 µs measured on
the 2-core machine of ``README.md``, 9,600 pairs of a 200-executor word count in 6.4 ms): a
budget shorter than the pairs would take gets no bound rather than a late one"""
LP_SECONDS = 5.0
"""the LP's own time limit, within the caller's budget"""


@dataclass(frozen=True)
class TrafficBound:
    """``value`` is ``None`` when no bound was computed; ``reason`` says why."""

    value: float | None
    method: str
    reason: str = ""
    seconds: float = 0.0

    def gap(self, kept: float) -> float | None:
        """How much of the bound a placement keeping ``kept`` leaves: ``1 − kept/bound``."""
        if self.value is None:
            return None
        if self.value <= EPSILON:
            return 0.0
        return max(0.0, 1.0 - kept / self.value)

    def summary(self, kept: float) -> dict[str, float | str | None]:
        fields: dict[str, float | str | None] = {
            "bound": self.value,
            "gap": self.gap(kept),
            "bound_method": self.method,
        }
        if self.reason:
            fields["bound_reason"] = self.reason
        return fields


def estimated_pairs(problem: Problem) -> int:
    """How many communicating executor pairs the topology has, without listing them."""
    topology = problem.topology
    if topology.pair_traffic:
        return len(topology.pair_traffic)
    sizes = {c.id: c.parallelism for c in topology.components}
    return sum(sizes.get(e.source, 0) * sizes.get(e.target, 0) for e in topology.merged_edges)


def traffic_bound(
    problem: Problem, budget: Budget = UNLIMITED, max_pairs: int | None = None
) -> TrafficBound:
    """The smaller of the two bounds of the module docstring, within ``budget``; no bound
    (``value`` ``None``, with the reason) above ``max_pairs`` communicating pairs or when the
    budget ends first."""
    started = time.perf_counter()
    if max_pairs is not None and (count := estimated_pairs(problem)) > max_pairs:
        return TrafficBound(
            None, "none", f"{count} communicating pairs, more than the {max_pairs} bounded here"
        )
    if budget.expired():
        return TrafficBound(None, "none", "no time left in the budget")
    if budget.limited and (count := estimated_pairs(problem)) * PAIR_SECONDS > budget.remaining():
        return TrafficBound(
            None,
            "none",
            f"{count} communicating pairs take about {count * PAIR_SECONDS * 1000:.1f} ms to "
            f"bound, more than the {budget.remaining() * 1000:.1f} ms left",
        )
    pairs = _undirected_pairs(problem)
    if not pairs:
        return TrafficBound(0.0, "no traffic", seconds=time.perf_counter() - started)
    total = sum(pairs.values())
    cut = _forced_cut_bound(problem, pairs, total)
    if cut == total and _fits_one_node(problem):
        # every executor may share a node with all others (``y ≡ 1`` is feasible), so the LP
        # and the knapsack bounds are the whole traffic: no smaller than the cut
        return TrafficBound(cut, "forced cut", seconds=time.perf_counter() - started)
    capacity, method, reason = _lp_bound(problem, pairs, budget)
    if capacity is None:
        capacity, method = _knapsack_bound(problem, pairs, budget), "knapsack"
    seconds = time.perf_counter() - started
    if capacity is None:
        return TrafficBound(cut, "forced cut", "stopped at the time budget", seconds)
    if capacity < cut:
        return TrafficBound(capacity, method, reason, seconds)
    return TrafficBound(cut, "forced cut", reason, seconds)


def _undirected_pairs(problem: Problem) -> dict[tuple[str, str], float]:
    pairs: dict[tuple[str, str], float] = defaultdict(float)
    for source, target, rate in problem.topology.pair_traffics():
        if source != target and rate > 0:
            key = (source, target) if source < target else (target, source)
            pairs[key] += rate
    return pairs


def fewest_nodes(problem: Problem) -> int:
    """The fewest nodes whose CPU can hold the topology (its largest nodes)."""
    need = sum(e.cpu for e in problem.topology.executors)
    held = 0.0
    for count, capacity in enumerate(sorted(problem.table.cpu.values(), reverse=True), 1):
        held += capacity
        if held + EPSILON >= need:
            return count
    return len(problem.nodes)


def _fits_one_node(problem: Problem) -> bool:
    """Whether the whole topology fits the CPU of the largest node (no tolerance), which makes
    ``y ≡ 1`` a feasible point of the collocation LP's capacity rows and of the knapsacks."""
    executors = problem.topology.executors
    return sum(e.cpu for e in executors) <= max(problem.table.cpu.values())


def _forced_cut_bound(problem: Problem, pairs: dict[tuple[str, str], float], total: float) -> float:
    fewest = fewest_nodes(problem)
    if fewest <= 1:  # no cut: a traffic graph has at least one component
        return total
    forced = fewest - _components(problem, pairs)
    if forced <= 0:
        return total
    lightest = sorted(pairs.values())[:forced]
    return max(0.0, total - sum(lightest))


def _components(problem: Problem, pairs: dict[tuple[str, str], float]) -> int:
    parent = {e.id: e.id for e in problem.topology.executors}

    def root(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in pairs:
        parent[root(a)] = root(b)
    return len({root(x) for x in parent})


def _lp_bound(
    problem: Problem, pairs: dict[tuple[str, str], float], budget: Budget
) -> tuple[float | None, str, str]:
    """``(bound, method, why not)`` of the collocation LP; ``None`` when it is too big or
    does not finish."""
    if budget.expired():  # before the matrices: building them takes longer than solving
        return None, "", "no time left for the LP"
    executors = [e.id for e in problem.topology.executors]
    cpu = np.array([e.cpu for e in problem.topology.executors])
    index = {e: i for i, e in enumerate(executors)}
    largest = max(n.cpu for n in problem.nodes)
    with_triangles = len(executors) <= TRIANGLE_LIMIT
    if with_triangles:
        variables = list(itertools.combinations(range(len(executors)), 2))
    elif len(pairs) <= LP_PAIR_LIMIT:
        variables = sorted(tuple(sorted((index[a], index[b]))) for a, b in pairs)
    else:
        return None, "", f"more than {LP_PAIR_LIMIT} communicating pairs for the LP"
    column = {pair: k for k, pair in enumerate(variables)}
    objective = np.zeros(len(variables))
    for (a, b), rate in pairs.items():
        i, j = sorted((index[a], index[b]))
        objective[column[(i, j)]] = -rate
    ends = np.array(variables)
    rows = np.concatenate([ends[:, 0], ends[:, 1]])
    cols = np.concatenate([np.arange(len(variables))] * 2)
    weights = np.concatenate([cpu[ends[:, 1]], cpu[ends[:, 0]]])
    blocks = [sparse.csr_matrix((weights, (rows, cols)), shape=(len(executors), len(variables)))]
    limits = [np.maximum(0.0, largest - cpu)]
    if with_triangles:
        triangles, bounds = _triangle_rows(len(executors), column)
        blocks.append(triangles)
        limits.append(bounds)
    seconds = budget.cap(LP_SECONDS)
    if seconds <= 0:
        return None, "", "no time left for the LP"
    result = linprog(
        objective,
        A_ub=sparse.vstack(blocks).tocsr(),
        b_ub=np.concatenate(limits),
        bounds=(0.0, 1.0),
        method="highs",
        options={"time_limit": seconds},
    )
    if result.status != 0:
        return None, "", f"LP not solved ({result.message})"
    method = "lp (capacity, triangles)" if with_triangles else "lp (capacity)"
    return -float(result.fun) * (1 + 1e-9) + 1e-9, method, ""


def _triangle_rows(count: int, column: dict[tuple[int, int], int]) -> tuple:
    """``y(i,j) + y(j,k) − y(i,k) ≤ 1`` and its two rotations, for every triple."""
    triples = np.array(list(itertools.combinations(range(count), 3)))
    if len(triples) == 0:
        return sparse.csr_matrix((0, len(column))), np.zeros(0)
    width = count
    flat = {i * width + j: k for (i, j), k in column.items()}
    i, j, k = triples[:, 0], triples[:, 1], triples[:, 2]
    ij = np.array([flat[x] for x in i * width + j])
    jk = np.array([flat[x] for x in j * width + k])
    ik = np.array([flat[x] for x in i * width + k])
    rows, cols, values = [], [], []
    for offset, (plus1, plus2, minus) in enumerate(((ij, jk, ik), (ij, ik, jk), (jk, ik, ij))):
        row = np.arange(len(triples)) * 3 + offset
        rows += [row, row, row]
        cols += [plus1, plus2, minus]
        values += [np.ones(len(row)), np.ones(len(row)), -np.ones(len(row))]
    matrix = sparse.csr_matrix(
        (np.concatenate(values), (np.concatenate(rows), np.concatenate(cols))),
        shape=(3 * len(triples), len(column)),
    )
    return matrix, np.ones(3 * len(triples))


def _knapsack_bound(
    problem: Problem, pairs: dict[tuple[str, str], float], budget: Budget
) -> float | None:
    cpu = {e.id: e.cpu for e in problem.topology.executors}
    largest = max(n.cpu for n in problem.nodes)
    neighbours: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for (a, b), rate in pairs.items():
        neighbours[a].append((rate, cpu.get(b, 0.0)))
        neighbours[b].append((rate, cpu.get(a, 0.0)))
    doubled = 0.0
    for index, (executor, items) in enumerate(neighbours.items()):
        if index % CHECK_EVERY == 0 and budget.expired():
            return None
        doubled += _fractional_knapsack(items, largest - cpu.get(executor, 0.0))
    return doubled / 2


def _fractional_knapsack(items: list[tuple[float, float]], room: float) -> float:
    """The most value of ``(value, weight)`` items that fit in ``room``, items divisible."""
    room = max(0.0, room)
    free = sum(value for value, weight in items if weight <= EPSILON)
    weighted = sorted(
        ((value, weight) for value, weight in items if weight > EPSILON),
        key=lambda item: item[0] / item[1],
        reverse=True,
    )
    kept = free
    for value, weight in weighted:
        if room <= EPSILON:
            break
        share = min(1.0, room / weight)
        kept += value * share
        room -= weight * share
    return kept
