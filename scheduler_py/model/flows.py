"""How much a declared topology's edges carry relative to each other, before anything is
measured: tuples per spout tuple.

Storm's snapshot gives every user edge the same declared weight
(``scheduler_py/scheduling/view.py``), but an edge carries what reaches its source: in
R-Storm's Star (``topologies/README.md``) ``center`` receives the tuples of two spouts and
sends each to both outputs, so an output edge carries twice a spout edge. ``locality``
(``scheduler_py/algorithms/locality.py``) cuts slices by these flows, and the load-aware
traffic model (``scheduler_py/model/loadaware.py``) weighs declared edges by them.
"""

from __future__ import annotations

from collections import defaultdict

from scheduler_py.model.types import Topology


def component_order(topology: Topology) -> list[str]:
    """User components in topological order of the user edges (spouts first; on a cycle the
    remaining components follow in declaration order)."""
    user = [c.id for c in topology.components if not c.is_system]
    inputs: dict[str, set[str]] = {c: set() for c in user}
    for edge in topology.merged_edges:
        if edge.source in inputs and edge.target in inputs and edge.source != edge.target:
            inputs[edge.target].add(edge.source)
    order: list[str] = []
    placed: set[str] = set()
    while len(order) < len(user):
        ready = [c for c in user if c not in placed and inputs[c] <= placed]
        if not ready:  # a cycle: take the first remaining in declaration order
            ready = [next(c for c in user if c not in placed)]
        for component in ready:
            order.append(component)
            placed.add(component)
    return order


def flows(topology: Topology) -> dict[tuple[str, str], float]:
    """Relative traffic per user edge ``(source, target)``: measured where the topology has
    pair traffic; the declared traffic where the user edges declare different values (rates
    given edge by edge); otherwise — every edge the same weight, as in Storm's snapshot —
    each spout executor emits one tuple, a bolt emits on each edge what reaches it (``all``
    grouping: one copy per target executor), times that weight. System edges (acking,
    metrics) carry no payload: left out."""
    system = {c.id for c in topology.components if c.is_system}
    if topology.has_measured_traffic:
        component = {e.id: e.component for e in topology.executors}
        measured: dict[tuple[str, str], float] = defaultdict(float)
        for src, dst, rate in topology.pair_traffics():
            pair = (component.get(src, ""), component.get(dst, ""))
            if pair[0] and pair[1] and not {*pair} & system:
                measured[pair] += rate
        return dict(measured)
    edges = [e for e in topology.merged_edges if not {e.source, e.target} & system]
    if len({e.traffic for e in edges}) > 1:  # rates given edge by edge: taken as they are
        return {(e.source, e.target): e.traffic for e in edges}
    by_id = topology.component_by_id
    reaching: dict[str, float] = defaultdict(float)
    result: dict[tuple[str, str], float] = {}
    for component in component_order(topology):
        if by_id[component].is_spout:
            reaching[component] += by_id[component].parallelism
        for edge in (e for e in edges if e.source == component):
            copies = by_id[edge.target].parallelism if edge.grouping == "all" else 1
            flow = reaching[component] * copies * edge.traffic
            result[(edge.source, edge.target)] = flow
            reaching[edge.target] += flow
    return result


def declared_weights(topology: Topology) -> dict[tuple[str, str], float]:
    """Per merged edge: its :func:`flows` value for user edges, its declared traffic for
    system edges (acking, metrics)."""
    user = flows(topology) if not topology.has_measured_traffic else {}
    return {
        (e.source, e.target): user.get((e.source, e.target), e.traffic)
        for e in topology.merged_edges
    }
