"""The scheduling round: the one loop that turns a cluster into one decision per topology.

Used by the Thrift service every Nimbus round (:func:`plan_round`, from a
:class:`~scheduler_py.scheduling.state.ClusterState`), by ``scheduler-py plan`` and the
benchmarks (:mod:`scheduler_py.scheduling.documents`, from model topologies), and — for one
topology at a time — by the reconfiguration controller's re-plans
(:mod:`scheduler_py.scheduling.proposal`). Per topology, in order:

1. **view**: its model problem, with the capacity the topologies handled before it claimed
   taken off (:mod:`scheduler_py.scheduling.claims`, :mod:`scheduler_py.scheduling.view`);
2. **armed plan**: a plan the reconfiguration controller armed for this (drained) topology
   is answered as PLACE once it passes :func:`~scheduler_py.scheduling.verified.verify`
   against this view; topologies with an armed plan come first in the round, so that their
   plans claim their capacity before any other topology is planned;
3. **keep**: a topology whose executors all run already is KEPT (re-placing running
   topologies is the reconfiguration controller's job);
4. **plan under a budget**: the algorithm (topology conf ``scheduler.brain.algorithm``, else
   the default) plans within the topology's share of the round's time budget
   (:mod:`scheduler_py.scheduling.planning`); past it, its best plan so far or the fallback
   algorithm's plan, with the reason. The plan is verified on the problem the algorithm
   planned (:func:`~scheduler_py.scheduling.verified.planned_view`: ``throughput`` under a
   ``hosts`` cap takes the declared CPU as capacity); a plan on measured costs that the
   executors' declared resources do not fit (what Storm accounts) is made again on the
   declared costs (:func:`~scheduler_py.scheduling.verified.measured_else_declared`);
5. **finish and verify**: the one path every placement for Storm takes
   (:mod:`scheduler_py.scheduling.verified`): a plan with more workers than
   ``topology.workers`` has whole workers merged until it fits
   (:mod:`scheduler_py.scheduling.consolidation`), logical workers are mapped to ports
   keeping executors where they run (:func:`scheduler_py.model.slots.assign_slots`), and the
   result is checked against the view's capacity, ports and ``topology.workers``;
6. **fallback per topology**: anything that goes wrong for one topology — unknown algorithm,
   infeasible, a bug — becomes LEAVE_TO_STORM with the reason; other topologies keep theirs.

Every topology is planned in the round's one planning thread
(:class:`~scheduler_py.scheduling.planning.PlanningWorker`), and its view is derived from the
one before it: only the nodes whose claims changed since, and those where it runs or holds a
slot, are computed again, with the lookups the algorithms need
(:class:`~scheduler_py.scheduling.view.ClaimedNodes`,
:class:`~scheduler_py.model.types.NodeTable`), so that per topology the round does work in
proportion to the topology rather than to the cluster (``docs/evaluation.md``, the Nimbus round
trip: 1,000 executors in 50 topologies on 500 nodes in a third to a half of the time it took).

The round's budget is the shim's timeout (``scheduler.brain.timeout.ms``, sent in the
snapshot) minus a margin for the Thrift exchange and the shim's validation; each topology
still to plan gets an equal share of what is left (at most ``scheduler.brain.budget.ms``).
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from scheduler_py.algorithms import fastest, registry
from scheduler_py.config import keys
from scheduler_py.config.topology_conf import loadaware_messaging
from scheduler_py.model.bound import TrafficBound, traffic_bound
from scheduler_py.model.budget import UNLIMITED, Budget
from scheduler_py.model.cost import Evaluation, violations
from scheduler_py.model.errors import InfeasibleError, SchedulingError
from scheduler_py.model.throughput import renamed_bottleneck
from scheduler_py.model.types import Placement, Problem
from scheduler_py.scheduling.claims import Claims, NodeClaim, problem_usage
from scheduler_py.scheduling.interfaces import ArmedPlan, CostSource
from scheduler_py.scheduling.planning import PlanningWorker, plan_within
from scheduler_py.scheduling.routing import ROUTING_FIELDS, DeferredSummary, routing_summary
from scheduler_py.scheduling.state import ClusterState, ExecutorRun, StormExecutor, StormTopology
from scheduler_py.scheduling.verified import (
    PlanRejected,
    checked,
    from_storm,
    measured_else_declared,
    planned_view,
    verified,
)
from scheduler_py.scheduling.view import Supervisors, TopologyView, storm_view, supervisors_of

log = logging.getLogger(__name__)

PLACE, KEEP, LEAVE = "PLACE", "KEEP", "LEAVE_TO_STORM"
KEEP_MODES = ("running", "running_if_fits", "never")

ROUND_MARGIN_SHARE = 0.25
"""Share of the shim's timeout kept for the Thrift exchange and the shim's own work."""
BOUND_SHARE = 0.5
"""of what is left of a topology's budget after planning, for its traffic bound (the gap)"""
ROUND_BOUND_MIN_SECS = 0.002
"""the traffic bound may take as long as the planning did, and at least this long"""
BOUND_FIELDS = ("bound", "gap", "bound_method", "bound_reason")
"""the summary fields of :meth:`~scheduler_py.model.bound.TrafficBound.summary`"""
BOUND_OPTIONAL_FIELDS = ("bound_reason",)
"""of :data:`BOUND_FIELDS`, those a bound's summary has only when the bound has them"""
ROUND_BOUND_PAIRS = 20_000
"""above this many communicating executor pairs a round reports no bound (listing the pairs
alone would take longer than a round may; ``scheduler-py plan`` bounds any size)"""
DEFAULT_ROUND_BUDGET_SECS = 1.5
"""When the shim does not send its timeout: 75 % of Storm's default 2 s."""


@dataclass(frozen=True)
class RoundConfig:
    """How the brain plans (``scheduler-py serve`` options)."""

    default_algorithm: str = keys.DEFAULT_ALGORITHM
    default_params: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    """algorithm name -> parameters used when that algorithm is chosen"""
    costs: CostSource | None = None
    """where measured costs come from (``serve --zookeeper``); ``None``: declared costs"""
    round_budget_secs: float | None = DEFAULT_ROUND_BUDGET_SECS
    """the round's time budget when the snapshot does not carry the shim's timeout
    (``None``: unlimited)"""
    fallback_algorithm: str | None = "td"
    """places a topology whose algorithm ran out of time (``None``: leave it to Storm)"""
    keep: str = "running"
    """``running``: keep topologies whose executors all run; ``running_if_fits``: only if
    the running placement also fits the capacity; ``never``: plan every topology"""


@dataclass(frozen=True)
class TopologyDecision:
    """What the round decided for one topology (the plan log, the controller and the
    dashboard read it; the service turns it into a Thrift ``TopologyPlan``)."""

    topology_id: str
    decision: str
    """``PLACE``, ``KEEP`` or ``LEAVE_TO_STORM``"""
    algorithm: str = ""
    reason: str = ""
    placement: Mapping[str, tuple[str, int]] = field(default_factory=dict)
    """model executor id -> (supervisor id, port)"""
    storm_placement: Mapping[str, tuple[str, int]] = field(default_factory=dict)
    """Storm executor ``"task_start-task_end"`` -> (supervisor id, port)"""
    summary: Mapping[str, Any] = field(default_factory=dict)
    runs: tuple[ExecutorRun, ...] = ()
    """the executors and their workers, for PLACE"""
    plan: Placement | None = None
    """the model placement (PLACE and KEEP)"""
    error: SchedulingError | None = field(default=None, compare=False)
    """for LEAVE_TO_STORM after a planning failure: the error itself"""

    def log_entry(self) -> dict[str, Any]:
        """The JSON object the plan log keeps (``serve --plan-log``)."""
        return {
            "topology_id": self.topology_id,
            "decision": self.decision,
            "algorithm": self.algorithm,
            "reason": self.reason,
            "placement": {e: list(s) for e, s in self.placement.items()},
            "storm_placement": {e: list(s) for e, s in self.storm_placement.items()},
            "summary": dict(self.summary),
        }


@dataclass(frozen=True)
class RoundItem:
    """One topology for :func:`run_round`: how to build its view given the claims of the
    others, and what (if anything) the reconfiguration controller armed for it."""

    topology_id: str
    build: Callable[[Mapping[str, NodeClaim]], TopologyView]
    armed: ArmedPlan | None = None
    executors: frozenset[tuple[int, int]] | None = None
    """the Storm executors, to check an armed plan against"""


def round_budget(state: ClusterState | None, config: RoundConfig) -> Budget:
    """The budget of a round starting now (see the module docstring)."""
    if state is not None and state.timeout_ms:
        return Budget.of(state.timeout_ms / 1000 * (1 - ROUND_MARGIN_SHARE))
    return Budget.of(config.round_budget_secs)


def plan_round(
    state: ClusterState,
    config: RoundConfig,
    armed: Mapping[str, ArmedPlan] | None = None,
    budget: Budget | None = None,
) -> list[TopologyDecision]:
    """One decision per topology of ``state``, in ``state``'s order."""
    armed = armed or {}
    supervisors = supervisors_of(state)
    items = [
        RoundItem(
            topology.id,
            _storm_builder(state, topology, config.costs, supervisors),
            armed.get(topology.id),
            frozenset(e.key for e in topology.executors) if topology.id in armed else None,
        )
        for topology in state.topologies
    ]
    hosts = {s.id: s.host for s in state.supervisors}
    decisions = run_round(items, config, budget or round_budget(state, config), hosts)
    return decisions + [
        TopologyDecision(topology_id, LEAVE, "", f"cannot read topology: {reason}")
        for topology_id, reason in state.rejected.items()
    ]


def _storm_builder(
    state: ClusterState,
    topology: StormTopology,
    costs: CostSource | None,
    supervisors: Supervisors,
) -> Callable[[Mapping[str, NodeClaim]], TopologyView]:
    return lambda claimed: storm_view(state, topology, claimed, costs, supervisors)


def run_round(
    items: Sequence[RoundItem],
    config: RoundConfig,
    budget: Budget = UNLIMITED,
    hosts: Mapping[str, str] | None = None,
) -> list[TopologyDecision]:
    """The loop of the module docstring over ``items``, in their order; ``hosts``
    (supervisor id -> host) names a plan's bottleneck by host in Storm's status."""
    if config.keep not in KEEP_MODES:
        raise SchedulingError(f"keep must be one of {KEEP_MODES}, found {config.keep!r}")
    # a process's first round imports every algorithm (about 0.2 s): not in a topology's share
    registry.algorithms()
    with PlanningWorker() as worker:
        return _run_items(items, config, budget, worker, hosts or {})


def _run_items(
    items: Sequence[RoundItem],
    config: RoundConfig,
    budget: Budget,
    worker: PlanningWorker,
    hosts: Mapping[str, str],
) -> list[TopologyDecision]:
    """Topologies with an armed plan first — their plans claim their capacity before any
    other topology is planned — then the others in order; decisions in ``items``' order."""
    claims = Claims()
    decided: dict[int, TopologyDecision] = {}
    order = [i for i, item in enumerate(items) if item.armed is not None]
    order += [i for i, item in enumerate(items) if item.armed is None]
    for position, index in enumerate(order):
        item = items[index]
        try:
            view = item.build(claims.of_others(item.topology_id))
        except SchedulingError as error:
            what = "place" if isinstance(error, InfeasibleError) else "read"
            reason = f"cannot {what} topology: {error}"
            decided[index] = TopologyDecision(item.topology_id, LEAVE, "", reason, error=error)
            continue
        decision = _armed(item, view) if item.armed is not None else None
        if decision is None:
            decision = _kept(view, config.keep)
        if decision is None:
            decision = _plan(view, config, budget, len(order) - position, worker, hosts)
        last = position == len(order) - 1  # no topology after it would see its claims
        if decision.plan is not None and decision.decision == PLACE and not last:
            # in Storm's accounting (declared resources), as the available capacity is
            accounted = view.declared or view.problem
            claims.record(
                item.topology_id,
                problem_usage(accounted, view.problem.current),
                problem_usage(accounted, decision.plan),
            )
        decided[index] = decision
    return [decided[i] for i in range(len(items))]


def _share(budget: Budget, left: int, conf: Mapping[str, Any]) -> Budget:
    """An equal share of what is left of the round, at most ``scheduler.brain.budget.ms``."""
    share = budget.share(1 / max(1, left))
    raw = conf.get(keys.BUDGET_MS.name)
    if raw in (None, ""):
        return share
    try:
        own = float(raw) / 1000
    except (TypeError, ValueError) as error:
        raise SchedulingError(
            f"{keys.BUDGET_MS.name} must be a number of milliseconds, found {raw!r}"
        ) from error
    if own <= 0:
        raise SchedulingError(f"{keys.BUDGET_MS.name} must be > 0, found {raw!r}")
    return share if share.remaining() < own else Budget.of(own)


def _kept(view: TopologyView, mode: str) -> TopologyDecision | None:
    if mode == "never" or not view.complete:
        return None
    if mode == "running_if_fits" and violations(view.problem, view.problem.current):
        return None
    reason = "all executors already placed; nothing to do"
    return TopologyDecision(view.topology_id, KEEP, "", reason, plan=view.problem.current)


def choose_algorithm(
    conf: Mapping[str, Any], config: RoundConfig, requested: str | None = None
) -> tuple[str, dict[str, Any]]:
    """The topology's algorithm and parameters: its conf, else the service defaults.

    ``requested`` (a re-plan's algorithm: the operator's, or the reconfiguration setting
    ``algorithm``) replaces the topology's own algorithm; its parameters are then the
    service's for it, without the topology's ``scheduler.brain.params``, which are meant
    for its own algorithm."""
    own = str(conf.get(keys.ALGORITHM.name) or config.default_algorithm)
    algorithm = requested or own
    params = dict(config.default_params.get(algorithm, {}))
    raw = conf.get(keys.PARAMS.name) if algorithm == own else None
    if isinstance(raw, Mapping):
        params.update(raw)
    elif raw not in (None, ""):
        raise SchedulingError(
            f'{keys.PARAMS.name} must be a JSON object such as {{"key": "rs"}}, found {raw!r}'
        )
    if algorithm == "locality" and "loadaware" not in params:
        params["loadaware"] = loadaware_messaging(conf)
    if algorithm == fastest.NAME:
        params = fastest.conf_params(conf) | params
    return algorithm, params


def _plan(
    view: TopologyView,
    config: RoundConfig,
    round_left: Budget,
    topologies_left: int,
    worker: PlanningWorker,
    hosts: Mapping[str, str],
) -> TopologyDecision:
    topology_id = view.topology_id
    algorithm = ""
    try:
        algorithm, params = choose_algorithm(view.conf, config)
        budget = _share(round_left, topologies_left, view.conf)

        def place(on: TopologyView) -> TopologyDecision:
            on = planned_view(on, algorithm, params)
            return _place(on, config, algorithm, params, budget, worker, hosts)

        def falling_back(rejected: PlanRejected) -> None:
            log.info("topology %s: planning on declared costs instead: %s", topology_id, rejected)

        return measured_else_declared(view, place, falling_back)
    except SchedulingError as error:
        reason = f"{algorithm}: {error}" if algorithm else str(error)
        log.warning("topology %s left to Storm: %s", topology_id, reason)
        return TopologyDecision(topology_id, LEAVE, algorithm, reason, error=error)
    except Exception as error:  # a bug in an algorithm must not cost the round
        log.exception("algorithm %s crashed on topology %s", algorithm, topology_id)
        reason = f"{algorithm} failed unexpectedly ({type(error).__name__}: {error})"
        return TopologyDecision(
            topology_id, LEAVE, algorithm, reason, error=SchedulingError(reason)
        )


def _place(
    view: TopologyView,
    config: RoundConfig,
    algorithm: str,
    params: Mapping[str, Any],
    budget: Budget,
    worker: PlanningWorker,
    hosts: Mapping[str, str],
) -> TopologyDecision:
    problem = view.problem
    started = time.perf_counter()
    outcome = plan_within(problem, algorithm, params, budget, config.fallback_algorithm, worker)
    planning_secs = time.perf_counter() - started
    plan = verified(view, outcome.placement)
    placement, workers, evaluation = plan.placement, plan.workers, plan.evaluation
    runs: list[ExecutorRun] = []
    record_map: dict[str, tuple[str, int]] = {}
    storm_map: dict[str, tuple[str, int]] = {}
    if view.free_ports is not None:
        executor_of = view.storm_executors
        for eid, slot in sorted(placement.slot_of.items()):
            key = view.storm_executor[eid]
            component = view.component_of[key]
            executor = executor_of.get(key)
            if executor is None or executor.component != component:
                executor = StormExecutor(*key, component)
            where = (slot.node, slot.port)
            runs.append(ExecutorRun(executor, *where))
            record_map[eid] = where
            storm_map[f"{key[0]}-{key[1]}"] = where
    predicted = fastest.predicted_summary(outcome.placement.report)
    bound: TrafficBound | None = None
    against_bound = ""
    if not predicted:  # traffic is the plan's objective: its gap belongs in Storm's status
        bound = _round_bound(problem, evaluation, _bound_budget(budget, planning_secs))
        gap = bound.gap(evaluation.imc_gain)
        if gap is not None and bound.value is not None:
            against_bound = f" (gap ≤ {gap:.0%} to the bound {bound.value:.3g})"
    reason = (
        f"placed by {outcome.algorithm} on {evaluation.nodes_used} node(s), {workers} "
        f"worker(s); collocated traffic {evaluation.imc_gain:.3g} of "
        f"{evaluation.total_traffic:.3g}{against_bound}, max node CPU "
        f"{evaluation.max_node_load:.0f}%; costs: {view.costs}"
    )
    merged = placement.report.get("workers_merged")
    if merged:
        reason = f"{reason}; workers merged {merged} to meet topology.workers"
    if predicted:  # the bottleneck by host in the status (the summary keeps the node id)
        on_host = renamed_bottleneck(str(predicted.get("bottleneck") or ""), hosts)
        reason = f"{reason}; {fastest.predicted_text(predicted | {'bottleneck': on_host})}"
    if outcome.note:
        reason = f"{outcome.note}; {reason}"
    ready = (
        evaluation.summary()
        | (bound.summary(evaluation.imc_gain) if bound is not None else {})
        | {"seconds": placement.report.get("seconds", 0.0), "costs": view.costs}
        | predicted
    )
    if outcome.note:
        ready["budget_note"] = outcome.note
    if merged:
        ready["workers_merged"] = merged
    deferred: tuple[str, ...] = ROUTING_FIELDS
    optional: tuple[str, ...] = ()
    if bound is None:  # computed later: a field the bound may not have is left out then
        optional = BOUND_OPTIONAL_FIELDS
        deferred += tuple(f for f in BOUND_FIELDS if f not in optional)
    later = functools.partial(
        _deferred_fields, problem, placement, evaluation, bound, planning_secs
    )
    summary = DeferredSummary(ready, deferred, later, optional)
    return TopologyDecision(
        problem.topology.id,
        PLACE,
        outcome.algorithm,
        reason,
        record_map,
        storm_map,
        summary,
        tuple(runs),
        placement,
    )


def _deferred_fields(
    problem: Problem,
    placement: Placement,
    evaluation: Evaluation,
    bound: TrafficBound | None,
    planning_secs: float,
) -> dict[str, Any]:
    """The summary fields computed on first read, after the reply has gone to Nimbus
    (:class:`~scheduler_py.scheduling.routing.DeferredSummary`): the routing numbers, and the
    traffic bound when the plan's objective is throughput (its status shows the predicted rate
    instead; the bound may take as long as the planning did, as in :func:`_bound_budget`)."""
    fields: dict[str, Any] = dict(routing_summary(problem, placement))
    if bound is None:
        longest = Budget.of(max(ROUND_BOUND_MIN_SECS, planning_secs))
        fields |= _round_bound(problem, evaluation, longest).summary(evaluation.imc_gain)
    return fields


def _armed_checked(view: TopologyView, armed: ArmedPlan) -> Placement:
    """The armed plan verified on ``view``, or on its declared costs when it breaks the
    measured ones (:func:`_armed`)."""

    def check(on: TopologyView) -> Placement:
        return checked(on, from_storm(on, armed.placements, armed.algorithm)).placement

    return measured_else_declared(view, check)


def _round_bound(problem: Problem, evaluation: Evaluation, budget: Budget) -> TrafficBound:
    """The plan's traffic bound (:func:`traffic_bound`); a plan that keeps all the traffic
    on-node is its own bound, which takes no listing of pairs (a word count that fits one
    node: 50 such topologies spent ~3 ms of a round listing them)."""
    if evaluation.imc_gain >= evaluation.total_traffic:
        return TrafficBound(evaluation.total_traffic, "all traffic kept")
    return traffic_bound(problem, budget, ROUND_BOUND_PAIRS)


def _bound_budget(budget: Budget, planning_secs: float) -> Budget:
    """The traffic bound's time: :data:`BOUND_SHARE` of what is left of the topology's budget,
    and no longer than the planning took (at least :data:`ROUND_BOUND_MIN_SECS`), so that the
    report never costs the round more than the plan."""
    share = budget.share(BOUND_SHARE)
    longest = max(ROUND_BOUND_MIN_SECS, planning_secs)
    return share if share.remaining() <= longest else Budget.of(longest)


def _armed(item: RoundItem, view: TopologyView) -> TopologyDecision | None:
    """PLACE the armed plan if it still covers exactly the topology's executors and passes
    :func:`~scheduler_py.scheduling.verified.verify` against what this round's view leaves
    it (capacity the topologies before it claimed, ports, ``topology.workers``). On measured
    costs it is checked again on the declared ones when it breaks the measured ones, as a plan
    of the round is made again on them (:func:`_plan`): a re-plan made on the declared costs
    (``throughput`` under a ``hosts`` cap plans on them from the start) would otherwise be
    refused round after round while its topology stays paused."""
    armed = item.armed
    assert armed is not None
    planned = {(start, end) for start, end, _, _, _ in armed.placements}
    if item.executors is not None and planned != item.executors:
        log.warning(
            "topology %s: the armed reconfiguration plan no longer matches its executors; "
            "ignoring it",
            item.topology_id,
        )
        return None
    try:
        plan = _armed_checked(view, armed)
    except SchedulingError as error:
        log.warning(
            "topology %s: the armed reconfiguration plan no longer fits; ignoring it: %s",
            item.topology_id,
            error,
        )
        return None
    runs = tuple(
        ExecutorRun(StormExecutor(start, end, component), supervisor, port)
        for start, end, component, supervisor, port in armed.placements
    )
    storm_map = {f"{s}-{e}": (sup, port) for s, e, _, sup, port in armed.placements}
    return TopologyDecision(
        item.topology_id,
        PLACE,
        armed.algorithm,
        armed.reason,
        placement={e: (slot.node, slot.port) for e, slot in plan.slot_of.items()},
        storm_placement=storm_map,
        summary=armed.summary,
        runs=runs,
        plan=plan,
    )
