"""Logical → physical mapping: a plan's (node, logical worker) pairs onto Storm worker slots.

Algorithms decide *which executors share a worker* (``Placement.worker_key``); Storm runs a
worker in a slot ``(supervisor, port)``. Ports of one node are interchangeable for the
plan's cost, but not for the cluster: a worker whose executor set changes is restarted
(``docs/algorithms/000-topdown.md`` §6.3, "churn reduction"). So each node's logical workers
are mapped to that node's ports (Hungarian algorithm,
:func:`scipy.optimize.linear_sum_assignment`) by, in this order:

1. **keep running what does not change**: a logical worker whose executor set is exactly that
   of a running worker of the topology takes that worker's slot (Storm keeps it running);
2. **restart into a free port**: a worker that restarts anyway goes to a port the topology
   does not use now, when there is one. A Storm supervisor runs each slot's state machine on
   its own (storm-server ``Slot``), so the new worker starts while the old one in another slot
   is being killed, instead of after it (kill, confirm dead, launch: a few seconds of every
   reconfiguration's pause, ``scheduler_py/reconfig/execution.py``);
3. the most executors already in the slot, then the lowest ports, with logical workers in
   ascending order on ascending ports. Without a current assignment, logical worker k (in
   ascending order) of a node gets its k-th lowest free port.

The topology's own current ports count as available: on a rebalance Nimbus frees the
topology's slots before calling the scheduler (``docs/algorithms/000-topdown.md`` §6.3).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import replace

from scheduler_py.model.cost import node_loads
from scheduler_py.model.errors import SchedulingError
from scheduler_py.model.types import EPSILON, Placement, Problem, WorkerSlot


def _slots(assignment: Mapping[str, WorkerSlot] | Placement) -> Mapping[str, WorkerSlot]:
    return assignment.slot_of if isinstance(assignment, Placement) else assignment


def assign_slots(
    placement: Placement,
    free_ports: Mapping[str, Sequence[int]],
    current: Mapping[str, WorkerSlot] | None = None,
) -> Placement:
    """Return ``placement`` with ``slot_of`` filled: executor → ``WorkerSlot(node, port)``.

    Parameters
    ----------
    placement:
        The plan; its ``worker_key(executor)`` gives (node, logical worker index).
    free_ports:
        Per node id, the ports the topology may use there (other topologies' slots excluded).
    current:
        Executor → the slot it runs in now (``None``: a fresh topology). Ports listed here
        count as available on their node.

    Raises
    ------
    SchedulingError
        A node has fewer available ports than the plan has logical workers on it.

    Example
    -------
    >>> p = Placement("t", {"a#0": "n0", "b#0": "n0"}, worker_of={"b#0": 1})
    >>> sorted((e, s.port) for e, s in assign_slots(p, {"n0": [6701, 6700]}).slot_of.items())
    [('a#0', 6700), ('b#0', 6701)]
    """
    current = dict(current or {})
    members: dict[tuple[str, int], set[str]] = defaultdict(set)
    worker_of = placement.worker_of  # Placement.worker_key, inlined: this runs per executor
    for executor, node in placement.node_of.items():
        members[(node, worker_of.get(executor, 0))].add(executor)
    in_slot: dict[WorkerSlot, set[str]] = defaultdict(set)
    current_ports: dict[str, set[int]] = defaultdict(set)
    for executor, slot in current.items():
        in_slot[slot].add(executor)
        current_ports[slot.node].add(slot.port)
    logical_by_node: dict[str, list[int]] = defaultdict(list)
    for node, index in members:
        logical_by_node[node].append(index)

    slot_of: dict[str, WorkerSlot] = {}
    for node in sorted(logical_by_node):
        logical = sorted(logical_by_node[node])
        ports = sorted(set(free_ports.get(node, ())) | current_ports.get(node, set()))
        if len(ports) < len(logical):
            raise SchedulingError(
                f"topology {placement.topology_id}: the plan needs {len(logical)} worker(s) on "
                f"node {node} but only {len(ports)} port(s) are available there "
                f"({', '.join(map(str, ports)) or 'none'}); free slots on {node} or plan "
                f"fewer workers per node"
            )
        chosen = list(range(len(logical)))  # no executor runs on the node now: in order
        if node in current_ports:
            running = [in_slot.get(WorkerSlot(node, port), set()) for port in ports]
            overlap = [[len(members[(node, k)] & now) for now in running] for k in logical]
            kept = [[bool(now) and members[(node, k)] == now for now in running] for k in logical]
            free = [not now for now in running]
            chosen = _best_mapping(overlap, kept, free)
        for i, k in enumerate(logical):
            slot = WorkerSlot(node, ports[chosen[i]])
            for executor in members[(node, k)]:
                slot_of[executor] = slot
    return replace(placement, slot_of=slot_of)


def _best_mapping(overlap: list[list[int]], kept: list[list[bool]], free: list[bool]) -> list[int]:
    """Logical worker i → port index, by the rules of the module docstring: the most workers
    kept running, then the most restarted workers on free ports, then the most overlap, then
    the lowest ports, then in order.

    One weighted assignment with lexicographic weights (all integers, exact in float64):
    ``kept·D + restarted_on_free·C + overlap·A − j·B + i·j``, where each weight exceeds the
    largest total of all the terms below it.
    """
    from scipy.optimize import linear_sum_assignment

    rows, cols = len(overlap), len(overlap[0])
    order_span = rows * cols * cols + 1  # > Σ i·j
    port_weight = order_span
    overlap_weight = rows * cols * port_weight + order_span + 1
    most_overlap = sum(max(row) for row in overlap)
    free_weight = (most_overlap + 1) * overlap_weight
    kept_weight = (rows + 1) * free_weight
    score = [
        [
            kept[i][j] * kept_weight
            + (free[j] and not kept[i][j]) * free_weight
            + overlap[i][j] * overlap_weight
            - j * port_weight
            + i * j
            for j in range(cols)
        ]
        for i in range(rows)
    ]
    row_index, col_index = linear_sum_assignment(score, maximize=True)
    chosen = [0] * rows
    for i, j in zip(row_index, col_index, strict=True):
        chosen[int(i)] = int(j)
    return chosen


def restarted_workers(
    old: Mapping[str, WorkerSlot] | Placement, new: Mapping[str, WorkerSlot] | Placement
) -> int:
    """Workers of ``new`` that (re)start: a slot whose executor set changed, or a new slot.

    Slots that ``old`` used and ``new`` does not are stopped, not restarted, and are not
    counted.
    """
    before: dict[WorkerSlot, set[str]] = defaultdict(set)
    after: dict[WorkerSlot, set[str]] = defaultdict(set)
    for executor, slot in _slots(old).items():
        before[slot].add(executor)
    for executor, slot in _slots(new).items():
        after[slot].add(executor)
    return sum(1 for slot, executors in after.items() if before.get(slot) != executors)


def relabel_nodes(
    problem: Problem, placement: Placement, current: Mapping[str, WorkerSlot] | None
) -> Placement:
    """Rename the plan's nodes so that most executors stay on the node they run on now.

    The model's nodes are interchangeable as long as capacity allows
    (``docs/algorithms/000-topdown.md`` §6.3,
    "churn reduction"): a plan that puts groups A, B on nodes n1, n2 costs the same as one
    that puts them on n2, n1, but restarts different workers. This picks the bijection from
    the plan's nodes onto the problem's nodes with the **largest executor overlap** with
    ``current`` (Hungarian algorithm), allowing only targets in the same rack whose CPU,
    memory and free slots hold what the plan puts on the source node; ties keep the plan's
    own labels. Call it before :func:`assign_slots`, which then keeps executors in their
    worker within each node.
    """
    if not current:
        return placement
    from scipy.optimize import linear_sum_assignment

    nodes = list(problem.nodes)
    index = {n.id: i for i, n in enumerate(nodes)}
    used = sorted(placement.nodes_used)
    cpu, memory = node_loads(problem, placement.node_of)
    workers: dict[str, set[int]] = defaultdict(set)
    overlap = [[0] * len(nodes) for _ in used]
    row = {node: i for i, node in enumerate(used)}
    for executor, node in placement.node_of.items():
        workers[node].add(placement.worker_of.get(executor, 0))
        now = current.get(executor)
        if now is not None and now.node in index:
            overlap[row[node]][index[now.node]] += 1
    source = problem.node_by_id
    forbidden = -(len(placement.node_of) + 1) * 4
    score = []
    for node in used:
        line = []
        for j, target in enumerate(nodes):
            fits = (
                cpu[node] <= target.cpu + EPSILON
                and memory[node] <= target.memory_mb + EPSILON
                and len(workers[node]) <= target.slots
                and (node not in source or source[node].rack == target.rack)
            )
            # 2 per kept executor, +1 for keeping the plan's own label (ties)
            line.append(overlap[row[node]][j] * 2 + (target.id == node) if fits else forbidden)
        score.append(line)
    rows, cols = linear_sum_assignment(score, maximize=True)
    if any(score[int(i)][int(j)] == forbidden for i, j in zip(rows, cols, strict=True)):
        return placement
    rename = {used[int(i)]: nodes[int(j)].id for i, j in zip(rows, cols, strict=True)}
    if all(old == new for old, new in rename.items()):
        return placement
    return replace(
        placement,
        node_of={e: rename[n] for e, n in placement.node_of.items()},
        slot_of={},
    )
