"""One scheduling round: snapshot in, one :class:`TopologyPlan` per topology out.

Per topology, in snapshot order (Nimbus lists topologies by id):

1. build its model problem (:mod:`snapshot`) with the capacity earlier topologies of this
   round claimed taken off;
2. KEEP it when every executor already runs (re-placement of running topologies belongs to
   the reconfiguration controller, not to the round);
3. otherwise choose the algorithm: topology conf ``scheduler.brain.algorithm``, else the
   service default; parameters from ``scheduler.brain.params`` (a JSON object);
4. plan, verify (the registry does), map logical workers to ports keeping executors where
   they run (:mod:`scheduler_py.model.slots`), and return PLACE with a reason;
5. anything that goes wrong for one topology — unknown algorithm, infeasible, a bug — turns
   into LEAVE_TO_STORM with the reason, so the shim falls back for that topology only.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from scheduler_py import __version__
from scheduler_py.algorithms import registry
from scheduler_py.model.cost import evaluate
from scheduler_py.model.errors import SchedulingError
from scheduler_py.model.slots import assign_slots
from scheduler_py.model.types import Placement
from scheduler_py.monitoring.measured import MeasuredCostsSource
from scheduler_py.service.snapshot import TopologyView, topology_view
from scheduler_py.service.wire import wire

log = logging.getLogger(__name__)

ALGORITHM_KEY = "scheduler.brain.algorithm"
PARAMS_KEY = "scheduler.brain.params"


@dataclass
class PlannerConfig:
    default_algorithm: str = "td"
    default_params: dict[str, dict[str, Any]] = field(default_factory=dict)
    measured: MeasuredCostsSource | None = None
    """where measured costs come from (``serve --zookeeper``); ``None``: declared costs"""


@dataclass
class RoundRecord:
    """What the brain decided for one topology in one round (kept for the CLI/dashboard)."""

    topology_id: str
    decision: str
    algorithm: str
    reason: str
    placement: dict[str, tuple[str, int]] = field(default_factory=dict)
    """model executor id -> (supervisor id, port)"""
    storm_placement: dict[str, tuple[str, int]] = field(default_factory=dict)
    """Storm executor "task_start-task_end" -> (supervisor id, port)"""
    summary: dict[str, Any] = field(default_factory=dict)


def plan_round(
    snapshot: Any, config: PlannerConfig, armed: Mapping[str, Any] | None = None
) -> tuple[Any, list[RoundRecord]]:
    """Return the Thrift ``ScheduleReply`` for ``snapshot`` and a record per topology.

    ``armed`` maps topology id -> an :class:`~scheduler_py.reconfig.controller.ArmedPlan`
    the reconfiguration controller wants applied this round (the topology is drained); it
    is returned as PLACE even though every executor already runs.
    """
    w = wire()
    plans = []
    records = []
    claimed: dict[str, tuple[float, float, tuple[int, ...]]] = {}
    armed = armed or {}
    for topo in snapshot.topologies:
        if topo.id in armed:
            plan, record = _armed_plan(w, topo, armed[topo.id])
            if plan is not None:
                plans.append(plan)
                records.append(record)
                continue
        try:
            view = topology_view(snapshot, topo, claimed, config.measured)
        except SchedulingError as error:
            plans.append(_leave(w, topo.id, "", f"cannot read topology: {error}"))
            records.append(RoundRecord(topo.id, "LEAVE_TO_STORM", "", str(error)))
            continue
        if view.complete:
            reason = "all executors already placed; nothing to do"
            plans.append(w.TopologyPlan(topo.id, w.Decision.KEEP, [], reason, ""))
            records.append(RoundRecord(topo.id, "KEEP", "", reason))
            continue
        algorithm = ""
        try:
            algorithm, params = choose_algorithm(view.conf, config)
            plan, record = _place(w, view, algorithm, params)
        except SchedulingError as error:
            reason = f"{algorithm}: {error}"
            log.warning("topology %s left to Storm: %s", topo.id, reason)
            plans.append(_leave(w, topo.id, algorithm, reason))
            records.append(RoundRecord(topo.id, "LEAVE_TO_STORM", algorithm, reason))
            continue
        except Exception as error:  # a bug in an algorithm must not cost the round
            log.exception("algorithm %s crashed on topology %s", algorithm, topo.id)
            reason = f"{algorithm} failed unexpectedly ({type(error).__name__}: {error})"
            plans.append(_leave(w, topo.id, algorithm, reason))
            records.append(RoundRecord(topo.id, "LEAVE_TO_STORM", algorithm, reason))
            continue
        _claim(claimed, view, record)
        plans.append(plan)
        records.append(record)
    return w.ScheduleReply(plans, __version__), records


def choose_algorithm(conf: Mapping[str, Any], config: PlannerConfig) -> tuple[str, dict[str, Any]]:
    """The topology's algorithm and parameters: its conf, else the service defaults."""
    algorithm = str(conf.get(ALGORITHM_KEY) or config.default_algorithm)
    params = dict(config.default_params.get(algorithm, {}))
    raw = conf.get(PARAMS_KEY)
    if isinstance(raw, Mapping):
        params.update(raw)
    elif raw not in (None, ""):
        raise SchedulingError(
            f'{PARAMS_KEY} must be a JSON object such as {{"key": "rs"}}, found {raw!r}'
        )
    return algorithm, params


def check_workers(placement: Placement, allowed: int) -> int:
    """The number of workers (slots) ``placement`` uses; more than ``allowed``
    (``topology.workers``, which Storm enforces) raises :class:`SchedulingError`."""
    workers = len(set(placement.slot_of.values()))
    if workers > allowed:
        raise SchedulingError(
            f"the plan needs {workers} workers but topology.workers is {allowed} (Storm "
            "rejects more); raise topology.workers or choose an algorithm that consolidates "
            "(e.g. td)"
        )
    return workers


def _place(w: Any, view: TopologyView, algorithm: str, params: dict[str, Any]):
    problem = view.problem
    placement = registry.run(algorithm, problem, params)
    placement = assign_slots(placement, view.free_ports, view.current_slots)
    workers = check_workers(placement, problem.topology.workers)
    placements = []
    record_map = {}
    storm_map = {}
    for eid, slot in sorted(placement.slot_of.items()):
        start, end = view.storm_executor[eid]
        component = view.component_of[(start, end)]
        placements.append(
            w.ExecutorPlacement(w.Executor(start, end, component), slot.node, slot.port)
        )
        record_map[eid] = (slot.node, slot.port)
        storm_map[f"{start}-{end}"] = (slot.node, slot.port)
    evaluation = evaluate(problem, placement)
    reason = (
        f"placed by {algorithm} on {evaluation.nodes_used} node(s), {workers} worker(s); "
        f"collocated traffic {evaluation.imc_gain:.3g} of {evaluation.total_traffic:.3g}, "
        f"max node CPU {evaluation.max_node_load:.0f}%; costs: {view.costs}"
    )
    summary = evaluation.summary() | {
        "seconds": placement.report.get("seconds", 0.0),
        "costs": view.costs,
    }
    plan = w.TopologyPlan(problem.topology.id, w.Decision.PLACE, placements, reason, algorithm)
    record = RoundRecord(
        problem.topology.id, "PLACE", algorithm, reason, record_map, storm_map, summary
    )
    return plan, record


def _armed_plan(w: Any, topo: Any, armed: Any) -> tuple[Any, RoundRecord | None]:
    """PLACE ``armed`` for ``topo`` if it still covers exactly the topology's executors."""
    executors = {(e.task_start, e.task_end) for e in topo.executors}
    planned = {(start, end) for start, end, _, _, _ in armed.placements}
    if executors != planned:
        log.warning(
            "topology %s: the armed reconfiguration plan no longer matches its executors; "
            "ignoring it",
            topo.id,
        )
        return None, None
    placements = [
        w.ExecutorPlacement(w.Executor(start, end, component), supervisor, port)
        for start, end, component, supervisor, port in armed.placements
    ]
    storm_map = {f"{s}-{e}": (sup, port) for s, e, _, sup, port in armed.placements}
    plan = w.TopologyPlan(topo.id, w.Decision.PLACE, placements, armed.reason, armed.algorithm)
    record = RoundRecord(topo.id, "PLACE", armed.algorithm, armed.reason, storm_placement=storm_map)
    return plan, record


def _claim(claimed: dict, view: TopologyView, record: RoundRecord) -> None:
    """Take what ``record`` placed off the capacity later topologies of this round see."""
    by_id = view.problem.topology.executor_by_id
    for eid, (node, port) in record.placement.items():
        cpu, mem, ports = claimed.get(node, (0.0, 0.0, ()))
        previous = view.current_slots.get(eid)
        # an executor staying on its node is already counted in Storm's available resources
        stays = previous is not None and previous.node == node
        executor = by_id[eid]
        claimed[node] = (
            cpu + (0.0 if stays else executor.cpu),
            mem + (0.0 if stays else executor.memory_mb),
            tuple(sorted(set(ports) | {port})),
        )


def _leave(w: Any, topology_id: str, algorithm: str, reason: str) -> Any:
    return w.TopologyPlan(topology_id, w.Decision.LEAVE_TO_STORM, [], reason, algorithm)
