"""Baselines and helpers of paper 001's evaluation (notes ``docs/001_albic.md`` §2.6), on the
integer instance of :mod:`._albic_milp`:

* :func:`flux` — Flux (Shah et al., ICDE'03) as the paper uses it: nodes sorted by load,
  the biggest *suitable* key group moved from the 1st to the last node, the 2nd to the
  2nd-last, ..., under a migration-count cap. "Suitable" [O] = strictly lowers the load
  variance (deviation from L̄ for active nodes, from 0 for nodes marked for removal, which
  never receive).
* :func:`lpt` — largest item first onto the relatively least-loaded node (a balanced
  initial allocation).
* :func:`cola` — COLA-style (Khandekar et al., Middleware'09) [O]: recursive balanced
  min-cut bisection (METIS) until every part fits L̄ + maxLD and there are at least as many
  parts as nodes, LPT packing of the parts, further splitting of the largest part while
  the packing misses maxLD. It ignores the current allocation (node labels arbitrary).
* :func:`metis_parts` — balanced min-cut k-way partitioning with pymetis, used by ALBIC's
  Step 2 and by COLA.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from scheduler_py.algorithms.albic.milp import Balance, load_distance, node_load
from scheduler_py.algorithms.partition import part_graph
from scheduler_py.model.types import EPSILON

_SCALE = 1000


def _relative(balance: Balance, absolute: np.ndarray) -> np.ndarray:
    return 100.0 * absolute / np.where(balance.cap > 0, balance.cap, np.inf)


def flux(
    balance: Balance, assign: np.ndarray | None = None, budget: int | None = None
) -> np.ndarray:
    """Flux within ``budget`` moves (default ``balance.budget``) starting from ``assign``
    (default the homes; items without a home go first to the least-loaded node, free)."""
    a = (balance.home if assign is None else assign).copy()
    N = balance.n_nodes
    cap = np.where(balance.cap > 0, balance.cap, np.inf)
    absolute = node_load(a, balance.load, N)
    cpu = node_load(a, balance.cpu, N)
    mem = node_load(a, balance.mem, N)
    for p in np.flatnonzero(a < 0):
        room = (
            (cpu + balance.cpu[p] <= balance.cap_cpu + EPSILON)
            & (mem + balance.mem[p] <= balance.cap_mem + EPSILON)
            & ~balance.removing
        )
        u = np.where(room, absolute / cap, np.inf)
        n = int(np.argmin(u))
        a[p] = n
        absolute[n] += balance.load[p]
        cpu[n] += balance.cpu[p]
        mem[n] += balance.mem[p]
    avg = balance.average
    target = np.where(balance.removing, 0.0, avg)
    left = int(balance.budget if budget is None else budget)
    while left > 0:
        u = 100.0 * absolute / cap
        order = np.argsort(-(u - target), kind="stable")
        receivers = [n for n in order[::-1] if not balance.removing[n]]
        moved = False
        for i in range(min(len(order), len(receivers)) // 2 + 1):
            if left <= 0 or i >= len(receivers):
                break
            donor, recipient = int(order[i]), int(receivers[i])
            if donor == recipient:
                continue
            u = 100.0 * absolute / cap
            before = (u[donor] - target[donor]) ** 2 + (u[recipient] - target[recipient]) ** 2
            best, best_load = -1, -1.0
            for p in np.flatnonzero(a == donor):
                x = balance.load[p]
                if x <= best_load:
                    continue
                if cpu[recipient] + balance.cpu[p] > balance.cap_cpu[recipient] + EPSILON:
                    continue
                if mem[recipient] + balance.mem[p] > balance.cap_mem[recipient] + EPSILON:
                    continue
                after = (u[donor] - 100 * x / cap[donor] - target[donor]) ** 2 + (
                    u[recipient] + 100 * x / cap[recipient] - target[recipient]
                ) ** 2
                if after < before - EPSILON:
                    best, best_load = int(p), x
            if best < 0:
                continue
            a[best] = recipient
            for arr, need in ((absolute, balance.load), (cpu, balance.cpu), (mem, balance.mem)):
                arr[donor] -= need[best]
                arr[recipient] += need[best]
            left -= 1
            moved = True
        if not moved:
            break
    return a


def lpt(balance: Balance, items: Sequence[Sequence[int]] | None = None) -> np.ndarray:
    """Largest item (or group of items) first onto the node with the lowest relative load
    that has room; nodes marked for removal receive nothing. Returns item -> node."""
    P, N = balance.n_items, balance.n_nodes
    groups = [list(g) for g in items] if items is not None else [[p] for p in range(P)]
    order = sorted(range(len(groups)), key=lambda i: -float(balance.load[groups[i]].sum()))
    cap = np.where(balance.cap > 0, balance.cap, np.inf)
    absolute = np.zeros(N)
    cpu = np.zeros(N)
    mem = np.zeros(N)
    a = np.full(P, -1, dtype=int)
    for i in order:
        g = groups[i]
        need = (
            float(balance.load[g].sum()),
            float(balance.cpu[g].sum()),
            float(balance.mem[g].sum()),
        )
        room = (
            (cpu + need[1] <= balance.cap_cpu + EPSILON)
            & (mem + need[2] <= balance.cap_mem + EPSILON)
            & ~balance.removing
        )
        if not room.any():
            room = ~balance.removing  # over capacity: let the caller's repair deal with it
        n = int(np.argmin(np.where(room, (absolute + need[0]) / cap, np.inf)))
        a[g] = n
        absolute[n] += need[0]
        cpu[n] += need[1]
        mem[n] += need[2]
    return a


def metis_parts(
    members: Sequence[int],
    k: int,
    weights: np.ndarray,
    traffic: dict[tuple[int, int], float],
) -> list[list[int]]:
    """Split ``members`` into at most ``k`` balanced parts minimising the cut traffic.

    ``weights`` are vertex weights aligned with ``members``; ``traffic`` maps unordered
    (a, b) pairs of members to their total rate. Falls back to contiguous chunks when
    METIS makes no progress (or for tiny inputs)."""
    members = list(members)
    if k <= 1 or len(members) <= 1:
        return [members]
    if k >= len(members):
        return [[m] for m in members]
    local = {m: i for i, m in enumerate(members)}
    adjacency: list[dict[int, int]] = [{} for _ in members]
    positive = [w for w in traffic.values() if w > 0]
    scale = _SCALE / max(positive) if positive else 1.0
    for (a, b), w in traffic.items():
        if a in local and b in local and a != b and w > 0:
            ia, ib = local[a], local[b]
            weight = max(1, round(w * scale))
            adjacency[ia][ib] = adjacency[ia].get(ib, 0) + weight
            adjacency[ib][ia] = adjacency[ib].get(ia, 0) + weight
    vw = np.asarray(weights, dtype=float)
    vscale = _SCALE / vw.max() if vw.max() > 0 else 1.0
    vweights = [max(1, round(float(w) * vscale)) for w in vw]
    xadj, adjncy, eweights = [0], [], []
    for row in adjacency:
        for j, w in sorted(row.items()):
            adjncy.append(j)
            eweights.append(w)
        xadj.append(len(adjncy))
    parts: list[list[int]] = []
    try:
        if adjncy:
            labels = part_graph(k, xadj, adjncy, vweights=vweights, eweights=eweights)
            buckets: dict[int, list[int]] = {}
            for m, label in zip(members, labels, strict=True):
                buckets.setdefault(int(label), []).append(m)
            parts = [b for b in buckets.values() if b]
    except Exception:  # pragma: no cover - METIS unavailable or rejected the graph
        parts = []
    if len(parts) <= 1:  # no edges, or METIS kept everything together: balanced chunks
        order = sorted(range(len(members)), key=lambda i: -vw[i])
        bins: list[list[int]] = [[] for _ in range(k)]
        load = [0.0] * k
        for i in order:
            j = min(range(k), key=lambda b: load[b])
            bins[j].append(members[i])
            load[j] += vw[i]
        parts = [b for b in bins if b]
    return parts


def cola(
    balance: Balance,
    traffic: dict[tuple[int, int], float],
    max_ld: float,
    *,
    max_rounds: int = 64,
) -> np.ndarray:
    """COLA-style static allocation from scratch (see the module docstring)."""
    P, N = balance.n_items, balance.n_nodes
    active = int((~balance.removing).sum())
    mean_cap = float(balance.cap[~balance.removing].mean()) if active else 1.0
    limit = (balance.average + max_ld) / 100.0 * mean_cap
    parts: list[list[int]] = [list(range(P))]

    def split(part: list[int], k: int = 2) -> list[list[int]]:
        return metis_parts(part, k, balance.load[part], traffic)

    changed = True
    while changed:
        changed = False
        out = []
        for part in parts:
            if len(part) > 1 and float(balance.load[part].sum()) > limit:
                out.extend(split(part))
                changed = True
            else:
                out.append(part)
        parts = out
    while len(parts) < active:
        biggest = max(
            (p for p in parts if len(p) > 1), key=lambda p: balance.load[p].sum(), default=None
        )
        if biggest is None:
            break
        parts.remove(biggest)
        parts.extend(split(biggest))
    assign = lpt(balance, parts)
    for _ in range(max_rounds):
        ld = load_distance(node_load(assign, balance.load, N), balance.cap, balance.removing)
        if ld <= max_ld:
            break
        biggest = max(
            (p for p in parts if len(p) > 1), key=lambda p: balance.load[p].sum(), default=None
        )
        if biggest is None:
            break
        parts.remove(biggest)
        parts.extend(split(biggest))
        assign = lpt(balance, parts)
    return assign
