"""Staging a re-plan that would restart too many workers (docs/reconfiguration.md).

A reconfiguration restarts exactly the workers whose executor set changes (Storm's
supervisor keeps a worker whose slot keeps the same executors; ``Proposal.restarting``).
When a plan would restart more than ``max_restart_share`` of the topology's workers, the
controller applies it in *stages*, each a reconfiguration of its own, judged on its own
gain (:func:`~scheduler_py.reconfig.trigger.judge`).

How a stage is cut: link two worker slots when an executor moves from one to the other
(running slot → planned slot). A connected group of slots can change on its own: every slot
in it gets the plan's executors, every slot outside keeps what it runs, and no executor is
left without a worker. Groups are ranked on the re-plan's objective, scored as every plan is
(:func:`~scheduler_py.scheduling.verified.score`): by inter-worker traffic saved per
restarted worker, or, for a re-plan judged on the throughput model
(:attr:`~scheduler_py.scheduling.proposal.Proposal.rates`), by the predicted rate of the
stage the group alone makes. The best groups are taken while the stage restarts at most
``max(1, ⌊share × workers⌋)`` workers — at least one group, so a plan whose single group is
larger than the limit is still applied, in one stage; on throughput, a further group is taken
only when the stage with it is not predicted slower than without it (rates do not add up the
way traffic does).

A stage mixes planned and running slots, so it is a placement of its own: a group is taken
only when the stage with it passes :func:`~scheduler_py.scheduling.verified.verify` (the
node capacity the topology's view sees, its ports, ``topology.workers``) — a group that
moves executors onto a node before another group moves others off it waits for that group,
and the groups are tried again until none can be added. When no group fits on its own, or
every group is taken, the whole (verified) plan is applied in one stage: a stage that does
not fit never reaches Storm. The next stage is the next re-plan: the controller plans again
under the then-current costs once the previous stage's measured gain is in
(``scheduler_py/reconfig/controller.py``).

A stage that would not be accepted on its own gain while the whole plan would (``accepts``,
the controller's :func:`~scheduler_py.reconfig.trigger.judge`) is not proposed: the whole
plan is, in one stage. Otherwise a plan whose every step within the limit passes through a
slower placement — the Linear-CPU re-plan of
``docs/results/emulated-network/throughput-default/c2-cpu-shift.json`` (run 6), predicted
×1.35 as a whole, staged into a first step predicted ×0.98 — would be declined for ever,
leaving the topology on the placement the model says is slower.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import replace

from scheduler_py.model.slots import restarted_workers
from scheduler_py.model.types import Placement, WorkerSlot
from scheduler_py.scheduling.proposal import Proposal
from scheduler_py.scheduling.verified import (
    PlanRejected,
    VerifiedPlan,
    checked,
    placement_from_slots,
    score,
)


def restart_limit(workers: int, share: float) -> int:
    """The most workers one stage may restart: ``⌊share × workers⌋``, at least 1."""
    return max(1, math.floor(share * workers + 1e-9))


def slot_groups(
    running: Mapping[str, WorkerSlot], planned: Mapping[str, WorkerSlot]
) -> list[frozenset[WorkerSlot]]:
    """The groups of slots that must change together (connected by moving executors);
    slots whose executors do not change are in no group."""
    parent: dict[WorkerSlot, WorkerSlot] = {}

    def find(slot: WorkerSlot) -> WorkerSlot:
        parent.setdefault(slot, slot)
        while parent[slot] != slot:
            parent[slot] = parent[parent[slot]]
            slot = parent[slot]
        return slot

    for executor, target in planned.items():
        source = running.get(executor, target)
        if source != target:
            parent[find(source)] = find(target)
    groups: dict[WorkerSlot, set[WorkerSlot]] = {}
    for slot in list(parent):
        groups.setdefault(find(slot), set()).add(slot)
    return sorted((frozenset(g) for g in groups.values()), key=_order)


def stage(
    proposal: Proposal, share: float, accepts: Callable[[Proposal], bool] | None = None
) -> tuple[Proposal, int]:
    """``(the first stage of proposal, the number of stages the whole plan needs at most)``;
    the proposal itself and 1 when it restarts no more than the limit, when no stage short
    of the whole plan fits, or when ``accepts`` (the controller's verdict on a proposal)
    takes the whole plan but not its first stage (the module docstring)."""
    running = dict(proposal.view.current_slots)
    planned = dict(proposal.placement.slot_of)
    workers = len(set(running.values()))
    limit = restart_limit(workers, share)
    if proposal.workers_restarted <= limit:
        return proposal, 1
    view = proposal.view
    topology_id = view.problem.topology.id
    on_rates = proposal.rates is not None
    ranked = []
    for group in slot_groups(running, planned):
        slots = _apply(running, planned, group)
        placement = placement_from_slots(topology_id, slots, "stage")
        restarts = restarted_workers(running, slots)
        if on_rates:
            rank = -_rate_ratio(proposal, placement)
        else:
            after = score(view, placement).interworker_traffic
            rank = (after - proposal.running.interworker_traffic) / max(1, restarts)
        ranked.append((rank, restarts, _order(group), group))
    ranked.sort(key=lambda item: item[:3])
    chosen: set[WorkerSlot] = set()
    used = 0
    fitted: VerifiedPlan | None = None
    ratio = -math.inf
    waiting = [(group, restarts) for _, restarts, _, group in ranked]
    added = True
    while added:  # a group that did not fit may fit once another has been taken
        added = False
        for group, restarts in list(waiting):
            if chosen and used + restarts > limit:
                continue
            slots = _apply(running, planned, chosen | group)
            try:
                plan = checked(view, placement_from_slots(topology_id, slots, proposal.algorithm))
            except PlanRejected:
                continue
            if on_rates:
                with_group = _rate_ratio(proposal, plan.placement)
                if chosen and with_group < ratio:
                    continue
                ratio = with_group
            chosen |= group
            used += restarts
            fitted = plan
            waiting.remove((group, restarts))
            added = True
    if fitted is None or not waiting:
        return proposal, 1
    stages = 1 + math.ceil(max(0, proposal.workers_restarted - used) / limit)
    first = _stage_of(proposal, fitted)
    if accepts is not None and not accepts(first) and accepts(proposal):
        return proposal, 1
    return first, stages


def _stage_of(proposal: Proposal, plan: VerifiedPlan) -> Proposal:
    """``proposal`` cut to the verified stage ``plan``."""
    running = dict(proposal.view.current_slots)
    slots = dict(plan.placement.slot_of)
    return replace(
        proposal,
        placement=plan.placement,
        candidate=plan.score,
        workers_restarted=restarted_workers(running, slots),
        workers_stopped=len(set(running.values()) - set(slots.values())),
    )


def _rate_ratio(proposal: Proposal, placement: Placement) -> float:
    """The throughput model's rate of ``placement`` over the running placement's, at the
    tuple size where it gains least (:attr:`~scheduler_py.scheduling.proposal.
    PredictedRates.ratio`); the running placement scored once, by the whole proposal."""
    rates = proposal.rates_of(placement)
    return rates.ratio if rates is not None else 1.0


def _order(group: frozenset[WorkerSlot]) -> list[tuple[str, int]]:
    return sorted((slot.node, slot.port) for slot in group)


def _apply(
    running: Mapping[str, WorkerSlot],
    planned: Mapping[str, WorkerSlot],
    group: frozenset[WorkerSlot] | set[WorkerSlot],
) -> dict[str, WorkerSlot]:
    """Executors planned into or running in ``group`` take their planned slot; the rest
    stay where they run."""
    return {
        executor: planned[executor]
        if planned[executor] in group or running.get(executor) in group
        else running.get(executor, planned[executor])
        for executor in planned
    }
