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
    if not nodes:
        return {}
    return problem_usage(Problem(nodes, topology), placement)


def problem_usage(problem: Problem, placement: Placement | None) -> dict[str, Usage]:
    """:func:`usage_of` the problem's nodes and topology, in problem order, looking only at
    the nodes ``placement`` uses (a round computes two per topology)."""
    if placement is None:
        return {}
    known, logical, slot_of = (
        problem.topology.executor_by_id,
        placement.worker_of,
        placement.slot_of,
    )
    index = problem.node_index
    cpu: dict[str, float] = {}  # node_loads, for the used nodes only
    memory: dict[str, float] = {}
    workers: dict[str, set[int]] = {}
    ports: dict[str, set[int]] = {}
    for executor, node in placement.node_of.items():
        if executor not in known:
            continue
        if node in index:
            cpu[node] = cpu.get(node, 0.0) + known[executor].cpu
            memory[node] = memory.get(node, 0.0) + known[executor].memory_mb
        workers.setdefault(node, set()).add(logical.get(executor, 0))  # worker_key, inlined
        slot = slot_of.get(executor)
        if slot is not None:
            ports.setdefault(slot.node, set()).add(slot.port)
    return {
        n: Usage(
            cpu.get(n, 0.0),
            memory.get(n, 0.0),
            len(workers.get(n, ())),
            frozenset(ports.get(n, ())),
        )
        for n in problem.in_node_order(cpu.keys() | workers.keys())
        if cpu.get(n) or memory.get(n) or workers.get(n)
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
    """Per topology, per node: new usage minus the usage it replaces (see module docstring).

    The sums over every topology recorded so far are kept up to date as topologies are
    recorded, so that :meth:`of_others` of a topology that has recorded nothing — every
    topology of a round, in turn — copies them instead of adding up all the claims again.
    Those sums are replaced, never changed, when a record changes them: a caller may keep the
    :class:`NodeClaim` objects it was given and compare them by identity
    (``scheduler_py/scheduling/view.py``), and must not change them.
    """

    def __init__(self) -> None:
        self._by_topology: dict[str, dict[str, NodeClaim]] = {}
        self._sums: dict[str, NodeClaim] = {}
        """per node, every recorded claim summed in record order (ports: both unions)"""
        self._summed: dict[str, NodeClaim] = {}
        """per node, :meth:`of_others` of a topology that has recorded nothing"""
        self._in_order = True
        """``False`` once a topology recorded twice: :meth:`of_others` sums in the order the
        topologies first recorded, which the running sums no longer follow"""

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
        if topology_id in self._by_topology:
            self._in_order = False
        self._by_topology[topology_id] = claims
        if self._in_order:
            self._add(claims)

    def _add(self, claims: Mapping[str, NodeClaim]) -> None:
        for node, claim in claims.items():
            acc = self._sums.setdefault(node, NodeClaim())
            _accumulate(acc, claim)
            self._summed[node] = NodeClaim(
                acc.cpu,
                acc.memory_mb,
                acc.workers,
                set(acc.taken_ports),
                acc.released_ports - acc.taken_ports,
            )

    def of_others(self, topology_id: str) -> dict[str, NodeClaim]:
        """The summed claims of every topology except ``topology_id``."""
        if self._in_order and topology_id not in self._by_topology:
            return dict(self._summed)
        total: dict[str, NodeClaim] = {}
        for owner, claims in self._by_topology.items():
            if owner == topology_id:
                continue
            for node, claim in claims.items():
                _accumulate(total.setdefault(node, NodeClaim()), claim)
        for acc in total.values():
            acc.released_ports -= acc.taken_ports
        return total


def _accumulate(acc: NodeClaim, claim: NodeClaim) -> None:
    acc.cpu += claim.cpu
    acc.memory_mb += claim.memory_mb
    acc.workers += claim.workers
    acc.taken_ports |= claim.taken_ports
    acc.released_ports |= claim.released_ports
