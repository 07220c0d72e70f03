"""The exact counting DP for the optimum of φ (``optimal``, method ``dp``) and the solution type
both exact methods return; see ``docs/algorithms/baselines.md`` §"optimal"."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from scheduler_py.algorithms.topdown.counts import (
    CountModel,
    room_for,
)
from scheduler_py.model.budget import UNLIMITED, Budget
from scheduler_py.model.types import EPSILON, Node

NEG = float("-inf")


class BudgetExceeded(Exception):
    """The DP spent its pattern budget (``dp_budget``) or the time budget ran out."""

    def __init__(self, out_of_time: bool = False) -> None:
        super().__init__("out of time" if out_of_time else "out of patterns")
        self.out_of_time = out_of_time


@dataclass
class Solution:
    counts: list[list[int]] | None  # node × class, None = infeasible
    bound: float
    status: str
    proven: bool
    detail: dict


def dp_state_space(model: CountModel) -> int:
    """Π(|c|+1): the number of remaining-count vectors, the DP's state space per node."""
    return math.prod(cls.size + 1 for cls in model.classes)


def solve_dp(
    model: CountModel,
    *,
    budget: int | None = None,
    ignore_traffic: bool = False,
    deadline: Budget = UNLIMITED,
) -> Solution:
    """Exact counting DP (``docs/algorithms/000-topdown.md`` §5.1).

    Raises ``BudgetExceeded`` after ``budget`` patterns or when ``deadline`` expires.
    """
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
            raise BudgetExceeded
        if deadline.expired():
            raise BudgetExceeded(out_of_time=True)
        return result

    def best(i: int, rem: tuple[int, ...]) -> float:
        """Best gain placing ``rem`` on nodes i.. (heterogeneous) / K−i nodes (identical)."""
        if not any(rem):
            return 0.0
        if i >= node_count:
            return NEG
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
        value = NEG
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
                if v > NEG and g + v > value:
                    value, pick = g + v, p
        memo[key] = value
        if pick is not None:
            choice[key] = (whole, pick)
        return value

    value = best(0, sizes)
    detail = {"dp_states": len(memo), "dp_patterns": steps}
    if value == NEG:
        return Solution(None, NEG, "infeasible", True, detail)
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
    return Solution(counts, value + model.constant, "optimal", True, detail)
