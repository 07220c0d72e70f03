"""The one path from a plan to a placement that may reach Storm: finish, verify, score.

Every placement the brain answers ``PLACE`` with passes here: the round's plans
(:mod:`scheduler_py.scheduling.round`), re-plans of running topologies — automatic and the
operator's (:mod:`scheduler_py.scheduling.proposal`) — each stage of a staged re-plan
(``scheduler_py/reconfig/staging.py``) and the armed plan a round answers for a drained
topology (:mod:`scheduler_py.scheduling.round`, which also claims its capacity,
:mod:`scheduler_py.scheduling.claims`).

1. **finish** (:func:`finish`): a plan with more workers than ``topology.workers`` has whole
   workers merged (:mod:`scheduler_py.scheduling.consolidation`); on request its nodes are
   renamed onto the nodes its executors run on (:func:`~scheduler_py.model.slots.
   relabel_nodes`); its logical workers are mapped onto ports
   (:func:`~scheduler_py.model.slots.assign_slots`).
2. **verify** (:func:`verify`): the placement covers exactly the topology's executors, fits
   every node's CPU, memory and free slots as the topology's view sees them — Storm's
   available resources plus the topology's own usage, minus what the other topologies of the
   round claimed — uses only ports the topology may use there, and no more workers than
   ``topology.workers`` (Storm rejects more). With measured costs the executors' *declared*
   CPU and memory must fit too, as Storm accounts them and the shim checks
   (``storm_plugin/.../PlanValidator.java``). Anything else raises :class:`PlanRejected`.
3. **score** (:func:`score`): one traffic model for every number a decision compares — the
   traffic as Storm routes it: with load-aware messaging on (Storm's default,
   :mod:`scheduler_py.config.topology_conf`) a shuffle goes to the narrowest locality scope
   that holds a target (:mod:`scheduler_py.model.loadaware`), so every placement's inter-worker and
   inter-node traffic are those of its own routing; with it off, the uniform split of
   :mod:`scheduler_py.model.cost`.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from scheduler_py.algorithms import registry
from scheduler_py.config.topology_conf import loadaware_messaging
from scheduler_py.model.cost import Evaluation, evaluate, violations
from scheduler_py.model.errors import SchedulingError
from scheduler_py.model.loadaware import crossing_traffic, crossing_workers, loadaware_pair_traffic
from scheduler_py.model.slots import assign_slots, relabel_nodes
from scheduler_py.model.throughput import measured_gains, measured_work_seconds
from scheduler_py.model.types import Placement, Problem, WorkerSlot
from scheduler_py.scheduling.consolidation import within_workers, worker_count
from scheduler_py.scheduling.state import StormPlacement
from scheduler_py.scheduling.view import TopologyView

Attempt = TypeVar("Attempt")


class PlanRejected(SchedulingError):
    """A placement that must not reach Storm; the message says what it breaks, and
    :attr:`problems` lists each thing it breaks (the whole message when not given)."""

    def __init__(self, message: str, problems: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.problems: list[str] = list(problems) or [message]

    def __reduce__(self) -> tuple:
        return (type(self), (str(self), self.problems))

    @property
    def brief(self) -> str:
        """The first problem and how many more there were, for a status line."""
        more = len(self.problems) - 1
        return f"{self.problems[0]}; and {more} more" if more else self.problems[0]


@dataclass(frozen=True)
class VerifiedPlan:
    """A placement that passed :func:`verify`, with its evaluation and score."""

    placement: Placement
    workers: int
    """the workers (slots) it uses; logical workers when ports are not modelled"""
    evaluation: Evaluation
    """:func:`~scheduler_py.model.cost.evaluate` of the placement (the uniform split; the
    round's plan log and its traffic bound use it)"""
    loadaware: bool
    """whether :attr:`score` routes shuffles locality-first
    (:mod:`scheduler_py.config.topology_conf`)"""
    problem: Problem = field(repr=False, compare=False)

    @property
    def routing(self) -> str:
        """How :attr:`score` routes shuffles: ``loadaware`` or ``uniform``."""
        return "loadaware" if self.loadaware else "uniform"

    @functools.cached_property
    def score(self) -> Evaluation:
        """:func:`score` of the placement, computed when first read (a Nimbus round reads
        it only through the deferred routing fields of its summary)."""
        return _routed(self.problem, self.placement, self.evaluation, self.loadaware)


def check_workers(placement: Placement, allowed: int) -> int:
    """The number of workers (slots) ``placement`` uses; more than ``allowed``
    (``topology.workers``, which Storm enforces) raises :class:`PlanRejected`."""
    workers = len({(slot.node, slot.port) for slot in placement.slot_of.values()})
    if workers > allowed:
        raise PlanRejected(
            f"the plan needs {workers} workers but topology.workers is {allowed} (Storm "
            "rejects more); raise topology.workers"
        )
    return workers


def finish(view: TopologyView, placement: Placement, relabel: bool = False) -> Placement:
    """Step 1 of the module docstring: workers merged to ``topology.workers``, nodes renamed
    onto where the executors run (``relabel``), ports assigned (when the view models them)."""
    problem = view.problem
    placement = within_workers(problem, placement, problem.topology.workers)
    if relabel:
        placement = relabel_nodes(problem, placement, view.current_slots)
    if view.free_ports is not None:
        placement = assign_slots(placement, view.free_ports, view.current_slots)
    return placement


def verify(view: TopologyView, placement: Placement, evaluation: Evaluation | None = None) -> int:
    """Step 2 of the module docstring; returns the workers the placement uses.
    ``evaluation``: the placement's, when the caller has it (its violations are used)."""
    problem = view.problem
    found = (
        list(evaluation.violations) if evaluation is not None else violations(problem, placement)
    )
    if view.declared is not None:  # measured costs: what Storm and the shim account too
        found.extend(
            f"declared resources (as Storm accounts them): {line}"
            for line in violations(view.declared, placement)
            if "exceeds capacity" in line
        )
    if view.free_ports is None:
        workers = worker_count(placement)
        if workers > max(1, problem.topology.workers):
            found.append(
                f"the plan needs {workers} workers but topology.workers is "
                f"{problem.topology.workers}"
            )
    else:
        if set(placement.slot_of) != set(placement.node_of):
            found.append("some executors have no worker slot")
        found.extend(_port_problems(view, placement))
        try:
            workers = check_workers(placement, max(1, problem.topology.workers))
        except PlanRejected as error:
            found.append(str(error))
            workers = 0
    if found:
        raise PlanRejected(
            f"the plan for topology {problem.topology.id} does not fit: {'; '.join(found)}",
            found,
        )
    return workers


def _port_problems(view: TopologyView, placement: Placement) -> list[str]:
    """Slots on ports the topology may not use (another topology's, or not a slot)."""
    free = view.free_ports or {}
    running = {(slot.node, slot.port) for slot in view.current_slots.values()}
    bad = sorted(
        {
            (s.node, s.port)
            for s in placement.slot_of.values()
            if s.port not in free.get(s.node, ()) and (s.node, s.port) not in running
        }
    )
    if not bad:
        return []
    shown = ", ".join(f"{node}:{port}" for node, port in bad)
    return [f"slot(s) {shown} are not free for this topology"]


def score(view: TopologyView, placement: Placement) -> Evaluation:
    """Step 3 of the module docstring."""
    return routed_evaluation(view.problem, placement, loadaware_messaging(view.conf))


def routing_of(view: TopologyView) -> str:
    """How :func:`score` routes the view's shuffles."""
    return "loadaware" if loadaware_messaging(view.conf) else "uniform"


def routed_evaluation(problem: Problem, placement: Placement, loadaware: bool) -> Evaluation:
    """:func:`~scheduler_py.model.cost.evaluate`, with the traffic of Storm's locality-aware
    routing when ``loadaware``: total, inter-node and inter-worker all from
    :func:`~scheduler_py.model.loadaware.loadaware_pair_traffic` (declared edges weighed by
    their flows), so a gain and δ × total are in the same unit."""
    return _routed(problem, placement, evaluate(problem, placement), loadaware)


def _routed(
    problem: Problem, placement: Placement, evaluation: Evaluation, loadaware: bool
) -> Evaluation:
    """``evaluation`` with the traffic fields of :func:`routed_evaluation`."""
    if not loadaware:
        return evaluation
    pairs = loadaware_pair_traffic(problem, placement)
    total = sum(pairs.values())
    internode = crossing_traffic(placement, pairs)
    return replace(
        evaluation,
        imc_gain=max(total - internode, 0.0),
        internode_traffic=internode,
        interworker_traffic=crossing_workers(placement, pairs),
        total_traffic=total,
    )


def verified(view: TopologyView, placement: Placement, relabel: bool = False) -> VerifiedPlan:
    """:func:`finish`, :func:`verify` and :func:`score` ``placement``."""
    placement = finish(view, placement, relabel)
    return checked(view, placement)


def checked(view: TopologyView, placement: Placement) -> VerifiedPlan:
    """:func:`verify` and :func:`score` a placement that already has its slots (a stage of
    a plan, an armed plan, the running placement)."""
    evaluation = evaluate(view.problem, placement)
    workers = verify(view, placement, evaluation)
    loadaware = loadaware_messaging(view.conf)
    return VerifiedPlan(placement, workers, evaluation, loadaware, view.problem)


def planned_view(view: TopologyView, algorithm: str, params: Mapping[str, Any]) -> TopologyView:
    """``view`` on the problem ``algorithm`` plans it as with ``params``
    (:func:`~scheduler_py.algorithms.registry.planned_problem`), so that its plan is verified
    on what it was planned on: ``throughput`` under a ``hosts`` cap plans on the declared CPU
    as each executor's capacity (:func:`~scheduler_py.algorithms.host_cap.declared_capacity`,
    the measured CPU per tuple kept for its model), and a check on the measured CPU would
    refuse the plan and have it made again on :func:`declared_view`. The declared resources
    are still checked (:func:`verify`); the costs note says the CPU capacity was the
    declared one."""
    problem = registry.planned_problem(algorithm, view.problem, params)
    if problem is view.problem:
        return view
    measured_cpu = bool(view.problem.topology.executor_cpu)
    declared_cpu = measured_cpu and not problem.topology.executor_cpu
    note = "; CPU capacity as declared" if declared_cpu else ""
    return replace(view, problem=problem, costs=f"{view.costs}{note}")


def measured_else_declared(
    view: TopologyView,
    attempt: Callable[[TopologyView], Attempt],
    falling_back: Callable[[PlanRejected], None] | None = None,
) -> Attempt:
    """``attempt(view)``; when the view has measured costs and the attempt raises
    :class:`PlanRejected`, ``attempt`` again on :func:`declared_view` (after
    ``falling_back(rejected)``, which logs it): a plan on the measured costs that breaks the
    declared resources Storm accounts is made — or an armed plan checked — again on the
    declared costs, by a round, a re-plan and an armed plan alike."""
    try:
        return attempt(view)
    except PlanRejected as rejected:
        if view.declared is None:
            raise
        if falling_back is not None:
            falling_back(rejected)
        return attempt(declared_view(view, rejected))


def declared_view(view: TopologyView, why: PlanRejected) -> TopologyView:
    """``view`` with the topology's declared resources and uniform traffic in place of its
    measured costs, on the same nodes (a round plans again on it when a plan on the measured
    costs does not fit the declared resources, :func:`verify`). The measured CPU per tuple
    stays (:attr:`~scheduler_py.model.types.Topology.work_seconds`), and so do the measured
    edge gains, the tuples an edge carries per tuple its source handles
    (:attr:`~scheduler_py.model.types.Topology.edge_gains`), and the measured tuple size
    (:attr:`~scheduler_py.model.types.Topology.payload_bytes`): the declared resources are what
    Storm accounts, not what a tuple costs, and the throughput model scores plans on the
    latter. Traffic volumes (for the traffic objectives and capacity) are the declared ones.
    Its costs note, which Storm shows in the topology's status, names the first thing the plan
    on measured costs broke and how many more there were (:attr:`PlanRejected.brief`)."""
    assert view.declared is not None
    measured = view.problem.topology
    work = measured_work_seconds(measured)
    gains = measured_gains(measured)
    topology = replace(
        view.declared.topology,
        work_seconds=work,
        edge_gains=gains,
        payload_bytes=measured.payload_bytes,
    )
    problem = Problem(view.problem.nodes, topology, view.problem.current)
    kept = _kept(work, gains)
    note = f"declared (the plan on measured costs did not fit: {why.brief}){kept}"
    return replace(view, problem=problem, declared=None, costs=note)


def _kept(work: Mapping[str, float], gains: Mapping[tuple[str, str], float]) -> str:
    """What :func:`declared_view` kept of the measurements, for its costs note."""
    parts = [name for name, kept in (("CPU per tuple", work), ("edge gains", gains)) if kept]
    return f"; measured {' and '.join(parts)} kept" if parts else ""


def placement_from_slots(
    topology_id: str, slot_of: Mapping[str, WorkerSlot], algorithm: str
) -> Placement:
    """A model placement whose workers are the given Storm slots (one index per port on a
    node, in port order)."""
    ports: dict[str, list[int]] = defaultdict(list)
    for slot in set(slot_of.values()):
        ports[slot.node].append(slot.port)
    index = {(node, port): i for node, p in ports.items() for i, port in enumerate(sorted(p))}
    return Placement(
        topology_id,
        {e: s.node for e, s in slot_of.items()},
        algorithm=algorithm,
        worker_of={e: index[(s.node, s.port)] for e, s in slot_of.items()},
        slot_of=dict(slot_of),
    )


def from_storm(view: TopologyView, rows: Iterable[StormPlacement], algorithm: str) -> Placement:
    """The model placement of Storm rows ``(task_start, task_end, component, supervisor,
    port)`` (an armed plan); an executor the view does not know raises
    :class:`PlanRejected`."""
    model_of = {key: eid for eid, key in view.storm_executor.items()}
    slot_of: dict[str, WorkerSlot] = {}
    unknown = []
    for start, end, _, supervisor, port in rows:
        eid = model_of.get((start, end))
        if eid is None or eid in slot_of:
            unknown.append(f"[{start}-{end}]")
            continue
        slot_of[eid] = WorkerSlot(supervisor, port)
    if unknown:
        raise PlanRejected(
            f"the plan for topology {view.topology_id} places executor(s) it does not have "
            f"or places them twice: {', '.join(unknown[:8])}"
        )
    return placement_from_slots(view.topology_id, slot_of, algorithm)


def storm_rows(view: TopologyView, placement: Placement) -> list[StormPlacement]:
    """``(task_start, task_end, component, supervisor, port)`` of every executor."""
    rows = []
    for eid, slot in sorted(placement.slot_of.items()):
        start, end = view.storm_executor[eid]
        rows.append((start, end, view.component_of[(start, end)], slot.node, slot.port))
    return rows
