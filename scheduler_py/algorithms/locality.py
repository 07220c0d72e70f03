"""``locality``: placement for Storm's locality-aware shuffle (ours; ``docs/evaluation.md``,
"Evaluation on an emulated network").

Why a placement of its own. Since Storm 2.0 a shuffle grouping is load-aware unless
``topology.disable.loadaware.messaging`` is set: ``LoadAwareShuffleGrouping`` sends a tuple to
a target task in the sender's own worker when there is one and it is not overloaded, and only
widens to the host, the rack and then every task when the local targets' receive queues stay
above ``topology.localityaware.higher.bound``. The traffic between executors is then not the
uniform all-to-all split the other algorithms score (paper 000 §2.2, Eq. 1): it follows the
placement. A placement that keeps the total cut small under the uniform split can still send
every tuple across one host's link; one that gives every worker a complete copy of the
pipeline sends almost nothing across hosts.

The plan, for a topology whose shuffle-like edges (``shuffle``, ``local_or_shuffle``,
``none``) carry the traffic:

1. **Slices.** ``k`` = the smallest parallelism among the user components; slice ``j`` holds
   executor ``i`` of every component with ``i mod k == j``, so every slice has at least one
   executor of every component and a tuple can travel its whole path inside one slice.
   With load-aware messaging off (``loadaware=false``), shuffles are uniform and slices do
   not help: the plan is then ``links``'s (``scheduler_py/algorithms/links.py``), the
   placement whose busiest host or rack link carries the least.
2. **Segments.** A slice goes to one node when it fits the node's CPU and memory; otherwise it
   is cut, in topological order of its components, into consecutive segments that each fit
   the largest free node: the fewest segments, and among those the cuts that carry the least
   *flow* (:func:`flows`): measured traffic where there is some, else tuples per spout tuple
   — a bolt emits what reaches it, so Star's ``center`` sends each output twice what a spout
   sends it, and Star is better cut before ``center`` than after it.
3. **Nodes.** Slices are spread over distinct nodes before any node takes a second slice
   (separate slices exchange nothing, so spreading them buys CPU and link capacity without
   adding traffic); a slice starts in the rack with the most unused nodes and its later
   segments stay in that rack when it has room (racks are joined by less bandwidth); among
   candidates the node with the most free CPU wins.
4. **System executors** (ackers, metrics) go to the used node with the most free CPU.

Each node runs one worker of the topology: worker-local is the locality the grouping prefers.
So the plan uses at most ``topology.workers`` nodes (Storm refuses an assignment with more
workers): when there are more usable nodes, it keeps that many — whole racks first, the rack
with the most free CPU first, within a rack the nodes with the most free CPU — and uses all of
them only when the topology does not fit on the kept ones (the scheduling round then refuses
the plan with the reason, ``scheduler_py/scheduling/verified.py`` ``check_workers``).
Fields, all, global and direct groupings are placed like the rest; their traffic is uniform
whatever the placement, and the cost module scores it as such.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence

from scheduler_py.algorithms import links
from scheduler_py.algorithms.registry import register
from scheduler_py.model.budget import UNLIMITED, Budget
from scheduler_py.model.capacity import check_feasible, usable_nodes, worker_nodes
from scheduler_py.model.errors import InfeasibleError
from scheduler_py.model.flows import component_order, flows
from scheduler_py.model.types import EPSILON, Executor, Node, Placement, Problem, Topology


def slices(topology: Topology, loadaware: bool) -> list[list[Executor]]:
    """The user executors in slices (point 1 of the module docstring), each slice in
    topological order of its components."""
    order = component_order(topology)
    if not order:
        return []
    by_component = topology.component_by_id
    count = min(by_component[c].parallelism for c in order) if loadaware else 1
    result: list[list[Executor]] = [[] for _ in range(count)]
    for component in order:
        for executor in topology.executors_of(component):
            result[executor.index % count].append(executor)
    return result


def segments(
    members: Sequence[Executor],
    weight: Callable[[Executor, Executor], float],
    cpu: float,
    memory: float,
) -> list[list[Executor]] | None:
    """Point 2: ``members`` (in order) cut into consecutive segments of at most ``cpu`` and
    ``memory`` each — the fewest, then the least ``weight`` (both directions) between
    executors of different segments, then the longest first segments; ``None`` when one
    executor alone exceeds them. Dynamic programming over the cut positions: a plan's
    crossing is the sum, over its segments, of the weight between the segment and everything
    after it."""
    count = len(members)
    # later[a][j]: weight between member a and members j..count-1
    later = [[0.0] * (count + 1) for _ in range(count)]
    for a in range(count):
        for j in range(count - 1, a, -1):
            later[a][j] = (
                later[a][j + 1] + weight(members[a], members[j]) + weight(members[j], members[a])
            )
    best: list[tuple[int, float] | None] = [None] * (count + 1)
    cut = [count] * (count + 1)
    best[count] = (0, 0.0)
    for i in range(count - 1, -1, -1):
        used_cpu = used_memory = 0.0
        for j in range(i + 1, count + 1):
            used_cpu += members[j - 1].cpu
            used_memory += members[j - 1].memory_mb
            if used_cpu > cpu + EPSILON or used_memory > memory + EPSILON:
                break
            # [i, j) to [j, count): what crosses from this segment to later ones
            crossing = sum(later[a][j] for a in range(i, j)) if j < count else 0.0
            rest = best[j]
            if rest is None:
                continue
            candidate = (rest[0] + 1, rest[1] + crossing)
            current = best[i]
            if current is None or candidate <= current:  # ties: the longer first segment
                best[i], cut[i] = candidate, j
    if best[0] is None:
        return None
    result: list[list[Executor]] = []
    position = 0
    while position < count:
        result.append(list(members[position : cut[position]]))
        position = cut[position]
    return result


def executor_weight(topology: Topology) -> Callable[[Executor, Executor], float]:
    """The flow of :func:`flows` between two executors: their edge's flow split evenly over
    the executor pairs of the edge."""
    by_id = topology.component_by_id
    per_pair = {
        (source, target): flow / (by_id[source].parallelism * by_id[target].parallelism)
        for (source, target), flow in flows(topology).items()
    }

    def weight(a: Executor, b: Executor) -> float:
        return per_pair.get((a.component, b.component), 0.0)

    return weight


class _Free:
    """Remaining CPU and memory per node, and which nodes hold which slices."""

    def __init__(self, nodes: Sequence[Node]) -> None:
        self.nodes = {n.id: n for n in nodes}
        self.cpu = {n.id: n.cpu for n in nodes}
        self.memory = {n.id: n.memory_mb for n in nodes}
        self.slices_on: dict[str, int] = defaultdict(int)

    def fits(self, node: str, executors: Sequence[Executor]) -> bool:
        return (
            sum(e.cpu for e in executors) <= self.cpu[node] + EPSILON
            and sum(e.memory_mb for e in executors) <= self.memory[node] + EPSILON
        )

    def take(self, node: str, executor: Executor) -> None:
        self.cpu[node] -= executor.cpu
        self.memory[node] -= executor.memory_mb

    def choose(self, segment: Sequence[Executor], rack: str | None, avoid: set[str]) -> str | None:
        """The node for a new ``segment``, among those it fits: fewest slices already on it;
        then, for a slice's first segment, the rack with the most nodes no slice uses yet
        (room for the slice's later segments), for a later segment the slice's own rack;
        then most free CPU (ties: lower id). Never a node in ``avoid`` (the slice's earlier
        segments) unless nothing else fits."""
        candidates = [n for n in self.nodes if self.fits(n, segment)]
        if not candidates:
            return None
        fresh = [n for n in candidates if n not in avoid] or candidates
        empty_in_rack: dict[str, int] = defaultdict(int)
        for node in self.nodes:
            if not self.slices_on[node]:
                empty_in_rack[self.nodes[node].rack] += 1

        def rank(node: str) -> tuple[int, int, float, str]:
            node_rack = self.nodes[node].rack
            rack_rank = -empty_in_rack[node_rack] if rack is None else int(node_rack != rack)
            return (self.slices_on[node], rack_rank, -self.cpu[node], node)

        return min(fresh, key=rank)


def _infeasible(topology: Topology, executor: Executor, free: _Free) -> InfeasibleError:
    best = max(free.cpu, key=lambda n: (free.cpu[n], n))
    return InfeasibleError(
        f"topology {topology.id}: no node has room left for executor {executor.id} "
        f"({executor.cpu:.1f}% CPU, {executor.memory_mb:.0f} MB) after placing the slices "
        f"before it (most free: {best} with {free.cpu[best]:.1f}% CPU, "
        f"{free.memory[best]:.0f} MB); add capacity or lower the declared resources",
        resource="cpu",
        component=executor.component,
        needed=executor.cpu,
        best_available=free.cpu[best],
        best_node=best,
    )


SEGMENT_SEARCH_LIMIT = 64
"""Slices with more executors are cut greedily (each segment filled in order) instead of by
:func:`segments`, whose time grows with the cube of the slice's size."""


def _place_slice(
    topology: Topology,
    members: Sequence[Executor],
    free: _Free,
    node_of: dict[str, str],
    weight: Callable[[Executor, Executor], float],
) -> None:
    """Points 2 and 3: the slice's segments (:func:`segments`, sized for the node with the
    most free CPU), each on the node :meth:`_Free.choose` picks among those it fits; where no
    node fits a planned segment, the rest is filled in order, node by node."""
    used: set[str] = set()
    rack: str | None = None
    planned: list[list[Executor]] = []
    if len(members) <= SEGMENT_SEARCH_LIMIT and free.nodes:
        roomiest = max(free.nodes, key=lambda n: (free.cpu[n], free.memory[n]))
        planned = segments(members, weight, free.cpu[roomiest], free.memory[roomiest]) or []
    position = 0
    for segment in planned:
        node = free.choose(segment, rack, used)
        if node is None:
            break
        used.add(node)
        free.slices_on[node] += 1
        rack = free.nodes[node].rack
        for executor in segment:
            free.take(node, executor)
            node_of[executor.id] = node
        position += len(segment)
    while position < len(members):
        node = free.choose(members[position : position + 1], rack, used)
        if node is None:
            raise _infeasible(topology, members[position], free)
        used.add(node)
        free.slices_on[node] += 1
        rack = free.nodes[node].rack
        while position < len(members) and free.fits(node, [members[position]]):
            free.take(node, members[position])
            node_of[members[position].id] = node
            position += 1


def _place_system(
    topology: Topology, free: _Free, node_of: dict[str, str], order: Mapping[str, int]
) -> None:
    for executor in topology.executors:
        if executor.id in node_of:
            continue
        used = sorted(set(node_of.values()), key=order.__getitem__)
        candidates = [n for n in used if free.fits(n, [executor])] or [
            n for n in free.nodes if free.fits(n, [executor])
        ]
        if not candidates:
            raise _infeasible(topology, executor, free)
        node = max(candidates, key=lambda n: (free.cpu[n], -order[n]))
        free.take(node, executor)
        node_of[executor.id] = node


@register(
    "locality",
    paper="ours: placement for Storm's locality-aware shuffle (docs/evaluation.md)",
    summary="Slices holding one executor of every component each, spread over distinct "
    "nodes, one worker per node: with Storm's load-aware shuffle a tuple stays in its worker.",
    params={
        "loadaware": (
            True,
            "Storm's load-aware messaging is on (topology.disable.loadaware.messaging false); "
            "false: the plan of `links` (the busiest link lowest under uniform shuffles)",
        ),
        "rack_link": (
            links.DEFAULT_RACK_LINK,
            "with loadaware false: a rack's link to the other racks, relative to one host's link",
        ),
    },
)
def plan(
    problem: Problem,
    *,
    loadaware: bool = True,
    rack_link: float = links.DEFAULT_RACK_LINK,
    budget: Budget = UNLIMITED,
) -> Placement:
    if not loadaware:
        return links.plan(problem, rack_link=rack_link, budget=budget)
    check_feasible(problem)
    topology = problem.topology
    nodes = usable_nodes(problem)
    kept = worker_nodes(nodes, topology.workers)
    if len(kept) < len(nodes):
        try:
            return _plan_on(topology, kept)
        except InfeasibleError:
            pass  # more nodes than topology.workers, or none: the round says which
    return _plan_on(topology, nodes)


def _plan_on(topology: Topology, nodes: Sequence[Node]) -> Placement:
    free = _Free(nodes)
    order = {n.id: i for i, n in enumerate(nodes)}
    node_of: dict[str, str] = {}
    weight = executor_weight(topology)
    for members in slices(topology, loadaware=True):
        _place_slice(topology, members, free, node_of, weight)
    _place_system(topology, free, node_of, order)
    return Placement(topology.id, node_of, worker_of={e: 0 for e in node_of})
