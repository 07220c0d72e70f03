"""The load-balancing MILP of paper 001 (Madsen, Zhou, Cao, arXiv 1602.03770, §4.3.1),
over *items* (key groups, or ALBIC's indivisible partitions of them) and nodes, solved with
HiGHS through :func:`scipy.optimize.milp` under a time limit.

Formulation (notes ``docs/001_albic.md`` §2.3; our copy of the paper lost the algebra, so
it is the notes' reconstruction [R])::

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
* **Restart budget** (Storm adaptation, notes §6.3-3, optional): binaries r[n] marking a
  node whose worker changes (an item leaves or arrives), Σ r[n] ≤ restart budget.
* **Neighbourhood** ``restricted`` (default): an item may only stay, or move from a node
  above its target (L̄, or 0 for nodes in R) to a node below L̄ when the move strictly
  lowers the larger of the two nodes' deviations (Flux's "suitable" test); items without a
  home (new executors, lost nodes) may go to any node not in R. ``full`` allows every
  node. The restriction keeps the model small enough for HiGHS on 2 cores (notes §2.3:
  the full model does not beat Flux within seconds beyond ~10 nodes).
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
behaviour of notes §2.3 (first LD, then the spread max − min)."""


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
    """LD in percentage points (notes §1.5): max |u_n − L̄| over nodes not marked for
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


def spread(balance: Balance, assign: np.ndarray) -> float:
    """The MILP's secondary criterion: max u over all nodes − min u over nodes not in R
    (what maximising ε_u + ε_l minimises, notes §2.3)."""
    u = (
        100.0
        * node_load(assign, balance.load, balance.n_nodes)
        / np.where(balance.cap > 0, balance.cap, np.inf)
    )
    active = u[~balance.removing]
    return float(u.max() - active.min()) if active.size else 0.0


def better(balance: Balance, a: np.ndarray, b: np.ndarray | None, min_gain: float = 0.0) -> bool:
    """Is ``a`` lexicographically better than ``b`` in (LD, spread)? With ``min_gain`` > 0
    the LD must drop by more than that many percentage points."""
    if b is None:
        return True
    la, lb = assignment_ld(balance, a), assignment_ld(balance, b)
    if min_gain > 0:
        return la < lb - min_gain
    if la < lb - 1e-7:
        return True
    return la <= lb + 1e-7 and spread(balance, a) < spread(balance, b) - 1e-7


def improve(
    balance: Balance,
    start: np.ndarray,
    *,
    fixed: dict[int, int] | None = None,
    time_limit: float = 5.0,
    seed: int = 0,
    max_rounds: int = 40,
    max_stall: int = 8,
) -> tuple[np.ndarray, int]:
    """Fix-and-optimise (large-neighbourhood search) on the same MILP: repeatedly free the
    items of the k most over- and k most under-loaded nodes (k = 3, growing while rounds
    fail), fix everything else, and solve the sub-MILP with ε bounded by the incumbent's
    LD. The migration cost stays relative to the original homes, so the budget holds
    globally; nodes in R still only keep what they had. Returns (assignment, rounds that
    improved)."""
    started = time.perf_counter()
    fixed = dict(fixed or {})
    rng = np.random.default_rng(seed)
    best = start.copy()
    best_key = (assignment_ld(balance, best), spread(balance, best))
    P, N = balance.n_items, balance.n_nodes
    avg = balance.average
    cap = np.where(balance.cap > 0, balance.cap, np.inf)
    fits = (balance.cpu[:, None] <= balance.cap_cpu[None, :] + EPSILON) & (
        balance.mem[:, None] <= balance.cap_mem[None, :] + EPSILON
    )
    k, stall, improved = 3, 0, 0
    for _ in range(max_rounds):
        left = time_limit - (time.perf_counter() - started)
        if left < 0.05 or best_key[0] <= 1e-6 or stall >= max_stall:
            break
        u = 100.0 * node_load(best, balance.load, N) / cap
        excess = np.where(balance.removing, np.where(u > 0, u - avg + 1e3, -np.inf), u - avg)
        deficit = np.where(balance.removing, -np.inf, avg - u)
        kk = min(k, N)
        pool_over = np.argsort(-excess, kind="stable")[: 2 * kk]
        pool_under = np.argsort(-deficit, kind="stable")[: 2 * kk]
        over = (
            list(pool_over[:kk])
            if stall == 0
            else list(rng.choice(pool_over, size=min(kk, len(pool_over)), replace=False))
        )
        under = (
            list(pool_under[:kk])
            if stall == 0
            else list(rng.choice(pool_under, size=min(kk, len(pool_under)), replace=False))
        )
        scope = sorted(set(int(x) for x in over + under))
        if len(scope) < 2:
            break
        in_scope = np.zeros(N, dtype=bool)
        in_scope[scope] = True
        free = np.flatnonzero(in_scope[best] & ~np.isin(np.arange(P), list(fixed)))
        if not len(free):
            break
        local = {n: i for i, n in enumerate(scope)}
        sub_nodes = np.asarray(scope)
        allowed = fits[np.ix_(free, sub_nodes)] & (
            ~balance.removing[sub_nodes][None, :]
            | (balance.home[free][:, None] == sub_nodes[None, :])
        )
        allowed[np.arange(len(free)), [local[int(best[p])] for p in free]] = True
        moved_cost = (balance.home >= 0) & (best != balance.home)
        outside_items = ~np.isin(np.arange(P), free)
        used = float(balance.cost[moved_cost & outside_items].sum())
        homes = balance.home[free][:, None]
        pair_cost = np.where(
            (homes >= 0) & (homes != sub_nodes[None, :]), balance.cost[free][:, None], 0.0
        )
        rest = ~in_scope
        u_rest = u[rest]
        up = float((u_rest - avg).max()) if rest.any() else -np.inf
        low = (
            float((avg - u_rest[~balance.removing[rest]]).max())
            if (rest & ~balance.removing).any()
            else -np.inf
        )
        fixed_cpu = node_load(np.where(outside_items, best, -1), balance.cpu, N)[sub_nodes]
        fixed_mem = node_load(np.where(outside_items, best, -1), balance.mem, N)[sub_nodes]
        fixed_load = node_load(np.where(outside_items, best, -1), balance.load, N)[sub_nodes]
        r_home = (balance.home >= 0) & balance.removing[np.maximum(balance.home, 0)]
        drained_outside = int((r_home & (best != balance.home) & outside_items).sum())
        sub = Balance(
            load=np.concatenate([balance.load[free], fixed_load]),
            cpu=np.concatenate([balance.cpu[free], fixed_cpu]),
            mem=np.concatenate([balance.mem[free], fixed_mem]),
            cap=balance.cap[sub_nodes],
            cap_cpu=balance.cap_cpu[sub_nodes],
            cap_mem=balance.cap_mem[sub_nodes],
            home=np.concatenate([np.full(len(free), -1), np.arange(len(scope))]),
            cost=np.zeros(len(free) + len(scope)),
            removing=balance.removing[sub_nodes],
            budget=balance.budget - used,
            drain=max(0, balance.drain - drained_outside),
        )
        # the fixed load of every scope node is a pinned pseudo-item on that node
        allowed_full = np.zeros((len(free) + len(scope), len(scope)), dtype=bool)
        allowed_full[: len(free)] = allowed
        allowed_full[len(free) + np.arange(len(scope)), np.arange(len(scope))] = True
        cost_full = np.zeros_like(allowed_full, dtype=float)
        cost_full[: len(free)] = pair_cost
        moving = np.zeros_like(allowed_full)
        moving[: len(free)] = (homes >= 0) & (homes != sub_nodes[None, :])
        res = solve(
            sub,
            eps_ub=best_key[0],
            time_limit=min(left, max(0.5, time_limit / 8)),
            allowed=allowed_full,
            pair_cost=cost_full,
            average=avg,
            outside=(up, low),
            drain_mask=np.concatenate([r_home[free], np.zeros(len(scope), dtype=bool)]),
            moving=moving,
        )
        if res.assign is not None:
            trial = best.copy()
            trial[free] = sub_nodes[res.assign[: len(free)]]
            key = (assignment_ld(balance, trial), spread(balance, trial))
            if key[0] < best_key[0] - 1e-9 or (
                key[0] <= best_key[0] + 1e-9 and key[1] < best_key[1] - 1e-9
            ):
                best, best_key = trial, key
                improved += 1
                stall, k = 0, 3
                continue
        stall += 1
        k = min(N, k + 1) if stall % 2 == 0 else k
    return best, improved


def solve_anytime(
    balance: Balance,
    *,
    fixed: dict[int, int] | None = None,
    eps_ub: float = float("inf"),
    time_limit: float = 10.0,
    neighbourhood: str = "restricted",
    start: np.ndarray | None = None,
    seed: int = 0,
) -> MilpResult:
    """The solver ALBIC and the pure MILP call: one solve of the whole model (at most half
    the time), then, for the restricted neighbourhood, fix-and-optimise (:func:`improve`)
    for the rest of ``time_limit``. When the first solve finds nothing within ``eps_ub``,
    the search starts from ``start`` (a feasible allocation, e.g. the current one) instead;
    the result is returned only if it beats ``eps_ub``."""
    started = time.perf_counter()
    first = solve(
        balance, fixed=fixed, eps_ub=eps_ub, time_limit=time_limit / 2, neighbourhood=neighbourhood
    )
    if neighbourhood != "restricted" or balance.restart_budget is not None:
        return first
    base = first.assign if first.assign is not None else start
    if base is None:
        return first
    left = time_limit - (time.perf_counter() - started)
    assign, rounds = improve(balance, base, fixed=fixed, time_limit=left, seed=seed)
    ld = assignment_ld(balance, assign)
    seconds = time.perf_counter() - started
    if first.assign is None and start is not None and not better(balance, assign, start):
        first.seconds = seconds
        first.extra["lns_rounds_improved"] = rounds
        return first
    out = MilpResult(assign, first.status, first.message, seconds, first.variables, ld)
    out.extra.update(first.extra)
    out.extra["lns_rounds_improved"] = rounds
    return out
