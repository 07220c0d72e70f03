"""The local search of ``tdls`` (:mod:`scheduler_py.algorithms.topdown.tdls`) on the
group-count form of a placement (``docs/algorithms/000-topdown.md`` §1.4).

:class:`CountSearch` holds ``a[n][c]`` (executors of class c on node n), the gains
``L[n][c] = Σ_d w_cd · a[n][d]``, free CPU and memory per node and φ, all kept up to date in
O(deg c) per move, and its neighbourhoods: best-improvement descent over moves and swaps
(:meth:`CountSearch.descend`), whole-node merges, seeded random kicks with an undo log, and
the two-node polish. The tdls docstring says how they are combined and what they measure.
:func:`first_fit_counts` is the first-fit-decreasing start in count form.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from scheduler_py.algorithms.topdown.counts import CountModel
from scheduler_py.model.budget import UNLIMITED, Budget
from scheduler_py.model.types import EPSILON

IMPROVE = 1e-9
"""A change counts as an improvement when φ grows by more than this."""

POLISH_PATTERNS = 4096
"""Two-node polish only for node pairs with at most this many ways to split their contents."""


class CountSearch:
    """The group-count state of one placement and its neighbourhoods."""

    def __init__(
        self, model: CountModel, counts: Sequence[Sequence[int]], deadline: Budget = UNLIMITED
    ) -> None:
        self.deadline = deadline
        self.timed_out = False
        classes, nodes = model.classes, model.nodes
        self.size_c = len(classes)
        self.size_n = len(nodes)
        self.weight = model.weight
        self.neighbours = [list(row) for row in model.neighbours]
        self.cpu = [cls.cpu for cls in classes]
        self.mem = [cls.memory_mb for cls in classes]
        self.cap_cpu = [n.cpu for n in nodes]
        self.cap_mem = [n.memory_mb for n in nodes]
        self.a = [list(row) for row in counts]
        self.free_cpu = [
            self.cap_cpu[n] - sum(x * self.cpu[c] for c, x in enumerate(self.a[n]) if x)
            for n in range(self.size_n)
        ]
        self.free_mem = [
            self.cap_mem[n] - sum(x * self.mem[c] for c, x in enumerate(self.a[n]) if x)
            for n in range(self.size_n)
        ]
        self.links = [[0.0] * self.size_c for _ in range(self.size_n)]
        self.on: list[set[int]] = [set() for _ in range(self.size_n)]  # classes on node n
        self.hosts: list[set[int]] = [set() for _ in range(self.size_c)]  # nodes of class c
        for n, row in enumerate(self.a):
            links = self.links[n]
            for c, x in enumerate(row):
                if x:
                    self.on[n].add(c)
                    self.hosts[c].add(n)
                    for d, w in self.neighbours[c]:
                        links[d] += w * x
        self.phi = (
            sum(
                x * self.links[n][c] for n, row in enumerate(self.a) for c, x in enumerate(row) if x
            )
            / 2
        )
        self.log: list[tuple[int, int, int, int]] = []
        self.evaluations = 0
        self.partners: dict[int, list[int]] = {}  # cache of partner_nodes, per class

    def stale(self, c: int) -> None:
        """The hosts of class c changed: forget the cached partner nodes of its partners."""
        partners = self.partners
        if partners:
            for d, _ in self.neighbours[c]:
                partners.pop(d, None)

    # -- state changes -----------------------------------------------------------------

    def move(self, c: int, n: int, m: int, k: int = 1) -> None:
        """Move ``k`` executors of class ``c`` from node ``n`` to node ``m``."""
        ln, lm = self.links[n], self.links[m]
        self.phi += k * (lm[c] - ln[c])
        an, am = self.a[n], self.a[m]
        an[c] -= k
        am[c] += k
        if not an[c]:
            self.on[n].discard(c)
            self.hosts[c].discard(n)
            self.stale(c)
        if am[c] == k:
            self.on[m].add(c)
            self.hosts[c].add(m)
            self.stale(c)
        self.free_cpu[n] += k * self.cpu[c]
        self.free_cpu[m] -= k * self.cpu[c]
        self.free_mem[n] += k * self.mem[c]
        self.free_mem[m] -= k * self.mem[c]
        for d, w in self.neighbours[c]:
            ln[d] -= k * w
            lm[d] += k * w
        self.log.append((c, n, m, k))

    def undo_to(self, mark: int) -> None:
        """Revert every move logged after position ``mark``."""
        log = self.log
        while len(log) > mark:
            c, n, m, k = log.pop()
            self.move(c, m, n, k)
            log.pop()

    def fits(self, c: int, m: int) -> bool:
        return (
            self.free_cpu[m] + EPSILON >= self.cpu[c] and self.free_mem[m] + EPSILON >= self.mem[c]
        )

    def swap_fits(self, c: int, n: int, d: int, m: int) -> bool:
        dc = self.cpu[c] - self.cpu[d]
        dm = self.mem[c] - self.mem[d]
        return (
            self.free_cpu[n] + dc + EPSILON >= 0
            and self.free_cpu[m] - dc + EPSILON >= 0
            and self.free_mem[n] + dm + EPSILON >= 0
            and self.free_mem[m] - dm + EPSILON >= 0
        )

    # -- local search ------------------------------------------------------------------

    def partner_nodes(self, c: int) -> list[int]:
        """Nodes hosting a traffic partner of class ``c`` (the only improving targets)."""
        cached = self.partners.get(c)
        if cached is None:
            found: set[int] = set()
            for d, _ in self.neighbours[c]:
                found |= self.hosts[d]
            cached = self.partners[c] = sorted(found)
        return cached

    def improve_entry(self, n: int, c: int) -> bool:
        """Apply the best improving move or swap whose source is (node n, class c)."""
        links, free_cpu, free_mem, cpu, mem = (
            self.links,
            self.free_cpu,
            self.free_mem,
            self.cpu,
            self.mem,
        )
        ln = links[n]
        base = ln[c]
        cc, mc, wc = cpu[c], mem[c], self.weight[c]
        room_nc, room_nm = free_cpu[n] + EPSILON, free_mem[n] + EPSILON
        best = IMPROVE
        pick_m = pick_d = -1
        targets = self.partner_nodes(c)
        evaluations = len(targets)
        for m in targets:
            if m == n:
                continue
            lm = links[m]
            gain = lm[c] - base
            room_mc, room_mm = free_cpu[m] + EPSILON, free_mem[m] + EPSILON
            if gain > best and room_mc >= cc and room_mm >= mc:
                best, pick_m, pick_d = gain, m, -1
            on_m = self.on[m]
            evaluations += len(on_m)
            for d in on_m:
                if d == c:
                    continue
                delta = gain + ln[d] - lm[d] - 2 * wc[d]
                if delta > best:
                    dc, dm = cc - cpu[d], mc - mem[d]
                    if (
                        room_nc + dc >= 0
                        and room_mc - dc >= 0
                        and room_nm + dm >= 0
                        and room_mm - dm >= 0
                    ):
                        best, pick_m, pick_d = delta, m, d
        self.evaluations += evaluations
        if pick_m < 0:
            return False
        self.move(c, n, pick_m)
        if pick_d >= 0:
            self.move(pick_d, pick_m, n)
        return True

    def merge_pass(self) -> bool:
        """Fuse one node's whole contents into another when it fits (best first)."""
        best = IMPROVE
        pick: tuple[int, int] | None = None
        used = [n for n in range(self.size_n) if self.on[n]]
        for n in used:
            load_c = self.cap_cpu[n] - self.free_cpu[n]
            load_m = self.cap_mem[n] - self.free_mem[n]
            candidates: set[int] = set()
            for c in self.on[n]:
                candidates.update(self.partner_nodes(c))
            self.evaluations += len(candidates)
            for m in sorted(candidates):
                if m == n or self.free_cpu[m] + EPSILON < load_c:
                    continue
                if self.free_mem[m] + EPSILON < load_m:
                    continue
                lm = self.links[m]
                gain = sum(self.a[n][c] * lm[c] for c in self.on[n])
                if gain > best:
                    best, pick = gain, (n, m)
        if pick is None:
            return False
        n, m = pick
        for c in sorted(self.on[n]):
            self.move(c, n, m, self.a[n][c])
        return True

    def descend(self, budget: int) -> None:
        """Best-improvement per entry until a full pass improves nothing (or the budget)."""
        while self.evaluations < budget:
            improved = False
            for n in range(self.size_n):
                if self.deadline.expired():
                    self.timed_out = True
                    return
                for c in sorted(self.on[n]):
                    if self.a[n][c] and self.improve_entry(n, c):
                        improved = True
                    if self.evaluations >= budget:
                        return
            if not improved and not self.merge_pass():
                return

    def kick(self, rng: random.Random, size: int) -> None:
        """Perturb: ``size`` random feasible moves (or swaps when no move fits)."""
        for _ in range(size):
            entries = [(n, c) for n in range(self.size_n) for c in sorted(self.on[n])]
            if not entries:
                return
            n, c = entries[rng.randrange(len(entries))]
            targets = [m for m in range(self.size_n) if m != n and self.fits(c, m)]
            if targets:
                self.move(c, n, targets[rng.randrange(len(targets))])
                continue
            swaps = [(m, d) for m, d in entries if m != n and d != c and self.swap_fits(c, n, d, m)]
            if swaps:
                m, d = swaps[rng.randrange(len(swaps))]
                self.move(c, n, m)
                self.move(d, m, n)

    def polish_pair(self, n: int, m: int) -> bool:
        """Re-split the contents of nodes n and m optimally between them."""
        a, weight, cpu, mem = self.a, self.weight, self.cpu, self.mem
        combined = {c: a[n][c] + a[m][c] for c in self.on[n] | self.on[m]}
        order = sorted(combined)
        ways = 1
        for c in order:
            ways *= combined[c] + 1
        self.evaluations += 1
        if ways > POLISH_PATTERNS:
            return False
        self.evaluations += ways
        total_c = sum(combined[c] * cpu[c] for c in order)
        total_m = sum(combined[c] * mem[c] for c in order)
        cap_nc, cap_nm = self.cap_cpu[n] + EPSILON, self.cap_mem[n] + EPSILON
        cap_mc, cap_mm = self.cap_cpu[m] + EPSILON, self.cap_mem[m] + EPSILON
        current = sum(a[n][c] * self.links[n][c] + a[m][c] * self.links[m][c] for c in order) / 2
        best = [current + IMPROVE, None]
        split = dict.fromkeys(order, 0)

        def dfs(i: int, used_c: float, used_m: float, gain: float) -> None:
            if i == len(order):
                if total_c - used_c <= cap_mc and total_m - used_m <= cap_mm and gain > best[0]:
                    best[0], best[1] = gain, dict(split)
                return
            c = order[i]
            here = there = 0.0
            for d in order[:i]:
                w = weight[c][d]
                if w:
                    here += w * split[d]
                    there += w * (combined[d] - split[d])
            for x in range(combined[c], -1, -1):
                uc, um = used_c + x * cpu[c], used_m + x * mem[c]
                if uc > cap_nc or um > cap_nm:
                    continue
                split[c] = x
                dfs(i + 1, uc, um, gain + x * here + (combined[c] - x) * there)
            split[c] = 0

        dfs(0, 0.0, 0.0, 0.0)
        if best[1] is None:
            return False
        target: dict[int, int] = best[1]  # type: ignore[assignment]
        for c in order:
            diff = target[c] - a[n][c]
            if diff > 0:
                self.move(c, m, n, diff)
            elif diff < 0:
                self.move(c, n, m, -diff)
        return True

    def polish(self, budget: int) -> None:
        """Two-node polish over all pairs of used nodes, descending after each success."""
        improved = True
        while improved and self.evaluations < budget:
            improved = False
            used = [n for n in range(self.size_n) if self.on[n]]
            for i, n in enumerate(used):
                if self.deadline.expired():
                    self.timed_out = True
                    return
                for m in used[i + 1 :]:
                    if self.evaluations >= budget:
                        return
                    if self.deadline.expired():  # a pair's re-split can take milliseconds
                        self.timed_out = True
                        return
                    if self.on[n] and self.on[m] and self.polish_pair(n, m):
                        improved = True
            if improved:
                self.descend(budget)

    def counts(self) -> list[list[int]]:
        return [list(row) for row in self.a]


def first_fit_counts(model: CountModel) -> list[list[int]] | None:
    """First-fit-decreasing in count form (CPU, then memory, heaviest class first)."""
    order = sorted(
        range(len(model.classes)),
        key=lambda c: (-model.classes[c].cpu, -model.classes[c].memory_mb, c),
    )
    nodes = sorted(range(len(model.nodes)), key=lambda n: (-model.nodes[n].cpu, n))
    free_c = [n.cpu for n in model.nodes]
    free_m = [n.memory_mb for n in model.nodes]
    counts = [[0] * len(model.classes) for _ in model.nodes]
    for c in order:
        cls = model.classes[c]
        for _ in range(cls.size):
            for n in nodes:
                if free_c[n] + EPSILON >= cls.cpu and free_m[n] + EPSILON >= cls.memory_mb:
                    free_c[n] -= cls.cpu
                    free_m[n] -= cls.memory_mb
                    counts[n][c] += 1
                    break
            else:
                return None
    return counts
