"""Feasibility shared by every algorithm: "can this executor go there" (kube-scheduler's
filter step), kept apart from "how good is it", which each algorithm decides itself.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence

from scheduler_py.model.errors import InfeasibleError
from scheduler_py.model.types import EPSILON, Executor, Node, NodeTable, Problem


class CapacityTracker:
    """Remaining CPU and memory per node while an algorithm places executors.

    Slots are not tracked here: with the default of one worker per node per topology a
    node needs one free slot, which :func:`usable_nodes` already requires.
    """

    def __init__(self, nodes: Iterable[Node]) -> None:
        if isinstance(nodes, NodeTable):  # copies of the lookups it has (or computes once)
            self.nodes = nodes.by_id.copy()
            self.cpu = nodes.cpu.copy()
            self.memory = nodes.memory.copy()
            return
        self.nodes = {n.id: n for n in nodes}
        self.cpu = {n.id: n.cpu for n in self.nodes.values()}
        self.memory = {n.id: n.memory_mb for n in self.nodes.values()}

    def fits(self, node: str, cpu: float, memory_mb: float = 0.0) -> bool:
        return cpu <= self.cpu[node] + EPSILON and memory_mb <= self.memory[node] + EPSILON

    def fits_executor(self, node: str, executor: Executor) -> bool:
        return self.fits(node, executor.cpu, executor.memory_mb)

    def take(self, node: str, cpu: float, memory_mb: float = 0.0) -> None:
        self.cpu[node] -= cpu
        self.memory[node] -= memory_mb

    def take_executor(self, node: str, executor: Executor) -> None:
        self.take(node, executor.cpu, executor.memory_mb)

    def release_executor(self, node: str, executor: Executor) -> None:
        self.take(node, -executor.cpu, -executor.memory_mb)

    def freest(self, candidates: Iterable[str] | None = None) -> str:
        """Node with the most spare CPU (ties: lower id), the paper's ``N.top()``."""
        pool = list(candidates) if candidates is not None else list(self.cpu)
        return min(pool, key=lambda n: (-self.cpu[n], n))


def usable_nodes(problem: Problem) -> NodeTable:
    """Nodes that can host at least one worker of the topology (a free slot); computed once
    per problem (:attr:`~scheduler_py.model.types.Problem.usable_nodes`)."""
    return problem.usable_nodes


def worker_nodes(nodes: Sequence[Node], workers: int) -> list[Node]:
    """At most ``workers`` of ``nodes``: whole racks first (most free CPU first), within a
    rack the nodes with the most free CPU (ties: lower id); in the order of ``nodes``."""
    if workers >= len(nodes):
        return list(nodes)
    racks: dict[str, list[Node]] = defaultdict(list)
    for node in nodes:
        racks[node.rack].append(node)
    kept: set[str] = set()
    for rack in sorted(racks, key=lambda r: (-sum(n.cpu for n in racks[r]), r)):
        for node in sorted(racks[rack], key=lambda n: (-n.cpu, n.id)):
            if len(kept) < max(1, workers):
                kept.add(node.id)
    return [n for n in nodes if n.id in kept]


def check_feasible(problem: Problem) -> None:
    """Raise :class:`InfeasibleError` when no placement can exist, naming what does not fit.

    Checks the necessary conditions every algorithm shares: some node has a free slot,
    every executor fits the largest node on each resource, and the totals fit the sum of
    capacities. Passing does not prove feasibility (bin packing is NP-hard).
    """
    nodes = usable_nodes(problem)
    topology = problem.topology
    if not nodes:
        raise InfeasibleError(
            f"topology {topology.id}: no node has a free worker slot "
            f"({len(problem.nodes)} node(s) known); free slots or add supervisors",
            resource="slots",
        )
    executors = topology.executors
    cpu_needs, memory_needs = [e.cpu for e in executors], [e.memory_mb for e in executors]
    freest = nodes[nodes.position[nodes.heap[0][1]]]  # the most CPU (the heap's top)
    if (
        min(cpu_needs, default=0.0) >= 0
        and min(memory_needs, default=0.0) >= 0
        and sum(cpu_needs) <= freest.cpu + EPSILON
        and sum(memory_needs) <= freest.memory_mb + EPSILON
    ):
        return  # one node could hold it all (capacities are >= 0): the checks below pass
    cpu, memory = list(nodes.cpu.values()), list(nodes.memory.values())
    _check_resource(problem, "cpu", "% CPU", cpu, cpu_needs)
    _check_resource(problem, "memory", " MB memory", memory, memory_needs)


def _check_resource(
    problem: Problem, resource: str, unit: str, caps: list[float], needs: list[float]
) -> None:
    """:func:`check_feasible` for one resource: ``caps`` of the usable nodes, ``needs`` of
    the executors, both in their problem order."""
    nodes, topology, attribute = usable_nodes(problem), problem.topology, _TOTAL[resource]
    top = max(caps)  # what the best node (most of it, ties: highest id) has
    if needs and max(needs) > top + EPSILON:
        best = max(nodes, key=lambda n: (getattr(n, attribute), n.id))
        need, executor = next(
            (need, e)
            for need, e in zip(needs, topology.executors, strict=True)
            if need > top + EPSILON
        )
        raise InfeasibleError(
            f"topology {topology.id}: component {executor.component} needs "
            f"{need:.1f}{unit} per executor but the best node "
            f"{best.id} has {top:.1f}{unit} available; raise the "
            f"component's parallelism, lower its declared {resource}, or add capacity",
            resource=resource,
            component=executor.component,
            needed=need,
            best_available=top,
            best_node=best.id,
        )
    needed = sum(needs)
    available = sum(caps)
    if needed > available + EPSILON:
        heaviest = max(topology.components, key=lambda c: (getattr(c, attribute), c.id))
        raise InfeasibleError(
            f"topology {topology.id}: needs {needed:.1f}{unit} in total but the "
            f"cluster has {available:.1f}{unit} available (largest consumer: component "
            f"{heaviest.id}); add capacity or lower the topology's load",
            resource=resource,
            component=heaviest.id,
            needed=needed,
            best_available=available,
        )


_TOTAL = {"cpu": "cpu", "memory": "memory_mb"}
