"""Feasibility shared by every algorithm: "can this executor go there" (kube-scheduler's
filter step), kept apart from "how good is it", which each algorithm decides itself.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence

from scheduler_py.model.errors import InfeasibleError
from scheduler_py.model.types import EPSILON, Executor, Node, Problem


class CapacityTracker:
    """Remaining CPU and memory per node while an algorithm places executors.

    Slots are not tracked here: with the default of one worker per node per topology a
    node needs one free slot, which :func:`usable_nodes` already requires.
    """

    def __init__(self, nodes: Iterable[Node]) -> None:
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


def usable_nodes(problem: Problem) -> tuple[Node, ...]:
    """Nodes that can host at least one worker of the topology (a free slot)."""
    return tuple(n for n in problem.nodes if n.slots > 0)


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
    for resource, attribute, unit in (
        ("cpu", "cpu", "% CPU"),
        ("memory", "memory_mb", " MB memory"),
    ):
        caps = [getattr(n, attribute) for n in nodes]
        needs = [getattr(e, attribute) for e in topology.executors]
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
            heaviest = max(topology.components, key=lambda c: (getattr(c, _TOTAL[resource]), c.id))
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
