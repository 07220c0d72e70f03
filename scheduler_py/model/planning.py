"""Planning a whole JSON document: every topology, in document order, each seeing the
capacity the previous ones took (the order several topologies share a cluster in)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from scheduler_py.algorithms import registry
from scheduler_py.model.cost import Evaluation, evaluate, node_loads
from scheduler_py.model.io_json import current_from_json, nodes_from_json, topology_from_json
from scheduler_py.model.types import Node, Placement, Problem, Topology


def remaining_nodes(problem: Problem, placement: Placement) -> tuple[Node, ...]:
    """The nodes of ``problem`` minus what ``placement`` uses (CPU, memory, worker slots)."""
    cpu, memory = node_loads(problem, placement.node_of)
    workers: dict[str, set[int]] = {}
    for executor in placement.node_of:
        node, worker = placement.worker_key(executor)
        workers.setdefault(node, set()).add(worker)
    return tuple(
        replace(
            n,
            cpu=max(0.0, n.cpu - cpu[n.id]),
            memory_mb=max(0.0, n.memory_mb - memory[n.id]),
            slots=max(0, n.slots - len(workers.get(n.id, ()))),
        )
        for n in problem.nodes
    )


def plan_document(
    document: Mapping[str, Any], algorithm: str, params: Mapping[str, Any] | None = None
) -> list[tuple[Topology, Placement, Evaluation]]:
    """Plan every topology of a validated problem document.

    A topology's own ``algorithm``/``params`` fields override the command-line choice.
    """
    nodes = nodes_from_json(document["nodes"])
    planned = []
    for item in document["topologies"]:
        topology = topology_from_json(item)
        problem = Problem(nodes, topology, current_from_json(topology, item))
        name = item.get("algorithm", algorithm)
        placement = registry.run(name, problem, item.get("params", params))
        planned.append((topology, placement, evaluate(problem, placement)))
        nodes = remaining_nodes(problem, placement)
    return planned
