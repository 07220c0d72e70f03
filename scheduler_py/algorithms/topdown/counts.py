"""The count model: a topology's executors grouped into classes of interchangeable executors
(same component, same costs), and a placement as a matrix of counts per node and class.

Shared by the exact methods (``scheduler_py/algorithms/baselines/optimal.py``: the counting
DP and the MILP) and the local search ``tdls`` (``topdown/tdls.py``); paper 000 §2.2 counts
traffic between groups the same way (``docs/algorithms/000-topdown.md``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

from scheduler_py.model.capacity import usable_nodes
from scheduler_py.model.types import EPSILON, Node, Problem

# --------------------------------------------------------------------------------------
# The count model shared by the exact methods and the local search (tdls)
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TaskClass:
    """Interchangeable executors: same component, CPU and memory, same traffic to everyone."""

    component: str
    executors: tuple[str, ...]
    cpu: float
    memory_mb: float

    @property
    def size(self) -> int:
        return len(self.executors)


@dataclass(frozen=True)
class CountModel:
    """A problem in group-count form (notes §1.4): φ = Σ_n Σ_{c<d} w_cd·a_cn·a_dn + constant.

    ``weight[c][d]`` is the traffic of *one* executor pair of classes c and d, both directions
    summed (symmetric, zero diagonal). ``constant`` is traffic that is collocated whatever the
    placement (measured executor self-pairs). ``nodes`` are the usable nodes (a free slot).
    ``uniform`` is true when the classes come from Eq. 1 (no measured pair traffic).
    """

    classes: tuple[TaskClass, ...]
    weight: tuple[tuple[float, ...], ...]
    constant: float
    nodes: tuple[Node, ...]
    uniform: bool

    @cached_property
    def neighbours(self) -> tuple[tuple[tuple[int, float], ...], ...]:
        """Per class, the classes it exchanges traffic with and the per-pair weight."""
        return tuple(
            tuple((d, w) for d, w in enumerate(row) if w > 0 and d != c)
            for c, row in enumerate(self.weight)
        )

    @property
    def identical_nodes(self) -> bool:
        first = self.nodes[0]
        return all(n.cpu == first.cpu and n.memory_mb == first.memory_mb for n in self.nodes)

    def pattern_gain(self, pattern: Sequence[int]) -> float:
        """Gain of one node holding ``pattern[c]`` executors of every class c."""
        total = 0.0
        for c, row in enumerate(self.neighbours):
            pc = pattern[c]
            if pc:
                for d, w in row:
                    if d > c:
                        total += w * pc * pattern[d]
        return total

    def phi(self, counts: Sequence[Sequence[int]]) -> float:
        """φ of a node × class count matrix (including the constant)."""
        return self.constant + sum(self.pattern_gain(p) for p in counts)

    def node_of(self, counts: Sequence[Sequence[int]]) -> dict[str, str]:
        """Executor → node for a node × class count matrix (executors in index order)."""
        result: dict[str, str] = {}
        for c, cls in enumerate(self.classes):
            it = iter(cls.executors)
            for n, node in enumerate(self.nodes):
                for _ in range(counts[n][c]):
                    result[next(it)] = node.id
        return result

    def counts_of(self, node_of: dict[str, str] | object) -> list[list[int]]:
        """The node × class count matrix of an executor → node mapping."""
        index = {node.id: n for n, node in enumerate(self.nodes)}
        counts = [[0] * len(self.classes) for _ in self.nodes]
        for c, cls in enumerate(self.classes):
            for e in cls.executors:
                counts[index[node_of[e]]][c] += 1  # type: ignore[index]
        return counts


def count_model(problem: Problem) -> CountModel:
    """Build the group-count form of ``problem``.

    Without measured pair traffic, a component's executors are split into classes of equal
    (CPU, memory) (one class per component unless ``executor_cpu`` overrides some); the
    per-pair weight between classes of components u and v is Eq. 1's
    ``traffic(u→v)/(|u||v|) + traffic(v→u)/(|u||v|)``. With measured pair traffic every
    executor is a class of its own and the weights are the measured rates.
    """
    topology = problem.topology
    nodes = usable_nodes(problem)
    if topology.has_measured_traffic:
        classes = tuple(
            TaskClass(e.component, (e.id,), e.cpu, e.memory_mb) for e in topology.executors
        )
        index = {cls.executors[0]: c for c, cls in enumerate(classes)}
        size = len(classes)
        weight = [[0.0] * size for _ in range(size)]
        constant = 0.0
        for src, dst, rate in topology.pair_traffics():
            if src not in index or dst not in index:
                continue
            a, b = index[src], index[dst]
            if a == b:
                constant += rate
            else:
                weight[a][b] += rate
                weight[b][a] += rate
        return CountModel(classes, tuple(map(tuple, weight)), constant, nodes, False)

    classes_list: list[TaskClass] = []
    component_classes: dict[str, list[int]] = {}
    for comp in topology.components:
        buckets: dict[tuple[float, float], list[str]] = {}
        for e in topology.executors_of(comp.id):
            buckets.setdefault((e.cpu, e.memory_mb), []).append(e.id)
        component_classes[comp.id] = []
        for (cpu, mem), ids in buckets.items():
            component_classes[comp.id].append(len(classes_list))
            classes_list.append(TaskClass(comp.id, tuple(ids), cpu, mem))
    size = len(classes_list)
    weight = [[0.0] * size for _ in range(size)]
    by_id = topology.component_by_id
    for edge in topology.merged_edges:
        if edge.traffic <= 0:
            continue
        per_pair = edge.traffic / (by_id[edge.source].parallelism * by_id[edge.target].parallelism)
        for a in component_classes[edge.source]:
            for b in component_classes[edge.target]:
                weight[a][b] += per_pair
                weight[b][a] += per_pair
    return CountModel(tuple(classes_list), tuple(map(tuple, weight)), 0.0, nodes, True)


def fits_on(cpu: float, mem: float, node: Node) -> bool:
    return cpu <= node.cpu + EPSILON and mem <= node.memory_mb + EPSILON


def room_for(node: Node, cpu: float, mem: float, cls: TaskClass, limit: int) -> int:
    """How many executors of ``cls`` (at most ``limit``) fit beside ``cpu``/``mem``."""
    if cls.cpu > 0:
        limit = min(limit, int((node.cpu + EPSILON - cpu) // cls.cpu))
    if cls.memory_mb > 0 and node.memory_mb != math.inf:
        limit = min(limit, int((node.memory_mb + EPSILON - mem) // cls.memory_mb))
    return max(limit, 0)


def max_per_node(model: CountModel, cls: TaskClass, node: Node) -> int:
    """How many executors of ``cls`` fit on an empty ``node``."""
    limit = cls.size
    if cls.cpu > 0:
        limit = min(limit, int((node.cpu + EPSILON) // cls.cpu))
    if cls.memory_mb > 0 and node.memory_mb != math.inf:
        limit = min(limit, int((node.memory_mb + EPSILON) // cls.memory_mb))
    return max(limit, 0)
