"""Planning model topologies that share a cluster, outside Storm: ``scheduler-py plan``'s
JSON problem documents, the benchmarks and the tests.

:func:`plan_cluster` hands every topology to the one scheduling round
(:func:`scheduler_py.scheduling.round.run_round`), so a document is planned exactly as a
Nimbus round would plan the same topologies: in a documented order, each topology seeing
the nodes minus what every *other* topology occupies at that moment — the new plan of each
one planned before it, the current placement of each other one —, each plan verified, and a
topology that cannot be planned recorded in ``failures`` with its operator-facing reason
(it keeps occupying its current placement, if any). The order (``order``):

* ``"given"`` (default) — the order of the ``topologies`` argument (the caller's priority;
  R-Storm's two-topology run submits PageLoad, then Processing, paper 003 §6);
* ``"id"`` — sorted by topology id (Storm's ``Topologies`` map order);
* ``"cpu_desc"`` — the largest total CPU first (first-fit decreasing at the topology level).

With ``keep_current=True`` a topology whose current placement is complete and still fits
the capacity left to it is kept as it is.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from scheduler_py.config import keys
from scheduler_py.model.budget import UNLIMITED, Budget
from scheduler_py.model.cost import Evaluation, evaluate
from scheduler_py.model.errors import SchedulingError
from scheduler_py.model.io_json import current_from_json, nodes_from_json, topology_from_json
from scheduler_py.model.types import Node, Placement, Problem, Topology
from scheduler_py.scheduling.claims import NodeClaim, Usage, subtract, usage_of
from scheduler_py.scheduling.round import PLACE, RoundConfig, RoundItem, run_round
from scheduler_py.scheduling.view import TopologyView, document_view

AlgorithmChoice = str | tuple[str, Mapping[str, Any]]
"""An algorithm name, or ``(name, params)``."""
AlgorithmOf = (
    AlgorithmChoice | Mapping[str, AlgorithmChoice] | Callable[[Topology], AlgorithmChoice]
)

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


def _choice_of(algorithm_of: AlgorithmOf, topology: Topology) -> tuple[str, dict[str, Any]]:
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
    algorithm_of: AlgorithmOf,
    current: Mapping[str, Placement] | None = None,
    *,
    order: str = "given",
    keep_current: bool = False,
    budget: Budget = UNLIMITED,
) -> ClusterPlan:
    """Plan every topology of a shared cluster, one at a time (see the module docstring).

    ``nodes`` carry the capacity available to *these* topologies; ``algorithm_of`` is a
    registered algorithm name for all, a mapping topology id → name, or a function of the
    topology, each choice optionally ``(name, params)``; ``current`` maps topology ids to
    their running placements.

    >>> from scheduler_py.model import Component, Node, Topology
    >>> nodes = [Node("n1", 100), Node("n2", 100)]
    >>> a = Topology("a", (Component("s", 1, 80, is_spout=True),))
    >>> b = Topology("b", (Component("s", 1, 80, is_spout=True),))
    >>> result = plan_cluster(nodes, [a, b], "rstorm")
    >>> sorted(p.nodes_used.pop() for p in result.placements.values())
    ['n1', 'n2']
    """
    nodes = tuple(nodes)
    ids = [t.id for t in topologies]
    if len(set(ids)) != len(ids):
        raise SchedulingError(f"plan_cluster: duplicate topology ids in {ids}")
    ordered = _ordered(topologies, order)
    current = {tid: p for tid, p in (current or {}).items() if tid in set(ids)}
    by_id = {t.id: t for t in topologies}
    current_usage = {tid: usage_of(nodes, by_id[tid], p) for tid, p in current.items()}

    def builder(topology: Topology) -> Callable[[Mapping[str, NodeClaim]], TopologyView]:
        def build(claimed: Mapping[str, NodeClaim]) -> TopologyView:
            algorithm, params = _choice_of(algorithm_of, topology)
            others = {tid: u for tid, u in current_usage.items() if tid != topology.id}
            conf = {keys.ALGORITHM.name: algorithm, keys.PARAMS.name: params}
            return document_view(nodes, topology, others, current.get(topology.id), claimed, conf)

        return build

    items = [RoundItem(t.id, builder(t)) for t in ordered]
    config = RoundConfig(
        round_budget_secs=None,
        fallback_algorithm=None,
        keep="running_if_fits" if keep_current else "never",
    )
    decisions = run_round(items, config, budget)
    placements: dict[str, Placement] = {}
    failures: dict[str, SchedulingError] = {}
    kept: set[str] = set()
    final_usage: dict[str, Mapping[str, Usage]] = dict(current_usage)
    for decision in decisions:
        if decision.plan is None:
            failures[decision.topology_id] = decision.error or SchedulingError(decision.reason)
            continue
        placements[decision.topology_id] = decision.plan
        if decision.decision == PLACE:
            final_usage[decision.topology_id] = usage_of(
                nodes, by_id[decision.topology_id], decision.plan
            )
        else:
            kept.add(decision.topology_id)
    return ClusterPlan(
        placements=placements,
        failures=failures,
        order=tuple(t.id for t in ordered),
        kept=frozenset(kept),
        remaining=subtract(nodes, final_usage.values()),
    )


def plan_document(
    document: Mapping[str, Any],
    algorithm: str,
    params: Mapping[str, Any] | None = None,
    budget: Budget = UNLIMITED,
) -> list[tuple[Topology, Placement, Evaluation]]:
    """Plan every topology of a validated problem document (``scheduler-py plan``), in
    document order.

    A topology's own ``algorithm``/``params`` fields override the command-line choice.
    Raises the first failing topology's :class:`SchedulingError` (an infeasible document is
    an error as a whole).
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

    result = plan_cluster(nodes, topologies, choice, current, budget=budget)
    for topology_id in result.order:
        if topology_id in result.failures:
            raise result.failures[topology_id]
    return [
        (t, result.placements[t.id], evaluate(Problem(nodes, t), result.placements[t.id]))
        for t in topologies
    ]
