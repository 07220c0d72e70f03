"""The integer core of paper 004 (Tantalaki et al., IEEE Access 2020): the t x N matrix scheme.

Everything here works on component *IDs* 0..N-1 (real components 0..n-1 numbered in
stage order, dummy components n..N-1) and node *indices* 0..N-1; :mod:`pipeline` maps
Storm components and nodes onto them. Section numbers "§" refer to the paper, "notes"
to ``docs/004_pipeline.md``.

* :func:`algorithm1` — Algorithm 1 (§III.A, proof of Prop. 1): Eq. 4 -> Eq. 6 -> Eq. 10
  -> Eq. 11, with the typos of the printed pseudo-code fixed (notes A1: divide by ``t``,
  ``N' = N/G``); :func:`closed_form` is the CRT form of the result (notes §2.2).
* :func:`refine` — Algorithm 2 (§III.A, Prop. 2), ``faithful`` (static ``M'``/``R^-``, a
  shared ``k``) or ``robust`` (live groups; notes §2.4) mode. "GoTo Line 3" abandons the
  current pair and resets the swap counter (notes A8).
* :func:`complete_schedule` — §III.B: the N' - t' added block rows (notes §2.5), giving
  the N x N Latin-square step matrix S; for t >= N the first N rows (notes A9).
* :func:`task_positions` — the row-order placement rule (notes §2.6, A22).
* :func:`analyse_pipeline` / :func:`slot_transfers` — Algorithm 3 (§III.B) and the
  many-to-one stall of §IV.A / Fig. 4-5 (notes §2.7-2.8, A12, A15).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from math import gcd

import numpy as np

Matrix = np.ndarray
"""2-D integer array; rows are processing steps / task rows, columns are nodes."""


@dataclass(frozen=True)
class Shape:
    """The quantities of §II.B: ``G = gcd(t, N)``, ``t = t'G``, ``N = N'G``."""

    t: int
    N: int

    def __post_init__(self) -> None:
        if self.t < 1 or self.N < 1:
            raise ValueError(f"need t >= 1 and N >= 1, got t={self.t}, N={self.N}")

    @property
    def G(self) -> int:
        return gcd(self.t, self.N)

    @property
    def t1(self) -> int:
        """t' = t / G."""
        return self.t // self.G

    @property
    def N1(self) -> int:
        """N' = N / G."""
        return self.N // self.G

    @property
    def budget(self) -> int:
        """Algorithm 2's swap budget floor(G/2)."""
        return self.G // 2


# ---------------------------------------------------------------------------------------
# Algorithm 1: task distribution


def m_init(shape: Shape) -> Matrix:
    """M'_init(i, j) = floor((iN + j) / t), i < t (Eq. 4; the pseudo-code's "/N" is a typo)."""
    i = np.arange(shape.t)[:, None]
    j = np.arange(shape.N)[None, :]
    return (i * shape.N + j) // shape.t


def class_transposition(matrix: Matrix, shape: Shape) -> Matrix:
    """Eq. 6: row i (class k = i mod t') moves to row floor(i / t') + kG, giving M'_trn."""
    out = np.empty_like(matrix)
    for i in range(shape.t):
        out[i // shape.t1 + (i % shape.t1) * shape.G] = matrix[i]
    return out


def submatrix_moves(matrix: Matrix, shape: Shape) -> Matrix:
    """Eq. 10: block (r, c) moves to block row (rN' + c) mod t', same block column."""
    G, t1, N1 = shape.G, shape.t1, shape.N1
    out = np.empty_like(matrix)
    for r in range(t1):
        for c in range(N1):
            r_new = (r * N1 + c) % t1
            out[r_new * G : (r_new + 1) * G, c * G : (c + 1) * G] = matrix[
                r * G : (r + 1) * G, c * G : (c + 1) * G
            ]
    return out


def diagonalise(matrix: Matrix, shape: Shape) -> Matrix:
    """Eq. 11: inside every G x G block, element (r', c') moves to inner row (r' + c') mod G."""
    G = shape.G
    out = np.empty_like(matrix)
    rows = np.arange(matrix.shape[0])
    block_start = (rows // G) * G
    for j in range(shape.N):
        c_in = j % G
        new_rows = block_start + (rows - block_start + c_in) % G
        out[new_rows, j] = matrix[rows, j]
    return out


def algorithm1_steps(shape: Shape) -> tuple[Matrix, Matrix, Matrix, Matrix]:
    """(M'_init, M'_trn, after Eq. 10, M'_inter): the intermediate matrices of §IV."""
    init = m_init(shape)
    trn = class_transposition(init, shape)
    moved = submatrix_moves(trn, shape)
    return init, trn, moved, diagonalise(moved, shape)


def algorithm1(shape: Shape) -> Matrix:
    """M'_inter (t x N): every row a permutation of 0..N-1 (Prop. 1)."""
    return algorithm1_steps(shape)[3]


def closed_form(shape: Shape) -> Matrix:
    """Notes §2.2: M'_inter[rho G + r'][c G + c'] = ((r' - c') mod G) N' + b(rho, c), where
    b = floor(x / t') and x in [0, t'N') solves x = c (mod N'), x = rho (mod t') (CRT)."""
    G, t1, N1 = shape.G, shape.t1, shape.N1
    base = np.empty((t1, N1), dtype=int)
    x_of = {(x % t1, x % N1): x for x in range(t1 * N1)}
    for rho in range(t1):
        for c in range(N1):
            base[rho, c] = x_of[(rho, c)] // t1
    out = np.empty((shape.t, shape.N), dtype=int)
    for i in range(shape.t):
        rho, r_in = divmod(i, G)
        for j in range(shape.N):
            c, c_in = divmod(j, G)
            out[i, j] = ((r_in - c_in) % G) * N1 + base[rho, c]
    return out


# ---------------------------------------------------------------------------------------
# Algorithm 2: communication refinement


@dataclass(frozen=True)
class Refinement:
    """The relabelling Algorithm 2 applied: ``label[old id] = new id`` and the swaps made."""

    label: tuple[int, ...]
    swaps: tuple[tuple[int, int], ...]
    rejected: tuple[tuple[int, int], ...] = ()
    """Robust mode only: swaps the non-worsening guard refused (they used no budget)."""

    def apply(self, matrix: Matrix) -> Matrix:
        return np.asarray(self.label, dtype=int)[matrix]


def first_block_row_groups(inter: Matrix, shape: Shape) -> list[list[int]]:
    """M' of Algorithm 2: the IDs of each G x G block of the first block row, ascending."""
    G = shape.G
    return [
        sorted({int(v) for v in inter[:G, c * G : (c + 1) * G].ravel()}) for c in range(shape.N1)
    ]


def non_communicating(groups: Sequence[Sequence[int]], edges: set[tuple[int, int]]) -> dict:
    """R^- of Algorithm 2: per ID, the other members of its group it has no edge with
    (either direction), in descending order (dummies, the highest IDs, first)."""
    result: dict[int, list[int]] = {}
    for group in groups:
        for v in group:
            result[v] = sorted(
                (w for w in group if w != v and (v, w) not in edges and (w, v) not in edges),
                reverse=True,
            )
    return result


def inter_node_pairs(
    positions: Sequence[Sequence[int]], edges: Iterable[tuple[int, int]], n_nodes: int
) -> int:
    """Communicating (u-task, v-task) pairs on different nodes, over all edges (shuffle)."""
    counts = [np.bincount(np.asarray(p, dtype=int), minlength=n_nodes) for p in positions]
    total = 0
    for u, v in edges:
        total += len(positions[u]) * len(positions[v]) - int(counts[u] @ counts[v])
    return total


def refine(
    inter: Matrix,
    shape: Shape,
    edges: set[tuple[int, int]],
    parallelism: Sequence[int],
    mode: str = "robust",
) -> Refinement:
    """Algorithm 2 on M'_inter. ``edges`` is the directed Bitmap over IDs; ``parallelism``
    gives p_v per ID (0 for dummy components), used only by the robust mode's guard.

    ``faithful``: static M' and R^- computed once from M'_inter, ``k`` shared by all
    sources of one ``check_swap`` call (the printed pseudo-code; it may pick a victim that
    already left the group, notes §2.4). A victim index past the end of R^- or a no-op
    swap is skipped without spending budget (the pseudo-code would index out of range).

    ``robust``: the notes' robust mode — the loop order, budget and abort rule are the
    paper's, but groups are kept up to date after every swap and the victim is the
    highest-ID member of group i, other than the source, with no edge to any other member
    of group i. Our addition: a swap that would increase the number of inter-node
    communicating task pairs is refused and spends no budget, so refinement never makes
    locality worse (the notes measured 1 such case in 410 without the guard).
    """
    if mode not in ("robust", "faithful"):
        raise ValueError(f"refinement mode must be 'robust' or 'faithful', got {mode!r}")
    N, G, N1 = shape.N, shape.G, shape.N1
    label = list(range(N))  # old id -> current id
    swaps: list[tuple[int, int]] = []
    rejected: list[tuple[int, int]] = []
    if N1 < 2 or G < 2:
        return Refinement(tuple(label), ())
    static_groups = first_block_row_groups(inter, shape)
    static_rminus = non_communicating(static_groups, edges)
    members = [set(g) for g in static_groups]
    ordered: list[list[int] | None] = [list(g) for g in static_groups]  # sorted members
    group_of = {v: c for c, g in enumerate(static_groups) for v in g}
    columns = np.argsort(inter, axis=1)  # columns[k][old id] = node of that id in row k

    def positions_for(lab: Sequence[int]) -> list[list[int]]:
        inverse = [0] * N
        for old, new in enumerate(lab):
            inverse[new] = old
        return [[int(columns[k][inverse[v]]) for k in range(parallelism[v])] for v in range(N)]

    def do_swap(a: int, b: int) -> None:
        for old, new in enumerate(label):
            if new == a:
                label[old] = b
            elif new == b:
                label[old] = a
        ga, gb = group_of[a], group_of[b]
        members[ga].discard(a)
        members[gb].discard(b)
        members[ga].add(b)
        members[gb].add(a)
        group_of[a], group_of[b] = gb, ga
        ordered[ga] = ordered[gb] = None
        swaps.append((a, b))

    current_pairs = inter_node_pairs(positions_for(label), edges, N) if mode == "robust" else 0
    num_of_swaps = 0
    for i in range(N1 - 1):
        for j in range(i + 1, N1):
            k = 0
            aborted = False
            for x in range(G):
                if aborted:
                    break
                for y in range(G):
                    if mode == "faithful":
                        source, target = static_groups[i][x], static_groups[j][y]
                    else:
                        if ordered[i] is None:
                            ordered[i] = sorted(members[i])
                        if ordered[j] is None:
                            ordered[j] = sorted(members[j])
                        source, target = ordered[i][x], ordered[j][y]
                    if (source, target) not in edges:
                        continue
                    if num_of_swaps >= shape.budget:
                        num_of_swaps = 0  # "GoTo Line 3": abandon this pair
                        aborted = True
                        break
                    if mode == "faithful":
                        victims = static_rminus.get(source, [])
                        if k >= len(victims) or victims[k] == target:
                            continue
                        do_swap(victims[k], target)
                        k += 1
                        num_of_swaps += 1
                        continue
                    group = members[i]
                    candidates = [
                        w
                        for w in group
                        if w != source
                        and not any((w, o) in edges or (o, w) in edges for o in group if o != w)
                    ]
                    if not candidates:
                        continue
                    victim = max(candidates)
                    trial = list(label)
                    for old, new in enumerate(trial):
                        if new == victim:
                            trial[old] = target
                        elif new == target:
                            trial[old] = victim
                    trial_pairs = inter_node_pairs(positions_for(trial), edges, N)
                    if trial_pairs > current_pairs:
                        rejected.append((victim, target))
                        continue
                    do_swap(victim, target)
                    current_pairs = trial_pairs
                    num_of_swaps += 1
    return Refinement(tuple(label), tuple(swaps), tuple(rejected))


# ---------------------------------------------------------------------------------------
# Completion, placement rule, Algorithm 3


def complete_schedule(fin: Matrix, shape: Shape) -> Matrix:
    """The N x N step matrix S (§III.B). For t < N, block rows t'..N'-1 are added with
    block (rho, c) = block (0, (c - rho) mod N') of M'_fin (notes §2.5, reproduces both
    worked examples); for t >= N the first N rows of M'_fin (rows repeat with period N)."""
    G, N1, N = shape.G, shape.N1, shape.N
    if shape.t >= N:
        return fin[:N].copy()
    out = np.empty((N, N), dtype=int)
    out[: shape.t] = fin
    for rho in range(shape.t1, N1):
        for c in range(N1):
            src = (c - rho) % N1
            out[rho * G : (rho + 1) * G, c * G : (c + 1) * G] = fin[:G, src * G : (src + 1) * G]
    return out


def task_positions(fin: Matrix, parallelism: Sequence[int]) -> list[list[int]]:
    """Row-order rule (notes §2.6): the k-th task of v runs on the column holding v in row k."""
    columns = np.argsort(fin, axis=1)
    return [[int(columns[k][v]) for k in range(p)] for v, p in enumerate(parallelism)]


def stage_levels(n: int, edges: Iterable[tuple[int, int]]) -> list[int]:
    """Longest-path level of every ID from the sources (notes §1.4: stage of (u, v) is
    level(u)); IDs on a cycle keep the level reached before the cycle closes."""
    edges = list(edges)
    level = [0] * n
    for _ in range(n):
        changed = False
        for u, v in edges:
            if level[v] < level[u] + 1 and level[u] + 1 < n:
                level[v] = level[u] + 1
                changed = True
        if not changed:
            break
    return level


@dataclass(frozen=True)
class PipelineStats:
    """Steady-state quantities of one period (P slots) of Algorithm 3 (notes §5.1 E1)."""

    stages: int
    period: int
    busy_stage_steps: int
    empty_stage_steps: int
    empty_steps: tuple[int, ...]
    """Steps p carrying no transfer in any stage."""
    transfers_per_period: int
    intra_transfers_per_period: int
    stall_slots_per_period: int
    """Slots after which a pipeline stall is inserted."""
    stall_h_per_period: int
    """Total stall length per period in units of h (the notes' "stall per period")."""
    max_fan_in: int


def _receivers(schedule: Matrix) -> np.ndarray:
    """sender[p][i] = the node sending to node i in step p (rows are permutations)."""
    return np.argsort(schedule, axis=1)


def analyse_pipeline(
    schedule: Matrix,
    positions: Sequence[Sequence[int]],
    edges: Sequence[tuple[int, int]],
    level: Sequence[int],
    edge_schedule: Sequence[int] | None = None,
    schedules: Sequence[Matrix] | None = None,
) -> PipelineStats:
    """Run one steady-state period of Algorithm 3 and the stall rule.

    In slot delta stage l executes step (delta - l) mod P; for every edge (u, v) of stage
    level(u) every u-task on node j sends one part to every v-task on node S[p][j]. A task
    receiving m > 1 parts in a slot (over all stages, notes A12) causes a stall of
    (m - 1) h; the slot's stall is the maximum over tasks (A15). ``schedules`` and
    ``edge_schedule`` let stacked plans (n > N) use one S per chunk.
    """
    P = schedule.shape[0]
    n_nodes = schedule.shape[1]
    mats = list(schedules) if schedules is not None else [schedule]
    which = list(edge_schedule) if edge_schedule is not None else [0] * len(edges)
    senders = [_receivers(m) for m in mats]
    counts = [np.bincount(np.asarray(p, dtype=int), minlength=n_nodes) for p in positions]
    s = 1 + max((level[u] for u, _ in edges), default=-1)
    busy = np.zeros((max(s, 1), P), dtype=bool)
    transfers = intra = stall_slots = stall_h = max_fan_in = 0
    idx = np.arange(n_nodes)
    for delta in range(max(s - 1, 0), max(s - 1, 0) + P):
        fan_in: dict[int, np.ndarray] = {}
        for e, (u, v) in enumerate(edges):
            stage = level[u]
            p = (delta - stage) % P
            send = senders[which[e]][p]
            parts = counts[u][send]  # parts per v-task on each receiving node
            moved = int(parts @ counts[v])
            if moved:
                busy[stage, p] = True
            transfers += moved
            intra += int((parts * counts[v])[send == idx].sum())
            fan_in[v] = fan_in.get(v, 0) + parts
        worst = 0
        for v, parts in fan_in.items():
            present = counts[v] > 0
            if present.any():
                worst = max(worst, int(parts[present].max()))
        max_fan_in = max(max_fan_in, worst)
        if worst > 1:
            stall_slots += 1
            stall_h += worst - 1
    empty_steps = tuple(p for p in range(P) if not busy[:, p].any()) if s else tuple(range(P))
    busy_count = int(busy[:s].sum()) if s else 0
    return PipelineStats(
        stages=s,
        period=P,
        busy_stage_steps=busy_count,
        empty_stage_steps=s * P - busy_count,
        empty_steps=empty_steps,
        transfers_per_period=transfers,
        intra_transfers_per_period=intra,
        stall_slots_per_period=stall_slots,
        stall_h_per_period=stall_h,
        max_fan_in=max_fan_in,
    )


def slot_transfers(
    schedule: Matrix,
    positions: Sequence[Sequence[int]],
    edges: Sequence[tuple[int, int]],
    level: Sequence[int],
    delta: int,
) -> dict[int, list[tuple[tuple[int, int], tuple[int, int]]]]:
    """Transfers of slot ``delta`` (from the start, so stages l > delta are idle), per
    stage: ``{stage: [((u, a), (v, b)), ...]}`` — task ``a`` of u sends to task ``b`` of v."""
    P = schedule.shape[0]
    out: dict[int, list] = {}
    for u, v in edges:
        stage = level[u]
        if delta < stage:
            continue
        p = (delta - stage) % P
        for a, j in enumerate(positions[u]):
            target = int(schedule[p][j])
            for b, node in enumerate(positions[v]):
                if node == target:
                    out.setdefault(stage, []).append(((u, a), (v, b)))
    return out


def smallest_padding(t: int, N: int) -> int:
    """Notes A10 (the paper's Conclusions): the smallest t~ >= t with gcd(t~, N) > 1."""
    if N == 1:
        return t
    padded = t
    while gcd(padded, N) == 1:
        padded += 1
    return padded


# ---------------------------------------------------------------------------------------
# The whole scheme for one set of at most N components (the notes' Appendix-A ``plan``)


@dataclass(frozen=True)
class MatrixPlan:
    """Algorithms 1-2, completion and the placement rule for IDs 0..N-1."""

    parallelism: tuple[int, ...]
    """p_v per ID, dummies (IDs >= n) have 0."""
    n: int
    t: int
    """max p_v, before the G = 1 padding."""
    shape: Shape
    """The (t~, N) actually used."""
    inter: Matrix
    refinement: Refinement | None
    fin: Matrix
    schedule: Matrix
    positions: tuple[tuple[int, ...], ...]

    @property
    def padded(self) -> bool:
        return self.shape.t != self.t


def plan_matrix(
    parallelism: Sequence[int],
    edges: Iterable[tuple[int, int]],
    N: int,
    *,
    refinement: str = "robust",
    pad_g1: bool = True,
) -> MatrixPlan:
    """Plan ``n = len(parallelism) <= N`` real components (IDs in stage order) on N nodes.

    ``refinement`` is ``robust`` | ``faithful`` | ``off``; ``pad_g1`` applies notes A10
    (smallest t~ > t with gcd(t~, N) > 1; a no-op for N = 1).
    """
    n = len(parallelism)
    if n > N:
        raise ValueError(f"{n} components need at least {n} nodes, got N={N} (notes §7.6)")
    if n == 0 or min(parallelism) < 1:
        raise ValueError("every component needs parallelism >= 1")
    t = max(parallelism)
    shape = Shape(smallest_padding(t, N) if pad_g1 else t, N)
    full = tuple(parallelism) + (0,) * (N - n)
    edge_set = {(int(u), int(v)) for u, v in edges}
    inter = algorithm1(shape)
    refined = None
    fin = inter
    if refinement != "off":
        refined = refine(inter, shape, edge_set, full, refinement)
        fin = refined.apply(inter)
    schedule = complete_schedule(fin, shape)
    positions = tuple(tuple(p) for p in task_positions(fin, full[:n]))
    return MatrixPlan(full, n, t, shape, inter, refined, fin, schedule, positions)


def round_robin_positions(parallelism: Sequence[int], N: int) -> list[list[int]]:
    """The paper's idealised default scheduler (Eq. 2 without padding, notes A19 / E1
    "RR(Storm)"): executor number i, counted over components in ID order, goes to i mod N."""
    out, i = [], 0
    for p in parallelism:
        out.append([(i + k) % N for k in range(p)])
        i += p
    return out


def shuffle_distance(positions: Sequence[Sequence[int]], edges: Sequence[tuple[int, int]]) -> float:
    """Notes §5.1 D: mean |node index difference| per tuple under shuffle grouping, every
    edge weighted 1 and spread uniformly over its p_u x p_v task pairs."""
    if not edges:
        return 0.0
    total = 0.0
    for u, v in edges:
        a = np.asarray(positions[u])[:, None]
        b = np.asarray(positions[v])[None, :]
        total += float(np.abs(a - b).mean())
    return total / len(edges)
