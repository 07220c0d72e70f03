"""A re-plan of a running topology, evaluated against the placement it would replace.

The reconfiguration controller (``scheduler_py/reconfig/controller.py``) and the operator's
``scheduler-py replan`` use it. Pure: a view in, :class:`Proposal` out. The plan goes the one
way every placement for Storm goes (:mod:`scheduler_py.scheduling.verified`), churn-minimal:
the algorithm's nodes are renamed onto supervisors (:func:`~scheduler_py.model.slots.
relabel_nodes`) and its workers mapped onto ports so that as many executors as possible stay
in the worker they run in, then it is verified against the capacity the view sees; the
proposal counts the workers that restart (:func:`~scheduler_py.model.slots.
restarted_workers`).

Both placements are scored by :func:`~scheduler_py.scheduling.verified.score`, the traffic
*as Storm routes it*: measured pair traffic records the routing of the *running* placement,
which a new placement changes, so scoring the candidate on those pairs would credit it with
collocating pairs Storm no longer uses. A re-plan by ``throughput`` is also scored on that
algorithm's objective, the throughput model's rate of each placement
(:attr:`Proposal.rates`), and judged on it (:func:`scheduler_py.reconfig.trigger.judge`).
"""

from __future__ import annotations

import logging
import math
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

from scheduler_py.algorithms import fastest
from scheduler_py.model.budget import UNLIMITED, Budget
from scheduler_py.model.cost import Evaluation
from scheduler_py.model.errors import SchedulingError
from scheduler_py.model.slots import restarted_workers
from scheduler_py.model.throughput import Throughput, renamed_bottleneck
from scheduler_py.model.types import Placement, WorkerSlot
from scheduler_py.scheduling.planning import plan_within
from scheduler_py.scheduling.state import StormPlacement
from scheduler_py.scheduling.verified import (
    PlanRejected,
    VerifiedPlan,
    measured_else_declared,
    placement_from_slots,
    planned_view,
    routing_of,
    score,
    storm_rows,
    verified,
)
from scheduler_py.scheduling.view import TopologyView

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PredictedRates:
    """The throughput model's answer for the running placement and for the new plan, per
    tuple size (:func:`~scheduler_py.algorithms.fastest.predicted_rates`)."""

    before: Mapping[float, Throughput]
    after: Mapping[float, Throughput]

    @property
    def ratio(self) -> float:
        """The new plan's rate over the running placement's at the tuple size where it
        gains least (``inf`` when the running placement's rate is 0 and the new one's is
        not; an unbounded rate counts as equal to another unbounded one)."""
        return min(_ratio(self.before[size].rate, self.after[size].rate) for size in self.before)

    def shown(self) -> tuple[Throughput, Throughput]:
        """Before and after at the size the status shows (:data:`~scheduler_py.algorithms.
        fastest.REPORTED_PAYLOAD`, or the only size)."""
        size = fastest.REPORTED_PAYLOAD if fastest.REPORTED_PAYLOAD in self.before else None
        if size is None:
            size = next(iter(self.before))
        return self.before[size], self.after[size]

    def summary(self) -> dict[str, Any]:
        before, after = self.shown()
        return {
            "predicted_throughput_before": _finite_or_none(before.rate),
            "predicted_throughput_after": _finite_or_none(after.rate),
            "bottleneck_before": before.bottleneck,
            "bottleneck_after": after.bottleneck,
            "predicted_ratio": _finite_or_none(self.ratio),
        }


def _ratio(before: float, after: float) -> float:
    if not math.isfinite(before):
        return 1.0 if not math.isfinite(after) else 0.0
    if before <= 0:
        return math.inf if after > 0 else 1.0
    return after / before


def _finite_or_none(value: float) -> float | None:
    return value if math.isfinite(value) else None


@dataclass(frozen=True)
class Proposal:
    view: TopologyView
    algorithm: str
    placement: Placement
    running: Evaluation
    candidate: Evaluation
    workers_restarted: int
    workers_stopped: int
    hosts: Mapping[str, str] = field(default_factory=dict)
    """supervisor id -> host, for reports"""
    routing: str = "uniform"
    """how ``running`` and ``candidate`` route shuffles: ``loadaware`` or ``uniform``"""
    params: Mapping[str, Any] = field(default_factory=dict)
    """the algorithm's parameters, as it planned with them"""

    @property
    def objective(self) -> str:
        """What the re-plan is judged on: ``throughput`` (the throughput model's rate, for a
        re-plan by ``throughput``) or ``traffic`` (inter-worker traffic, for the others)."""
        return "throughput" if self.rates is not None else "traffic"

    @cached_property
    def rates(self) -> PredictedRates | None:
        """The model's rates of the running placement and of this plan, for a re-plan by
        ``throughput`` (``None`` for another algorithm, or when the model cannot score the
        running placement: the re-plan is then judged on traffic, and the log says why)."""
        if self.algorithm != fastest.NAME:
            return None
        problem = self.view.problem
        try:
            before = fastest.predicted_rates(
                problem, running_placement(self.view).node_of, self.params
            )
            after = fastest.predicted_rates(problem, self.placement.node_of, self.params)
        except (SchedulingError, KeyError, ValueError) as error:
            log.warning(
                "topology %s: the throughput model cannot score the running placement "
                "against the re-plan (%s: %s); judging it on inter-worker traffic instead",
                self.topology_id,
                type(error).__name__,
                error,
            )
            return None
        return PredictedRates(self._on_hosts(before), self._on_hosts(after))

    def rates_of(self, placement: Placement) -> PredictedRates | None:
        """:attr:`rates` with ``placement``, another plan of the same topology (a stage of this
        one, ``scheduler_py/reconfig/staging.py``), in place of this plan; the running
        placement's rates are the ones :attr:`rates` scored. ``None`` where :attr:`rates` is, or
        when the model cannot score ``placement``."""
        rates = self.rates
        if rates is None:
            return None
        try:
            after = fastest.predicted_rates(self.view.problem, placement.node_of, self.params)
        except (SchedulingError, KeyError, ValueError) as error:
            log.warning(
                "topology %s: the throughput model cannot score a stage of the re-plan (%s: %s)",
                self.topology_id,
                type(error).__name__,
                error,
            )
            return None
        return PredictedRates(rates.before, self._on_hosts(after))

    def _on_hosts(self, rates: Mapping[float, Throughput]) -> dict[float, Throughput]:
        """``rates`` with each bottleneck's supervisor id replaced by its host, for reports."""
        return {
            size: replace(t, bottleneck=renamed_bottleneck(t.bottleneck, self.hosts))
            for size, t in rates.items()
        }

    @property
    def topology_id(self) -> str:
        return self.view.problem.topology.id

    @property
    def unchanged(self) -> bool:
        return dict(self.placement.slot_of) == dict(self.view.current_slots)

    @property
    def storm_placement(self) -> list[StormPlacement]:
        return storm_rows(self.view, self.placement)

    def workers(self) -> set[str]:
        """``supervisor:port`` of every worker of the new plan."""
        return {f"{s.node}:{s.port}" for s in self.placement.slot_of.values()}

    def restarting(self) -> set[str]:
        """``supervisor:port`` of the new plan's workers whose executor set changes."""
        before = _members(self.view.current_slots)
        after = _members(self.placement.slot_of)
        return {f"{s.node}:{s.port}" for s, ex in after.items() if before.get(s) != ex}

    def _where(self, slot: WorkerSlot) -> str:
        return f"{self.hosts.get(slot.node, slot.node)}:{slot.port}"

    def report(self) -> dict[str, Any]:
        """What ``scheduler-py replan`` prints and the history keeps."""
        moves = []
        for eid, slot in sorted(self.placement.slot_of.items()):
            start, end = self.view.storm_executor[eid]
            now = self.view.current_slots.get(eid)
            moves.append(
                {
                    "executor": eid,
                    "tasks": f"{start}-{end}",
                    "from": self._where(now) if now else None,
                    "to": self._where(slot),
                }
            )
        return {
            "topology": self.view.problem.topology.name,
            "topology_id": self.topology_id,
            "algorithm": self.algorithm,
            "costs": self.view.costs,
            "routing": self.routing,
            "unchanged": self.unchanged,
            "workers_restarted": self.workers_restarted,
            "workers_stopped": self.workers_stopped,
            "workers_before": self.running.workers_used,
            "workers_after": self.candidate.workers_used,
            "total_traffic": self.running.total_traffic,
            "interworker_before": self.running.interworker_traffic,
            "interworker_after": self.candidate.interworker_traffic,
            "predicted_gain": self.running.interworker_traffic - self.candidate.interworker_traffic,
            "max_node_utilisation_before": self.running.max_node_utilisation,
            "max_node_utilisation_after": self.candidate.max_node_utilisation,
            "violations_before": list(self.running.violations),
            "objective": self.objective,
            **(self.rates.summary() if self.rates is not None else {}),
            "moves": moves,
        }


def _members(slots: Mapping[str, WorkerSlot]) -> dict[WorkerSlot, frozenset[str]]:
    grouped: dict[WorkerSlot, set[str]] = defaultdict(set)
    for executor, slot in slots.items():
        grouped[slot].add(executor)
    return {slot: frozenset(executors) for slot, executors in grouped.items()}


def running_placement(view: TopologyView) -> Placement:
    """The topology's current assignment as a model placement (workers = ports)."""
    return placement_from_slots(view.problem.topology.id, view.current_slots, "running")


def propose(
    view: TopologyView,
    algorithm: str,
    params: Mapping[str, Any],
    hosts: Mapping[str, str] | None = None,
    budget: Budget = UNLIMITED,
) -> Proposal:
    """Plan ``view``'s topology again with ``algorithm`` and compare with what runs now.

    Raises :class:`SchedulingError` when the topology is not fully placed (the scheduling
    round, not a reconfiguration, handles that), when the algorithm fails, or when the plan
    does not pass :func:`~scheduler_py.scheduling.verified.verify` (capacity, ports,
    ``topology.workers``) — a plan on measured costs that breaks the declared resources Storm
    accounts is first made again on the declared costs, as a round does (the proposal's
    ``view.costs`` then says so). ``budget`` bounds the algorithm
    (:func:`~scheduler_py.scheduling.planning.plan_within`; no fallback: an operator asked
    for this algorithm).
    """
    problem = view.problem
    if not view.complete:
        missing = len(set(view.storm_executor) - set(view.current_slots))
        raise SchedulingError(
            f"topology {problem.topology.id}: {missing} executor(s) are not running; the "
            "next scheduling round places them, re-planning waits until it has"
        )

    def replan(on: TopologyView) -> tuple[TopologyView, VerifiedPlan]:
        on = planned_view(on, algorithm, params)
        outcome = plan_within(on.problem, algorithm, dict(params), budget, fallback=None)
        return on, verified(on, outcome.placement, relabel=True)

    def falling_back(rejected: PlanRejected) -> None:
        log.info(
            "topology %s: re-planning on declared costs instead: %s", problem.topology.id, rejected
        )

    view, plan = measured_else_declared(view, replan, falling_back)
    return proposal_of(view, algorithm, plan, hosts, params)


def proposal_of(
    view: TopologyView,
    algorithm: str,
    plan: VerifiedPlan,
    hosts: Mapping[str, str] | None = None,
    params: Mapping[str, Any] | None = None,
) -> Proposal:
    """The :class:`Proposal` of a verified plan (made by ``algorithm`` with ``params``)
    against what runs now."""
    before = set(view.current_slots.values())
    after = set(plan.placement.slot_of.values())
    return Proposal(
        view=view,
        algorithm=algorithm,
        placement=plan.placement,
        running=score(view, running_placement(view)),
        candidate=plan.score,
        workers_restarted=restarted_workers(view.current_slots, plan.placement.slot_of),
        workers_stopped=len(before - after),
        hosts=dict(hosts or {}),
        routing=routing_of(view),
        params=dict(params or {}),
    )
