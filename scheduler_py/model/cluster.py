"""Several topologies sharing one cluster.

The algorithms plan one topology at a time against the capacity *available to it*
(:class:`~scheduler_py.model.types.Node` says so). :func:`plan_cluster` is the loop around
them, in the role of Storm's ``ResourceAwareScheduler`` (which decides *which* topology is
scheduled and in what order, while a strategy decides *where*; notes 003 §5.2):

1. the topologies are taken in a documented order (``order``):

   * ``"given"`` (default) — the order of the ``topologies`` argument (the caller's
     priority; R-Storm's two-topology run submits PageLoad, then Processing, notes 003
     §2.8 T12);
   * ``"id"`` — sorted by topology id (Storm's ``Topologies`` map order);
   * ``"cpu_desc"`` — the largest total CPU first (first-fit decreasing at the topology
     level), ties by id;

2. each topology sees the nodes minus what every *other* topology occupies at that moment:
   the new plan of every topology planned before it and the current placement of every
   topology not planned yet (it is still running there). CPU and memory are reduced by
   the other topologies' executors, slots by their workers, never below zero;

3. it is planned through :func:`scheduler_py.algorithms.registry.run`, so every plan is
   verified against the capacity it was given;

4. a topology that cannot be planned is recorded in ``failures`` with its operator-facing
   reason and keeps occupying its current placement (if any) for the topologies after it.

With ``keep_current=True`` a topology whose current placement is complete and still fits
the capacity left to it is kept as it is (not re-planned), which is what Storm does with
topologies that do not need scheduling.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from scheduler_py.model.cost import node_loads, violations
from scheduler_py.model.errors import SchedulingError
from scheduler_py.model.types import Node, Placement, Problem, Topology

AlgorithmChoice = str | tuple[str, Mapping[str, Any]]
"""An algorithm name, or ``(name, params)``."""

ORDERS = ("given", "id", "cpu_desc")


@dataclass(frozen=True)
class ClusterPlan:
    """The outcome of :func:`plan_cluster`.

    ``placements`` holds the new placement of every topology planned successfully and the
    kept placement of topologies left as they were; ``failures`` the reason for each
    topology that could not be planned; ``order`` the ids in the order they were handled;
    ``remaining`` the nodes' capacity left when all were handled.
    """

    placements: Mapping[str, Placement]
    failures: Mapping[str, SchedulingError] = field(default_factory=dict)
    order: tuple[str, ...] = ()
    kept: frozenset[str] = frozenset()
    remaining: tuple[Node, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.failures


def usage_of(
    nodes: Iterable[Node], topology: Topology, placement: Placement
) -> dict[str, tuple[float, float, int]]:
    """Per node id: (CPU, memory, workers) that ``placement`` of ``topology`` occupies."""
    nodes = tuple(nodes)
    if not nodes:
        return {}
    problem = Problem(nodes, topology)
    cpu, memory = node_loads(problem, placement.node_of)
    workers: dict[str, set[int]] = {}
    for executor in placement.node_of:
        if executor in topology.executor_by_id:
            node, worker = placement.worker_key(executor)
            workers.setdefault(node, set()).add(worker)
    return {
        n.id: (cpu[n.id], memory[n.id], len(workers.get(n.id, ())))
        for n in nodes
        if cpu[n.id] or memory[n.id] or workers.get(n.id)
    }


def subtract(
    nodes: Iterable[Node], usages: Iterable[Mapping[str, tuple[float, float, int]]]
) -> tuple[Node, ...]:
    """``nodes`` with every usage (from :func:`usage_of`) taken off, clamped at zero."""
    total: dict[str, list[float]] = {}
    for usage in usages:
        for node, (cpu, memory, workers) in usage.items():
            acc = total.setdefault(node, [0.0, 0.0, 0])
            acc[0] += cpu
            acc[1] += memory
            acc[2] += workers
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


def _choice_of(
    algorithm_of: AlgorithmChoice
    | Mapping[str, AlgorithmChoice]
    | Callable[[Topology], AlgorithmChoice],
    topology: Topology,
) -> tuple[str, Mapping[str, Any]]:
    if callable(algorithm_of):
        choice = algorithm_of(topology)
    elif isinstance(algorithm_of, Mapping):
        if topology.id not in algorithm_of:
            raise SchedulingError(
                f"plan_cluster: no algorithm given for topology {topology.id}; "
                f"known: {sorted(algorithm_of)}"
            )
        choice = algorithm_of[topology.id]
    else:
        choice = algorithm_of
    if isinstance(choice, str):
        return choice, {}
    name, params = choice
    return name, dict(params or {})


def _ordered(topologies: Sequence[Topology], order: str) -> list[Topology]:
    if order == "given":
        return list(topologies)
    if order == "id":
        return sorted(topologies, key=lambda t: t.id)
    if order == "cpu_desc":
        return sorted(topologies, key=lambda t: (-t.total_cpu, t.id))
    raise SchedulingError(f"plan_cluster: order must be one of {ORDERS}, got {order!r}")


def plan_cluster(
    nodes: Iterable[Node],
    topologies: Sequence[Topology],
    algorithm_of: AlgorithmChoice
    | Mapping[str, AlgorithmChoice]
    | Callable[[Topology], AlgorithmChoice],
    current: Mapping[str, Placement] | None = None,
    *,
    order: str = "given",
    keep_current: bool = False,
) -> ClusterPlan:
    """Plan every topology of a shared cluster, one at a time (see the module docstring).

    Parameters
    ----------
    nodes:
        The cluster's nodes with the capacity available to *these* topologies (anything
        else already subtracted).
    topologies:
        The topologies to plan; ids must be unique.
    algorithm_of:
        A registered algorithm name for all, a mapping topology id → name, or a function
        of the topology; each choice may be ``(name, params)``.
    current:
        Topology id → its current placement (running topologies).
    order, keep_current:
        See the module docstring.

    Returns
    -------
    ClusterPlan

    Example
    -------
    >>> from scheduler_py.model import Component, Node, Topology
    >>> nodes = [Node("n1", 100), Node("n2", 100)]
    >>> a = Topology("a", (Component("s", 1, 80, is_spout=True),))
    >>> b = Topology("b", (Component("s", 1, 80, is_spout=True),))
    >>> result = plan_cluster(nodes, [a, b], "rstorm")
    >>> sorted(p.nodes_used.pop() for p in result.placements.values())
    ['n1', 'n2']
    """
    from scheduler_py.algorithms import registry

    nodes = tuple(nodes)
    ids = [t.id for t in topologies]
    if len(set(ids)) != len(ids):
        raise SchedulingError(f"plan_cluster: duplicate topology ids in {ids}")
    current = dict(current or {})
    by_id = {t.id: t for t in topologies}
    # usage of each topology as the cluster holds it now: current placements first
    usage: dict[str, Mapping[str, tuple[float, float, int]]] = {
        tid: usage_of(nodes, by_id[tid], placement)
        for tid, placement in current.items()
        if tid in by_id
    }
    placements: dict[str, Placement] = {}
    failures: dict[str, SchedulingError] = {}
    kept: set[str] = set()
    handled: list[str] = []
    for topology in _ordered(topologies, order):
        others = [u for tid, u in usage.items() if tid != topology.id]
        available = subtract(nodes, others)
        mine = current.get(topology.id)
        problem = Problem(available, topology, mine)
        handled.append(topology.id)
        if keep_current and mine is not None and not violations(problem, mine):
            placements[topology.id] = mine
            kept.add(topology.id)
            continue
        try:
            name, params = _choice_of(algorithm_of, topology)
            placement = registry.run(name, problem, params)
        except SchedulingError as error:
            failures[topology.id] = error
            continue
        placements[topology.id] = placement
        usage[topology.id] = usage_of(nodes, topology, placement)
    return ClusterPlan(
        placements=placements,
        failures=failures,
        order=tuple(handled),
        kept=frozenset(kept),
        remaining=subtract(nodes, usage.values()),
    )
