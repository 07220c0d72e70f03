"""A plan with more workers than ``topology.workers``, merged down to that number.

Storm refuses an assignment that uses more worker slots than the topology's
``topology.workers``. An algorithm that spreads a topology over more nodes than that (``td``
does on big word counts: 200 executors over 83 nodes where 40 workers are allowed) used to cost
the topology the brain's placement: the round left it to Storm. :func:`within_workers` keeps
the algorithm's plan and merges whole workers instead, until the plan fits:

1. the traffic between every two workers is the uniform pair traffic of
   :func:`scheduler_py.model.loadaware.uniform_pair_traffic` (declared or measured) summed
   over their executors;
2. of the pairs where one worker's executors fit beside the other's (the same node, or room
   for its declared CPU and memory on the other's node), the pair exchanging the most traffic
   merges: the lighter worker (least declared CPU, then fewer executors, then the lower node
   id and index) joins the other, and among equally good pairs the lightest worker in any
   of them moves; ties for the worker it joins: the same node, then the same
   rack, then the node with the most spare CPU, then the lower node id and index;
3. this repeats until ``topology.workers`` is met; when no pair fits, the plan cannot meet it
   and :class:`SchedulingError` says so.

A merge never separates executors the plan put together, so the traffic kept inside workers
only grows. The nodes' slots are not a limit: a merge adds no worker.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

import numpy as np
from scipy import sparse

from scheduler_py.model.errors import SchedulingError
from scheduler_py.model.flows import declared_weights
from scheduler_py.model.loadaware import uniform_pair_traffic
from scheduler_py.model.types import EPSILON, Placement, Problem

ROUNDING = 9
"""digits the traffic between workers is rounded to before ranking (float sums differ in
the last bits with the order of the additions)"""

WorkerKey = tuple[str, int]
"""(node id, logical worker index), :meth:`Placement.worker_key`"""


@dataclass
class _Worker:
    key: WorkerKey
    executors: list[str] = field(default_factory=list)
    cpu: float = 0.0
    memory_mb: float = 0.0


def worker_count(placement: Placement) -> int:
    """The logical workers ``placement`` uses (what Storm counts against ``topology.workers``
    once :mod:`scheduler_py.model.slots` gives each a slot)."""
    worker_of = placement.worker_of
    return len({(node, worker_of.get(e, 0)) for e, node in placement.node_of.items()})


def within_workers(problem: Problem, placement: Placement, allowed: int) -> Placement:
    """``placement``, or its workers merged (module docstring) when it uses more than
    ``allowed``; the merged plan's ``report`` says ``workers_merged`` ("83 → 40")."""
    used = worker_count(placement)
    if used <= max(1, allowed):
        return placement
    merger = _Merger(problem, placement)
    merger.merge_down_to(max(1, allowed))
    report = dict(placement.report) | {"workers_merged": f"{used} → {len(merger.workers)}"}
    return replace(
        placement,
        node_of=merger.node_of(),
        worker_of=merger.worker_of(),
        slot_of={},
        report=report,
    )


class _Merger:
    def __init__(self, problem: Problem, placement: Placement) -> None:
        self.rack = {n.id: n.rack for n in problem.nodes}
        by_id = problem.topology.executor_by_id
        self.workers: dict[WorkerKey, _Worker] = {}
        self.spare_cpu = {n.id: n.cpu for n in problem.nodes}
        self.spare_memory = {n.id: n.memory_mb for n in problem.nodes}
        for executor in sorted(placement.node_of):
            key = placement.worker_key(executor)
            worker = self.workers.setdefault(key, _Worker(key))
            worker.executors.append(executor)
            if executor in by_id:
                worker.cpu += by_id[executor].cpu
                worker.memory_mb += by_id[executor].memory_mb
        for worker in self.workers.values():
            node = worker.key[0]
            if node not in self.spare_cpu:
                raise SchedulingError(
                    f"the plan names node {node!r}, which is not in the problem; expected "
                    f"one of the {len(self.spare_cpu)} nodes the topology was planned on"
                )
            self.spare_cpu[node] -= worker.cpu
            self.spare_memory[node] -= worker.memory_mb
        self.worker_of_executor = {e: w.key for w in self.workers.values() for e in w.executors}
        share, traffic = _traffic_matrices(problem, self.workers)
        self.shared = np.asarray(share @ (traffic @ share.T))
        """traffic between workers (rows and columns in the order of ``workers``)"""
        nodes = np.array([key[0] for key in self.workers])
        self.same_node = nodes[:, None] == nodes[None, :]

    def merge_down_to(self, allowed: int) -> None:
        keys = list(self.workers)
        alive = np.ones(len(keys), dtype=bool)
        while int(alive.sum()) > allowed:
            feasible = self._feasible(keys, alive)
            if not feasible.any():
                raise SchedulingError(
                    f"the plan needs {int(alive.sum())} workers but topology.workers is "
                    f"{allowed} (Storm rejects more), and no worker's executors fit beside "
                    "another worker's on that worker's node (declared CPU and memory); raise "
                    "topology.workers or free capacity on the nodes"
                )
            i, j = self._choice(keys, feasible)
            self._merge(self.workers[keys[i]], self.workers[keys[j]])
            shared = self.shared
            shared[j] += shared[i]
            shared[:, j] += shared[:, i]
            shared[j, j] = 0.0
            shared[i] = 0.0
            shared[:, i] = 0.0
            alive[i] = False

    def _feasible(self, keys: list[WorkerKey], alive: np.ndarray) -> np.ndarray:
        """``[i, j]``: worker ``i`` may join worker ``j`` (the same node, or room on j's)."""
        workers = [self.workers.get(key) for key in keys]
        cpu = np.array([w.cpu if w else 0.0 for w in workers])
        memory = np.array([w.memory_mb if w else 0.0 for w in workers])
        room_cpu = np.array([self.spare_cpu[key[0]] for key in keys])
        room_memory = np.array([self.spare_memory[key[0]] for key in keys])
        feasible = self.same_node | (
            (cpu[:, None] <= room_cpu[None, :] + EPSILON)
            & (memory[:, None] <= room_memory[None, :] + EPSILON)
        )
        feasible &= alive[:, None] & alive[None, :]
        np.fill_diagonal(feasible, False)
        return feasible

    def _choice(self, keys: list[WorkerKey], feasible: np.ndarray) -> tuple[int, int]:
        """The feasible pair exchanging the most traffic: the lighter worker ``i`` of it joins
        ``j`` (ties: the lightest ``i``; then for ``j`` the same node, the same rack, the most
        spare CPU, the lowest key)."""
        shared = np.where(feasible, np.round(self.shared, ROUNDING), -np.inf)
        best = shared >= shared.max()

        def lightness(row: int) -> tuple:
            worker = self.workers[keys[row]]
            return worker.cpu, len(worker.executors), keys[row]

        i = min(np.flatnonzero(best.any(axis=1)).tolist(), key=lightness)
        node, rack = keys[i][0], self.rack[keys[i][0]]

        def preference(col: int) -> tuple:
            other = keys[col][0]
            return (other != node, self.rack[other] != rack, -self.spare_cpu[other], keys[col])

        return i, min(np.flatnonzero(best[i]).tolist(), key=preference)

    def _merge(self, worker: _Worker, target: _Worker) -> None:
        source_node, target_node = worker.key[0], target.key[0]
        self.spare_cpu[source_node] += worker.cpu
        self.spare_memory[source_node] += worker.memory_mb
        self.spare_cpu[target_node] -= worker.cpu
        self.spare_memory[target_node] -= worker.memory_mb
        target.executors.extend(worker.executors)
        target.cpu += worker.cpu
        target.memory_mb += worker.memory_mb
        del self.workers[worker.key]
        for executor in worker.executors:
            self.worker_of_executor[executor] = target.key

    def node_of(self) -> dict[str, str]:
        return {e: key[0] for e, key in self.worker_of_executor.items()}

    def worker_of(self) -> dict[str, int]:
        return {e: key[1] for e, key in self.worker_of_executor.items()}


def _traffic_matrices(
    problem: Problem, workers: Mapping[WorkerKey, _Worker]
) -> tuple[np.ndarray, np.ndarray | sparse.csr_matrix]:
    """``(share, traffic)`` such that ``traffic @ share[a] @ share[b]`` is the traffic between
    workers ``a`` and ``b`` (rows in the order of ``workers``) under the uniform split. With
    declared costs the units are components (``share``: the fraction of a component's
    executors in the worker), else executors (``share``: 1 where the worker holds it) with the
    measured pairs as a sparse matrix; ``traffic`` counts both directions."""
    topology = problem.topology
    if topology.has_measured_traffic:
        units = [e.id for e in topology.executors]
        unit_of = {e: i for i, e in enumerate(units)}
        share = np.zeros((len(workers), len(units)))
        for row, worker in enumerate(workers.values()):
            for executor in worker.executors:
                if executor in unit_of:
                    share[row, unit_of[executor]] = 1.0
        pairs = [
            (unit_of[src], unit_of[dst], rate)
            for (src, dst), rate in uniform_pair_traffic(problem).items()
            if src in unit_of and dst in unit_of
        ]
        rows, cols, rates = zip(*pairs, strict=True) if pairs else ((), (), ())
        matrix = sparse.csr_matrix((rates, (rows, cols)), shape=(len(units), len(units)))
        return share, (matrix + matrix.T).tocsr()
    components = [c.id for c in topology.components]
    unit_of = {c: i for i, c in enumerate(components)}
    parallelism = {c.id: c.parallelism for c in topology.components}
    component_of = {e.id: e.component for e in topology.executors}
    share = np.zeros((len(workers), len(components)))
    for row, worker in enumerate(workers.values()):
        for executor in worker.executors:
            component = component_of.get(executor)
            if component is not None:
                share[row, unit_of[component]] += 1.0 / parallelism[component]
    dense = np.zeros((len(components), len(components)))
    for (source, target), weight in declared_weights(topology).items():
        if source in unit_of and target in unit_of and source != target:
            dense[unit_of[source], unit_of[target]] += weight
    return share, dense + dense.T
