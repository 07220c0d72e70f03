"""The greedy pair packing of Aniello et al.'s online scheduler (``online``), shared by its
two phases: items (executors in phase 1, worker slots in phase 2) into bins (worker slots,
then nodes). :mod:`scheduler_py.algorithms.baselines.online` describes the procedure and
its deviations from the authors' code (``docs/algorithms/baselines.md`` §"online").

* :meth:`Packer.place_pair`: a pair with neither item placed goes to the least loaded bin
  that takes both, else each to the least loaded bin that takes it; a pair with one or both
  placed is lifted and put back on the combination of candidate bins (theirs plus the least
  loaded able to take the heavier) with the least inter-bin traffic;
* :func:`spread`: OLS's last step, moving items to empty bins until enough are used.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

from scheduler_py.model.types import EPSILON


@dataclass
class Bin:
    """A slot (phase 1) or a node (phase 2): members, load, memory, limits."""

    key: str
    index: int
    cpu_cap: float
    memory_cap: float
    count_cap: int
    members: list = field(default_factory=list)
    load: float = 0.0
    memory: float = 0.0

    def can_take(self, count: int, load: float, memory: float) -> bool:
        return (
            len(self.members) + count <= self.count_cap
            and self.load + load <= self.cpu_cap + EPSILON
            and self.memory + memory <= self.memory_cap + EPSILON
        )

    def utilisation(self) -> float:
        if self.cpu_cap > 0:
            return self.load / self.cpu_cap
        return 0.0 if self.load <= EPSILON else math.inf


class Packer:
    """The greedy pair procedure shared by both phases (items → bins)."""

    def __init__(
        self,
        bins: list[Bin],
        load: Callable[[object], float],
        memory: Callable[[object], float],
        rates: dict[object, dict[object, float]],
    ) -> None:
        self.bins = bins
        self.load = load
        self.memory = memory
        self.rates = rates
        self.bin_of: dict[object, Bin] = {}

    def put(self, item: object, target: Bin) -> None:
        target.members.append(item)
        target.load += self.load(item)
        target.memory += self.memory(item)
        self.bin_of[item] = target

    def lift(self, item: object) -> Bin:
        source = self.bin_of.pop(item)
        source.members.remove(item)
        source.load -= self.load(item)
        source.memory -= self.memory(item)
        return source

    def least_loaded(
        self, count: int, load: float, memory: float, exclude: set[int] | None = None
    ) -> Bin | None:
        candidates = [
            b
            for b in self.bins
            if b.can_take(count, load, memory) and not (exclude and b.index in exclude)
        ]
        if not candidates:
            return None
        return min(candidates, key=lambda b: (b.utilisation(), b.load, len(b.members), b.index))

    def traffic_by_bin(self, item: object, skip: object = None) -> tuple[float, dict[int, float]]:
        """Traffic of ``item`` to placed items (``skip`` ignored): total and per bin."""
        total = 0.0
        by_bin: dict[int, float] = {}
        for other, rate in self.rates.get(item, {}).items():
            if other in (skip, item):
                continue
            placed = self.bin_of.get(other)
            if placed is not None:
                total += rate
                by_bin[placed.index] = by_bin.get(placed.index, 0.0) + rate
        return total, by_bin

    def place_pair(self, u: object, v: object, rate: float) -> bool:
        lu, lv = self.load(u), self.load(v)
        mu, mv = self.memory(u), self.memory(v)
        bu, bv = self.bin_of.get(u), self.bin_of.get(v)
        if bu is None and bv is None:
            target = self.least_loaded(2, lu + lv, mu + mv)
            if target is not None:
                self.put(u, target)
                self.put(v, target)
                return True
            if not self.place_alone(u):
                return False
            first = self.bin_of[u]
            if first.can_take(1, lv, mv):  # the destination preferably joins the source
                self.put(v, first)
                return True
            return self.place_alone(v)
        heavier = max(lu, lv)
        spare = self.least_loaded(1, heavier, mu if lu >= lv else mv)
        candidates = [b for b in self.bins if b is bu or b is bv]
        if spare is not None and spare not in candidates:
            candidates.append(spare)
        previous = {u: bu, v: bv}
        for item, where in previous.items():
            if where is not None:
                self.lift(item)
        # inter-bin traffic if u goes to a and v to b, up to a constant (the rest is fixed)
        total_u, to_u = self.traffic_by_bin(u, skip=v)
        total_v, to_v = self.traffic_by_bin(v, skip=u)
        best: tuple[float, Bin, Bin] | None = None
        for a in candidates:
            if not a.can_take(1, lu, mu):
                continue
            for b in candidates:
                fits = a.can_take(2, lu + lv, mu + mv) if a is b else b.can_take(1, lv, mv)
                if not fits:
                    continue
                cost = total_u - to_u.get(a.index, 0.0) + total_v - to_v.get(b.index, 0.0)
                cost += rate if a is not b else 0.0
                if best is None or cost < best[0] - EPSILON:
                    best = (cost, a, b)
        if best is None:  # put them back where they were (OLS would throw)
            for item, where in previous.items():
                if where is not None:
                    self.put(item, where)
            return all(self.place_alone(i) for i, w in previous.items() if w is None)
        self.put(u, best[1])
        self.put(v, best[2])
        return True

    def place_alone(self, item: object) -> bool:
        target = self.least_loaded(1, self.load(item), self.memory(item))
        if target is None:
            return False
        self.put(item, target)
        return True


def sorted_pairs(rates: dict, order: dict) -> list[tuple[object, object, float]]:
    pairs = [
        (u, v, r)
        for u, neighbours in rates.items()
        for v, r in neighbours.items()
        if order[u] < order[v] and r > 0
    ]
    pairs.sort(key=lambda p: (-p[2], order[p[0]], order[p[1]]))
    return pairs


def spread(placer: Packer, bins: list[Bin], target: int) -> None:
    """OLS's last step: while fewer than ``target`` nodes are used, move the slot (from a
    node holding several) whose move to an empty node adds the least inter-node traffic."""
    while sum(1 for b in bins if b.members) < target:
        best: tuple[float, object, Bin, Bin] | None = None
        for source in bins:
            if len(source.members) < 2:
                continue
            for slot in source.members:
                load, memory = placer.load(slot), placer.memory(slot)
                empty = next(
                    (b for b in bins if not b.members and b.can_take(1, load, memory)), None
                )
                if empty is None:
                    continue
                added = sum(placer.rates.get(slot, {}).get(o, 0.0) for o in source.members)
                if best is None or (added, slot) < (best[0], best[1]):
                    best = (added, slot, source, empty)
        if best is None:
            return
        _, slot, _, empty = best
        placer.lift(slot)
        placer.put(slot, empty)
