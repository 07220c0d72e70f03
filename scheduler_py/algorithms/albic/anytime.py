"""ALBIC's anytime MILP: a first HiGHS solve, then fix-and-optimise rounds (paper 001 §4.3.1
solved within a time limit; ``docs/algorithms/001-albic.md`` §2.3)."""

from __future__ import annotations

import time

import numpy as np

from scheduler_py.algorithms.albic.milp import (
    Balance,
    MilpResult,
    assignment_ld,
    node_load,
    solve,
)
from scheduler_py.model.types import EPSILON


def spread(balance: Balance, assign: np.ndarray) -> float:
    """The MILP's secondary criterion: max u over all nodes − min u over nodes not in R
    (what maximising ε_u + ε_l minimises, ``docs/algorithms/001-albic.md`` §2.3)."""
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
