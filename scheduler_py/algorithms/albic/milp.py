"""The load-balancing MILP of paper 001 (Madsen, Zhou, Cao, arXiv 1602.03770, §4.3.1),
over *items* (key groups, or ALBIC's indivisible partitions of them) and nodes, solved with
HiGHS through :func:`scipy.optimize.milp` under a time limit.

Formulation (``docs/algorithms/001-albic.md`` §2.3; our copy of the paper lost the algebra, so
it is our reconstruction [R])::

    min  ε − w2·ε_u − w2·ε_l                                    (w1 = 1, w2 = 1e-3)
    (1)  Σ_n y[p,n] = 1                                   every item on one node
    (2)  Σ_{p,n} cost[p]·[n ≠ home(p)]·y[p,n] ≤ budget    migration budget
    (3)  100·Σ_p L[p]·y[p,n] / cap[n] ≤ L̄ + ε − ε_u       every node, R included
    (4)  100·Σ_p L[p]·y[p,n] / cap[n] ≥ L̄ − ε + ε_l       nodes not marked for removal
    (5)  ε_u ≤ ε,  ε_l ≤ ε
         L̄ = 100·Σ_p L[p] / Σ_{n ∉ R} cap[n]             (the average over N only)

Loads are percentages of each node's own capacity, which is the paper's heterogeneous
extension (κ_n·L̄) with the deviation ε measured in the same per-node percentage.

Deviations and engineering additions (all named in :mod:`scheduler_py.algorithms.albic.plan`):

* **Lemma 1 as a constraint**: y[p,n] = 0 for n ∈ R unless p is already there. The paper
  proves an *optimal* solution never moves into R; with a time limit we enforce it.
* **Capacity** (the multi-dimensional extension of §4.3.1): Σ cpu·y ≤ cpu capacity and
  Σ memory·y ≤ memory capacity of every node (memory only when finite).
* **Restart budget** (Storm adaptation, ``docs/algorithms/001-albic.md`` §6.3 item 3, optional):
  binaries r[n] marking a node whose worker changes (an item leaves or arrives), Σ r[n] ≤ restart
  budget.
* **Neighbourhood** ``restricted`` (default): an item may only stay, or move from a node
  above its target (L̄, or 0 for nodes in R) to a node below L̄ when the move strictly
  lowers the larger of the two nodes' deviations (Flux's "suitable" test); items without a
  home (new executors, lost nodes) may go to any node not in R. ``full`` allows every
  node. The restriction keeps the model small enough for HiGHS on 2 cores
  (``docs/algorithms/001-albic.md`` §2.3: the full model does not beat Flux within seconds beyond
  ~10 nodes).
* **Cutoff** ``eps_ub``: an upper bound on ε. ALBIC passes maxLD (its acceptance test);
  the pure MILP passes the current allocation's LD, so the solver only searches for
  allocations better than "no move" (scipy's HiGHS takes no warm start).
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field

import numpy as np
from scipy import sparse
from scipy.optimize import Bounds, LinearConstraint, milp

from scheduler_py.model.types import EPSILON

W2 = 1e-3
"""Weight of the tightening slacks (w1 = 1); any w2 < w1/2 gives the lexicographic
behaviour of ``docs/algorithms/001-albic.md`` §2.3 (first LD, then the spread max − min)."""


@dataclass
class Balance:
    """An integer-indexed balancing instance: items x nodes.

    ``load`` is the bottleneck resource, ``cap`` the same resource's node capacity (so
    100·load/cap is a percentage); ``cpu``/``mem`` and ``cap_cpu``/``cap_mem`` are the hard
    capacities. ``home[p]`` is the node holding item p now (-1: none, it must be placed and
    costs nothing); ``cost[p]`` is charged when p leaves its home.
    """

    load: np.ndarray
    cpu: np.ndarray
    mem: np.ndarray
    cap: np.ndarray
    cap_cpu: np.ndarray
    cap_mem: np.ndarray
    home: np.ndarray
    cost: np.ndarray
    removing: np.ndarray
    budget: float
    restart_budget: int | None = None
    drain: int = 0
    """Progress floor for scale-in: at least this many items leave their node in R."""

    @property
    def n_items(self) -> int:
        return len(self.load)

    @property
    def n_nodes(self) -> int:
        return len(self.cap)

    @property
    def average(self) -> float:
        """L̄ in percent: total load over the capacity of the nodes not marked for removal."""
        active = float(self.cap[~self.removing].sum())
        total = float(self.load.sum())
        if active <= 0:
            return 0.0 if total <= 0 else float("inf")
        return 100.0 * total / active


def node_load(assign: np.ndarray, load: np.ndarray, n_nodes: int) -> np.ndarray:
    placed = assign >= 0
    return np.bincount(assign[placed], weights=load[placed], minlength=n_nodes)


def load_distance(
    absolute: np.ndarray, cap: np.ndarray, removing: np.ndarray, total: float | None = None
) -> float:
    """LD in percentage points (``docs/algorithms/001-albic.md`` §1.5): max |u_n − L̄| over nodes
    not marked for
    removal, and max (u_n − L̄)⁺ over nodes marked for removal (only (3) binds them)."""
    active = float(cap[~removing].sum())
    total = float(absolute.sum()) if total is None else total
    if active <= 0:
        return 0.0 if total <= 0 else float("inf")
    avg = 100.0 * total / active
    u = 100.0 * absolute / np.where(cap > 0, cap, np.inf)
    dev = np.abs(u[~removing] - avg)
    over = u[removing] - avg
    return float(max(dev.max(initial=0.0), over.max(initial=0.0), 0.0))


def assignment_ld(balance: Balance, assign: np.ndarray) -> float:
    return load_distance(
        node_load(assign, balance.load, balance.n_nodes),
        balance.cap,
        balance.removing,
        float(balance.load.sum()),
    )


def migration_cost(balance: Balance, assign: np.ndarray) -> float:
    moved = (balance.home >= 0) & (assign != balance.home)
    return float(balance.cost[moved].sum())


def capacity_ok(balance: Balance, assign: np.ndarray) -> bool:
    if (assign < 0).any():
        return False
    cpu = node_load(assign, balance.cpu, balance.n_nodes)
    mem = node_load(assign, balance.mem, balance.n_nodes)
    cpu_ok = (cpu <= balance.cap_cpu + EPSILON).all()
    return bool(cpu_ok and (mem <= balance.cap_mem + EPSILON).all())


@dataclass
class MilpResult:
    assign: np.ndarray | None
    status: int
    message: str
    seconds: float
    variables: int
    ld: float | None = None
    extra: dict = field(default_factory=dict)


def allowed_pairs(
    balance: Balance, fixed: dict[int, int], neighbourhood: str
) -> tuple[np.ndarray, np.ndarray]:
    """The (item, node) pairs that get a variable (see the module docstring)."""
    P, N = balance.n_items, balance.n_nodes
    fits = (balance.cpu[:, None] <= balance.cap_cpu[None, :] + EPSILON) & (
        balance.mem[:, None] <= balance.cap_mem[None, :] + EPSILON
    )
    allowed = np.zeros((P, N), dtype=bool)
    homed = balance.home >= 0
    allowed[np.arange(P)[homed], balance.home[homed]] = True
    not_r = ~balance.removing
    if neighbourhood == "full":
        allowed |= fits & not_r[None, :]
    else:
        # predicted loads once the fixed items sit on their forced nodes
        predicted = np.where(homed, balance.home, -1)
        for p, n in fixed.items():
            predicted[p] = n
        absolute = node_load(predicted, balance.load, N)
        cap = np.where(balance.cap > 0, balance.cap, np.inf)
        u = 100.0 * absolute / cap
        avg = balance.average
        target = np.where(balance.removing, 0.0, avg)
        dev = np.abs(u - avg)
        sources = (u > target + EPSILON) | balance.removing
        sinks = not_r & (u < avg - EPSILON)
        for p in range(P):
            s = predicted[p]
            if s < 0:
                allowed[p] = fits[p] & not_r
                continue
            if not sources[s]:
                continue
            share_s = 100.0 * balance.load[p] / cap[s]
            share_n = 100.0 * balance.load[p] / cap
            if balance.removing[s]:
                ok = not_r
            else:
                before = np.maximum(dev[s], dev)
                after = np.maximum(np.abs(u[s] - share_s - avg), np.abs(u + share_n - avg))
                ok = sinks & (after < before - EPSILON)
            allowed[p] |= ok & fits[p]
    for p, n in fixed.items():
        allowed[p] = False
        allowed[p, n] = True
    items, nodes = np.nonzero(allowed)
    return items, nodes


def solve(
    balance: Balance,
    *,
    fixed: dict[int, int] | None = None,
    eps_ub: float = float("inf"),
    time_limit: float = 10.0,
    neighbourhood: str = "restricted",
    w2: float = W2,
    allowed: np.ndarray | None = None,
    pair_cost: np.ndarray | None = None,
    average: float | None = None,
    outside: tuple[float, float] = (-np.inf, -np.inf),
    drain_mask: np.ndarray | None = None,
    moving: np.ndarray | None = None,
) -> MilpResult:
    """Solve the MILP; ``assign`` is ``None`` when HiGHS found no feasible solution within
    the limit (or the model is infeasible, e.g. a forced item cannot fit).

    The keyword-only extras describe a *sub-problem* of a larger instance (used by
    :func:`solve_anytime`): ``allowed`` (items x nodes) replaces the neighbourhood,
    ``pair_cost`` the migration cost of every (item, node), ``average`` the global L̄, and
    ``outside = (up, low)`` the largest u − L̄ and L̄ − u of the nodes left out, which bound
    ε − ε_u and ε − ε_l from below; ``drain_mask`` (items) and ``moving`` (items x nodes:
    is that a move away from the original home) express the scale-in floor
    ``balance.drain`` for such a sub-problem.
    """
    started = time.perf_counter()
    fixed = dict(fixed or {})
    P, N = balance.n_items, balance.n_nodes
    if allowed is None:
        items, nodes = allowed_pairs(balance, fixed, neighbourhood)
    else:
        items, nodes = np.nonzero(allowed)
    nv = len(items)
    restart = balance.restart_budget is not None
    n_r = N if restart else 0
    total = nv + 3 + n_r
    e, eu, el = nv, nv + 1, nv + 2
    c = np.zeros(total)
    c[e], c[eu], c[el] = 1.0, -w2, -w2
    cols = np.arange(nv)
    blocks: list[LinearConstraint] = []

    def matrix(rows, columns, values, n_rows):
        return sparse.csr_matrix((values, (rows, columns)), shape=(n_rows, total))

    # (1) every item on exactly one node
    blocks.append(LinearConstraint(matrix(items, cols, np.ones(nv), P), 1.0, 1.0))
    # (2) migration budget
    away = (
        (balance.home[items] >= 0) & (nodes != balance.home[items])
        if moving is None
        else moving[items, nodes]
    )
    if pair_cost is None:
        costs = np.where(away, balance.cost[items], 0.0)
    else:
        costs = pair_cost[items, nodes]
    if costs.any():
        blocks.append(
            LinearConstraint(
                matrix(np.zeros(nv, dtype=int), cols, costs, 1), -np.inf, balance.budget + EPSILON
            )
        )
    avg = balance.average if average is None else average
    cap = balance.cap
    share = 100.0 * balance.load[items] / cap[nodes]
    # (3) upper bound, every node
    rows = np.concatenate([nodes, np.arange(N), np.arange(N)])
    columns = np.concatenate([cols, np.full(N, e), np.full(N, eu)])
    values = np.concatenate([share, -np.ones(N), np.ones(N)])
    blocks.append(LinearConstraint(matrix(rows, columns, values, N), -np.inf, avg))
    # (4) lower bound, nodes not marked for removal
    active = np.flatnonzero(~balance.removing)
    index = -np.ones(N, dtype=int)
    index[active] = np.arange(len(active))
    keep = index[nodes] >= 0
    rows = np.concatenate([index[nodes][keep], np.arange(len(active)), np.arange(len(active))])
    columns = np.concatenate([cols[keep], np.full(len(active), e), np.full(len(active), el)])
    values = np.concatenate([share[keep], np.ones(len(active)), -np.ones(len(active))])
    blocks.append(LinearConstraint(matrix(rows, columns, values, len(active)), avg, np.inf))
    # (5) the tightening slacks stay below ε
    blocks.append(
        LinearConstraint(
            matrix([0, 0, 1, 1], [eu, e, el, e], [1.0, -1.0, 1.0, -1.0], 2), -np.inf, 0.0
        )
    )
    if np.isfinite(outside).any():  # nodes outside a sub-problem keep their deviation
        blocks.append(
            LinearConstraint(
                matrix([0, 0, 1, 1], [e, eu, e, el], [1.0, -1.0, 1.0, -1.0], 2),
                np.asarray(outside, dtype=float),
                np.inf,
            )
        )
    # capacities (multi-dimensional extension)
    for need, limit in ((balance.cpu, balance.cap_cpu), (balance.mem, balance.cap_mem)):
        finite = np.isfinite(limit)
        if not finite.any():
            continue
        rows_ok = finite[nodes] & (need[items] > 0)
        blocks.append(
            LinearConstraint(
                matrix(nodes[rows_ok], cols[rows_ok], need[items][rows_ok], N),
                -np.inf,
                np.where(finite, limit, np.inf) + EPSILON,
            )
        )
    # scale-in progress floor (ours): at least `drain` items leave their node in R
    if balance.drain > 0:
        if drain_mask is None:
            drain_mask = (balance.home >= 0) & balance.removing[np.maximum(balance.home, 0)]
        counted = np.flatnonzero(drain_mask[items] & away)
        blocks.append(
            LinearConstraint(
                matrix(np.zeros(len(counted), dtype=int), counted, np.ones(len(counted)), 1),
                float(balance.drain),
                np.inf,
            )
        )
    # optional restart budget: r[n] >= y[p,n] for arrivals, r[h] >= 1 - y[p,h] for departures
    if restart:
        r0 = nv + 3
        arrive = np.flatnonzero(nodes != balance.home[items])
        stay = np.flatnonzero(nodes == balance.home[items])
        rows = np.concatenate([np.arange(len(arrive)), np.arange(len(arrive))])
        columns = np.concatenate([arrive, r0 + nodes[arrive]])
        values = np.concatenate([np.ones(len(arrive)), -np.ones(len(arrive))])
        blocks.append(LinearConstraint(matrix(rows, columns, values, len(arrive)), -np.inf, 0.0))
        rows = np.concatenate([np.arange(len(stay)), np.arange(len(stay))])
        columns = np.concatenate([stay, r0 + nodes[stay]])
        blocks.append(
            LinearConstraint(matrix(rows, columns, np.ones(2 * len(stay)), len(stay)), 1.0, np.inf)
        )
        blocks.append(
            LinearConstraint(
                matrix(np.zeros(N, dtype=int), r0 + np.arange(N), np.ones(N), 1),
                -np.inf,
                float(balance.restart_budget),
            )
        )
    integrality = np.concatenate([np.ones(nv), np.zeros(3), np.ones(n_r)])
    lower = np.zeros(total)
    upper = np.concatenate([np.ones(nv), [eps_ub, np.inf, np.inf], np.ones(n_r)])
    for p in fixed:
        lower[np.flatnonzero(items == p)] = 1.0
    if (np.bincount(items, minlength=P) == 0).any():
        return MilpResult(None, 2, "an item has no allowed node", time.perf_counter() - started, nv)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        result = milp(
            c,
            integrality=integrality,
            bounds=Bounds(lower, upper),
            constraints=blocks,
            options={"time_limit": max(time_limit, 0.05), "disp": False},
        )
    seconds = time.perf_counter() - started
    if result.x is None:
        return MilpResult(None, int(result.status), str(result.message), seconds, nv)
    y = result.x[:nv]
    assign = np.full(P, -1, dtype=int)
    best = np.full(P, -1.0)
    for k in range(nv):
        if y[k] > best[items[k]]:
            best[items[k]] = y[k]
            assign[items[k]] = nodes[k]
    out = MilpResult(assign, int(result.status), str(result.message), seconds, nv)
    out.ld = assignment_ld(balance, assign)
    out.extra["objective"] = float(result.fun)
    return out
