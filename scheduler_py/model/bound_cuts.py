"""The traffic bound of :mod:`scheduler_py.model.bound` above its triangle limit: the
collocation LP by column generation, triangle inequalities added to it as cutting planes,
and the eigenvalue bound with the LP's capacity rows (:func:`eigenvalue_bound`).

**The LP.** With ``y(e, f) = 1`` when executors *e* and *f* share a node (the module docstring
of :mod:`scheduler_py.model.bound`), every CPU-feasible placement satisfies the capacity rows
``Σ_f cpu(f)·y(e, f) ≤ room(e) = C_max + ε − cpu(e)`` over *all* pairs (ε: what a placement may
exceed a node's CPU by), the shared-CPU row ``Σ_p cpu(i)·cpu(j)·y(p) ≤ S`` (:func:`shared_cpu`)
and every triangle inequality ``y(i, j) + y(j, k) − y(i, k) ≤ 1``. :class:`PairLP` keeps some of
the pair variables (its *columns*): communicating pairs, and the silent pairs (no traffic,
objective 0) that a triangle row needs. A silent pair left out only loosens the capacity and
shared-CPU rows (its coefficients are ≥ 0), so dropping it keeps every placement feasible.

**The bound of one solve.** For any multipliers ``u ≥ 0`` of the capacity rows, ``σ ≥ 0`` of
the shared-CPU row and ``λ ≥ 0`` of the triangle rows, every placement's kept traffic is at
most ``L = Σ_e u(e)·room(e) + σ·S + Σ λ + Σ_p max(0, t(p) − Σ_rows multiplier·coefficient(p))``
(weak duality: add the non-negative slacks times their multipliers to ``Σ t(p)·y(p)``, then
bound each ``y(p) ∈ [0, 1]`` on its own). The sum is over the columns and every
communicating pair that is not one: a silent pair in no triangle row has traffic 0 and a
non-positive reduced cost. :meth:`PairLP.solve` evaluates ``L`` at the (clipped) duals HiGHS
returns for an LP that reached status optimal — equal to the LP optimum once no left-out pair
has a positive reduced cost — so a bound never rests on an LP that stopped early, nor on a
restricted set of columns; the smallest ``L`` of all solves is kept.

**The loop** (:func:`tighten`). Left-out communicating pairs with a positive reduced cost
become columns (pricing); triangles violated by more than :data:`VIOLATION` among pairs with
``y > 0`` (the most violated, at most :data:`CUTS_PER_ROUND` a round, one per pair ``(i,
k)``) become rows, adding ``y(i, k)`` as a column when it is not one: with objective 0 and
coefficients ``cpu(k)`` in row *i* and ``cpu(i)`` in row *k*, exactly the capacity a silent
pair uses. Rows idle for :data:`IDLE` solves are dropped, and the silent columns no row needs
any more with them (any subset of valid rows is a relaxation), as are communicating columns
far from entering (:data:`FAR`; pricing brings them back). The loop ends when nothing is
violated, when a solve would not fit the budget, after :data:`MAX_ROUNDS`, when
:data:`STALL_ROUNDS` rounds improved the bound by less than :data:`STALL` together, or when
at its pace it would not reach a better bound found otherwise in the time left. On
degenerate LPs (chains, stars, word counts) rounds often only move between optimal points of
equal value; ``bench scale``'s 1,000-executor instances gain 0 - 12 % in 30 s.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import scipy.linalg
from scipy import sparse
from scipy.optimize import linprog, minimize

from scheduler_py.model.budget import Budget

CUTS_PER_ROUND = 10_000
"""triangle rows added per round (about +2 s of IPM per round on ``layered-1000x50``)"""
VIOLATION = 1e-6
"""how much a triangle must be violated to become a row"""
FAR = 0.5
"""a communicating column at 0 whose reduced cost is below ``−FAR·`` its traffic leaves the LP
before a round of cuts (pricing brings it back if it is needed: 124k columns of
``star-1000x50`` became 27k)"""
SLACK, IDLE = 1e-6, 3
"""a triangle row with more slack than SLACK in IDLE solves in a row is dropped (dropping it
after one let two optimal points of a degenerate LP take turns, each violating the rows the
other needed: a 100-executor chain cycled with 456 rows)"""
PRICE = 1e-9
"""reduced cost above which a left-out communicating pair becomes a column"""
PRICED_PER_ROUND = 50_000
ROOM_SHARE = 1.5
"""column generation starts each executor with its best pairs by traffic per CPU of the other
end, until their CPU passes this share of its room"""
MAX_ROUNDS = 200
STALL_ROUNDS, STALL = 3, 0.001
"""the loop stops when the last STALL_ROUNDS rounds lowered the bound by less than STALL of it"""
CUT_METHOD = "highs-ipm"
"""HiGHS' interior point for the LPs with triangle rows (its dual simplex, from scratch each
round, took 41 s for a round that took it 7 s on ``layered-1000x50``)"""
GROWTH = 1.5
"""a solve is expected to take this many times as long as the one before it"""


@dataclass(frozen=True)
class Solution:
    """One optimal LP: its point over the columns, the row duals (``≥ 0``) and ``L``."""

    x: np.ndarray
    capacity_duals: np.ndarray
    cut_duals: np.ndarray
    bound: float
    reduced: np.ndarray
    """reduced costs of the columns"""
    outside: np.ndarray
    """reduced costs of the communicating pairs that are not columns (by pair index)"""
    seconds: float


@dataclass
class PairLP:
    """The collocation LP over executors ``0..n-1`` with CPU ``cpu`` and rooms ``room``; the
    communicating pairs are ``first < second`` with traffic ``rate``."""

    cpu: np.ndarray
    room: np.ndarray
    first: np.ndarray
    second: np.ndarray
    rate: np.ndarray
    shared: float = np.inf
    """right-hand side of the row ``Σ_p cpu(i)·cpu(j)·y(p) ≤ shared`` (see :func:`shared_cpu`)"""
    column_pair: np.ndarray = field(init=False)
    """per column, its communicating pair, or −1 for a silent pair"""
    column_first: np.ndarray = field(init=False)
    column_second: np.ndarray = field(init=False)
    cuts: np.ndarray = field(init=False)
    """triangle rows ``+y(a) + y(b) − y(c) ≤ 1`` as column triples ``(a, b, c)``"""
    idle: np.ndarray = field(init=False)
    """per triangle row, the solves in a row it had slack in"""
    note: str = ""

    def __post_init__(self) -> None:
        order = np.argsort(self._keys(self.first, self.second))
        self.first, self.second, self.rate = self.first[order], self.second[order], self.rate[order]
        self.pair_key = self._keys(self.first, self.second)
        self.column_pair = np.zeros(0, dtype=np.int64)
        self.column_first = np.zeros(0, dtype=np.int64)
        self.column_second = np.zeros(0, dtype=np.int64)
        self.cuts = np.zeros((0, 3), dtype=np.int64)
        self.idle = np.zeros(0, dtype=np.int64)

    @property
    def size(self) -> int:
        return len(self.cpu)

    @property
    def with_shared(self) -> bool:
        return bool(np.isfinite(self.shared))

    def _keys(self, first: np.ndarray, second: np.ndarray) -> np.ndarray:
        return first.astype(np.int64) * len(self.cpu) + second

    def start(self, every_pair: bool) -> None:
        """Columns: every communicating pair, or each executor's best ones (see
        :data:`ROOM_SHARE`)."""
        if every_pair:
            self._add_pairs(np.arange(len(self.rate)))
            return
        chosen = np.zeros(len(self.rate), dtype=bool)
        for end, other in ((self.first, self.second), (self.second, self.first)):
            weight = self.cpu[other]
            order = np.lexsort((-self.rate / np.maximum(weight, 1e-12), end))
            used = np.cumsum(weight[order])
            before = np.concatenate([[0.0], used])[np.searchsorted(end[order], end[order])]
            within = used - before - weight[order] <= ROOM_SHARE * self.room[end[order]]
            chosen[order[within]] = True
        self._add_pairs(np.flatnonzero(chosen))

    def _add_pairs(self, pairs: np.ndarray) -> None:
        self.column_pair = np.concatenate([self.column_pair, pairs])
        self.column_first = np.concatenate([self.column_first, self.first[pairs]])
        self.column_second = np.concatenate([self.column_second, self.second[pairs]])

    def _outside(self) -> np.ndarray:
        inside = np.zeros(len(self.rate), dtype=bool)
        inside[self.column_pair[self.column_pair >= 0]] = True
        return np.flatnonzero(~inside)

    def solve(self, budget: Budget, method: str) -> Solution | None:
        """The LP over the columns and rows as they are, within ``budget``; ``None`` (with
        :attr:`note`) unless HiGHS reports it optimal."""
        started = time.perf_counter()
        n, m, k = self.size, len(self.column_pair), len(self.cuts)
        a, b = self.column_first, self.column_second
        capacity = sparse.csr_matrix(
            (
                np.concatenate([self.cpu[b], self.cpu[a]]),
                (np.concatenate([a, b]), np.concatenate([np.arange(m)] * 2)),
            ),
            shape=(n, m),
        )
        both = self.cpu[a] * self.cpu[b]
        rows = [capacity] + ([sparse.csr_matrix(both[None, :])] if self.with_shared else [])
        rows.append(
            sparse.csr_matrix(
                (np.tile([1.0, 1.0, -1.0], k), (np.repeat(np.arange(k), 3), self.cuts.ravel())),
                shape=(k, m),
            )
        )
        limits = [self.room] + ([np.array([self.shared])] if self.with_shared else [])
        rate = np.where(self.column_pair >= 0, self.rate[np.maximum(self.column_pair, 0)], 0.0)
        options = {"time_limit": budget.remaining()} if budget.limited else {}
        if budget.expired():
            self.note = "no time left for the LP"
            return None
        result = linprog(
            -rate,
            A_ub=sparse.vstack(rows).tocsr(),
            b_ub=np.concatenate([*limits, np.ones(k)]),
            bounds=(0.0, 1.0),
            method=method,
            options=options,
        )
        if result.status != 0 or result.ineqlin is None:
            self.note = f"LP not solved ({result.message})"
            return None
        duals = np.maximum(0.0, -np.asarray(result.ineqlin.marginals, dtype=float))
        sigma = float(duals[n]) if self.with_shared else 0.0
        u, lam = duals[:n], duals[len(duals) - k :]
        reduced = rate - u[a] * self.cpu[b] - u[b] * self.cpu[a] - sigma * both
        if k:
            np.subtract.at(reduced, self.cuts[:, 0], lam)
            np.subtract.at(reduced, self.cuts[:, 1], lam)
            np.add.at(reduced, self.cuts[:, 2], lam)
        out = self._outside()
        first, second = self.first[out], self.second[out]
        outside = np.full(len(self.rate), -np.inf)
        outside[out] = self.rate[out] - u[first] * self.cpu[second] - u[second] * self.cpu[first]
        outside[out] -= sigma * self.cpu[first] * self.cpu[second]
        bound = (
            float(u @ self.room)
            + (sigma * self.shared if self.with_shared else 0.0)
            + float(lam.sum())
            + float(np.maximum(0.0, reduced).sum())
            + float(np.maximum(0.0, outside[out]).sum())
        )
        if not len(out):  # every communicating pair is a column: the LP is a relaxation
            bound = min(bound, -float(result.fun))
        seconds = time.perf_counter() - started
        return Solution(np.asarray(result.x), u, lam, bound, reduced, outside, seconds)

    def price(self, solution: Solution) -> int:
        """Left-out communicating pairs with a positive reduced cost become columns (at most
        :data:`PRICED_PER_ROUND`, the largest reduced costs first); how many."""
        positive = np.intersect1d(np.flatnonzero(solution.outside > PRICE), self._outside())
        if len(positive) > PRICED_PER_ROUND:
            order = np.argsort(-solution.outside[positive], kind="stable")
            positive = np.sort(positive[order[:PRICED_PER_ROUND]])
        self._add_pairs(positive)
        return len(positive)

    def separate(self, solution: Solution, limit: int | None = None) -> int:
        """Adds the most violated triangle rows (one per minus pair), and the columns they
        need; how many rows."""
        found = _violated(self, solution.x)
        if found is None:
            return 0
        violation, plus1, plus2, low, high = found
        rng = np.random.default_rng(len(self.cuts))
        order = np.argsort(-(violation + rng.random(len(violation)) * VIOLATION), kind="stable")
        key = self._keys(low[order], high[order])
        _, first = np.unique(key, return_index=True)
        chosen = order[np.sort(first)[: limit or CUTS_PER_ROUND]]
        minus = self._columns_for(low[chosen], high[chosen])
        self.cuts = np.concatenate(
            [self.cuts, np.stack([plus1[chosen], plus2[chosen], minus], axis=1)]
        )
        self.idle = np.concatenate([self.idle, np.zeros(len(chosen), dtype=np.int64)])
        return len(chosen)

    def _columns_for(self, low: np.ndarray, high: np.ndarray) -> np.ndarray:
        """The column of each pair ``(low, high)``, added (communicating or silent) when the
        LP has none."""
        keys = self._keys(low, high)
        columns = self._lookup(self._keys(self.column_first, self.column_second), keys)
        missing = np.unique(keys[columns < 0])
        if len(missing):
            pair = self._lookup(self.pair_key, missing)
            start = len(self.column_pair)
            self.column_pair = np.concatenate([self.column_pair, pair])
            self.column_first = np.concatenate([self.column_first, missing // self.size])
            self.column_second = np.concatenate([self.column_second, missing % self.size])
            where = np.searchsorted(missing, keys[columns < 0])
            columns[columns < 0] = start + where
        return columns

    @staticmethod
    def _lookup(table: np.ndarray, keys: np.ndarray) -> np.ndarray:
        """Index of each key in the (unsorted) ``table``, −1 when absent."""
        if not len(table):
            return np.full(len(keys), -1, dtype=np.int64)
        order = np.argsort(table, kind="stable")
        at = np.minimum(np.searchsorted(table[order], keys), len(table) - 1)
        return np.where(table[order][at] == keys, order[at], -1).astype(np.int64)

    def prune(self, solution: Solution) -> None:
        """Drops the triangle rows idle too long (:data:`IDLE`), the silent columns no row uses
        any more and the communicating columns far from entering (:data:`FAR`)."""
        solved = len(solution.cut_duals)
        if solved:
            x, old = solution.x, self.cuts[:solved]
            slack = 1.0 - x[old[:, 0]] - x[old[:, 1]] + x[old[:, 2]]
            self.idle[:solved] = np.where(slack > SLACK, self.idle[:solved] + 1, 0)
            keep = self.idle < IDLE
            self.cuts, self.idle = self.cuts[keep], self.idle[keep]
        keep = np.zeros(len(self.column_pair), dtype=bool)
        keep[self.cuts.ravel()] = True
        rate = self.rate[np.maximum(self.column_pair, 0)]
        far = np.zeros(len(self.column_pair), dtype=bool)
        known = len(solution.x)
        far[:known] = (solution.x <= VIOLATION) & (solution.reduced < -FAR * rate[:known])
        keep |= (self.column_pair >= 0) & ~far
        if keep.all():
            return
        renumber = np.cumsum(keep) - 1
        self.column_pair = self.column_pair[keep]
        self.column_first = self.column_first[keep]
        self.column_second = self.column_second[keep]
        self.cuts = renumber[self.cuts]


def _violated(
    lp: PairLP, x: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """Every triangle ``y(j, i) + y(j, k) − y(i, k) > 1 + VIOLATION`` with ``y(j, i)`` and
    ``y(j, k)`` positive columns: (violation, column ji, column jk, min(i, k), max(i, k))."""
    positive = np.flatnonzero(x > VIOLATION)
    if len(positive) < 2:
        return None
    ends = (lp.column_first[positive], lp.column_second[positive])
    centre = np.concatenate(ends)
    other = np.concatenate(ends[::-1])
    column = np.concatenate([positive, positive])
    order = np.argsort(centre, kind="stable")
    centre, other, column = centre[order], other[order], column[order]
    value = x[column]
    solved = len(x)  # columns added after the solve are 0 in it
    keys = lp._keys(lp.column_first[:solved], lp.column_second[:solved])
    sorted_at = np.argsort(keys, kind="stable")
    sorted_keys = keys[sorted_at]
    bounds = np.searchsorted(centre, np.arange(lp.size + 1))
    parts: list[tuple[np.ndarray, ...]] = []
    for j in np.flatnonzero(np.diff(bounds) >= 2):
        lo, hi = bounds[j], bounds[j + 1]
        v = value[lo:hi]
        p, q = np.triu_indices(hi - lo, 1)
        keep = v[p] + v[q] > 1.0 + VIOLATION
        if not keep.any():
            continue
        p, q = p[keep], q[keep]
        ends_p, ends_q = other[lo:hi][p], other[lo:hi][q]
        low, high = np.minimum(ends_p, ends_q), np.maximum(ends_p, ends_q)
        wanted = lp._keys(low, high)
        at = np.minimum(np.searchsorted(sorted_keys, wanted), len(sorted_keys) - 1)
        present = sorted_keys[at] == wanted
        closing = np.where(present, x[sorted_at[at]], 0.0)
        violation = v[p] + v[q] - closing - 1.0
        bad = violation > VIOLATION
        if bad.any():
            cols = column[lo:hi]
            parts.append((violation[bad], cols[p][bad], cols[q][bad], low[bad], high[bad]))
    if not parts:
        return None
    joined = [np.concatenate([part[i] for part in parts]) for i in range(5)]
    return joined[0], joined[1], joined[2], joined[3], joined[4]


@dataclass(frozen=True)
class Tightened:
    bound: float
    rounds: int
    cuts: int
    """triangle rows added over all rounds"""
    why: str


def tighten(lp: PairLP, solution: Solution, budget: Budget, target: float = -np.inf) -> Tightened:
    """Rounds of pricing and triangle cuts from an optimal ``solution`` of ``lp``, while the
    budget lasts; the smallest bound of all solves. Stops early when, at the pace of the last
    :data:`STALL_ROUNDS` rounds, the bound would not reach ``target`` (another bound) in the
    time left."""
    best, history = solution.bound, [solution.bound]
    rounds = added = 0
    why = "no triangle violated"
    last = solution
    while rounds < MAX_ROUNDS:
        priced = lp.price(last)
        cut = lp.separate(last)
        if not priced and not cut:
            break
        lp.prune(last)
        if budget.remaining() < last.seconds * GROWTH:
            why = "stopped at the time budget"
            break
        solved = lp.solve(budget, CUT_METHOD)
        if solved is None:
            why = lp.note
            break
        rounds, added, last = rounds + 1, added + cut, solved
        best = min(best, solved.bound)
        history.append(best)
        window = min(STALL_ROUNDS, len(history) - 1)
        gained = history[-1 - window] - best
        if window == STALL_ROUNDS and gained < STALL * best:
            why = f"less than {STALL:.1%} better in {STALL_ROUNDS} rounds"
            break
        if too_slow(best, target, gained / window, solved.seconds, budget):
            why = "too slow to reach the other bounds"
            break
    else:
        why = f"{MAX_ROUNDS} rounds"
    return Tightened(best, rounds, added, why)


def too_slow(best: float, target: float, gain: float, seconds: float, budget: Budget) -> bool:
    """Whether a bound at ``best``, lowered by ``gain`` a step of ``seconds``, cannot reach
    ``target`` (a finite bound found otherwise) in what is left of ``budget``."""
    if not np.isfinite(target) or best <= target:
        return False
    return gain <= 0 or (best - target) / gain * seconds > budget.remaining()


def shared_cpu(cpu: np.ndarray, loads: np.ndarray) -> float:
    """The most ``Σ cpu(e)·cpu(f)`` over the pairs sharing a node that a placement can have,
    ``(Σ_n g(n)² − Σ_e cpu(e)²) / 2``, with ``g`` the loads of the largest nodes filled in
    turn (``loads``, from :func:`scheduler_py.model.bound._greedy_loads`).

    A placement with loads ``s_1 ≥ … ≥ s_m`` has ``Σ_{e≠f together} cpu(e)·cpu(f) = Σ_n s_n²
    − Σ_e cpu(e)²``. With ``P_k = s_1 + … + s_k ≤ G_k`` (the same for ``g``; ``P_k = G_k =`` the
    total once ``k ≥ m``): summing by parts twice, ``Σ s_n² = Σ_k (s_k − s_{k+1})·P_k ≤ Σ_k
    (s_k − s_{k+1})·G_k = Σ s_n g_n = Σ_k (g_k − g_{k+1})·P_k ≤ Σ g_n²``."""
    return float(loads @ loads - cpu @ cpu) / 2


def capacity_lp(lp: PairLP, budget: Budget, method: str) -> tuple[Solution | None, float]:
    """The capacity-only LP (``lp`` without rows of its own), pricing left-out pairs until
    none has a positive reduced cost or the budget ends: the last optimal solve and the
    smallest bound of all solves (``inf`` when none was optimal)."""
    best, last = float("inf"), None
    while True:
        solved = lp.solve(budget, method)
        if solved is None:
            return last, best
        best, last = min(best, solved.bound), solved
        if not lp.price(solved) or budget.remaining() < solved.seconds * GROWTH:
            return last, best


EIGEN_WIDTHS = (0.3, 0.1, 0.03, 0.01, 0.003, 0.001, 0.0003)
"""smoothing widths of :func:`eigenvalue_bound`, in units of its starting value over ``Σ g``"""
EIGEN_EVALUATIONS = 150
"""L-BFGS evaluations per width, at most"""


class _OutOfTime(Exception):
    pass


@dataclass
class _Eigen:
    """The data of :func:`eigenvalue_bound`, and the smallest exact bound met so far."""

    scaled: np.ndarray
    """``D^-½ W D^-½``"""
    cpu: np.ndarray
    room: np.ndarray
    loads: np.ndarray
    shared: float
    budget: Budget
    best: float = np.inf
    evaluations: int = 0
    floor: float = -np.inf
    """the lowest Fermi level of the last evaluation (the first one takes every eigenvalue)"""
    subset: bool = True
    """whether to ask LAPACK for the largest eigenvalues only (dropped when that is slower than
    the whole spectrum, as it is on clustered eigenvalues)"""
    whole: float = 0.0
    """the longest a whole decomposition took"""
    took: float = 0.0
    """what the last evaluation took (the next one starts only if the budget holds as much)"""

    def __post_init__(self) -> None:
        drops = self.loads - np.append(self.loads[1:], 0.0)
        self.levels = np.flatnonzero(drops > 0) + 1
        self.drops = drops[self.levels - 1]
        self.unit_u = 1.0 / max(float(self.room.mean()), 1e-9)
        self.unit_sigma = 10.0 / self.shared if 0 < self.shared < np.inf else 0.0

    def split(self, z: np.ndarray) -> tuple[np.ndarray, float, np.ndarray]:
        size = len(self.cpu)
        return z[:size] * self.unit_u, float(z[size]) * self.unit_sigma, z[size + 1 :]

    def matrix(self, u: np.ndarray, sigma: float, d: np.ndarray) -> np.ndarray:
        """``D^-½ (W − N + diag d) D^-½``, ``N = u cᵀ + c uᵀ + σ c cᵀ`` off the diagonal."""
        root = np.sqrt(self.cpu)
        lifted = u / root
        matrix = self.scaled - np.outer(lifted, root) - np.outer(root, lifted)
        matrix -= sigma * np.outer(root, root)
        matrix[np.diag_indices(len(root))] += 2 * u + sigma * self.cpu + d / self.cpu
        return matrix

    def spectrum(self, matrix: np.ndarray, below: float) -> tuple[np.ndarray, np.ndarray]:
        """Eigenvalues (ascending) and eigenvectors, exact (LAPACK): the largest few when
        they reach below ``below``, else all."""
        size = len(matrix)
        count = min(size, 2 * len(self.loads) + 20)
        if self.subset and count < size and below > -np.inf:
            started = time.perf_counter()
            try:
                values, vectors = scipy.linalg.eigh(
                    matrix, subset_by_index=[size - count, size - 1], driver="evx"
                )
            except np.linalg.LinAlgError:
                values, vectors = np.zeros(0), np.zeros((size, 0))
            self.subset = not 0 < 2 * self.whole < time.perf_counter() - started
            if len(values) == count and values[0] < below:
                return values, vectors
        started = time.perf_counter()
        values, vectors = scipy.linalg.eigh(matrix, driver="evd")
        self.whole = max(self.whole, time.perf_counter() - started)
        return values, vectors

    def evaluate(self, z: np.ndarray, width: float) -> tuple[float, np.ndarray]:
        """The smoothed bound at ``z`` and its gradient; records the exact bound there."""
        if self.budget.remaining() <= self.took:
            raise _OutOfTime
        started = time.perf_counter()
        u, sigma, d = self.split(z)
        matrix = self.matrix(u, sigma, d)
        values, vectors = self.spectrum(matrix, self.floor - 40 * width)
        levels = [_fermi_level(values, int(level), width) for level in self.levels]
        if len(values) < len(matrix) and values[0] >= min(levels) - 40 * width:
            values, vectors = self.spectrum(matrix, -np.inf)
            levels = [_fermi_level(values, int(level), width) for level in self.levels]
        self.floor = min(levels)
        size = len(self.cpu)
        error = 1e-12 * size * float(np.linalg.norm(matrix)) * float(self.loads.sum())
        base = float(u @ self.room) + sigma * self.shared - 0.5 * float(d.sum())
        top = values[::-1][: len(self.loads)]
        self.best = min(self.best, base + 0.5 * (float(self.loads @ top) + error))
        self.evaluations += 1
        weight, smooth = np.zeros(len(values)), 0.0
        for level, drop in zip(levels, self.drops, strict=True):
            share = _sigmoid((values - level) / width)
            entropy = share * np.log(np.maximum(share, 1e-300))
            entropy += (1 - share) * np.log(np.maximum(1 - share, 1e-300))
            smooth += drop * (float(share @ values) - width * float(entropy.sum()))
            weight += drop * share
        active = weight > 1e-12
        lifted = vectors[:, active] / np.sqrt(self.cpu)[:, None]
        weight = weight[active]
        y_cpu = lifted @ (weight * (lifted.T @ self.cpu))
        y_diagonal = (lifted**2) @ weight
        gradient_u = self.room - y_cpu + y_diagonal * self.cpu
        gradient_sigma = self.shared - 0.5 * float(self.cpu @ y_cpu)
        gradient_sigma += 0.5 * float(y_diagonal @ self.cpu**2)
        gradient = np.concatenate(
            [
                gradient_u * self.unit_u,
                [gradient_sigma * self.unit_sigma],
                0.5 * (y_diagonal - 1.0),
            ]
        )
        self.took = time.perf_counter() - started
        return base + 0.5 * smooth, gradient


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * x))


def _fermi_level(values: np.ndarray, count: int, width: float) -> float:
    """``ν`` with ``Σ sigmoid((λ − ν) / width) = count`` (bisection)."""
    low, high = float(values[0]) - 50 * width - 1, float(values[-1]) + 50 * width + 1
    for _ in range(100):
        middle = 0.5 * (low + high)
        if _sigmoid((values - middle) / width).sum() > count:
            low = middle
        else:
            high = middle
    return 0.5 * (low + high)


def eigenvalue_bound(
    cpu: np.ndarray,
    room: np.ndarray,
    loads: np.ndarray,
    shared: float,
    pairs: tuple[np.ndarray, np.ndarray, np.ndarray],
    budget: Budget,
) -> tuple[float, int]:
    """``(bound, evaluations)``: the smallest value met of ``B(u, σ, d) = Σ_i u_i·room_i + σ·S
    + ½ (Σ_{k≤K} g_k λ_k(D^-½ (W − N + diag d) D^-½) − Σ_i d_i)`` (``S`` = ``shared``,
    ``N_ij = u_i c_j + u_j c_i + σ c_i c_j`` for ``i ≠ j``), minimised over ``u ≥ 0``,
    ``σ ≥ 0`` and ``d`` by L-BFGS (SciPy) on a smoothed ``B`` — the top eigenvalues' weighted
    sum replaced by its entropy smoothing, at the widths :data:`EIGEN_WIDTHS` in turn —,
    evaluated exactly at every point it visits, within ``budget``. ``pairs`` are the
    communicating pairs ``(first, second, rate)``; ``cpu > 0``.

    *Proof* that ``B`` bounds every CPU-feasible placement, for any such ``u, σ, d``. Let ``P``
    be the pairs it puts on one node, ``t`` their traffic. Then ``φ = Σ_P N + Σ_P (t − N)``.
    First, ``Σ_P N = Σ_i u_i·(CPU of i's node-mates) + σ·Σ_P c_i c_j ≤ Σ_i u_i·room_i + σ·S``
    (the CPU of *i*'s node-mates is at most ``room_i = C_max + ε − c_i``, and
    :func:`shared_cpu`). Second, with ``x_n`` the 0/1 vector of node *n*'s executors, ``Σ_P (t −
    N) = ½ Σ_n x_nᵀ A x_n`` for ``A = W − N`` (zero diagonal), and ``= ½ (Σ_n x_nᵀ (A + diag d)
    x_n − Σ d)``, each executor being on one node. Let the ``m`` nodes used have loads ``s_1 ≥ …
    ≥ s_m``; the vectors ``z_n = D^½ x_n / √s_n`` are orthonormal (disjoint supports) and ``x_nᵀ
    (A + diag d) x_n = s_n·z_nᵀ M z_n`` with ``M = D^-½ (A + diag d) D^-½``. Summing by parts
    with Ky Fan's maximum principle (``Σ_{n≤k} z_nᵀ M z_n ≤ λ_1 + … + λ_k``) and ``s_k ≥
    s_{k+1}``: ``Σ_n s_n z_nᵀ M z_n ≤ Σ_{n≤m} s_n λ_n = Σ_{k<m} (λ_k − λ_{k+1})·P_k + λ_m·T``,
    where ``P_k = s_1 + … + s_k ≤ G_k = g_1 + … + g_k`` (``g`` fills the largest nodes in turn
    with the topology's CPU ``T``) and ``λ_k ≥ λ_{k+1}``; so it is at most ``Σ_{n≤m} g_n λ_n``,
    and ``g_n = 0`` beyond ``K ≤ m``. ``A`` was any symmetric matrix, so this holds for every
    ``u, σ, d``; LAPACK's eigenvalue error (about ``n``·machine precision·``|M|``) is added as
    ``10⁻¹²·n·|M|_F`` per unit of ``g``. With ``u = σ = 0`` this is an eigenvalue bound of the
    traffic alone; ``u`` and ``σ`` bring in the capacity and shared-CPU rows of the collocation
    LP, which is what makes it tighter than the LP on stars and word counts too."""
    size = len(cpu)
    first, second, rate = pairs
    scale = 1.0 / np.sqrt(cpu)
    scaled = np.zeros((size, size))
    scaled[first, second] = scaled[second, first] = rate * scale[first] * scale[second]
    eigen = _Eigen(scaled, cpu, room, loads, shared, budget)
    degree = np.bincount(np.concatenate([first, second]), np.tile(rate, 2), size)
    z = np.concatenate([np.zeros(size + 1), -0.5 * degree])
    bounds = [(0.0, None)] * size + [(0.0, None if eigen.unit_sigma else 0.0)]
    bounds += [(None, None)] * size
    try:
        eigen.evaluate(z, 1.0)
        unit = max(eigen.best, 1e-9) / float(loads.sum())
        for width in EIGEN_WIDTHS:
            z = minimize(
                eigen.evaluate,
                z,
                args=(width * unit,),
                jac=True,
                method="L-BFGS-B",
                bounds=bounds,
                options={"maxfun": EIGEN_EVALUATIONS, "maxcor": 20},
            ).x
    except _OutOfTime:
        pass
    return eigen.best, eigen.evaluations
