"""The exact optimum of φ under CPU, memory and slot capacity (the yardstick of paper 000 §7.3).

Maximise the IMC gain φ(X) (paper 000 §2.2, notes §1.4: every directed executor link counted
once) subject to every node's CPU and memory capacity; a node without a free slot hosts
nothing. Two exact methods, both from the notes §5.1 "Computing the exact optimum":

* **Counting DP** (``method="dp"``). Executors of a component with the same CPU and memory are
  interchangeable (Eq. 1: the same traffic to every partner), so a node's contents is a
  *pattern*: a count per executor class, and its gain is ``Σ_{c<d} w_cd·p_c·p_d``. With
  identical nodes, ``best(k, rem)`` = the best gain for the remaining count vector ``rem`` on
  the ``K − k`` nodes not yet used, where the next node's pattern must contain ≥ 1 executor of
  the first class with executors left (the canonical-order trick that removes permutations
  of identical nodes). With nodes of different capacity the nodes are taken in a fixed order
  and ``best(i, rem)`` ranges over node ``i``'s patterns, the empty one included.
  Memoised on the state.
* **Unary-count MILP** (``method="milp"``, HiGHS through :func:`scipy.optimize.milp`, with a
  time limit and the proven gap in the report). Binary ``b[c,n,k]`` = "node n hosts ≥ k
  executors of class c", ``b[c,n,k] ≥ b[c,n,k+1]``, ``Σ_{n,k} b[c,n,k] = |c|``, capacity rows,
  and for a pair of classes with traffic either the notes' ``z[c,d,n,k,l] ≤ b[c,n,k],
  b[d,n,l]`` (small classes) or the compact ``y[c,d,n,k] ≤ a[d,n], y ≤ m·b[c,n,k]``
  (large ones; exact as well, since the objective only pushes y up). Identical nodes get the
  symmetry breaking (the first class's count per node non-increasing; the notes order by the
  total count, which HiGHS solved 4× slower on our instances). With measured
  per-executor-pair traffic every executor is its own class of size 1, so ``b`` is the
  executor-level ``x[e,n]`` and ``z`` the linearised product of a pair with traffic.

``method="auto"`` (default) runs the DP when its state space is small and falls back to the
MILP when the DP exceeds ``dp_budget`` pattern evaluations.

Deviations and additions (ours):

* Memory is a second capacity row / DP dimension, slots are honoured by excluding nodes with
  no free slot (one worker per node, the model's default).
* Two DP prunings that keep it exact: a remainder that fits on one node is best placed on that
  node whole (φ is supermodular when traffic is non-negative), and a remainder whose CPU
  exceeds the capacity of the nodes left is infeasible. With identical nodes the state is
  keyed on ``(min(nodes left, executors left), rem)``.
* When HiGHS hits the time limit without an incumbent, the heuristic ``tdls`` placement is
  returned with the MILP's bound, so the report still states a proven gap.

References: A. Chatzistergiou, S. D. Viglas, "Fast Heuristics for Near-Optimal Task Allocation
in Data Stream Processing over Clusters", CIKM 2014, §2.2 and §7.3; notes 000 §1.4 and §5.1.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

from scheduler_py.algorithms.registry import register
from scheduler_py.algorithms.topdown.counts import (
    CountModel,
    TaskClass,
    count_model,
    fits_on,
    max_per_node,
    room_for,
)
from scheduler_py.model.budget import UNLIMITED, Budget
from scheduler_py.model.capacity import check_feasible
from scheduler_py.model.cost import imc_gain
from scheduler_py.model.errors import InfeasibleError, SchedulingError
from scheduler_py.model.types import EPSILON, Node, Placement, Problem

_NEG = float("-inf")


# --------------------------------------------------------------------------------------
# Exact counting DP
# --------------------------------------------------------------------------------------


class _BudgetExceeded(Exception):
    pass


@dataclass
class _Solution:
    counts: list[list[int]] | None  # node × class, None = infeasible
    bound: float
    status: str
    proven: bool
    detail: dict


def dp_state_space(model: CountModel) -> int:
    """Π(|c|+1): the number of remaining-count vectors, the DP's state space per node."""
    return math.prod(cls.size + 1 for cls in model.classes)


def solve_dp(
    model: CountModel, *, budget: int | None = None, ignore_traffic: bool = False
) -> _Solution:
    """Exact counting DP (notes §5.1). Raises ``_BudgetExceeded`` after ``budget`` patterns."""
    classes = model.classes
    size = len(classes)
    sizes = tuple(cls.size for cls in classes)
    cpu = [cls.cpu for cls in classes]
    mem = [cls.memory_mb for cls in classes]
    neighbours = (
        tuple(() for _ in classes)
        if ignore_traffic
        else tuple(tuple((d, w) for d, w in row if d < c) for c, row in enumerate(model.neighbours))
    )
    nodes = model.nodes
    node_count = len(nodes)
    identical = model.identical_nodes
    caps_cpu = [n.cpu + EPSILON for n in nodes]
    caps_mem = [n.memory_mb + EPSILON for n in nodes]
    # capacity of the nodes from i on (heterogeneous order), for the infeasibility prune
    tail_cpu = [0.0] * (node_count + 1)
    tail_mem = [0.0] * (node_count + 1)
    for i in range(node_count - 1, -1, -1):
        tail_cpu[i] = tail_cpu[i + 1] + nodes[i].cpu
        tail_mem[i] = tail_mem[i + 1] + nodes[i].memory_mb
    memo: dict[tuple[int, tuple[int, ...]], float] = {}
    choice: dict[tuple[int, tuple[int, ...]], tuple[int | None, tuple[int, ...]]] = {}
    steps = 0

    def gain(vec: Sequence[int]) -> float:
        total = 0.0
        for c in range(size):
            vc = vec[c]
            if vc:
                for d, w in neighbours[c]:
                    total += w * vc * vec[d]
        return total

    # per pair of classes (c > d): the most c·d links one node can hold, and the most d
    # beside one c (and c beside one d), on a node with the largest CPU and the largest
    # memory of all: a bound for the remainder
    big = Node("bound", max(n.cpu for n in nodes), memory_mb=max(n.memory_mb for n in nodes))
    pair_bounds = []
    for c in range(size):
        for d, w in neighbours[c]:
            best_product = 0
            for a in range(1, sizes[c] + 1):
                b = room_for(big, a * cpu[c], a * mem[c], classes[d], sizes[d])
                if b <= 0:
                    break
                best_product = max(best_product, a * b)
            beside_c = room_for(big, cpu[c], mem[c], classes[d], sizes[d])
            beside_d = room_for(big, cpu[d], mem[d], classes[c], sizes[c])
            pair_bounds.append((c, d, w, best_product, beside_c, beside_d))

    def upper(vec: Sequence[int], nodes_left: int) -> float:
        """An upper bound on the gain of ``vec`` spread over ``nodes_left`` nodes."""
        total = 0.0
        for c, d, w, product, beside_c, beside_d in pair_bounds:
            vc, vd = vec[c], vec[d]
            if vc and vd:
                total += w * min(vc * vd, nodes_left * product, vc * beside_c, vd * beside_d)
        return total

    def load(vec: Sequence[int]) -> tuple[float, float]:
        return (
            sum(v * cpu[c] for c, v in enumerate(vec)),
            sum(v * mem[c] for c, v in enumerate(vec)),
        )

    def patterns(rem: tuple[int, ...], cap_c: float, cap_m: float, first: int | None):
        """Every pattern p ≤ rem fitting (cap_c, cap_m); p[first] ≥ 1 when first is set."""
        nonlocal steps
        result: list[tuple[float, tuple[int, ...], float, float]] = []
        pat = [0] * size

        def dfs(c: int, used_c: float, used_m: float, g: float) -> None:
            nonlocal steps
            if c == size:
                steps += 1
                result.append((g, tuple(pat), used_c, used_m))
                return
            r = rem[c]
            link = 0.0
            for d, w in neighbours[c]:
                if pat[d]:
                    link += w * pat[d]
            low = 1 if c == first else 0
            top = r
            if cpu[c] > 0:
                top = min(top, int((cap_c - used_c) // cpu[c]))
            if mem[c] > 0 and cap_m != math.inf:
                top = min(top, int((cap_m - used_m) // mem[c]))
            for x in range(top, low - 1, -1):
                pat[c] = x
                dfs(c + 1, used_c + x * cpu[c], used_m + x * mem[c], g + x * link)
            pat[c] = 0

        dfs(0, 0.0, 0.0, 0.0)
        if budget is not None and steps > budget:
            raise _BudgetExceeded
        return result

    def best(i: int, rem: tuple[int, ...]) -> float:
        """Best gain placing ``rem`` on nodes i.. (heterogeneous) / K−i nodes (identical)."""
        if not any(rem):
            return 0.0
        if i >= node_count:
            return _NEG
        left = sum(rem)
        key = (min(node_count - i, left), rem) if identical else (i, rem)
        if key in memo:
            return memo[key]
        need_c, need_m = load(rem)
        if identical:
            fits_all = need_c <= caps_cpu[0] and need_m <= caps_mem[0]
            feasible = (
                need_c <= (node_count - i) * nodes[0].cpu + EPSILON
                and need_m <= (node_count - i) * nodes[0].memory_mb + EPSILON
            )
        else:
            fits_all = any(
                need_c <= caps_cpu[j] and need_m <= caps_mem[j] for j in range(i, node_count)
            )
            feasible = need_c <= tail_cpu[i] + EPSILON and need_m <= tail_mem[i] + EPSILON
        value = _NEG
        pick: tuple[int, ...] | None = None
        whole: int | None = None  # node index holding the whole remainder
        if fits_all:  # supermodular gain: one node holding everything is optimal
            value, pick = gain(rem), rem
            whole = next(
                j for j in range(i, node_count) if need_c <= caps_cpu[j] and need_m <= caps_mem[j]
            )
        elif feasible:
            after = node_count - i - 1  # nodes left once this node is filled
            if identical:
                first = next(c for c in range(size) if rem[c])
                found = patterns(rem, caps_cpu[0], caps_mem[0], first)
                room_c = after * nodes[0].cpu + EPSILON if after else 0.0
                room_m = after * nodes[0].memory_mb + EPSILON if after else 0.0
                one_node = [0] if after else []
            else:
                found = patterns(rem, caps_cpu[i], caps_mem[i], None)
                room_c, room_m = tail_cpu[i + 1] + EPSILON, tail_mem[i + 1] + EPSILON
                one_node = list(range(i + 1, node_count))
            # branch and bound: children that fit one node are valued exactly (gain of the
            # whole child), the others get an upper bound and are explored best first
            ranked = []
            for g, p, used_c, used_m in found:
                child_c, child_m = need_c - used_c, need_m - used_m
                if child_c > room_c or child_m > room_m:
                    continue
                child = tuple(r - x for r, x in zip(rem, p, strict=True))
                if not any(child) or any(
                    child_c <= caps_cpu[j] and child_m <= caps_mem[j] for j in one_node
                ):
                    exact = g + gain(child)
                    if exact > value:
                        value, pick = exact, p
                    continue
                if after:
                    ranked.append((g + upper(child, after), g, p, child))
            ranked.sort(key=lambda item: -item[0])
            for ceiling, g, p, child in ranked:
                if ceiling <= value:
                    break
                v = best(i + 1, child)
                if v > _NEG and g + v > value:
                    value, pick = g + v, p
        memo[key] = value
        if pick is not None:
            choice[key] = (whole, pick)
        return value

    value = best(0, sizes)
    detail = {"dp_states": len(memo), "dp_patterns": steps}
    if value == _NEG:
        return _Solution(None, _NEG, "infeasible", True, detail)
    counts = [[0] * size for _ in nodes]
    rem = sizes
    i = 0
    while any(rem):
        left = sum(rem)
        key = (min(node_count - i, left), rem) if identical else (i, rem)
        if key not in choice:  # a child valued inline (it fits one node): expand it now
            best(i, rem)
        whole, pick = choice[key]
        if whole is not None:  # everything left on one node (identical nodes: this one)
            counts[i if identical else whole] = list(pick)
            break
        counts[i] = list(pick)
        rem = tuple(r - x for r, x in zip(rem, pick, strict=True))
        i += 1
    return _Solution(counts, value + model.constant, "optimal", True, detail)


# --------------------------------------------------------------------------------------
# Unary-count MILP
# --------------------------------------------------------------------------------------

_Z_PAIR_LIMIT = 36
"""Use the notes' z[c,d,n,k,l] linearisation while (max per node of c)·(of d) ≤ this;
larger pairs use the compact y[c,d,n,k] form (fewer variables, same optimum)."""


def solve_milp(model: CountModel, *, time_limit: float, ignore_traffic: bool = False) -> _Solution:
    """The unary-count MILP of notes §5.1 solved by HiGHS with a time limit."""
    import numpy as np
    from scipy.optimize import Bounds, LinearConstraint, milp
    from scipy.sparse import coo_array

    classes = model.classes
    nodes = model.nodes
    limit = [[max_per_node(model, cls, node) for node in nodes] for cls in classes]
    columns: list[float] = []  # objective coefficient (minimised)
    upper: list[float] = []
    integral: list[int] = []
    b_index: dict[tuple[int, int], list[int]] = {}

    def new_var(obj: float, ub: float, integer: bool) -> int:
        columns.append(obj)
        upper.append(ub)
        integral.append(1 if integer else 0)
        return len(columns) - 1

    for c in range(len(classes)):
        for n in range(len(nodes)):
            b_index[(c, n)] = [new_var(0.0, 1.0, True) for _ in range(limit[c][n])]

    rows: list[int] = []
    cols: list[int] = []
    vals: list[float] = []
    lower_b: list[float] = []
    upper_b: list[float] = []

    def add_row(entries: list[tuple[int, float]], lo: float, hi: float) -> None:
        r = len(lower_b)
        for col, val in entries:
            rows.append(r)
            cols.append(col)
            vals.append(val)
        lower_b.append(lo)
        upper_b.append(hi)

    for c, cls in enumerate(classes):
        add_row([(v, 1.0) for n in range(len(nodes)) for v in b_index[(c, n)]], cls.size, cls.size)
        for n in range(len(nodes)):
            bs = b_index[(c, n)]
            for k in range(len(bs) - 1):
                add_row([(bs[k], 1.0), (bs[k + 1], -1.0)], 0.0, math.inf)
    for n, node in enumerate(nodes):
        entries_c = [(v, cls.cpu) for c, cls in enumerate(classes) for v in b_index[(c, n)]]
        add_row([e for e in entries_c if e[1] > 0], -math.inf, node.cpu + EPSILON)
        if not math.isinf(node.memory_mb):
            entries_m = [
                (v, cls.memory_mb) for c, cls in enumerate(classes) for v in b_index[(c, n)]
            ]
            add_row([e for e in entries_m if e[1] > 0], -math.inf, node.memory_mb + EPSILON)
    # symmetry breaking among identical nodes (same CPU and memory, wherever they are in the
    # node list): the first class's count is non-increasing along each such group (any
    # solution can be so sorted; measured faster than the notes' total-count order)
    groups: dict[tuple[float, float], list[int]] = {}
    for n, node in enumerate(nodes):
        groups.setdefault((node.cpu, node.memory_mb), []).append(n)
    for members in groups.values():
        for n, m in pairwise(members):
            if classes:
                entries = [(v, 1.0) for v in b_index[(0, n)]]
                entries += [(v, -1.0) for v in b_index[(0, m)]]
                add_row(entries, 0.0, math.inf)

    if not ignore_traffic:
        for c, row in enumerate(model.neighbours):
            for d, w in row:
                if d <= c:
                    continue
                for n in range(len(nodes)):
                    bc, bd = b_index[(c, n)], b_index[(d, n)]
                    if not bc or not bd:
                        continue
                    cc, cd = classes[c], classes[d]
                    if len(bc) * len(bd) <= _Z_PAIR_LIMIT:
                        for k, vc in enumerate(bc, start=1):
                            for m, vd in enumerate(bd, start=1):
                                if not fits_on(
                                    k * cc.cpu + m * cd.cpu,
                                    k * cc.memory_mb + m * cd.memory_mb,
                                    nodes[n],
                                ):
                                    continue  # both cannot be 1 together
                                z = new_var(-w, 1.0, False)
                                add_row([(z, 1.0), (vc, -1.0)], -math.inf, 0.0)
                                add_row([(z, 1.0), (vd, -1.0)], -math.inf, 0.0)
                    else:
                        if len(bc) > len(bd):  # expand the smaller side in unary
                            bc, bd, cc, cd = bd, bc, cd, cc
                        for k, vc in enumerate(bc, start=1):
                            # y = b[c,n,k]·a[d,n]; a[d,n] ≤ what fits beside k of c
                            m = room_for(nodes[n], k * cc.cpu, k * cc.memory_mb, cd, len(bd))
                            if m <= 0:
                                continue
                            y = new_var(-w, m, False)
                            add_row([(y, 1.0)] + [(vd, -1.0) for vd in bd], -math.inf, 0.0)
                            add_row([(y, 1.0), (vc, -float(m))], -math.inf, 0.0)

    count = len(columns)
    if not count:  # nothing to place, or no executor fits any node
        if classes:
            return _Solution(None, _NEG, "infeasible", True, {})
        return _Solution([[0] * len(classes) for _ in nodes], model.constant, "optimal", True, {})
    if not lower_b:
        add_row([], 0.0, 0.0)
    matrix = coo_array((vals, (rows, cols)), shape=(len(lower_b), count)).tocsr()
    result = milp(
        c=np.array(columns),
        constraints=[LinearConstraint(matrix, np.array(lower_b), np.array(upper_b))],
        integrality=np.array(integral),
        bounds=Bounds(np.zeros(count), np.array(upper)),
        options={"time_limit": float(time_limit), "disp": False, "mip_rel_gap": 1e-9},
    )
    detail = {
        "milp_variables": count,
        "milp_constraints": len(lower_b),
        "milp_nodes": int(getattr(result, "mip_node_count", 0) or 0),
        "milp_message": str(result.message),
    }
    dual = getattr(result, "mip_dual_bound", None)
    bound = -float(dual) + model.constant if dual is not None and np.isfinite(dual) else math.inf
    if result.status == 2:
        return _Solution(None, _NEG, "infeasible", True, detail)
    if result.x is None:
        status = "time_limit" if result.status == 1 else f"highs_status_{result.status}"
        return _Solution(None, bound, status, False, detail)
    x = result.x
    counts = [
        [round(float(sum(x[v] for v in b_index[(c, n)]))) for c in range(len(classes))]
        for n in range(len(nodes))
    ]
    detail["milp_objective"] = -float(result.fun) + model.constant
    proven = result.status == 0
    return _Solution(counts, bound, "optimal" if proven else "time_limit", proven, detail)


# --------------------------------------------------------------------------------------
# Infeasibility diagnosis and the registered algorithm
# --------------------------------------------------------------------------------------


def _infeasible(problem: Problem, model: CountModel, solve) -> InfeasibleError:
    """Name the resource that makes a proven-infeasible problem infeasible."""
    check_feasible(problem)  # the clear message for the necessary conditions
    topology = problem.topology
    cpu_only = CountModel(
        tuple(TaskClass(c.component, c.executors, c.cpu, 0.0) for c in model.classes),
        model.weight,
        0.0,
        tuple(Node(n.id, n.cpu, n.slots) for n in model.nodes),
        model.uniform,
    )
    if solve(cpu_only).counts is None:
        resource, need = "cpu", lambda cls: cls.cpu
        caps = [n.cpu for n in model.nodes]
        unit = "% CPU"
    else:
        resource, need = "memory", lambda cls: cls.memory_mb
        caps = [n.memory_mb for n in model.nodes]
        unit = " MB memory"
    hardest = max(model.classes, key=lambda cls: (need(cls), cls.component))
    total = sum(need(cls) * cls.size for cls in model.classes)
    return InfeasibleError(
        f"topology {topology.id}: the executors cannot be packed into the nodes' {resource} "
        f"capacity: {total:.1f}{unit} in total against {sum(caps):.1f}{unit} on "
        f"{len(caps)} usable node(s), but no packing exists (largest executors: component "
        f"{hardest.component} at {need(hardest):.1f}{unit} each); raise the parallelism of "
        f"the largest components or add capacity",
        resource=resource,
        component=hardest.component,
        needed=need(hardest),
        best_available=max(caps),
    )


@register(
    "optimal",
    paper="000 §7.3 (exact optimum), notes §5.1",
    summary="Exact maximum of φ under CPU/memory capacity: counting DP over interchangeable "
    "executors, or the unary-count MILP (HiGHS) with a time limit and proven gap.",
    params={
        "method": ("auto", "auto (DP when small, else MILP), dp or milp"),
        "time_limit": (30.0, "MILP time limit in seconds; the report gives the proven gap"),
        "dp_budget": (
            1_000_000,
            "auto: pattern evaluations the DP may spend before switching to the MILP",
        ),
        "dp_max_states": (200_000, "auto: largest Π(|class|+1) for which the DP is tried"),
    },
)
def plan(
    problem: Problem,
    *,
    method: str = "auto",
    time_limit: float = 30.0,
    dp_budget: int = 1_000_000,
    dp_max_states: int = 200_000,
    budget: Budget = UNLIMITED,
) -> Placement:
    """Place ``problem`` maximising φ exactly (or within the MILP's time limit).

    ``budget`` (:mod:`scheduler_py.model.budget`) caps ``time_limit``; when the cap stops
    HiGHS before it proves the optimum, the incumbent is returned with
    ``report["budget_exhausted"]`` and its proven gap.

    Parameters
    ----------
    method:
        ``"auto"``, ``"dp"`` (always the DP, unbounded) or ``"milp"``.
    time_limit:
        Seconds HiGHS may spend; on expiry the incumbent is returned with its proven gap.
    dp_budget, dp_max_states:
        When ``auto`` tries the DP and when it gives up on it.

    Returns
    -------
    Placement
        ``report``: ``objective`` (= φ of the placement), ``bound`` (proven upper bound),
        ``gap`` (relative), ``status``, ``proven_optimal``, ``method`` and solver details.

    Raises
    ------
    InfeasibleError
        No placement fits; names the resource (cpu, memory or slots).

    Example
    -------
    >>> from scheduler_py.model import Component, Edge, Node, Problem, Topology
    >>> topo = Topology("t", (Component("a", 2, 40), Component("b", 2, 40)), (Edge("a", "b", 8),))
    >>> plan(Problem((Node("n0", 100), Node("n1", 100)), topo)).report["objective"]
    8.0
    """
    if method not in ("auto", "dp", "milp"):
        raise SchedulingError(f"optimal: method must be auto, dp or milp, got {method!r}")
    started = time.perf_counter()
    check_feasible(problem)
    capped = budget.cap(time_limit) < time_limit
    time_limit = max(0.01, budget.cap(time_limit))
    model = count_model(problem)
    solution: _Solution | None = None
    used = method
    if method == "dp" or (method == "auto" and dp_state_space(model) <= dp_max_states):
        try:
            solution = solve_dp(model, budget=dp_budget if method == "auto" else None)
            used = "dp"
        except _BudgetExceeded:
            solution = None
    if solution is None:
        solution = solve_milp(model, time_limit=time_limit)
        used = "milp"

    def feasibility(m: CountModel) -> _Solution:
        if used == "dp":
            return solve_dp(m, ignore_traffic=True)
        return solve_milp(m, time_limit=time_limit, ignore_traffic=True)

    if solution.status == "infeasible":
        raise _infeasible(problem, model, feasibility)
    counts = solution.counts
    status = solution.status
    if counts is None:  # time limit without an incumbent: heuristic + the MILP's bound
        from scheduler_py.algorithms.topdown import tdls

        try:
            counts = model.counts_of(tdls.plan(problem).node_of)
        except InfeasibleError as error:
            raise SchedulingError(
                f"optimal: HiGHS found no feasible placement for topology "
                f"{problem.topology.id} within {time_limit:g} s and the heuristic failed too "
                f"({error}); raise time_limit"
            ) from error
        status = "time_limit_heuristic"
    for c, cls in enumerate(model.classes):
        if sum(row[c] for row in counts) != cls.size:  # pragma: no cover - a solver bug
            raise SchedulingError(f"optimal: solution misplaces executors of {cls.component}")
    node_of = model.node_of(counts)
    objective = imc_gain(problem.topology, node_of)
    own = model.phi(counts)
    if abs(own - objective) > 1e-6 * max(1.0, abs(objective)):
        raise SchedulingError(
            f"optimal: count-model φ {own} disagrees with cost.imc_gain {objective}"
        )
    solver_objective = solution.detail.get("milp_objective")
    if solver_objective is not None and status != "time_limit_heuristic":
        # the linearised products can only under-count an incumbent's φ (they are pushed up
        # by the objective, not forced); at a proven optimum they are exact
        slack = 1e-5 * max(1.0, abs(objective))
        if solver_objective > objective + slack or (
            solution.proven and abs(solver_objective - objective) > slack
        ):
            raise SchedulingError(
                f"optimal: MILP objective {solver_objective} disagrees with φ {objective}"
            )
    bound = objective if solution.proven else max(solution.bound, objective)
    if solution.proven:
        gap = 0.0
    elif objective > 0:
        gap = (bound - objective) / objective
    else:
        gap = 0.0 if bound <= EPSILON else math.inf
    report = {
        "objective": objective,
        "bound": bound,
        "gap": gap,
        "status": status,
        "proven_optimal": solution.proven,
        "method": used,
        "seconds": time.perf_counter() - started,
        **solution.detail,
    }
    if capped and not solution.proven:
        report["budget_exhausted"] = True
        report["budget_note"] = f"MILP stopped at {time_limit:.2f} s with gap {gap:.1%}"
    return Placement(problem.topology.id, node_of, report=report)
