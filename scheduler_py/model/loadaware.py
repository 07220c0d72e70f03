"""Executor-pair traffic as Storm's locality-aware shuffle routes it, for a given placement.

The cost module (:mod:`scheduler_py.model.cost`) scores the traffic of a shuffle edge as the
uniform all-to-all split of paper 000 §2.2, Eq. 1. That is what Storm does with
``topology.disable.loadaware.messaging: true``. With Storm's default (false) a shuffle-like
grouping is a ``LoadAwareShuffleGrouping`` (Storm 2.8, ``storm-client``), which, per sending
worker, groups the target tasks by *locality scope* — the same worker, the same host, the same
rack, anywhere — and sends only to the narrowest non-empty scope while the targets there are
not overloaded (their receive queues below ``topology.localityaware.higher.bound``), split by
load weights that are equal when nothing is overloaded.

:func:`loadaware_pair_traffic` is that steady, unloaded routing: each source executor's
outflow on a shuffle-like edge (its share of the edge's traffic — a declared edge weighed by
:func:`~scheduler_py.model.flows.declared_weights`, tuples per spout tuple — or what was
measured leaving it) goes in equal parts to the target executors of the narrowest scope
that holds one. Other groupings (fields, all, global, direct) keep the uniform split.
Overloaded targets widen the scope at run time; this model does not, so it is a lower bound
on the traffic leaving a worker whenever a worker-local target saturates. ``bench cluster``
compares it, and the uniform split, with the bytes measured on the emulated hosts' links
(``scheduler_py/bench/cluster_links.py``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping

from scheduler_py.model.flows import declared_weights
from scheduler_py.model.types import Placement, Problem, Topology

PairTraffic = Mapping[tuple[str, str], float]
Weights = Mapping[tuple[str, str], float]
"""per merged edge ``(source, target)``: :func:`~scheduler_py.model.flows.declared_weights`"""

SHUFFLE_LIKE = frozenset({"shuffle", "local_or_shuffle", "none"})
"""Groupings Storm routes through ``LoadAwareShuffleGrouping`` when load-aware messaging is on."""


def _outflows(
    topology: Topology, weights: Weights | None
) -> dict[tuple[str, str], dict[str, float]]:
    """``(source component, target component) -> {source executor: rate}``; ``weights``:
    :func:`~scheduler_py.model.flows.declared_weights` of ``topology`` when known."""
    result: dict[tuple[str, str], dict[str, float]] = defaultdict(lambda: defaultdict(float))
    if topology.has_measured_traffic:
        component = {e.id: e.component for e in topology.executors}
        for src, dst, rate in topology.pair_traffics():
            if src in component and dst in component:
                result[(component[src], component[dst])][src] += rate
        return result
    if weights is None:
        weights = declared_weights(topology)
    for edge in topology.merged_edges:
        sources = topology.executors_of(edge.source)
        for source in sources:
            share = weights[(edge.source, edge.target)] / len(sources)
            result[(edge.source, edge.target)][source.id] += share
    return result


def loadaware_pair_traffic(
    problem: Problem, placement: Placement, weights: Weights | None = None
) -> dict[tuple[str, str], float]:
    """Traffic per executor pair when shuffle-like edges prefer the narrowest locality scope;
    ``weights``: the topology's :func:`~scheduler_py.model.flows.declared_weights` when the
    caller has them already."""
    topology = problem.topology
    nodes = problem.node_by_id  # the racks of the nodes the placement uses are all it needs
    rack_of = {n: nodes[n].rack for n in set(placement.node_of.values()) if n in nodes}
    grouping = {(e.source, e.target): e.grouping for e in topology.merged_edges}
    node_of = placement.node_of
    pairs: dict[tuple[str, str], float] = defaultdict(float)
    for (source_comp, target_comp), outflow in _outflows(topology, weights).items():
        targets = [t.id for t in topology.executors_of(target_comp)]
        shuffle = grouping.get((source_comp, target_comp), "shuffle") in SHUFFLE_LIKE
        for source, rate in outflow.items():
            chosen = locality_scope(source, targets, placement, rack_of) if shuffle else targets
            share = rate / len(chosen)
            for target in chosen:
                pairs[(source, target)] += share
    return {pair: rate for pair, rate in pairs.items() if rate > 0 and pair[0] in node_of}


def locality_scope(
    source: str, targets: list[str], placement: Placement, rack_of: Mapping[str, str]
) -> list[str]:
    """The targets a load-aware shuffle from ``source`` sends to: those in its worker, else on its
    node, else in its rack, else all (the scopes of this module's docstring)."""
    node_of = placement.node_of
    node = node_of.get(source)
    worker = placement.worker_key(source) if node is not None else None
    for same in (
        lambda t: placement.worker_key(t) == worker,
        lambda t: node_of.get(t) == node,
        lambda t: rack_of.get(node_of.get(t, "")) == rack_of.get(node or ""),
    ):
        local = [t for t in targets if t in node_of and same(t)]
        if local:
            return local
    return targets


def crossing_traffic(placement: Placement, pairs: PairTraffic) -> float:
    """The traffic of ``pairs`` between executors on different nodes of ``placement``."""
    node = placement.node_of.get
    return sum(rate for (src, dst), rate in pairs.items() if node(src) != node(dst))


def crossing_workers(placement: Placement, pairs: PairTraffic) -> float:
    """The traffic of ``pairs`` between executors in different workers of ``placement``."""
    node_of, worker = placement.node_of, placement.worker_key
    return sum(
        rate
        for (src, dst), rate in pairs.items()
        if src in node_of and dst in node_of and worker(src) != worker(dst)
    )


def loadaware_internode_traffic(problem: Problem, placement: Placement) -> float:
    """Traffic between executors on different nodes under :func:`loadaware_pair_traffic`."""
    return crossing_traffic(placement, loadaware_pair_traffic(problem, placement))


def uniform_pair_traffic(
    problem: Problem, weights: Weights | None = None
) -> dict[tuple[str, str], float]:
    """Traffic per executor pair with every shuffle uniform (paper 000 §2.2, Eq. 1): measured
    pairs, else each edge's :func:`~scheduler_py.model.flows.declared_weights` (``weights``
    when the caller has them already) split evenly over its executor pairs, whatever the
    placement."""
    topology = problem.topology
    if topology.has_measured_traffic:
        return {(src, dst): rate for src, dst, rate in topology.pair_traffics()}
    if weights is None:
        weights = declared_weights(topology)
    pairs: dict[tuple[str, str], float] = defaultdict(float)
    for edge in topology.merged_edges:
        sources, targets = topology.executors_of(edge.source), topology.executors_of(edge.target)
        rate = weights[(edge.source, edge.target)] / (len(sources) * len(targets))
        for source in sources:
            for target in targets:
                pairs[(source.id, target.id)] += rate
    return {pair: rate for pair, rate in pairs.items() if rate > 0}


def user_internode_share(
    problem: Problem, placement: Placement, pairs: PairTraffic
) -> float | None:
    """The share of the traffic between *user* executors (system streams — acking, metrics —
    carry small tuples, not the payload) that crosses nodes under the routing ``pairs``;
    ``None`` when user executors exchange nothing."""
    topology = problem.topology
    system_components = {c.id for c in topology.components if c.is_system}
    system = {e.id for e in topology.executors if e.component in system_components}
    node = placement.node_of.get
    total = crossing = 0.0
    for (src, dst), rate in pairs.items():
        if system and (src in system or dst in system):
            continue
        total += rate
        if node(src) != node(dst):
            crossing += rate
    return crossing / total if total > 0 else None
