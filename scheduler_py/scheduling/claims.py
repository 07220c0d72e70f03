"""Capacity accounting between the topologies of one round.

Every topology of a round sees the cluster minus what the *other* topologies occupy at that
moment: the new plan of each topology planned before it in this round, and the current
placement of every other topology (Storm's "available" resources already exclude those).
:class:`Claims` records, per node, how the plans made so far in the round changed the
occupation — new usage minus the usage they replace — so a later topology's view is
``available + own current usage - claims of the others``. A re-planned topology therefore
releases what it occupied before (the shim replaces its assignment in the same round), as
Storm's ResourceAwareScheduler does when it re-schedules a topology.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace

from scheduler_py.model.cost import node_loads
from scheduler_py.model.types import Node, Placement, Problem, Topology


@dataclass(frozen=True)
class Usage:
    """What one placement occupies on one node."""

    cpu: float = 0.0
    memory_mb: float = 0.0
    workers: int = 0
    ports: frozenset[int] = frozenset()


def usage_of(
    nodes: Iterable[Node], topology: Topology, placement: Placement | None
) -> dict[str, Usage]:
    """Per node id: what ``placement`` of ``topology`` occupies (nodes it does not use are
    left out). Ports are known only for placements with worker slots."""
    nodes = tuple(nodes)
    if not nodes or placement is None:
        return {}
    cpu, memory = node_loads(Problem(nodes, topology), placement.node_of)
    workers: dict[str, set[int]] = {}
    ports: dict[str, set[int]] = {}
    known, logical = topology.executor_by_id, placement.worker_of
    for executor, node in placement.node_of.items():
        if executor not in known:
            continue
        workers.setdefault(node, set()).add(logical.get(executor, 0))  # worker_key, inlined
        slot = placement.slot_of.get(executor)
        if slot is not None:
            ports.setdefault(slot.node, set()).add(slot.port)
    return {
        n.id: Usage(
            cpu[n.id], memory[n.id], len(workers.get(n.id, ())), frozenset(ports.get(n.id, ()))
        )
        for n in nodes
        if cpu[n.id] or memory[n.id] or workers.get(n.id)
    }


def subtract(nodes: Iterable[Node], usages: Iterable[Mapping[str, Usage]]) -> tuple[Node, ...]:
    """``nodes`` with every usage taken off (CPU, memory, worker slots), clamped at zero."""
    total: dict[str, list[float]] = {}
    for usage in usages:
        for node, used in usage.items():
            acc = total.setdefault(node, [0.0, 0.0, 0])
            acc[0] += used.cpu
            acc[1] += used.memory_mb
            acc[2] += used.workers
    result = []
    for n in nodes:
        cpu, memory, workers = total.get(n.id, (0.0, 0.0, 0))
        result.append(
            replace(
                n,
                cpu=max(0.0, n.cpu - cpu),
                memory_mb=max(0.0, n.memory_mb - memory),
                slots=max(0, n.slots - int(workers)),
            )
        )
    return tuple(result)


@dataclass
class NodeClaim:
    """How the plans made so far in a round changed one node's occupation."""

    cpu: float = 0.0
    memory_mb: float = 0.0
    workers: int = 0
    taken_ports: set[int] = field(default_factory=set)
    released_ports: set[int] = field(default_factory=set)


class Claims:
    """Per topology, per node: new usage minus the usage it replaces (see module docstring)."""

    def __init__(self) -> None:
        self._by_topology: dict[str, dict[str, NodeClaim]] = {}

    def record(
        self, topology_id: str, before: Mapping[str, Usage], after: Mapping[str, Usage]
    ) -> None:
        claims: dict[str, NodeClaim] = {}
        for node in set(before) | set(after):
            old, new = before.get(node, Usage()), after.get(node, Usage())
            claims[node] = NodeClaim(
                new.cpu - old.cpu,
                new.memory_mb - old.memory_mb,
                new.workers - old.workers,
                set(new.ports - old.ports),
                set(old.ports - new.ports),
            )
        self._by_topology[topology_id] = claims

    def of_others(self, topology_id: str) -> dict[str, NodeClaim]:
        """The summed claims of every topology except ``topology_id``."""
        total: dict[str, NodeClaim] = {}
        for owner, claims in self._by_topology.items():
            if owner == topology_id:
                continue
            for node, claim in claims.items():
                acc = total.setdefault(node, NodeClaim())
                acc.cpu += claim.cpu
                acc.memory_mb += claim.memory_mb
                acc.workers += claim.workers
                acc.taken_ports |= claim.taken_ports
                acc.released_ports |= claim.released_ports
        for acc in total.values():
            acc.released_ports -= acc.taken_ports
        return total
