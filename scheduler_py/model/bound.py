"""An upper bound on the traffic any feasible placement keeps on-node, so that every plan can
say how far it may be from the best possible (its ``gap``).

The kept traffic of a placement is φ (paper 000 §3, Eq. 4; :func:`scheduler_py.model.cost.
imc_gain`): the traffic of executor pairs that share a node. These bounds are valid for every
placement that respects the nodes' CPU capacities; :func:`traffic_bound` reports the smallest.
Memory and slots are left out, which only loosens them.

1. **Collocation LP.** With ``y(e, f) = 1`` when executors *e* and *f* share a node, every
   placement satisfies: the executors sharing *e*'s node fit in what that node has beside
   *e*, ``Σ_f cpu(f)·y(e, f) ≤ C_max − cpu(e)`` (``C_max`` the largest node capacity), and
   sharing a node is transitive, ``y(e, f) + y(f, g) − y(e, g) ≤ 1`` (the triangle
   inequalities of clique partitioning). The LP maximum of ``Σ traffic(e, f)·y(e, f)`` over
   ``0 ≤ y ≤ 1`` is therefore a bound (HiGHS, through SciPy). Up to
   :data:`TRIANGLE_LIMIT` executors with every triangle inequality. Beyond, the capacity
   rows over the communicating pairs (``y`` of silent pairs set to 0, which loosens them)
   and one row on the CPU products of the pairs sharing a node
   (:func:`scheduler_py.model.bound_cuts.shared_cpu`): up to :data:`LP_PAIR_LIMIT` pairs
   whenever there is time, above only when the budget holds the LP's estimated time
   (:data:`LP_PAIR_SECONDS` a pair), by column generation; then, with :data:`TIGHTEN_SECS`
   or more left, triangle inequalities added as cutting planes. Out of time, or when the LP
   is not solved, the same capacity rows solved for each executor alone (a fractional
   knapsack over its neighbours; each kept pair counted from both ends: φ ≤ ½ Σ_e K(e)).
2. **Forced cut.** At least ``k`` nodes are needed (the fewest of the largest nodes whose CPU
   holds the topology). A traffic graph with ``c`` connected components split over ``k`` or
   more nodes loses at least ``k − c`` pairs, so φ ≤ total − (the ``k − c`` lightest pairs).
3. **Eigenvalues and capacity** (:func:`_eigenvalue_bound`, up to :data:`SPECTRAL_LIMIT`
   executors, with :data:`TIGHTEN_SECS` or more left): the traffic matrix less multiples of
   the LP's capacity and shared-CPU rows, scaled by the executors' CPU; its largest
   eigenvalues weighted by the largest node loads, plus what the rows allow. With 120 s the
   tightest of all on every 1,000-executor ``bench scale`` instance (10 - 45 % below the
   capacity LP; its slow start leaves stars and diamonds at the LP with 30 s on a busy
   machine).

:mod:`scheduler_py.model.bound_cuts` holds the large-instance machinery (the LP by column
generation, the cutting planes, the eigenvalue bound) and why each of its values is a bound.

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

from scheduler_py.model import bound_cuts
from scheduler_py.model.budget import UNLIMITED, Budget
from scheduler_py.model.types import EPSILON, Problem

CHECK_EVERY = 512
"""executors between two looks at the budget"""
TRIANGLE_LIMIT = 40
"""executors up to which the LP carries the triangle inequalities (3·C(40, 3) ≈ 30k rows)"""
LP_PAIR_LIMIT = 20_000
"""communicating pairs up to which the capacity-only LP is tried in any budget (as the
scheduling round does, with HiGHS' default method on all the pairs); above, the knapsack bound
comes first and the LP follows only when the budget holds :data:`LP_PAIR_SECONDS` a pair"""
LP_PAIR_SECONDS = 2e-5
"""what the capacity LP takes a communicating pair, about (interior point; measured on the
2-core machine of ``docs/evaluation.md``: 48,037 pairs of ``bench scale``'s layered-1000x50
in 0.3 s, 240,000 of its wordcount-1000x50 in 1.1 s by column generation): a generous estimate"""
PAIR_SECONDS = 5e-7
"""what listing one communicating pair and cutting the graph take, about (0.67 µs measured on
the 2-core machine of ``docs/evaluation.md``, 9,600 pairs of a 200-executor word count in 6.4 ms): a
budget shorter than the pairs would take gets no bound rather than a late one"""
TIGHTEN_SECS = 2.0
"""budget left after the capacity LP from which the eigenvalue bound and the triangle cuts
run (more than a scheduling round ever gives its bound, so rounds never run them)"""
SPECTRAL_LIMIT = 2500
"""executors up to which the eigenvalue bound runs (dense n×n matrices)"""
EIGEN_SECONDS = 2e-10
"""what one eigenvalue decomposition takes per executor cubed, about (0.12 - 0.27 s at 1,000
executors on the 2-core machine of ``docs/evaluation.md``)"""
SPECTRAL_SHARE = 0.8
"""of the budget left after the capacity LP, at most, for the eigenvalue bound (the tightest
here on every ``bench scale`` instance; the triangle cuts get the rest)"""


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
    """The smallest of the bounds of the module docstring, within ``budget``; no bound
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
    found = [(cut, "forced cut")]
    many = len(pairs) > LP_PAIR_LIMIT
    if many and (knapsack := _knapsack_bound(problem, pairs, budget)) is not None:
        found.append((knapsack, "knapsack"))
    capacity, method, reason, lp = _collocation_lp(problem, pairs, budget)
    if capacity is not None:
        found.append((capacity, method))
    elif not many and (knapsack := _knapsack_bound(problem, pairs, budget)) is not None:
        found.append((knapsack, "knapsack"))
    elif len(found) == 1:
        reason = "stopped at the time budget"
    if len(problem.topology.executors) > TRIANGLE_LIMIT and budget.remaining() >= TIGHTEN_SECS:
        found += _tightened(problem, pairs, budget, lp, min(value for value, _ in found))
    value, method = min(found, key=lambda bound: bound[0])
    return TrafficBound(value, method, reason, time.perf_counter() - started)


def _tightened(
    problem: Problem,
    pairs: dict[tuple[str, str], float],
    budget: Budget,
    lp: tuple[bound_cuts.PairLP, bound_cuts.Solution] | None,
    best: float,
) -> list[tuple[float, str]]:
    """The eigenvalue bound (within :data:`SPECTRAL_SHARE` of the budget), then rounds of
    triangle cuts on the capacity LP ``lp`` (the rest, stopping early when they would not
    come below ``best``, the best bound so far, in time)."""
    found: list[tuple[float, str]] = []
    spectral = _eigenvalue_bound(problem, pairs, budget.share(SPECTRAL_SHARE))
    if spectral is not None:
        found.append((spectral[0], f"eigenvalues and capacity ({spectral[1]} evaluations)"))
        best = min(best, spectral[0])
    if lp is not None:
        done = bound_cuts.tighten(*lp, budget, best)
        if done.rounds:
            rounds = f"{done.rounds} round{'s' if done.rounds > 1 else ''}"
            method = f"lp (capacity, {rounds} of triangle cuts, {done.cuts:,} cuts)"
            found.append((_safe(done.bound), method))
    return found


def _safe(value: float) -> float:
    """``value`` widened by the solvers' relative and absolute error, about."""
    return value * (1 + 1e-9) + 1e-9


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


def _collocation_lp(
    problem: Problem, pairs: dict[tuple[str, str], float], budget: Budget
) -> tuple[float | None, str, str, tuple[bound_cuts.PairLP, bound_cuts.Solution] | None]:
    """``(bound, method, why not, last solve)`` of the collocation LP: ``None`` as the bound
    when it is too big or does not finish; for the capacity LP its last optimal solve, to cut
    from."""
    if budget.expired():  # before the matrices: building them takes longer than solving
        return None, "", "no time left for the LP", None
    executors = [e.id for e in problem.topology.executors]
    cpu = np.array([e.cpu for e in problem.topology.executors])
    index = {e: i for i, e in enumerate(executors)}
    room = _rooms(problem, cpu)
    if len(executors) <= TRIANGLE_LIMIT:
        return (*_triangle_lp(pairs, index, cpu, room, budget), None)
    if len(pairs) > LP_PAIR_LIMIT and len(pairs) * LP_PAIR_SECONDS > budget.remaining():
        return (
            None,
            "",
            f"{len(pairs)} communicating pairs take about {len(pairs) * LP_PAIR_SECONDS:.1f} s "
            f"for the LP, more than the {budget.remaining():.1f} s left",
            None,
        )
    ends = np.array([sorted((index[a], index[b])) for a, b in pairs], dtype=np.int64)
    loads = _greedy_loads(problem, float(cpu.sum()))
    shared = np.inf if loads is None else bound_cuts.shared_cpu(cpu, loads)
    rates = np.array(list(pairs.values()))
    lp = bound_cuts.PairLP(cpu, room, ends[:, 0], ends[:, 1], rates, shared)
    few = len(pairs) <= LP_PAIR_LIMIT
    lp.start(every_pair=few or len(pairs) <= 3 * LP_PAIR_LIMIT)
    last, value = bound_cuts.capacity_lp(lp, budget, "highs" if few else "highs-ipm")
    if last is None:
        return None, "", lp.note, None
    return _safe(value), "lp (capacity)", "", (lp, last)


def _triangle_lp(
    pairs: dict[tuple[str, str], float],
    index: dict[str, int],
    cpu: np.ndarray,
    room: np.ndarray,
    budget: Budget,
) -> tuple[float | None, str, str]:
    """The LP over every pair, with every triangle inequality."""
    variables = list(itertools.combinations(range(len(index)), 2))
    column = {pair: k for k, pair in enumerate(variables)}
    objective = np.zeros(len(variables))
    for (a, b), rate in pairs.items():
        i, j = sorted((index[a], index[b]))
        objective[column[(i, j)]] = -rate
    ends = np.array(variables).reshape(-1, 2)
    rows = np.concatenate([ends[:, 0], ends[:, 1]])
    cols = np.concatenate([np.arange(len(variables))] * 2)
    weights = np.concatenate([cpu[ends[:, 1]], cpu[ends[:, 0]]])
    capacity = sparse.csr_matrix((weights, (rows, cols)), shape=(len(index), len(variables)))
    triangles, ones = _triangle_rows(len(index), column)
    if budget.expired():
        return None, "", "no time left for the LP"
    result = linprog(
        objective,
        A_ub=sparse.vstack([capacity, triangles]).tocsr(),
        b_ub=np.concatenate([room, ones]),
        bounds=(0.0, 1.0),
        method="highs",
        options={"time_limit": budget.remaining()} if budget.limited else {},
    )
    if result.status != 0:
        return None, "", f"LP not solved ({result.message})"
    return _safe(-float(result.fun)), "lp (capacity, triangles)", ""


def _triangle_rows(
    count: int, column: dict[tuple[int, int], int]
) -> tuple[sparse.csr_matrix, np.ndarray]:
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


def _eigenvalue_bound(
    problem: Problem, pairs: dict[tuple[str, str], float], budget: Budget
) -> tuple[float, int] | None:
    """``(bound, evaluations)`` of :func:`scheduler_py.model.bound_cuts.eigenvalue_bound`
    (its docstring has the proof); ``None`` above :data:`SPECTRAL_LIMIT` executors, with an
    executor without CPU, when the nodes cannot hold the topology or when the budget would
    not hold a few eigenvalue decompositions (:data:`EIGEN_SECONDS`)."""
    executors = problem.topology.executors
    size = len(executors)
    cpu = np.array([e.cpu for e in executors])
    loads = _greedy_loads(problem, float(cpu.sum()))
    if size > SPECTRAL_LIMIT or cpu.min() <= EPSILON or loads is None or len(loads) > size:
        return None
    if budget.remaining() < 5 * EIGEN_SECONDS * size**3:
        return None
    index = {e.id: i for i, e in enumerate(executors)}
    first = np.array([index[a] for a, _ in pairs])
    second = np.array([index[b] for _, b in pairs])
    room = _rooms(problem, cpu)
    shared = bound_cuts.shared_cpu(cpu, loads)
    rates = np.array(list(pairs.values()))
    value, evaluations = bound_cuts.eigenvalue_bound(
        cpu, room, loads, shared, (first, second, rates), budget
    )
    return (_safe(value), evaluations) if evaluations else None


def _rooms(problem: Problem, cpu: np.ndarray) -> np.ndarray:
    """What the largest node holds beside each executor, ``C_max − cpu(e)``, widened by the
    placements' tolerance (:data:`EPSILON` over a node's capacity)."""
    return np.maximum(0.0, max(n.cpu for n in problem.nodes) + EPSILON - cpu)


def _greedy_loads(problem: Problem, total: float) -> np.ndarray | None:
    """The largest nodes filled in turn with ``total`` CPU (loads > 0 only; each capacity
    widened by the placements' tolerance); ``None`` when they cannot hold it."""
    loads, left = [], total
    for capacity in sorted((n.cpu + EPSILON for n in problem.nodes), reverse=True):
        if left <= 0:
            break
        loads.append(min(capacity, left))
        left -= loads[-1]
    return np.array(loads) if left <= EPSILON else None


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
