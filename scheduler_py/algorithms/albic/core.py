"""ALBIC (paper 001 §4.3.2, "Autonomic Load Balancing with Integrated Collocation") and the
guarded pure MILP (§4.3.1) on the integer instance of :mod:`._albic_milp`.

One call is one adaptation round of Algorithm 1 (lines 4-8; the scaling decision is the
caller's, the paper gives no rule). Steps (notes ``docs/001_albic.md`` §2.5):

1. **Scores**: pair (g, g') with g sending to g' is a candidate iff
   O[g,g'] > sf · O[g] / D[g] (D[g] = key groups of g's downstream operators).
2. **Maintain collocation**: candidate pairs *currently* on one node (interpretation A,
   notes §5-7) are merged into sets (union-find); a set whose migration cost exceeds the
   budget or whose load exceeds maxPL is split by balanced min-cut partitioning (METIS,
   vertex weight max(c/budget, L/maxPL), notes §5-8), recursively.
3. **Improve collocation**: the not-yet-collocated candidate pair with the largest rate
   (random tie-break) is forced onto one node: the less-loaded of the two nodes (Cases 1
   and 3) or the node of the member that is in a set (Case 2); never a node marked for
   removal, and pairs whose forced move cannot fit the budget or the node are skipped
   (our additions, notes §5-13).
4. **Solve** the partition-level MILP with ε ≤ maxLD; on failure lower maxPL by δ and
   repeat; at maxPL = 0 every key group is its own item and the pure MILP is solved.

Guard (ours): a solve without a forced pair is bounded by the current allocation's LD
and the current allocation is kept when the solver finds nothing better (scipy's HiGHS
takes no warm start), so a timeout never returns something worse than "no move".
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field

import numpy as np

from scheduler_py.algorithms.albic import milp as mm
from scheduler_py.algorithms.albic.baselines import flux, metis_parts
from scheduler_py.algorithms.albic.milp import better
from scheduler_py.model.types import EPSILON


@dataclass
class KeyGroups:
    """Key groups (Storm executors) with their measured traffic; ``balance.home`` is the
    current allocation and ``balance.cost`` the per-key-group migration cost c_g."""

    balance: mm.Balance
    traffic: dict[tuple[int, int], float]
    """Directed rate O[g, g'] per SPL."""
    downstream: np.ndarray
    """D_g: the number of key groups of g's downstream operators (>= 1)."""


@dataclass(frozen=True)
class AlbicParams:
    sf: float = 2.0
    max_ld: float = 10.0
    max_pl: float = 25.0
    delta: float = 5.0
    time_limit: float = 10.0
    neighbourhood: str = "restricted"
    collocation: bool = True
    flux_seed: bool = False
    seed: int = 0
    min_gain: float = 0.0


@dataclass
class RoundResult:
    assign: np.ndarray
    ld_before: float | None
    ld_after: float
    chosen: str
    """"albic" (a constrained solve was accepted), "milp", "current" or "flux"."""
    candidates: int = 0
    collocated_candidates: int = 0
    pair: tuple[int, int] | None = None
    pair_node: int | None = None
    max_pl: float | None = None
    partitions: int = 0
    solves: list[dict] = field(default_factory=list)


def candidate_pairs(kg: KeyGroups, sf: float) -> dict[tuple[int, int], float]:
    """Step 1: {(g, g'): O[g,g']} for pairs sending more than sf times g's average."""
    out_rate = np.zeros(kg.balance.n_items)
    for (g, _), rate in kg.traffic.items():
        out_rate[g] += rate
    return {
        (g, h): rate
        for (g, h), rate in kg.traffic.items()
        if g != h and rate > sf * out_rate[g] / max(kg.downstream[g], 1) + EPSILON
    }


def _union_find_sets(n: int, pairs) -> list[list[int]]:
    parent = list(range(n))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in pairs:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    groups: dict[int, list[int]] = {}
    for x in range(n):
        groups.setdefault(find(x), []).append(x)
    return [g for g in groups.values() if len(g) > 1]


def split_set(
    members: list[int], kg: KeyGroups, max_pl_abs: float, budget: float, depth: int = 0
) -> list[list[int]]:
    """Step 2: split a collocated set until each part's cost <= budget and load <= maxPL."""
    b = kg.balance
    cost = float(b.cost[members].sum())
    load = float(b.load[members].sum())
    if len(members) == 1 or (cost <= budget + EPSILON and load <= max_pl_abs + EPSILON):
        return [members]
    k = max(
        2,
        math.ceil(cost / budget) if budget > 0 else 2,
        math.ceil(load / max_pl_abs) if max_pl_abs > 0 else 2,
    )
    weights = np.maximum(
        b.cost[members] / (budget if budget > 0 else 1.0),
        b.load[members] / (max_pl_abs if max_pl_abs > 0 else 1.0),
    )
    traffic = {}
    inside = set(members)
    for (g, h), rate in kg.traffic.items():
        if g in inside and h in inside:
            key = (min(g, h), max(g, h))
            traffic[key] = traffic.get(key, 0.0) + rate
    parts = metis_parts(members, k, weights, traffic)
    if len(parts) == 1 or depth > 32:
        parts = [[m] for m in members]
    out = []
    for part in parts:
        out.extend(split_set(part, kg, max_pl_abs, budget, depth + 1))
    return out


def _items(kg: KeyGroups, parts: list[list[int]]) -> tuple[mm.Balance, np.ndarray]:
    """The partition-level instance: item = part (all members share one home)."""
    b = kg.balance
    part_of = np.empty(b.n_items, dtype=int)
    for i, part in enumerate(parts):
        part_of[part] = i

    def agg(values: np.ndarray) -> np.ndarray:
        return np.array([float(values[p].sum()) for p in parts])

    home = np.array([int(b.home[p[0]]) if (b.home[p] == b.home[p[0]]).all() else -1 for p in parts])
    cost = np.array([float(b.cost[p][b.home[p] >= 0].sum()) for p in parts])
    items = mm.Balance(
        load=agg(b.load),
        cpu=agg(b.cpu),
        mem=agg(b.mem),
        cap=b.cap,
        cap_cpu=b.cap_cpu,
        cap_mem=b.cap_mem,
        home=home,
        cost=cost,
        removing=b.removing,
        budget=b.budget,
        restart_budget=b.restart_budget,
    )
    movable = on_removing(items) & (items.cost <= items.budget + EPSILON)
    items.drain = int(min(b.drain, int(movable.sum())))
    return items, part_of


def current_valid(balance: mm.Balance) -> bool:
    """Every item has a home and the homes respect capacity."""
    return bool((balance.home >= 0).all()) and mm.capacity_ok(balance, balance.home)


def on_removing(balance: mm.Balance) -> np.ndarray:
    """Items whose home is a node marked for removal."""
    return (balance.home >= 0) & balance.removing[np.maximum(balance.home, 0)]


def drain_quota(balance: mm.Balance, drain_min: int) -> int:
    """The scale-in progress floor of one round: min(drain_min, items on R, budget)."""
    return int(min(drain_min, int(on_removing(balance).sum()), math.floor(balance.budget)))


def baseline(balance: mm.Balance) -> np.ndarray | None:
    """The admissible "no move": the current allocation, plus, while nodes marked for
    removal still hold items, a greedy drain of ``balance.drain`` of them (largest first,
    onto the relatively least-loaded node with room). ``None`` when the current allocation
    is incomplete or over capacity."""
    if not current_valid(balance):
        return None
    a = balance.home.copy()
    N = balance.n_nodes
    cap = np.where(balance.cap > 0, balance.cap, np.inf)
    for _ in range(balance.drain):
        left = np.flatnonzero(on_removing(balance) & (a == balance.home))
        if not len(left):
            break
        absolute = mm.node_load(a, balance.load, N)
        cpu = mm.node_load(a, balance.cpu, N)
        mem = mm.node_load(a, balance.mem, N)
        placed = False
        for p in left[np.argsort(-balance.load[left], kind="stable")]:
            room = (
                (cpu + balance.cpu[p] <= balance.cap_cpu + EPSILON)
                & (mem + balance.mem[p] <= balance.cap_mem + EPSILON)
                & ~balance.removing
            )
            if room.any():
                a[p] = int(np.argmin(np.where(room, (absolute + balance.load[p]) / cap, np.inf)))
                placed = True
                break
        if not placed:
            break
    return a


def repair_capacity(balance: mm.Balance, assign: np.ndarray) -> tuple[np.ndarray, int]:
    """Move key groups off over-capacity nodes (largest first) to the relatively least
    loaded node with room, ignoring the budget; returns (assignment, moves made)."""
    a = assign.copy()
    N = balance.n_nodes
    moves = 0
    for _ in range(balance.n_items):
        cpu = mm.node_load(a, balance.cpu, N)
        mem = mm.node_load(a, balance.mem, N)
        over = np.flatnonzero((cpu > balance.cap_cpu + EPSILON) | (mem > balance.cap_mem + EPSILON))
        homeless = np.flatnonzero(a < 0)
        if not len(over) and not len(homeless):
            break
        if len(homeless):
            p = int(homeless[0])
        else:
            n = int(over[0])
            members = np.flatnonzero(a == n)
            p = int(members[np.argmax(balance.load[members])])
        absolute = mm.node_load(a, balance.load, N)
        room = (
            (cpu + balance.cpu[p] <= balance.cap_cpu + EPSILON)
            & (mem + balance.mem[p] <= balance.cap_mem + EPSILON)
            & ~balance.removing
        )
        if a[p] >= 0:
            room[a[p]] = False
        if not room.any():
            break
        target = int(
            np.argmin(
                np.where(room, absolute / np.where(balance.cap > 0, balance.cap, np.inf), np.inf)
            )
        )
        if a[p] >= 0:
            moves += 1
        a[p] = target
    return a, moves


def pure_milp(kg: KeyGroups, params: AlbicParams) -> RoundResult:
    """§4.3.1: the MILP over single key groups, guarded by the admissible "no move"."""
    b = kg.balance
    ld_current = mm.assignment_ld(b, b.home) if current_valid(b) else None
    seed_assign = baseline(b)
    seed_name = "current" if b.drain == 0 else "current+drain"
    if params.flux_seed:
        fx = flux(b)
        drained = int((on_removing(b) & (fx != b.home)).sum())
        if (
            mm.capacity_ok(b, fx)
            and drained >= b.drain
            and (seed_assign is None or better(b, fx, seed_assign))
        ):
            seed_assign, seed_name = fx, "flux"
    bound = mm.assignment_ld(b, seed_assign) if seed_assign is not None else float("inf")
    res = mm.solve_anytime(
        b,
        eps_ub=bound,
        time_limit=params.time_limit,
        neighbourhood=params.neighbourhood,
        start=seed_assign,
        seed=params.seed,
    )
    solves = [_solve_record(res, 0.0, None)]
    chosen, name = None, ""
    if res.assign is not None and better(b, res.assign, seed_assign, params.min_gain):
        chosen, name = res.assign, "milp"
    elif seed_assign is not None:
        chosen, name = seed_assign, seed_name
    else:
        chosen, _ = repair_capacity(b, flux(b))  # places items without a home, then balances
        name = "flux"
    return RoundResult(
        chosen,
        ld_current,
        mm.assignment_ld(b, chosen),
        name,
        solves=solves,
        max_pl=0.0,
        partitions=b.n_items,
    )


def _solve_record(res: mm.MilpResult, max_pl: float, pair) -> dict:
    return {
        "max_pl": max_pl,
        "pair": list(pair) if pair else None,
        "status": res.status,
        "message": res.message,
        "ld": res.ld,
        "variables": res.variables,
        "seconds": round(res.seconds, 3),
        "lns_rounds_improved": res.extra.get("lns_rounds_improved"),
    }


def albic_round(kg: KeyGroups, params: AlbicParams) -> RoundResult:
    """One ALBIC invocation (Steps 1-4); ``collocation = False`` gives the pure MILP."""
    b = kg.balance
    if not params.collocation:
        return pure_milp(kg, params)
    rng = random.Random(params.seed)
    candidates = candidate_pairs(kg, params.sf)
    home = b.home
    existing = [(g, h) for (g, h) in candidates if home[g] >= 0 and home[g] == home[h]]
    todo = [
        (pair, rate)
        for pair, rate in candidates.items()
        if not (home[pair[0]] >= 0 and home[pair[0]] == home[pair[1]])
    ]
    rng.shuffle(todo)
    todo.sort(key=lambda item: -item[1])
    sets = _union_find_sets(b.n_items, existing)
    in_set = np.zeros(b.n_items, dtype=bool)
    for s in sets:
        in_set[s] = True
    ld_current = mm.assignment_ld(b, home) if current_valid(b) else None
    if not sets and not todo:
        result = pure_milp(kg, params)
        result.candidates = len(candidates)
        return result
    active = ~b.removing
    mean_cap = float(b.cap[active].mean())
    absolute = mm.node_load(home, b.load, b.n_nodes)
    relative = 100.0 * absolute / np.where(b.cap > 0, b.cap, np.inf)
    solves: list[dict] = []
    steps = max(1, math.ceil(params.max_pl / params.delta)) if params.delta > 0 else 1
    max_pl = params.max_pl
    for _ in range(steps):
        if max_pl <= EPSILON:
            break
        max_pl_abs = max_pl / 100.0 * mean_cap
        parts: list[list[int]] = []
        for s in sets:
            parts.extend(split_set(s, kg, max_pl_abs, b.budget))
        covered = np.zeros(b.n_items, dtype=bool)
        for p in parts:
            covered[p] = True
        parts.extend([g] for g in np.flatnonzero(~covered))
        items, part_of = _items(kg, parts)
        pair, node = _choose_pair(todo, items, part_of, in_set, relative, home, b)
        fixed = {int(part_of[pair[0]]): node, int(part_of[pair[1]]): node} if pair else {}
        start = None if pair else baseline(items)
        bound = params.max_ld
        if start is not None:
            bound = min(bound, mm.assignment_ld(items, start))
        res = mm.solve_anytime(
            items,
            fixed=fixed,
            eps_ub=bound,
            time_limit=params.time_limit,
            neighbourhood=params.neighbourhood,
            start=start,
            seed=params.seed,
        )
        solves.append(_solve_record(res, max_pl, pair))
        if res.assign is not None and res.ld <= params.max_ld + EPSILON:
            assign = res.assign[part_of]
            if pair or start is None or better(items, res.assign, start, params.min_gain):
                return RoundResult(
                    assign,
                    ld_current,
                    mm.assignment_ld(b, assign),
                    "albic",
                    len(candidates),
                    len(existing),
                    pair,
                    node,
                    max_pl,
                    len(parts),
                    solves,
                )
        if start is not None and mm.assignment_ld(items, start) <= params.max_ld + EPSILON:
            # nothing better than "no move", which already keeps every collocation
            kept = start[part_of]
            return RoundResult(
                kept,
                ld_current,
                mm.assignment_ld(b, kept),
                "current" if items.drain == 0 else "current+drain",
                len(candidates),
                len(existing),
                None,
                None,
                max_pl,
                len(parts),
                solves,
            )
        max_pl -= params.delta
    result = pure_milp(kg, params)
    result.solves = solves + result.solves
    result.candidates = len(candidates)
    result.collocated_candidates = len(existing)
    return result


def _choose_pair(todo, items: mm.Balance, part_of, in_set, relative, home, b):
    """Step 3: the best candidate pair that can be forced, and its node (Cases 1-3)."""
    for (g, h), _rate in todo:
        ng, nh = int(home[g]), int(home[h])
        if in_set[g] != in_set[h]:
            options = [ng if in_set[g] else nh]
        else:
            options = sorted((n for n in {ng, nh} if n >= 0), key=lambda n: (relative[n], n))
        options = [n for n in options if n >= 0 and not b.removing[n]]
        for other in (ng, nh):
            if other >= 0 and not b.removing[other] and other not in options:
                options.append(other)  # fallback when the preferred node is in R
        pg, ph = int(part_of[g]), int(part_of[h])
        for node in options[:1] if options else []:
            cost = sum(
                items.cost[p] for p in (pg, ph) if items.home[p] >= 0 and items.home[p] != node
            )
            if cost > items.budget + EPSILON:
                continue
            cpu = items.cpu[pg] + items.cpu[ph]
            mem = items.mem[pg] + items.mem[ph]
            if cpu > items.cap_cpu[node] + EPSILON or mem > items.cap_mem[node] + EPSILON:
                continue
            return (g, h), node
    return None, None
