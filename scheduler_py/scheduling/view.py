"""One topology as the model sees it in a round: its :class:`~scheduler_py.model.types.Problem`
plus the translations back to Storm.

Conventions for topologies that come from Storm (docs/monitoring.md, "How the brain sees Storm"):

* a model node is a supervisor; its capacity for a topology is Storm's *available* CPU and
  memory plus what that topology itself uses now, minus what the other topologies planned
  earlier in the round claimed (:mod:`scheduler_py.scheduling.claims`); its slots are the
  free ports plus the topology's own;
* a model executor ``component#i`` is the component's i-th Storm executor in task order;
* per-executor CPU/memory are the declared ``topology.component.cpu.pcore.percent`` and
  on+off-heap memory; without measurements every user stream edge carries a traffic of
  :data:`USER_EDGE_TRAFFIC` and every edge into or out of a system component (acker,
  metrics) :data:`SYSTEM_EDGE_TRAFFIC` (acks are small), so group-aware algorithms still
  see the graph;
* ``scheduler.brain.node.cpu.cap`` caps every node's CPU for the topology (a utilisation
  target, μ of ``docs/algorithms/000-topdown.md``); ``scheduler.brain.balance.alpha``
  switches paper 000 §2.2's *load-balancing* capacity mode on;
* with a :class:`~scheduler_py.scheduling.interfaces.CostSource`, a fresh aggregate
  replaces the declared CPU and the uniform traffic; :attr:`TopologyView.costs` says which.

Topologies of a JSON problem document (``scheduler-py plan``) get a view without Storm ids
or ports (:func:`document_view`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from scheduler_py.config import keys
from scheduler_py.model.errors import InfeasibleError, InvalidProblemError
from scheduler_py.model.types import (
    MBIT,
    Component,
    Edge,
    Node,
    NodeTable,
    Placement,
    Problem,
    Topology,
    WorkerSlot,
    executor_id,
)
from scheduler_py.scheduling.claims import NodeClaim, Usage, problem_usage, subtract
from scheduler_py.scheduling.interfaces import CostSource
from scheduler_py.scheduling.state import (
    ClusterState,
    ExecutorKey,
    StormExecutor,
    StormSupervisor,
    StormTopology,
)

USER_EDGE_TRAFFIC = 1.0
SYSTEM_EDGE_TRAFFIC = 0.1


@dataclass(frozen=True)
class TopologyView:
    """A topology's planning problem as one round sees it."""

    problem: Problem
    storm_executor: Mapping[str, ExecutorKey] = field(default_factory=dict)
    """model executor id -> (task_start, task_end); empty for document topologies"""
    component_of: Mapping[ExecutorKey, str] = field(default_factory=dict)
    storm_executors: Mapping[ExecutorKey, StormExecutor] = field(default_factory=dict)
    """(task_start, task_end) -> the Storm executor, as the snapshot lists it"""
    free_ports: Mapping[str, tuple[int, ...]] | None = None
    """supervisor id -> ports this topology may use; ``None`` when ports are not modelled"""
    current_slots: Mapping[str, WorkerSlot] = field(default_factory=dict)
    """model executor id -> the worker it runs in now"""
    conf: Mapping[str, Any] = field(default_factory=dict)
    needs_scheduling: bool = True
    costs: str = "declared"
    """``measured (…)`` or ``declared`` (with the reason measured costs were not used)"""
    declared: Problem | None = field(default=None, compare=False, repr=False)
    """with measured costs: the topology with its *declared* resources on the nodes as Storm
    accounts them (no ``scheduler.brain.node.cpu.cap``), which the shim checks every plan
    against (``storm_plugin/.../PlanValidator.java``); ``None`` when :attr:`problem` is that
    already or stricter"""

    @property
    def topology_id(self) -> str:
        return self.problem.topology.id

    @property
    def complete(self) -> bool:
        """Every executor runs now (on a live supervisor)."""
        current = self.problem.current
        if current is None:
            return False
        return set(self.problem.topology.executor_by_id) <= set(current.node_of)

    def current_usage(self) -> dict[str, Usage]:
        return problem_usage(self.problem, self.problem.current)


# --------------------------------------------------------------------------- Storm topologies


@dataclass(frozen=True)
class Supervisors:
    """What every topology of one snapshot sees of the supervisors before its own usage and
    the round's claims are accounted: computed once per round (:func:`supervisors_of`), so
    that a round over many topologies does not rebuild every node for each of them."""

    ordered: tuple[StormSupervisor, ...]
    """the supervisors by id"""
    alive: frozenset[str]
    unowned: Mapping[str, tuple[Node, tuple[int, ...]]]
    """supervisor id -> its node and free ports, for supervisors none of whose slots a
    topology holds: what a topology that runs nothing there and meets no claim there sees"""
    holding: Mapping[str, frozenset[str]] = field(default_factory=dict)
    """topology id -> the supervisors where it holds a slot"""
    claimed: ClaimedNodes | None = field(default=None, compare=False, repr=False)
    """the nodes under the claims the last view met (:class:`ClaimedNodes`)"""


def supervisors_of(state: ClusterState) -> Supervisors:
    """The :class:`Supervisors` of ``state`` (see :func:`storm_view`)."""
    unowned: dict[str, tuple[Node, tuple[int, ...]]] = {}
    holding: dict[str, set[str]] = {}
    for sup in state.supervisors:
        if all(s.topology_id in (None, "") for s in sup.slots):
            ports = tuple(sorted({s.port for s in sup.slots}))
            unowned[sup.id] = (_node(sup, ports, 0.0, 0.0, NodeClaim()), ports)
        for slot in sup.slots:
            if slot.topology_id not in (None, ""):
                holding.setdefault(slot.topology_id, set()).add(sup.id)
    ordered = tuple(sorted(state.supervisors, key=lambda s: s.id))
    return Supervisors(
        ordered=ordered,
        alive=frozenset(s.id for s in state.supervisors),
        unowned=unowned,
        holding={topology: frozenset(sups) for topology, sups in holding.items()},
        claimed=ClaimedNodes(ordered, unowned),
    )


class ClaimedNodes:
    """The nodes (in :attr:`Supervisors.ordered` order) and free ports of every supervisor
    as a topology that holds no slot and runs nothing sees them under some claims of a round
    (:mod:`scheduler_py.scheduling.claims`).

    :meth:`under` brings them up to date with the claims a view meets — recomputing only the
    supervisors whose claim changed since the last call, which in a round are the few the
    topologies planned in between claimed — and :func:`storm_view` then replaces the nodes
    where its topology runs or holds a slot. The nodes are a
    :class:`~scheduler_py.model.types.NodeTable`, whose lookups (usable nodes, CPU by node,
    the node pool's heap) follow the replaced nodes too: a round over many topologies
    computes each node and its lookups once per claim instead of once per topology.
    """

    def __init__(
        self,
        ordered: tuple[StormSupervisor, ...],
        unowned: Mapping[str, tuple[Node, tuple[int, ...]]],
    ) -> None:
        self.ordered = ordered
        nodes: list[Node] = []
        self.ports: dict[str, tuple[int, ...]] = {}
        for sup in ordered:
            node, ports = unowned.get(sup.id) or _seen(sup, None, NodeClaim(), (0.0, 0.0))
            nodes.append(node)
            self.ports[sup.id] = ports
        self.nodes = NodeTable(nodes)
        self._met: dict[str, NodeClaim] = {}
        """the claims :attr:`nodes` reflect (a round's claims are never changed once handed
        out: :class:`~scheduler_py.scheduling.claims.Claims`)"""

    def under(
        self, claimed: Mapping[str, NodeClaim]
    ) -> tuple[NodeTable, dict[str, tuple[int, ...]]]:
        """The nodes and a copy of the free ports (by supervisor id) under ``claimed``."""
        met = self._met
        changed = [sid for sid in met if sid not in claimed]
        changed += [
            sid
            for sid, claim in claimed.items()
            if met.get(sid) is not claim and met.get(sid) != claim
        ]
        position = self.nodes.position
        renewed = []
        for sid in changed:
            claim = claimed.get(sid)
            if claim is None:
                del met[sid]
            else:
                met[sid] = claim
            index = position.get(sid)
            if index is not None:
                node, ports = _seen(self.ordered[index], None, claim or NodeClaim(), (0.0, 0.0))
                renewed.append(node)
                self.ports[sid] = ports
        self.nodes = self.nodes.replaced(renewed)
        return self.nodes, dict(self.ports)


def _seen(
    sup: StormSupervisor,
    topology_id: str | None,
    claim: NodeClaim,
    own: tuple[float, float],
) -> tuple[Node, tuple[int, ...]]:
    """``sup``'s node and free ports for topology ``topology_id`` (``None``: one that holds
    no slot) using ``own`` (CPU, memory) there, under ``claim``."""
    ports = {
        s.port
        for s in sup.slots
        if s.topology_id in (None, "", topology_id)
        or (s.port in claim.released_ports and s.port not in claim.taken_ports)
    }
    ports -= claim.taken_ports
    free = tuple(sorted(ports))
    return _node(sup, free, own[0], own[1], claim), free


def _node(
    sup: StormSupervisor, ports: tuple[int, ...], own_cpu: float, own_mem: float, claim: NodeClaim
) -> Node:
    return Node(
        id=sup.id,
        cpu=max(0.0, sup.available_cpu + own_cpu - claim.cpu),
        slots=len(ports),
        memory_mb=max(0.0, sup.available_memory_mb + own_mem - claim.memory_mb),
        rack=sup.rack or "default-rack",
        bandwidth=sup.host_link_mbit * MBIT if sup.host_link_mbit else None,
        rack_uplink=sup.rack_uplink_mbit * MBIT if sup.rack_uplink_mbit else None,
    )


def storm_view(
    state: ClusterState,
    topo: StormTopology,
    claimed: Mapping[str, NodeClaim] | None = None,
    costs: CostSource | None = None,
    supervisors: Supervisors | None = None,
) -> TopologyView:
    """The model problem of ``topo`` in ``state``, with ``claimed`` (the other topologies'
    claims so far this round) taken off the capacity it sees; ``supervisors``: the round's
    :func:`supervisors_of` ``state``, computed here when not given. Views that share
    ``supervisors`` compare the claims they meet by identity first (:class:`ClaimedNodes`): a
    claim handed to one is not changed afterwards, as a round's never are."""
    claimed = claimed or {}
    if supervisors is None:
        supervisors = supervisors_of(state)
    conf = topo.conf
    executors_by_comp: dict[str, list[ExecutorKey]] = {}
    storm_executors: dict[ExecutorKey, StormExecutor] = {}
    for ex in topo.executors:
        key = ex.key
        executors_by_comp.setdefault(ex.component, []).append(key)
        storm_executors[key] = ex
    if not executors_by_comp:
        raise InvalidProblemError(f"topology {topo.id}: the snapshot lists no executors")
    declared = {c.id: c for c in topo.components}
    unknown = sorted(set(executors_by_comp) - set(declared))
    if unknown:
        raise InvalidProblemError(
            f"topology {topo.id}: executors of undeclared component(s) {unknown}"
        )

    storm_executor: dict[str, ExecutorKey] = {}
    component_of: dict[ExecutorKey, str] = {}
    components = []
    for comp_id in sorted(executors_by_comp):
        executor_keys = sorted(executors_by_comp[comp_id])
        decl = declared[comp_id]
        name = executor_id(comp_id, 0).split("#", 1)[0]  # what the model id says it is
        for index, key in enumerate(executor_keys):
            storm_executor[executor_id(comp_id, index)] = key
            component_of[key] = name
        components.append(
            Component(
                id=comp_id,
                parallelism=len(executor_keys),
                cpu=max(decl.cpu_per_executor, 0.0) * len(executor_keys),
                memory_mb=max(decl.memory_mb_per_executor, 0.0) * len(executor_keys),
                is_spout=decl.is_spout,
                is_system=decl.is_system,
            )
        )
    placed = set(executors_by_comp)
    edges = []
    for comp in topo.components:
        if comp.id not in placed:
            continue
        for stream in comp.inputs:
            if stream.component not in placed or stream.component == comp.id:
                continue
            system = comp.is_system or declared[stream.component].is_system
            traffic = SYSTEM_EDGE_TRAFFIC if system else USER_EDGE_TRAFFIC
            edges.append(Edge(stream.component, comp.id, traffic, stream.grouping))
    topology = Topology(
        id=topo.id,
        name=topo.name,
        components=tuple(components),
        edges=tuple(edges),
        workers=max(1, topo.num_workers),
    )
    cost_note = "declared"
    declared_topology = topology
    if costs is not None:
        topology, cost_note = costs.costs_for(topology, storm_executor, conf)

    own = _declared_usage(topo)
    alive = supervisors.alive
    nodes, free_ports = _nodes_of(topo.id, own, claimed, supervisors)
    declared = None if topology is declared_topology else Problem(nodes, declared_topology)
    if not nodes:
        raise InfeasibleError(
            "no supervisor to place it on: the cluster snapshot lists none (all down or "
            "blacklisted?); start a supervisor and the next round places it",
            resource="supervisors",
        )
    nodes = _apply_node_cap(nodes, topology, conf)
    nodes = _apply_balance(nodes, topology, conf)

    key_to_model = {key: eid for eid, key in storm_executor.items()} if topo.current else {}
    current_slots: dict[str, WorkerSlot] = {}
    for run in topo.current:
        key = run.executor.key
        if key in key_to_model and run.supervisor_id in alive:
            current_slots[key_to_model[key]] = WorkerSlot(run.supervisor_id, run.port)
    current = None
    if current_slots:
        current = Placement(
            topology.id,
            {e: s.node for e, s in current_slots.items()},
            slot_of=current_slots,
        )
    return TopologyView(
        problem=Problem(nodes, topology, current),
        storm_executor=storm_executor,
        component_of=component_of,
        storm_executors=storm_executors,
        free_ports=free_ports,
        current_slots=current_slots,
        conf=conf,
        needs_scheduling=topo.needs_scheduling,
        costs=cost_note,
        declared=declared,
    )


def _nodes_of(
    topology_id: str,
    own: Mapping[str, tuple[float, float]],
    claimed: Mapping[str, NodeClaim],
    supervisors: Supervisors,
) -> tuple[NodeTable, dict[str, tuple[int, ...]]]:
    """The nodes (in :attr:`Supervisors.ordered` order) and free ports topology
    ``topology_id`` sees, using ``own`` (supervisor id -> its CPU and memory there), under
    ``claimed``: the round's shared :class:`ClaimedNodes`, with the supervisors where the
    topology runs or holds a slot replaced."""
    shared = supervisors.claimed
    if shared is None:
        shared = ClaimedNodes(supervisors.ordered, supervisors.unowned)
    table, free_ports = shared.under(claimed)
    position = table.position
    replaced = []
    for sid in own.keys() | supervisors.holding.get(topology_id, frozenset()):
        index = position.get(sid)
        if index is not None:
            claim = claimed.get(sid, NodeClaim())
            node, ports = _seen(shared.ordered[index], topology_id, claim, own.get(sid, (0.0, 0.0)))
            replaced.append(node)
            free_ports[sid] = ports
    return table.replaced(replaced), free_ports


def _declared_usage(topo: StormTopology) -> dict[str, tuple[float, float]]:
    """supervisor id -> (cpu, memory) the topology's current executors use there, as Storm
    accounts them (declared resources)."""
    per_executor = {c.id: (c.cpu_per_executor, c.memory_mb_per_executor) for c in topo.components}
    usage: dict[str, tuple[float, float]] = {}
    for run in topo.current:
        cpu, mem = per_executor.get(run.executor.component, (0.0, 0.0))
        old_cpu, old_mem = usage.get(run.supervisor_id, (0.0, 0.0))
        usage[run.supervisor_id] = (old_cpu + cpu, old_mem + mem)
    return usage


def _apply_node_cap(
    nodes: tuple[Node, ...], topology: Topology, conf: Mapping[str, Any]
) -> tuple[Node, ...]:
    """``scheduler.brain.node.cpu.cap``: the most CPU (% of a core) the topology may use on
    one node — the utilisation target μ (paper 000 §7.4 caps nodes at 400 %)."""
    raw = conf.get(keys.NODE_CPU_CAP.name)
    if raw in (None, ""):
        return nodes
    try:
        cap = float(raw)
    except (TypeError, ValueError):
        cap = float("nan")
    if not math.isfinite(cap) or cap <= 0:
        raise InvalidProblemError(
            f"topology {topology.id}: {keys.NODE_CPU_CAP.name} must be a CPU percentage > 0 "
            f"(100 = one core), found {raw!r}"
        )
    return tuple(replace(n, cpu=min(n.cpu, cap)) for n in nodes)


def _apply_balance(
    nodes: tuple[Node, ...], topology: Topology, conf: Mapping[str, Any]
) -> tuple[Node, ...]:
    """Paper 000 §2.2 load-balancing mode: each node offers at most α · (topology CPU) /
    (usable nodes), at least the largest executor."""
    name = keys.BALANCE_ALPHA.name
    raw = conf.get(name)
    if raw in (None, "", 0):
        return nodes
    try:
        alpha = float(raw)
    except (TypeError, ValueError) as error:
        raise InvalidProblemError(
            f"topology {topology.id}: {name} must be a number > 0, found {raw!r}"
        ) from error
    if not math.isfinite(alpha) or alpha <= 0:
        raise InvalidProblemError(f"topology {topology.id}: {name} must be > 0, found {alpha}")
    usable = [n for n in nodes if n.slots > 0]
    if not usable:
        return nodes
    cap = max(alpha * topology.total_cpu / len(usable), max(e.cpu for e in topology.executors))
    return tuple(replace(n, cpu=min(n.cpu, cap)) for n in nodes)


# --------------------------------------------------------------------------- documents


def document_view(
    nodes: tuple[Node, ...],
    topology: Topology,
    others_current: Mapping[str, Mapping[str, Usage]],
    current: Placement | None,
    claimed: Mapping[str, NodeClaim],
    conf: Mapping[str, Any] | None = None,
) -> TopologyView:
    """A topology of a JSON problem document: ``nodes`` carry their full capacity, from
    which the other topologies' current usage and this round's claims are taken off."""
    available = subtract(nodes, others_current.values())
    adjusted = []
    for node in available:
        claim = claimed.get(node.id, NodeClaim())
        adjusted.append(
            replace(
                node,
                cpu=max(0.0, node.cpu - claim.cpu),
                memory_mb=max(0.0, node.memory_mb - claim.memory_mb),
                slots=max(0, node.slots - claim.workers),
            )
        )
    return TopologyView(
        problem=Problem(tuple(adjusted), topology, current),
        conf=dict(conf or {}),
        needs_scheduling=True,
    )
