"""Private helpers shared by the paper-000 allocators (``td``, ``tl``, ``naive``).

* edge priorities: relative significance (Eq. 2) and the two IMC keys
  (``docs/algorithms/000-topdown.md`` §1.5, E17, E27);
* the component-level edge list every algorithm starts from (streams merged, measured
  executor-pair traffic summed when the topology carries it);
* :class:`NodePool`: the paper's prioritised node list ``N`` (max-heap on spare CPU, ties to
  the lower node id, ``docs/algorithms/000-topdown.md`` §2.1) over a
  :class:`~scheduler_py.model.capacity.CapacityTracker`, with memory as a second hard
  capacity and the whole-node fusion ``mergeNodes``
  (Alg. 1 l.17-23, Alg. 4 l.19-24, errata E4-E6, E18, E19);
* ``allocateSingleTasks`` (Alg. 3, errata E20, E21), first-fit-decreasing packing (the
  fallback chain of ``docs/algorithms/000-topdown.md`` §2.6) and the granularity suggestion of §5 /
  ``docs/algorithms/000-topdown.md`` §2.7(a);
* :class:`AllocationFailure` and its conversion to the operator-facing
  :class:`~scheduler_py.model.errors.InfeasibleError`.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from heapq import heapify, heappop, heappush

from scheduler_py.model.capacity import CapacityTracker, check_feasible, usable_nodes
from scheduler_py.model.errors import InfeasibleError
from scheduler_py.model.types import EPSILON, Executor, Node, NodeTable, Problem, Topology

INF = float("inf")
BIG = 1 << 62
"""A count larger than any group: "every task fits" (zero per-task cost or unbounded capacity)."""

KEYS = ("rs", "imc_group", "imc_task")
"""Edge priorities: relative significance (Eq. 2), group IMC, task-pair IMC (Eq. 1)."""


def edge_key(key: str, imc: float, pc_i: float, pc_j: float, n_i: int, n_j: int) -> float:
    """Priority of a group pair; larger is processed first.

    ``rs``: ``imc / (pc_i + pc_j)`` (Eq. 2), +∞ when both groups cost nothing
    (``docs/algorithms/000-topdown.md`` §1.5); ``imc_group``: the pair's total IMC; ``imc_task``:
    the IMC of one task pair (Eq. 1).
    """
    if key == "rs":
        total = pc_i + pc_j
        if total <= 0:
            return INF if imc > 0 else 0.0
        return imc / total
    if key == "imc_group":
        return imc
    return imc / (n_i * n_j)


def count_fit(free: float, per: float) -> int:
    """How many items of cost ``per`` fit in ``free`` (ε-tolerant,
    ``docs/algorithms/000-topdown.md`` §2.1)."""
    if per <= 0.0 or free == INF:
        return BIG
    q = (free + EPSILON) / per
    if q <= 0.0:
        return 0
    return int(q) if q < BIG else BIG


def component_edges(topology: Topology) -> list[tuple[int, int, float]]:
    """Component pairs ``(source index, target index, total traffic)`` in edge-id order.

    Indices refer to ``topology.components``. Parallel streams are summed
    (``docs/algorithms/000-topdown.md`` §1.5); a pair declared in both directions becomes one
    pair (the collocation gain is symmetric), keeping the direction of its first appearance.
    With measured executor-pair traffic the pair's total is the measured sum (unlisted pairs
    carry none, as in the cost module) and measured component pairs that have no declared
    edge are appended.
    """
    index = {c.id: i for i, c in enumerate(topology.components)}
    order: dict[tuple[int, int], int] = {}
    pairs: list[list] = []

    def slot(a: int, b: int) -> list:
        k = (a, b) if a < b else (b, a)
        if k not in order:
            order[k] = len(pairs)
            pairs.append([a, b, 0.0])
        return pairs[order[k]]

    measured = topology.has_measured_traffic
    for edge in topology.merged_edges:
        entry = slot(index[edge.source], index[edge.target])
        if not measured:
            entry[2] += edge.traffic
    if measured:
        by_id = topology.executor_by_id
        for src, dst, rate in topology.pair_traffics():
            if src not in by_id or dst not in by_id:
                continue  # a stale measurement of an executor that no longer exists
            a, b = index[by_id[src].component], index[by_id[dst].component]
            if a != b:
                slot(a, b)[2] += rate
    return [(a, b, t) for a, b, t in pairs]


class NodePool:
    """The prioritised node list ``N`` of Alg. 1/4 over a :class:`CapacityTracker`.

    Only nodes with a free worker slot take part (a node with ``slots == 0`` is unusable;
    the plan uses one logical worker per node). ``top()`` is the node with the most spare
    CPU, ties to the lower node id (the paper's "least loaded" node); the heap is lazy: every
    capacity change pushes a fresh entry and stale ones are dropped when they surface.
    ``members[node]`` lists the opaque items (task indices, placement records) an algorithm
    put there, so that a node fusion can move *everything* hosted on a node (erratum E6).
    """

    __slots__ = (
        "cpu",
        "heap",
        "init_cpu",
        "init_mem",
        "mem",
        "mem_bound",
        "members",
        "merges",
        "tracker",
        "used_cpu",
        "used_mem",
    )

    def __init__(self, nodes: Iterable[Node]) -> None:
        self.tracker = CapacityTracker(nodes)
        self.cpu = self.tracker.cpu  # shared dicts: the tracker stays the source of truth
        self.mem = self.tracker.memory
        self.init_cpu = dict(self.cpu)
        self.init_mem = dict(self.mem)
        self.mem_bound = any(m != INF for m in self.mem.values())
        self.members: dict[str, list] = defaultdict(list)  # a node's list made when first used
        if isinstance(nodes, NodeTable):  # copies of what the table has (or computes once)
            self.used_cpu, self.used_mem = nodes.zeros.copy(), nodes.zeros.copy()
            self.heap = list(nodes.heap)
        else:
            self.used_cpu = dict.fromkeys(self.cpu, 0.0)
            self.used_mem = dict.fromkeys(self.cpu, 0.0)
            self.heap = [(-c, nid) for nid, c in self.cpu.items()]
            heapify(self.heap)
        self.merges = 0

    def top(self) -> str:
        """``N.top()``: most spare CPU, ties to the lower id."""
        heap, cpu = self.heap, self.cpu
        while True:
            neg, nid = heap[0]
            if -neg == cpu[nid]:
                return nid
            heappop(heap)

    def fits(self, nid: str, cpu: float, mem: float) -> bool:
        return cpu <= self.cpu[nid] + EPSILON and mem <= self.mem[nid] + EPSILON

    def take(self, nid: str, cpu: float, mem: float) -> None:
        free = self.cpu[nid] - cpu
        self.cpu[nid] = free
        self.mem[nid] -= mem
        self.used_cpu[nid] += cpu
        self.used_mem[nid] += mem
        heappush(self.heap, (-free, nid))

    def by_priority(self) -> list[str]:
        """Every node in ``N`` order (most spare CPU first, ties to the lower id)."""
        return sorted(self.cpu, key=lambda n: (-self.cpu[n], n))

    def best_fit_for(self, cpu: float, mem: float) -> str | None:
        """Alg. 3's node for one single task: ``N.top()`` if the task fits there.

        Memory is a second hard capacity (ours): when the freest-CPU node lacks memory,
        the next node in ``N`` order that fits both is used; ``None`` when none fits.
        """
        nid = self.top()
        if self.fits(nid, cpu, mem):
            return nid
        if cpu > self.cpu[nid] + EPSILON or not self.mem_bound:
            return None
        for other in self.by_priority():
            if self.fits(other, cpu, mem):
                return other
        return None

    def merge(self, a: str, b: str) -> tuple[str, list] | None:
        """``mergeNodes(a, b)``: move everything on the smaller-capacity node to the other.

        The target is the node with the larger *initial* capacity (ties: lower id, erratum
        E19); the move happens only if the source's whole load fits the target's spare CPU
        and memory (Alg. 1 l.20-21, Alg. 4 l.21-22 with E5). The emptied node gets its
        initial capacity back (Alg. 1 l.22). Returns ``(target, moved items)`` or ``None``.
        Whole-node moves keep every collocation already on the source, so φ never drops.
        """
        if a == b:  # erratum E18
            return None
        ia, ib = self.init_cpu[a], self.init_cpu[b]
        big, small = (a, b) if ia > ib or (ia == ib and a < b) else (b, a)
        load_c, load_m = self.used_cpu[small], self.used_mem[small]
        if not self.fits(big, load_c, load_m):
            return None
        self.take(big, load_c, load_m)
        self.cpu[small] = self.init_cpu[small]
        self.mem[small] = self.init_mem[small]
        self.used_cpu[small] = 0.0
        self.used_mem[small] = 0.0
        heappush(self.heap, (-self.cpu[small], small))
        moved = self.members[small]
        self.members[small] = []
        self.members[big].extend(moved)
        self.merges += 1
        return big, moved


class AllocationFailure(Exception):
    """An allocator found no valid placement: what did not fit, and the best offer."""

    def __init__(
        self,
        algorithm: str,
        *,
        component: str,
        resource: str,
        needed: float,
        best_node: str | None,
        best_available: float,
        unplaced: int,
    ) -> None:
        super().__init__(component, resource)
        self.algorithm = algorithm
        self.component = component
        self.resource = resource
        self.needed = needed
        self.best_node = best_node
        self.best_available = best_available
        self.unplaced = unplaced

    def sentence(self) -> str:
        unit = "% CPU" if self.resource == "cpu" else " MB memory"
        where = f"node {self.best_node}" if self.best_node else "no node"
        return (
            f"{self.algorithm} left {self.unplaced} executor(s) unplaced; the first, of "
            f"component {self.component}, needs {self.needed:.2f}{unit} but the best offer "
            f"is {where} with {self.best_available:.2f}{unit} free"
        )


def single_task_failure(
    algorithm: str, pool: NodePool, component: str, cpu: float, mem: float, unplaced: int
) -> AllocationFailure:
    """Describe why one single task (Alg. 3) fits nowhere: CPU if no node has the CPU."""
    top = pool.top()
    if cpu > pool.cpu[top] + EPSILON:
        resource, needed, best, available = "cpu", cpu, top, pool.cpu[top]
    else:
        best = max(pool.mem, key=lambda n: (pool.mem[n], n))
        resource, needed, available = "memory", mem, pool.mem[best]
    return AllocationFailure(
        algorithm,
        component=component,
        resource=resource,
        needed=needed,
        best_node=best,
        best_available=available,
        unplaced=unplaced,
    )


def infeasible(
    problem: Problem, failure: AllocationFailure, *, tried: Sequence[str] = (), hint: str = ""
) -> InfeasibleError:
    """The operator-facing error for a failed allocation (necessary conditions first)."""
    check_feasible(problem)  # raises the clearer error when the problem cannot fit at all
    chain = f" (tried: {' → '.join(tried)})" if tried else ""
    return InfeasibleError(
        f"topology {problem.topology.id}: no valid placement found{chain}: "
        f"{failure.sentence()}.{(' ' + hint) if hint else ''}",
        resource=failure.resource,
        component=failure.component,
        needed=failure.needed,
        best_available=failure.best_available,
        best_node=failure.best_node,
    )


def ensure_usable(problem: Problem) -> tuple[Node, ...]:
    """Usable nodes (a free slot); raises the model's "no free slot" error when none."""
    nodes = usable_nodes(problem)
    if not nodes:
        check_feasible(problem)
    return nodes


def executor_sort_key(component: str, index: int, cpu: float) -> tuple[float, str, int]:
    """Heaviest first, ties in Storm task order (component id, executor index) (E20)."""
    return (-cpu, component, index)


def allocate_single_tasks(
    algorithm: str,
    pool: NodePool,
    executors: Sequence[Executor],
    node: list[str | None],
    cpu: Sequence[float],
    mem: Sequence[float],
) -> int:
    """``allocateSingleTasks`` (Alg. 3, E20, E21) over a task-indexed allocation.

    Every task ``t`` with ``node[t] is None`` goes, heaviest first (ties in Storm task
    order), to the node :meth:`NodePool.best_fit_for` picks; ``node`` and the pool's
    members are updated in place. Returns how many tasks were placed this way.

    Raises:
        AllocationFailure: a task fits on no node (E21).
    """
    rest = sorted(
        (t for t in range(len(executors)) if node[t] is None),
        key=lambda t: executor_sort_key(executors[t].component, executors[t].index, cpu[t]),
    )
    for done, t in enumerate(rest):
        sel = pool.best_fit_for(cpu[t], mem[t])
        if sel is None:
            raise single_task_failure(
                algorithm, pool, executors[t].component, cpu[t], mem[t], len(rest) - done
            )
        pool.take(sel, cpu[t], mem[t])
        node[t] = sel
        pool.members[sel].append(t)
    return len(rest)


def infeasible_with_suggestion(problem: Problem, failure: AllocationFailure) -> InfeasibleError:
    """:func:`infeasible` with the §5 granularity suggestion as its hint (TL, naive)."""
    return infeasible(
        problem, failure, hint=suggestion_hint(problem, granularity_suggestion(problem))
    )


def first_fit_decreasing(
    problem: Problem, algorithm: str = "ffd", cpu_of: Mapping[str, float] | None = None
) -> dict[str, str]:
    """Pure bin packing, φ ignored (fallback step 3 of ``docs/algorithms/000-topdown.md`` §2.6).

    Executors heaviest first (ties: component id, index); nodes by capacity, largest first
    (ties: lower id); each executor goes to the first node with room for CPU and memory.
    ``cpu_of`` overrides executor CPU (see :func:`planning_cpu`).
    """
    nodes = ensure_usable(problem)
    order = sorted(nodes, key=lambda n: (-n.cpu, n.id))
    pool = NodePool(order)
    cpu = {e.id: (cpu_of.get(e.id, e.cpu) if cpu_of else e.cpu) for e in problem.topology.executors}
    executors = sorted(
        problem.topology.executors,
        key=lambda e: executor_sort_key(e.component, e.index, cpu[e.id]),
    )
    node_of: dict[str, str] = {}
    for position, ex in enumerate(executors):
        for node in order:
            if pool.fits(node.id, cpu[ex.id], ex.memory_mb):
                pool.take(node.id, cpu[ex.id], ex.memory_mb)
                node_of[ex.id] = node.id
                break
        else:
            raise single_task_failure(
                algorithm, pool, ex.component, cpu[ex.id], ex.memory_mb, len(executors) - position
            )
    return node_of


def planning_cpu(problem: Problem) -> dict[str, float] | None:
    """Measured executor CPU in reference-core units (§5 heterogeneity,
    ``docs/algorithms/000-topdown.md`` §2.7b).

    The model states every CPU figure in % of a reference core, so node capacities need no
    scaling. This is for the case where measured ``executor_cpu`` values are raw CPU % on
    the node that ran the executor (``problem.current``): multiply by that node's ``speed``.
    To stay valid under the model's verifier, which reads ``executor.cpu`` as reference
    units, the planning cost is ``max(raw, raw · speed)``. ``None`` when nothing changes.
    """
    topology, current = problem.topology, problem.current
    if not topology.executor_cpu or current is None:
        return None
    nodes = problem.node_by_id
    result: dict[str, float] = {}
    for eid, raw in topology.executor_cpu.items():
        node = nodes.get(current.node_of.get(eid, ""))
        speed = node.speed if node is not None else 1.0
        if speed > 1.0:
            result[eid] = raw * speed
    return result or None


MAX_SUGGESTED_PARALLELISM = 512
"""Cap of the gcd suggestion: d = 1 % would mean 100 executors per core
(``docs/algorithms/000-topdown.md`` §2.7a)."""


def granularity_suggestion(problem: Problem, grid: float = 5.0) -> dict[str, object]:
    """The §5 granularity relaxation as a *suggestion* (it needs a Storm rebalance).

    Paper §5: find the gcd ``d`` of the group PCs and node capacities and give each group
    ``c^pc_v / d`` equally sized tasks (erratum E23). Measured PCs are real numbers, so they
    are first quantised to ``grid`` % (``docs/algorithms/000-topdown.md`` §2.7a). A smaller change
    is also proposed: doubling the parallelism of the component with the heaviest executors.
    """
    topology = problem.topology
    units = [max(1, round(c.cpu / grid)) for c in topology.components if c.cpu > 0]
    units += [int(n.cpu // grid) for n in usable_nodes(problem) if n.cpu >= grid]
    d = grid * (math.gcd(*units) if units else 1)
    parallelism = {
        c.id: min(MAX_SUGGESTED_PARALLELISM, max(c.parallelism, math.ceil(c.cpu / d - 1e-9)))
        for c in topology.components
    }
    heaviest = max(topology.components, key=lambda c: (c.cpu / c.parallelism, c.id))
    return {
        "gcd_cpu": d,
        "parallelism": parallelism,
        "minimal_change": {heaviest.id: 2 * heaviest.parallelism},
        "note": "re-parallelise with a Storm rebalance (-e component=N); executors can only "
        "grow up to the component's task count fixed at submission",
    }


def suggestion_hint(problem: Problem, suggestion: dict[str, object]) -> str:
    """One sentence for the error/report: the granularity relaxation as advice."""
    current = {c.id: c.parallelism for c in problem.topology.components}
    changed = {
        c: n
        for c, n in suggestion["parallelism"].items()  # type: ignore[union-attr]
        if n != current[c]
    }
    gcd_part = f"gcd {suggestion['gcd_cpu']:g}% suggests parallelism {changed}; " if changed else ""
    return (
        f"Finer-grained executors would pack better: {gcd_part}a smaller step is "
        f"{suggestion['minimal_change']} (needs a Storm rebalance; executors can only grow "
        f"up to the component's task count)."
    )
