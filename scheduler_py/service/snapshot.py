"""Converts a Thrift ``ClusterSnapshot`` into model problems, one topology at a time.

Conventions (documented in the README's "How the brain sees Storm"):

* a model node is a supervisor; its capacity for a topology is Storm's *available* CPU and
  memory plus what that topology itself uses now, and its slots are the free ones plus the
  topology's own;
* a model executor ``component#i`` is the component's i-th Storm executor in task order;
* per-executor CPU/memory are the declared ``topology.component.cpu.pcore.percent`` and
  on+off-heap memory; without measurements every user stream edge carries a traffic of
  ``USER_EDGE_TRAFFIC`` and every edge into or out of a system component (acker, metrics)
  ``SYSTEM_EDGE_TRAFFIC`` (acks are small), so group-aware algorithms still see the graph;
* ``scheduler.brain.node.cpu.cap`` (optional) caps every node's CPU capacity for the
  topology (a utilisation target, μ of notes 000 §3.4-2);
* ``scheduler.brain.balance.alpha`` (optional) switches paper 000 §2.2's *load-balancing*
  capacity mode on: each node offers at most α · (topology CPU) / (usable nodes);
* with a ``measured`` source (``scheduler-py serve --zookeeper``), a fresh aggregate of the
  topology replaces the declared CPU and the uniform traffic
  (:mod:`scheduler_py.monitoring.measured`); ``TopologyView.costs`` says which were used.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from scheduler_py.model.errors import InvalidProblemError
from scheduler_py.model.types import (
    Component,
    Edge,
    Node,
    Placement,
    Problem,
    Topology,
    WorkerSlot,
    executor_id,
)
from scheduler_py.monitoring.measured import MeasuredCostsSource, measured_topology

NODE_CPU_CAP_KEY = "scheduler.brain.node.cpu.cap"
USER_EDGE_TRAFFIC = 1.0
SYSTEM_EDGE_TRAFFIC = 0.1

ExecutorKey = tuple[int, int]
"""A Storm executor: (task_start, task_end)."""


@dataclass(frozen=True)
class TopologyView:
    """One Storm topology as the model sees it, with the id translations back to Storm."""

    problem: Problem
    storm_executor: Mapping[str, ExecutorKey]
    """model executor id -> (task_start, task_end)"""
    component_of: Mapping[ExecutorKey, str]
    free_ports: Mapping[str, tuple[int, ...]]
    """supervisor id -> ports this topology may use (free ones and its own)"""
    current_slots: Mapping[str, WorkerSlot]
    """model executor id -> where it runs now"""
    conf: Mapping[str, Any]
    needs_scheduling: bool
    costs: str = "declared"
    """``measured (…)`` or ``declared`` (with the reason measured costs were not used)"""

    @property
    def complete(self) -> bool:
        """Every executor runs now, each on a supervisor that is alive."""
        return set(self.current_slots) == set(self.storm_executor)


def decode_conf(raw: Mapping[str, str]) -> dict[str, Any]:
    """Topology conf entries arrive JSON-encoded; a value that is not JSON stays a string."""
    conf = {}
    for key, value in raw.items():
        try:
            conf[key] = json.loads(value)
        except (TypeError, ValueError):
            conf[key] = value
    return conf


def _current_usage(topo: Any) -> dict[str, tuple[float, float]]:
    """supervisor id -> (cpu, memory) the topology's current executors use there."""
    per_executor = {c.id: (c.cpu_per_executor, c.memory_mb_per_executor) for c in topo.components}
    usage: dict[str, tuple[float, float]] = {}
    for placed in topo.current:
        cpu, mem = per_executor.get(placed.executor.component, (0.0, 0.0))
        old_cpu, old_mem = usage.get(placed.supervisor_id, (0.0, 0.0))
        usage[placed.supervisor_id] = (old_cpu + cpu, old_mem + mem)
    return usage


def topology_view(
    snapshot: Any,
    topo: Any,
    claimed: Mapping[str, Any] | None = None,
    measured: MeasuredCostsSource | None = None,
) -> TopologyView:
    """Build the model problem of ``topo`` from ``snapshot``.

    ``claimed`` maps supervisor id -> (cpu, memory, ports) already promised this round to
    topologies planned earlier; they are taken off the capacity this topology sees.
    ``measured`` (optional) supplies the topology's monitoring aggregate.
    """
    claimed = claimed or {}
    conf = decode_conf(topo.conf or {})
    executors_by_comp: dict[str, list[ExecutorKey]] = {}
    for ex in topo.executors:
        executors_by_comp.setdefault(ex.component, []).append((ex.task_start, ex.task_end))
    if not executors_by_comp:
        raise InvalidProblemError(f"topology {topo.id}: the snapshot lists no executors")
    declared = {c.id: c for c in topo.components}
    unknown = sorted(set(executors_by_comp) - set(declared))
    if unknown:
        raise InvalidProblemError(
            f"topology {topo.id}: executors of undeclared component(s) {unknown}"
        )

    storm_executor: dict[str, ExecutorKey] = {}
    components = []
    for comp_id in sorted(executors_by_comp):
        keys = sorted(executors_by_comp[comp_id])
        decl = declared[comp_id]
        for index, key in enumerate(keys):
            storm_executor[executor_id(comp_id, index)] = key
        components.append(
            Component(
                id=comp_id,
                parallelism=len(keys),
                cpu=max(decl.cpu_per_executor, 0.0) * len(keys),
                memory_mb=max(decl.memory_mb_per_executor, 0.0) * len(keys),
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
            edges.append(
                Edge(
                    stream.component,
                    comp.id,
                    SYSTEM_EDGE_TRAFFIC if system else USER_EDGE_TRAFFIC,
                    _grouping_name(stream.grouping),
                )
            )
    topology = Topology(
        id=topo.id,
        name=topo.name,
        components=tuple(components),
        edges=tuple(edges),
        workers=max(1, topo.num_workers),
    )
    costs = "declared"
    if measured is not None:
        topology, costs = measured_topology(topology, storm_executor, conf, measured)

    own = _current_usage(topo)
    alive = {s.id for s in snapshot.supervisors}
    nodes = []
    free_ports: dict[str, tuple[int, ...]] = {}
    for sup in sorted(snapshot.supervisors, key=lambda s: s.id):
        own_cpu, own_mem = own.get(sup.id, (0.0, 0.0))
        taken_cpu, taken_mem, taken_ports = claimed.get(sup.id, (0.0, 0.0, ()))
        ports = tuple(
            sorted(
                s.port
                for s in sup.slots
                if (s.topology_id in (None, "", topo.id)) and s.port not in taken_ports
            )
        )
        free_ports[sup.id] = ports
        nodes.append(
            Node(
                id=sup.id,
                cpu=max(0.0, sup.available_cpu + own_cpu - taken_cpu),
                slots=len(ports),
                memory_mb=max(0.0, sup.available_memory_mb + own_mem - taken_mem),
                rack=sup.rack or "default-rack",
            )
        )
    nodes = _apply_node_cap(nodes, topology, conf)
    nodes = _apply_balance(nodes, topology, conf)

    key_to_model = {key: eid for eid, key in storm_executor.items()}
    current_slots: dict[str, WorkerSlot] = {}
    for placed_exec in topo.current:
        key = (placed_exec.executor.task_start, placed_exec.executor.task_end)
        if key in key_to_model and placed_exec.supervisor_id in alive:
            current_slots[key_to_model[key]] = WorkerSlot(
                placed_exec.supervisor_id, placed_exec.port
            )
    current = None
    if current_slots:
        current = Placement(
            topology.id,
            {e: s.node for e, s in current_slots.items()},
            slot_of=current_slots,
        )
    return TopologyView(
        problem=Problem(tuple(nodes), topology, current),
        storm_executor=storm_executor,
        component_of={key: eid.split("#", 1)[0] for eid, key in storm_executor.items()},
        free_ports=free_ports,
        current_slots=current_slots,
        conf=conf,
        needs_scheduling=bool(topo.needs_scheduling),
        costs=costs,
    )


def _apply_node_cap(nodes: list[Node], topology: Topology, conf: Mapping[str, Any]) -> list[Node]:
    """``scheduler.brain.node.cpu.cap``: the most CPU (% of a core) the topology may use on
    one node — μ of notes 000 §3.4-2 (capacity × target utilisation; paper 000 §7.4 caps
    nodes at 400 %)."""
    cap = conf.get(NODE_CPU_CAP_KEY)
    if cap in (None, ""):
        return nodes
    try:
        cap = float(cap)
    except (TypeError, ValueError):
        cap = float("nan")
    if not math.isfinite(cap) or cap <= 0:
        raise InvalidProblemError(
            f"topology {topology.id}: {NODE_CPU_CAP_KEY} must be a CPU percentage > 0 "
            f"(100 = one core), found {conf.get(NODE_CPU_CAP_KEY)!r}"
        )
    return [replace(n, cpu=min(n.cpu, cap)) for n in nodes]


def _apply_balance(nodes: list[Node], topology: Topology, conf: Mapping[str, Any]) -> list[Node]:
    alpha = conf.get("scheduler.brain.balance.alpha")
    if alpha in (None, "", 0):
        return nodes
    try:
        alpha = float(alpha)
    except (TypeError, ValueError) as error:
        raise InvalidProblemError(
            f"topology {topology.id}: scheduler.brain.balance.alpha must be a number > 1, "
            f"found {alpha!r}"
        ) from error
    if not math.isfinite(alpha) or alpha <= 0:
        raise InvalidProblemError(
            f"topology {topology.id}: scheduler.brain.balance.alpha must be > 0, found {alpha}"
        )
    usable = [n for n in nodes if n.slots > 0]
    if not usable:
        return nodes
    cap = alpha * topology.total_cpu / len(usable)
    largest = max(e.cpu for e in topology.executors)
    cap = max(cap, largest)
    return [replace(n, cpu=min(n.cpu, cap)) for n in nodes]


_GROUPINGS = {
    0: "unknown",
    1: "shuffle",
    2: "local_or_shuffle",
    3: "fields",
    4: "all",
    5: "global",
    6: "none",
    7: "direct",
    8: "custom",
}


def _grouping_name(value: int) -> str:
    return _GROUPINGS.get(value, "unknown")
