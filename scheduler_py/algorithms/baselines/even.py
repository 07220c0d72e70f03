"""Storm's EvenScheduler, reproduced exactly, as the baseline every comparison includes.

Behaviour of ``org.apache.storm.scheduler.EvenScheduler`` (Storm 2.8, ``scheduleTopology``
and ``sortSlots``), for a topology with no alive assignment:

1. free slots are grouped by supervisor (supervisors in id order), each group's ports
   ascending, groups ordered by size (largest first, ties keep id order), then
   interleaved: the first slot of every group, then the second of every group, ...;
2. the first ``min(topology.workers, free slots)`` slots are used;
3. executors sorted by start task (Storm numbers tasks over components in sorted id
   order, so this is the order of (component id, executor index)) go round-robin over
   those slots.

Capacity is not considered (EvenScheduler ignores resources); the registry's verification
still rejects a result that exceeds a node's capacity, so ``even`` fails where Storm would
over-commit a node.

Deviation: Storm keeps the alive part of a partial assignment and only redistributes the
unassigned executors; the model plans whole topologies, so ``even`` always produces the
fresh-topology assignment (the service only asks for a plan when one is needed).
"""

from __future__ import annotations

from scheduler_py.algorithms.registry import register
from scheduler_py.model.types import Placement, Problem


def interleaved_slots(problem: Problem) -> list[tuple[str, int]]:
    """(node id, logical worker index) in EvenScheduler's ``sortSlots`` order."""
    groups = [
        [(node.id, k) for k in range(node.slots)]
        for node in sorted(problem.nodes, key=lambda n: n.id)
        if node.slots > 0
    ]
    groups.sort(key=len, reverse=True)  # stable, like Collections.sort
    result = []
    for k in range(max((len(g) for g in groups), default=0)):
        result.extend(g[k] for g in groups if k < len(g))
    return result


@register(
    "even",
    paper="Storm EvenScheduler (baseline)",
    summary="Storm's default: round-robin over topology.workers slots interleaved across "
    "supervisors; ignores traffic and resources.",
)
def plan(problem: Problem) -> Placement:
    topology = problem.topology
    slots = interleaved_slots(problem)
    used = slots[: max(1, min(topology.workers, len(slots)))]
    if not slots:
        from scheduler_py.model.capacity import check_feasible

        check_feasible(problem)  # raises the "no free slot" error
    executors = sorted(topology.executors, key=lambda e: (e.component, e.index))
    node_of: dict[str, str] = {}
    worker_of: dict[str, int] = {}
    for i, executor in enumerate(executors):
        node, worker = used[i % len(used)]
        node_of[executor.id] = node
        worker_of[executor.id] = worker
    return Placement(topology.id, node_of, worker_of=worker_of)
