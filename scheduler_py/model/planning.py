"""Planning a whole JSON problem document: every topology, in document order, each seeing
the capacity the others occupy (:func:`scheduler_py.model.cluster.plan_cluster`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from scheduler_py.model.cluster import plan_cluster
from scheduler_py.model.cost import Evaluation, evaluate
from scheduler_py.model.io_json import current_from_json, nodes_from_json, topology_from_json
from scheduler_py.model.types import Placement, Problem, Topology


def plan_document(
    document: Mapping[str, Any], algorithm: str, params: Mapping[str, Any] | None = None
) -> list[tuple[Topology, Placement, Evaluation]]:
    """Plan every topology of a validated problem document, in document order.

    A topology's own ``algorithm``/``params`` fields override the command-line choice.
    Raises the first topology's :class:`~scheduler_py.model.errors.SchedulingError` when
    any topology cannot be planned (an infeasible document is an error as a whole).
    """
    nodes = nodes_from_json(document["nodes"])
    items = {str(item["id"]): item for item in document["topologies"]}
    topologies = [topology_from_json(item) for item in document["topologies"]]
    current = {
        t.id: placement
        for t in topologies
        if (placement := current_from_json(t, items[t.id])) is not None
    }

    def choice(topology: Topology) -> tuple[str, Mapping[str, Any]]:
        item = items[topology.id]
        return item.get("algorithm", algorithm), item.get("params", params or {})

    result = plan_cluster(nodes, topologies, choice, current)
    for topology_id in result.order:
        if topology_id in result.failures:
            raise result.failures[topology_id]
    return [
        (t, result.placements[t.id], evaluate(Problem(nodes, t), result.placements[t.id]))
        for t in topologies
    ]
