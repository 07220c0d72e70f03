"""T3's monitoring input (paper 002 §4.1): task loads, symmetric pair rates and the task order
(``docs/algorithms/002-t3.md`` §2.2)."""

from __future__ import annotations

from dataclasses import dataclass

import networkx as nx

from scheduler_py.algorithms.topdown.groups import planning_cpu
from scheduler_py.model.types import Problem, Topology

# Profile: loads, rates, task order


def topological_components(topology: Topology) -> list[str]:
    """User components in topological order, ties by declaration order (networkx's
    lexicographical topological sort). A cycle (Storm allows them) is ordered as one unit:
    the strongly connected components are sorted topologically, each listing its members in
    declaration order."""
    user = [c.id for c in topology.components if not c.is_system]
    position = {c: i for i, c in enumerate(user)}
    graph = nx.DiGraph()
    graph.add_nodes_from(user)
    graph.add_edges_from(
        (e.source, e.target)
        for e in topology.merged_edges
        if e.source in position and e.target in position and e.source != e.target
    )
    if nx.is_directed_acyclic_graph(graph):
        return list(nx.lexicographical_topological_sort(graph, key=position.__getitem__))
    condensed = nx.condensation(graph)
    members = {
        unit: sorted(condensed.nodes[unit]["members"], key=position.__getitem__)
        for unit in condensed
    }
    units = nx.lexicographical_topological_sort(
        condensed, key=lambda unit: position[members[unit][0]]
    )
    return [component for unit in units for component in members[unit]]


def measured_cpu_in_reference_units(problem: Problem) -> dict[str, float]:
    """§6 heterogeneity: measured executor CPU read as raw % of the cores of the node that
    ran it (``problem.current``), converted to reference-core % by that node's ``speed``
    (T3 / OLS measure thread CPU time × core clock). To stay valid under the model's
    verifier, which reads ``executor.cpu`` as reference units, the planning load is
    ``max(raw, raw × speed)`` — the rule ``td`` uses, from the same function. Empty when
    nothing changes."""
    return planning_cpu(problem) or {}


@dataclass
class Profile:
    """The monitoring input of T3 (§4.1): task order, loads, memory, symmetric rates."""

    tasks: list[str]
    component_of: dict[str, str]
    order: dict[str, int]
    load: dict[str, float]
    memory: dict[str, float]
    rates: dict[str, dict[str, float]]
    connected: dict[str, set[str]]
    source: str
    """``measured``, ``declared`` or ``uniform`` (where the rates came from)."""


def build_profile(topology: Topology, cpu_of: dict[str, float] | None = None) -> Profile:
    """The T3 input from a topology; ``cpu_of`` overrides executor loads (speed scaling)."""
    cpu_of = cpu_of or {}
    components = topological_components(topology)
    user = set(components)
    tasks: list[str] = []
    component_of: dict[str, str] = {}
    load: dict[str, float] = {}
    memory: dict[str, float] = {}
    for component in components:
        for executor in topology.executors_of(component):
            tasks.append(executor.id)
            component_of[executor.id] = component
            load[executor.id] = cpu_of.get(executor.id, executor.cpu)
            memory[executor.id] = executor.memory_mb
    order = {t: i for i, t in enumerate(tasks)}
    rates: dict[str, dict[str, float]] = {t: {} for t in tasks}
    connected: dict[str, set[str]] = {c: set() for c in components}
    for edge in topology.merged_edges:
        if edge.source in user and edge.target in user:
            connected[edge.source].add(edge.target)
            connected[edge.target].add(edge.source)
    declared = any(e.traffic > 0 for e in topology.merged_edges)
    if topology.has_measured_traffic or declared:
        source = "measured" if topology.has_measured_traffic else "declared"
        for src, dst, rate in topology.pair_traffics():
            if src in order and dst in order and src != dst:
                rates[src][dst] = rates[src].get(dst, 0.0) + rate
                rates[dst][src] = rates[dst].get(src, 0.0) + rate
                a, b = component_of[src], component_of[dst]
                if a != b:
                    connected[a].add(b)
                    connected[b].add(a)
    else:
        source = "uniform"
        for edge in topology.merged_edges:
            if edge.source in user and edge.target in user:
                for s in topology.executors_of(edge.source):
                    for t in topology.executors_of(edge.target):
                        rates[s.id][t.id] = rates[s.id].get(t.id, 0.0) + 1.0
                        rates[t.id][s.id] = rates[t.id].get(s.id, 0.0) + 1.0
    if topology.executor_cpu:
        source = "measured"
    return Profile(tasks, component_of, order, load, memory, rates, connected, source)
