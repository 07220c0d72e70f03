"""Value types of the scheduling model, independent of Storm and Thrift.

The vocabulary follows paper 000 (Chatzistergiou & Viglas, §2.1-2.2): a *topology* is a DAG
of *groups* (Storm components) whose *tasks* are Storm executors. Every executor of group
``i`` talks to every executor of group ``j`` when ``(i, j)`` is an edge; unless measured
values are given, per-executor costs are the group totals split uniformly (Eq. 1).

Units: CPU in percent of one reference core (a 4-core node has capacity 400), memory in MB,
traffic in any rate unit the caller chooses (MB/s in the papers, tuples/s or bytes/s from
monitoring) as long as it is the same everywhere in one problem.

Everything here is an immutable value: problems and placements can be saved, diffed,
replayed and compared (see :mod:`scheduler_py.model.io_json`).
"""

from __future__ import annotations

import math
from bisect import bisect_left, insort
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from heapq import heapify
from operator import itemgetter
from types import MappingProxyType
from typing import Any, TypeVar

_V = TypeVar("_V")

EPSILON = 1e-9
"""Tolerance of every capacity comparison (``docs/algorithms/000-topdown.md`` §6.1: 3 × 33.33 must
fit 100)."""


def _frozen_map(mapping: Mapping | None) -> Mapping:
    return MappingProxyType(dict(mapping or {}))


MBIT = 1e6 / 8
"""bytes/s in one Mbit/s: a node's ``bandwidth`` and ``rack_uplink`` are in bytes/s, what
supervisors and operators declare is in Mbit/s"""


@dataclass(frozen=True)
class Node:
    """A machine (Storm supervisor) as the algorithms see it.

    ``cpu`` and ``memory_mb`` are the capacity *available to the topology being planned*
    (already net of other topologies' usage when several share the cluster). ``slots`` is
    the number of worker slots the topology may use there. ``speed`` is the relative speed
    of one core (paper 000 §5 heterogeneity; 1.0 = reference core). ``bandwidth`` is the
    bytes/s of the node's network link each way and ``rack_uplink`` those of its rack's
    uplink, when known (a supervisor declares them, ``docs/configuration.md``).
    """

    id: str
    cpu: float
    slots: int = 4
    memory_mb: float = float("inf")
    rack: str = "default-rack"
    bandwidth: float | None = None
    speed: float = 1.0
    rack_uplink: float | None = None

    def __post_init__(self) -> None:
        if not self.id:
            raise ValueError("node id must be a non-empty string")
        if self.cpu < 0 or self.memory_mb < 0 or self.slots < 0:
            raise ValueError(
                f"node {self.id!r}: capacities must be >= 0, got cpu={self.cpu}, "
                f"memory_mb={self.memory_mb}, slots={self.slots}"
            )


@dataclass(frozen=True)
class Component:
    """A group of executors (a Storm spout or bolt).

    ``cpu`` and ``memory_mb`` are the component's *totals*, split evenly over its
    executors (Eq. 1) unless the topology carries measured per-executor costs.
    """

    id: str
    parallelism: int
    cpu: float = 0.0
    memory_mb: float = 0.0
    is_spout: bool = False
    is_system: bool = False

    def __post_init__(self) -> None:
        if self.parallelism < 1:
            raise ValueError(
                f"component {self.id!r}: parallelism must be >= 1, got {self.parallelism}"
            )
        if self.cpu < 0 or self.memory_mb < 0:
            raise ValueError(f"component {self.id!r}: cpu and memory must be >= 0")


@dataclass(frozen=True)
class Edge:
    """A component-level stream edge; ``traffic`` is its total rate (all streams merged)."""

    source: str
    target: str
    traffic: float = 0.0
    grouping: str = "shuffle"

    def __post_init__(self) -> None:
        if self.traffic < 0:
            raise ValueError(f"edge {self.source}->{self.target}: traffic must be >= 0")


@dataclass(frozen=True)
class Executor:
    """One executor (a paper "task"): the ``index``-th executor of ``component``."""

    id: str
    component: str
    index: int
    cpu: float
    memory_mb: float


def executor_id(component: str, index: int) -> str:
    """The model's executor id convention: ``component#index``."""
    return f"{component}#{index}"


@dataclass(frozen=True)
class Topology:
    """A stream job: components, edges and (optionally) measured per-executor costs.

    ``executor_cpu`` overrides the uniform split for the executors it names;
    ``pair_traffic`` maps ``(source executor id, target executor id)`` to a measured rate
    and, when non-empty, replaces Eq. 1's uniform split for *all* pairs (unlisted pairs
    carry no traffic). ``workers`` is Storm's ``topology.workers``.
    """

    id: str
    components: tuple[Component, ...]
    edges: tuple[Edge, ...] = ()
    workers: int = 1
    name: str = ""
    executor_cpu: Mapping[str, float] = field(default_factory=dict)
    pair_traffic: Mapping[tuple[str, str], float] = field(default_factory=dict)
    work_seconds: Mapping[str, float] = field(default_factory=dict)
    """component -> measured CPU seconds per tuple it handles: set with the measured costs
    (``scheduler_py/monitoring/measured.py``, from the tuple rates and Storm's execute
    latencies), and kept for the throughput model when the executors' measured CPU and
    traffic are replaced by their declared resources (``scheduler_py/scheduling/verified.py``,
    ``declared_view``); empty: derived from ``executor_cpu`` and ``pair_traffic`` (in
    tuples/s) where both were measured
    (:func:`~scheduler_py.model.throughput.measured_work_seconds`)"""
    edge_gains: Mapping[tuple[str, str], float] = field(default_factory=dict)
    """user edge ``(source, target)`` -> the tuples it carries per tuple its source handles
    (a spout: emits), as the measured pair traffic showed them, kept for the throughput model
    when that traffic is replaced by the declared (uniform) one
    (``scheduler_py/scheduling/verified.py``, ``declared_view``): a bolt that emits 3 tuples
    per input, or filters most of them, is still scored so; the traffic volumes stay declared.
    Empty: derived from the flows (:func:`~scheduler_py.model.throughput.measured_gains`)"""
    payload_bytes: float = 0.0
    """measured bytes of a user tuple between workers, Storm's per-message framing left out
    (``scheduler_py/monitoring/wire_size.py``), for the throughput model's links; 0: not
    measured"""

    def __post_init__(self) -> None:
        object.__setattr__(self, "components", tuple(self.components))
        object.__setattr__(self, "edges", tuple(self.edges))
        object.__setattr__(self, "executor_cpu", _frozen_map(self.executor_cpu))
        object.__setattr__(self, "pair_traffic", _frozen_map(self.pair_traffic))
        object.__setattr__(self, "work_seconds", _frozen_map(self.work_seconds))
        object.__setattr__(self, "edge_gains", _frozen_map(self.edge_gains))
        if not math.isfinite(self.payload_bytes) or self.payload_bytes < 0:
            raise ValueError(
                f"topology {self.id!r}: payload_bytes must be a finite number >= 0, "
                f"found {self.payload_bytes!r}"
            )
        ids = [c.id for c in self.components]
        if len(set(ids)) != len(ids):
            raise ValueError(f"topology {self.id!r}: duplicate component ids in {ids}")
        known = set(ids)
        for edge in self.edges:
            for end in (edge.source, edge.target):
                if end not in known:
                    raise ValueError(
                        f"topology {self.id!r}: edge {edge.source}->{edge.target} names "
                        f"unknown component {end!r}; known: {sorted(known)}"
                    )
            if edge.source == edge.target:
                raise ValueError(f"topology {self.id!r}: self-loop on {edge.source!r}")

    def __hash__(self) -> int:  # mappings are not hashable; identity is the id + shape
        return hash((self.id, self.components, self.edges))

    @cached_property
    def component_by_id(self) -> Mapping[str, Component]:
        return MappingProxyType({c.id: c for c in self.components})

    @cached_property
    def executors(self) -> tuple[Executor, ...]:
        """All executors, grouped by component in declaration order, index ascending."""
        result = []
        for comp in self.components:
            share_cpu = comp.cpu / comp.parallelism
            share_mem = comp.memory_mb / comp.parallelism
            for index in range(comp.parallelism):
                eid = executor_id(comp.id, index)
                cpu = self.executor_cpu.get(eid, share_cpu)
                result.append(Executor(eid, comp.id, index, cpu, share_mem))
        return tuple(result)

    @cached_property
    def executor_by_id(self) -> Mapping[str, Executor]:
        return MappingProxyType({e.id: e for e in self.executors})

    @cached_property
    def component_of_executor(self) -> Mapping[str, str]:
        """Executor id -> its component's id."""
        return MappingProxyType({e.id: e.component for e in self.executors})

    def executors_of(self, component: str) -> tuple[Executor, ...]:
        """The executors of ``component`` (a declared one), index ascending."""
        return self._executors_by_component[component]

    @cached_property
    def _executors_by_component(self) -> Mapping[str, tuple[Executor, ...]]:
        """:attr:`executors` grouped by component (they come grouped, index ascending)."""
        grouped: dict[str, list[Executor]] = {c.id: [] for c in self.components}
        for executor in self.executors:
            grouped[executor.component].append(executor)
        return MappingProxyType({c: tuple(e) for c, e in grouped.items()})

    @cached_property
    def merged_edges(self) -> tuple[Edge, ...]:
        """Edges with parallel streams between the same two components summed (000 §1.5)."""
        totals: dict[tuple[str, str], float] = {}
        grouping: dict[tuple[str, str], str] = {}
        for edge in self.edges:
            key = (edge.source, edge.target)
            totals[key] = totals.get(key, 0.0) + edge.traffic
            grouping.setdefault(key, edge.grouping)
        return tuple(Edge(s, t, v, grouping[(s, t)]) for (s, t), v in totals.items())

    @property
    def has_measured_traffic(self) -> bool:
        return bool(self.pair_traffic)

    @property
    def has_measured_costs(self) -> bool:
        """Whether anything of the topology was measured: executor CPU, pair traffic, or what
        was kept of them in place of the declared resources (:attr:`work_seconds`,
        :attr:`edge_gains`); such costs change every measuring window."""
        return bool(
            self.executor_cpu
            or self.pair_traffic
            or self.work_seconds
            or self.edge_gains
            or self.payload_bytes
        )

    def pair_traffics(self) -> Iterator[tuple[str, str, float]]:
        """Every executor pair with non-zero traffic: ``(source id, target id, rate)``.

        Measured pairs when present, otherwise Eq. 1's uniform split of each merged edge.
        """
        if self.pair_traffic:
            for (src, dst), rate in self.pair_traffic.items():
                if rate > 0:
                    yield src, dst, rate
            return
        for edge in self.merged_edges:
            if edge.traffic <= 0:
                continue
            sources = self.executors_of(edge.source)
            targets = self.executors_of(edge.target)
            rate = edge.traffic / (len(sources) * len(targets))
            for s in sources:
                for t in targets:
                    yield s.id, t.id, rate

    @property
    def total_cpu(self) -> float:
        return sum(e.cpu for e in self.executors)


@dataclass(frozen=True)
class WorkerSlot:
    """A Storm worker slot: a supervisor (node) and a port."""

    node: str
    port: int


@dataclass(frozen=True)
class Placement:
    """The result of planning one topology: executor id -> node id (-> worker).

    ``worker_of`` optionally refines the node with a logical worker index on that node
    (0, 1, ...); when absent every topology gets one worker per node it uses (the
    default of ``docs/algorithms/000-topdown.md`` §6.2). ``slot_of`` is the physical mapping to
    Storm worker slots, filled
    by :mod:`scheduler_py.model.slots`. ``report`` carries algorithm-specific details
    (numbers an operator may want to see); it never changes the meaning of the placement.
    """

    topology_id: str
    node_of: Mapping[str, str]
    algorithm: str = ""
    worker_of: Mapping[str, int] = field(default_factory=dict)
    slot_of: Mapping[str, WorkerSlot] = field(default_factory=dict)
    report: Mapping[str, object] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "node_of", _frozen_map(self.node_of))
        object.__setattr__(self, "worker_of", _frozen_map(self.worker_of))
        object.__setattr__(self, "slot_of", _frozen_map(self.slot_of))
        object.__setattr__(self, "report", _frozen_map(self.report))

    def __hash__(self) -> int:
        return hash((self.topology_id, tuple(sorted(self.node_of.items()))))

    def worker_key(self, executor: str) -> tuple[str, int]:
        """The (node, logical worker) an executor runs in."""
        return self.node_of[executor], self.worker_of.get(executor, 0)

    def executors_on(self, node: str) -> list[str]:
        return [e for e, n in self.node_of.items() if n == node]

    @property
    def nodes_used(self) -> set[str]:
        return set(self.node_of.values())


class NodeTable(tuple[Node, ...]):
    """A tuple of nodes with the lookups planning needs, derivable from a table that differs
    in a few nodes without going over all of them.

    A scheduling round (``scheduler_py/scheduling/round.py``) plans many topologies on the same
    nodes, each seeing them minus what the topologies before it claimed: tuples that differ
    in a few nodes. Each problem needs some of the same lookups — the position and the node of
    every id, CPU and memory by id, the heap of spare CPU topDown's node pool starts from
    (``scheduler_py/algorithms/topdown/groups.py``) and the usable nodes (a free slot) with
    the same lookups. A table computes each on first use. A table made by :meth:`replaced`
    keeps the lookups the table it came from had computed by then, and the nodes replaced: on
    first use, such a lookup is derived from a copy of that one (C copies of dicts and lists)
    updated for the nodes replaced, and any other is computed. So a round computes each
    lookup it uses once per claim rather than once per topology, and none it does not use;
    a table never keeps the table it came from. Derived or
    computed, a table's lookups are the same (``tests/test_node_table.py``).
    :class:`Problem` keeps a table it is given and makes one of any other tuple.
    """

    DERIVED = ("by_id", "cpu", "memory", "heap", "_usable")
    """the lookups a table made by :meth:`replaced` may derive from the table it came from"""

    def __reduce__(self) -> tuple[type[NodeTable], tuple[tuple[Node, ...]]]:
        return (NodeTable, (tuple(self),))  # the lookups are computed again when needed

    @cached_property
    def position(self) -> Mapping[str, int]:
        """Node id -> its position (one entry per node: :class:`Problem` checks the count)."""
        return MappingProxyType({n.id: i for i, n in enumerate(self)})

    @cached_property
    def by_id(self) -> Mapping[str, Node]:
        origin = self._origin("by_id")
        if origin is not None:
            return _updated(origin.lookups["by_id"], origin.changed)
        return MappingProxyType({n.id: n for n in self})

    @cached_property
    def cpu(self) -> Mapping[str, float]:
        """Node id -> its CPU, in table order."""
        origin = self._origin("cpu")
        if origin is not None:
            return _updated(origin.lookups["cpu"], {i: n.cpu for i, n in origin.changed.items()})
        return MappingProxyType({n.id: n.cpu for n in self})

    @cached_property
    def memory(self) -> Mapping[str, float]:
        """Node id -> its memory (MB), in table order."""
        origin = self._origin("memory")
        if origin is not None:
            changes = {i: n.memory_mb for i, n in origin.changed.items()}
            return _updated(origin.lookups["memory"], changes)
        return MappingProxyType({n.id: n.memory_mb for n in self})

    @cached_property
    def zeros(self) -> Mapping[str, float]:
        """Node id -> 0.0, in table order: per-node sums start from a copy."""
        return MappingProxyType(dict.fromkeys(self.position, 0.0))

    @cached_property
    def heap(self) -> tuple[tuple[float, str], ...]:
        """``(-cpu, id)`` of every node as a min-heap (:mod:`heapq`): the most spare CPU
        first, ties to the lower id, to start a node pool from. Sorted (a sorted list is a
        heap, and a derived table keeps it sorted in O(log n) per node replaced) unless a CPU
        is NaN, which has no order: then arranged by :func:`heapq.heapify`, as a node pool
        always did (``scheduler_py/algorithms/topdown/groups.py``)."""
        origin = self._origin("heap")
        if origin is not None and origin.lookups.get("_heap_sorted"):
            heap = _reheaped(origin.lookups["heap"], origin.old.values(), origin.changed.values())
            if heap is not None:
                self.__dict__["_heap_sorted"] = True
                return heap
        entries = [(-n.cpu, n.id) for n in self]
        if math.isnan(sum(map(itemgetter(0), entries))):  # capacities >= 0: no inf - inf
            heapify(entries)
        else:
            entries.sort()
            self.__dict__["_heap_sorted"] = True
        return tuple(entries)

    @property
    def usable(self) -> NodeTable:
        """The nodes that can host a worker (a free slot), in table order."""
        subset = self._usable
        return self if subset is None else subset

    @cached_property
    def _usable(self) -> NodeTable | None:
        """``None`` when every node is usable (:attr:`usable` is then the table itself)."""
        origin = self._origin("_usable")
        if origin is not None:
            old, changed = origin.old, origin.changed
            if all((n.slots > 0) == (old[i].slots > 0) for i, n in changed.items()):
                subset = origin.lookups["_usable"]  # the same nodes are usable
                kept = [n for n in changed.values() if n.slots > 0]
                return None if subset is None else subset.replaced(kept)
        usable = [n for n in self if n.slots > 0]
        return None if len(usable) == len(self) else NodeTable(usable)

    def _origin(self, lookup: str) -> _Origin | None:
        """What this table came from, when that table had computed ``lookup``; dropped once
        every lookup that could use it is computed."""
        own = self.__dict__
        origin: _Origin | None = own.get("_from")
        if origin is None:
            return None
        if all(name in own or name == lookup for name in self.DERIVED):
            del own["_from"]
        return origin if lookup in origin.lookups else None

    @cached_property
    def _token(self) -> object:
        """Stands for this table in the tables :meth:`replaced` makes of it (which do not keep
        it: :meth:`replaced_positions`)."""
        return object()

    def replaced_positions(self, other: NodeTable) -> tuple[int, ...] | None:
        """The positions of the nodes replaced when this table was made by
        ``other.replaced(…)``; ``None`` when it was not made so."""
        made = self.__dict__.get("_replaced")
        if made is None or made[0] is not other.__dict__.get("_token"):
            return None
        return made[1]

    def replaced(self, nodes: Iterable[Node]) -> NodeTable:
        """This table with each of ``nodes`` in place of the node of the same id (an unknown
        id raises :class:`KeyError`); its lookups derived from this table's on first use."""
        changed = {node.id: node for node in nodes}
        if not changed:
            return self
        position = self.position
        items = list(self)
        old = {}
        for nid, node in changed.items():
            index = position[nid]
            old[nid] = items[index]
            items[index] = node
        table = NodeTable(items)
        derived = table.__dict__
        derived["position"] = position
        derived["zeros"] = self.zeros  # the same ids
        derived["_replaced"] = (self._token, tuple(position[nid] for nid in changed))
        computed = self.__dict__
        lookups = {name: computed[name] for name in self.DERIVED if name in computed}
        if lookups:
            lookups["_heap_sorted"] = computed.get("_heap_sorted", False)
            derived["_from"] = _Origin(lookups, changed, old)
        return table


@dataclass(frozen=True)
class _Origin:
    """What a :meth:`NodeTable.replaced` table came from: the lookups that table had computed
    (:attr:`NodeTable.DERIVED`, and whether its heap is sorted), and the nodes replaced."""

    lookups: Mapping[str, Any]
    changed: Mapping[str, Node]
    """node id -> the node in its place"""
    old: Mapping[str, Node]
    """node id -> the node replaced"""


def _updated(mapping: Mapping[str, _V], changes: Mapping[str, _V]) -> Mapping[str, _V]:
    """A read-only copy of ``mapping`` with the values of ``changes``."""
    copy = mapping.copy() if isinstance(mapping, MappingProxyType) else dict(mapping)
    copy.update(changes)
    return MappingProxyType(copy)


def _reheaped(
    heap: tuple[tuple[float, str], ...], removed: Iterable[Node], added: Iterable[Node]
) -> tuple[tuple[float, str], ...] | None:
    """``heap`` (sorted) with the entries of ``removed`` replaced by those of ``added``, still
    sorted; ``None`` when a CPU is NaN (:attr:`NodeTable.heap` then computes it again)."""
    entries = list(heap)
    for old, new in zip(removed, added, strict=True):
        if math.isnan(old.cpu) or math.isnan(new.cpu):
            return None
        del entries[bisect_left(entries, (-old.cpu, old.id))]
        insort(entries, (-new.cpu, new.id))
    return tuple(entries)


@dataclass(frozen=True)
class Problem:
    """One topology to place on a set of nodes, optionally with its current placement.

    Algorithms are pure functions ``plan(problem, **params) -> Placement``. When several
    topologies share a cluster, :mod:`scheduler_py.scheduling.documents` schedules them one at a
    time, each seeing the capacity the previous ones left (``nodes`` is that remainder).
    """

    nodes: tuple[Node, ...]
    topology: Topology
    current: Placement | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.nodes, NodeTable):
            object.__setattr__(self, "nodes", NodeTable(self.nodes))
        if len(self.nodes.position) != len(self.nodes):
            raise ValueError(f"duplicate node ids in {[n.id for n in self.nodes]}")
        if not self.nodes:
            raise ValueError("a problem needs at least one node")

    @property
    def table(self) -> NodeTable:
        """:attr:`nodes` with their lookups (:class:`NodeTable`)."""
        return self.nodes  # type: ignore[return-value]  # __post_init__ made it one

    @property
    def node_by_id(self) -> Mapping[str, Node]:
        return self.table.by_id

    @property
    def node_index(self) -> Mapping[str, int]:
        """Node id -> its position in :attr:`nodes`: lists the few nodes a placement uses in
        problem order without going over all of them."""
        return self.table.position

    @property
    def usable_nodes(self) -> NodeTable:
        """The nodes that can host a worker (a free slot), in problem order
        (:func:`scheduler_py.model.capacity.usable_nodes`)."""
        return self.table.usable

    def in_node_order(self, node_ids: Iterable[str]) -> list[str]:
        """The ids of ``node_ids`` that are nodes of the problem, in problem order."""
        index = self.node_index
        return sorted((n for n in set(node_ids) if n in index), key=index.__getitem__)
