"""T3-Scheduler: topology- and traffic-aware two-level scheduling for heterogeneous clusters
(Eskandari, Mair, Huang, Eyers, FGCS 2018).

Minimise the inter-node traffic Σ R(t_i, t_j)·X_ij (Eq. 1) subject to Σ L(t) ≤ C(n) on
every node (Eq. 2), in five steps (Alg. 1):

1. **Monitoring** (§4.1) — the task loads ``L(t)`` and pair rates ``R(t_i, t_j)`` come from
   the topology: measured values when it carries them (``Topology.executor_cpu``,
   ``Topology.pair_traffic``, fed by monitoring), else the declared ones (component CPU
   split over executors, edge traffic split over executor pairs, Eq. 1 of the model); when
   no edge declares any traffic every communicating pair gets rate 1 (the paper's §5
   "uniform" setting).
2. **Simplified graph** (§4.2) — one group per component; group weight Σ L, group-edge
   weight Σ R over the task pairs. Groups are only ever split (so a group is a subset of
   one component's executors); weights are recomputed from the task-level rates.
3. **Node selection** (§4.3) — the unused node with the highest capacity
   ``C(n) = u_max × Node.cpu``; capacities are in the model's reference-core percent
   (normalised to a reference core as 000 §5 and T3 §6 do: cores × clock), so
   heterogeneous nodes compare directly. Measured loads taken on a faster node can be
   scaled to reference units by that node's ``Node.speed`` (``normalise_speed``).
4. **First level** (§4.4, Alg. 2) — fill the node: the heaviest pair of unassigned
   communicating groups is the starting point (split by *group pair partitioning*, §4.4.2,
   when it does not fit), then the heaviest neighbour of the node's sub-graph is added
   (split by *single group partitioning*, §4.4.3, when it does not fit), until the node is
   full; then the next node.
5. **Second level** (§4.5, Eq. 3) — ``w = ⌈t / T⌉`` workers on a node with ``t`` tasks; the
   node's sub-graph is split into ``w`` parts by METIS k-way (``pymetis``), one part per
   worker (``Placement.worker_of``).

Deviations from the printed pseudo-code and the paper's open points (notes 002 §2, §6.1):

* Eq. 2's strict ``<`` is read as ``≤`` (A1; App. A and §5 need it).
* Ties are broken in a stable order instead of at random (A9): nodes by id; groups and
  tasks by the components' topological order (Kahn, ties by declaration order), then
  executor index. The paper's "T3 = optimum on linear" holds only with this order.
* "Node is full" = no single unassigned task fits in what is left (A5, A12); with uniform
  loads this is the paper's meaning. A task fits when its CPU fits ``C(n)`` and its memory
  fits ``Node.memory_mb`` (memory is a hard constraint the paper does not model).
* No unassigned neighbour while the node has room: **restart** on the same node with a new
  starting pair (A6); no pair of communicating unassigned groups at all: the single group
  with the largest load (A7).
* Group pair partitioning (App. A) rescans the task pairs from the top after every
  selection; when a two-new-task partner cannot be found (the smaller group is exhausted,
  or only one task fits), the single new task is added (``pair_single_fallback``, A8).
* Single group partitioning ranks tasks by their largest single rate to the sub-graph, then
  by their summed rate, then by task order (A11).
* Neighbour weight = the summed rate from the candidate group to the whole sub-graph (A10);
  communicating groups with a zero measured rate stay eligible (A16).
* A partition that selects nothing (every candidate task too big for what is left) skips
  that group or pair for this node instead of looping.
* Workers: ``w = min(⌈t/T⌉, free slots)``; when the slot cap binds, parts may exceed T and
  the report says so (A13). With ``slot_aware=True`` the first level also limits a node to
  ``T × slots`` tasks. METIS parts above T are repaired by least-loss moves (A14).
* System executors (ackers, metrics) are not in the T3 graph (A15): after T3 they are
  placed round-robin over the topology's workers, starting with the first spout's, on the
  first whose node still has room (else any node with room).
* Capacity with several topologies (A17): ``C(n) = u_max × Node.cpu`` where ``Node.cpu`` is
  already net of the other topologies (:mod:`scheduler_py.scheduling.documents`), i.e. slightly
  stricter than the notes' ``u_max·total − others``.
* T3 is applied once after profiling (§6): it plans from scratch; ``problem.current`` is
  only read to scale measured CPU by the speed of the node that measured it
  (``normalise_speed``). The apply-only-if-better rule is the caller's (notes §6.3).
* Tasks left when every node is used (A18): instead of over-committing a node, raise
  :class:`InfeasibleError` naming the component, the resource and the best offer.

References
----------
L. Eskandari, J. Mair, Z. Huang, D. Eyers, "T3-Scheduler: A topology and Traffic aware
two-level Scheduler for stream processing systems in a heterogeneous cluster", Future
Generation Computer Systems 89 (2018), §3 (Eq. 1-2), §4 (Alg. 1-2, Eq. 3), App. A-C.
Notes ``002_t3.md`` §2 (specification and test cases), §3 (§5 reference numbers), §6.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable
from dataclasses import dataclass, field

import networkx as nx

from scheduler_py.algorithms.registry import register
from scheduler_py.algorithms.t3.partition import cut_weight, kway
from scheduler_py.algorithms.topdown.groups import planning_cpu
from scheduler_py.model.capacity import check_feasible
from scheduler_py.model.errors import InfeasibleError, SchedulingError
from scheduler_py.model.types import EPSILON, Node, Placement, Problem, Topology

# --------------------------------------------------------------------------------------
# Profile: loads, rates, task order
# --------------------------------------------------------------------------------------


def topological_components(topology: Topology) -> list[str]:
    """User components in topological order, ties by declaration order (networkx's
    lexicographical topological sort). A cycle (Storm allows them) is ordered as one unit:
    the strongly connected components are sorted topologically, each listing its members in
    declaration order."""
    user = [c.id for c in topology.components if not c.is_system]
    position = {c: i for i, c in enumerate(user)}
    graph = nx.DiGraph()
    graph.add_nodes_from(user)
    graph.add_edges_from(
        (e.source, e.target)
        for e in topology.merged_edges
        if e.source in position and e.target in position and e.source != e.target
    )
    if nx.is_directed_acyclic_graph(graph):
        return list(nx.lexicographical_topological_sort(graph, key=position.__getitem__))
    condensed = nx.condensation(graph)
    members = {
        unit: sorted(condensed.nodes[unit]["members"], key=position.__getitem__)
        for unit in condensed
    }
    units = nx.lexicographical_topological_sort(
        condensed, key=lambda unit: position[members[unit][0]]
    )
    return [component for unit in units for component in members[unit]]


def measured_cpu_in_reference_units(problem: Problem) -> dict[str, float]:
    """§6 heterogeneity: measured executor CPU read as raw % of the cores of the node that
    ran it (``problem.current``), converted to reference-core % by that node's ``speed``
    (T3 / OLS measure thread CPU time × core clock). To stay valid under the model's
    verifier, which reads ``executor.cpu`` as reference units, the planning load is
    ``max(raw, raw × speed)`` — the rule ``td`` uses, from the same function. Empty when
    nothing changes."""
    return planning_cpu(problem) or {}


@dataclass
class Profile:
    """The monitoring input of T3 (§4.1): task order, loads, memory, symmetric rates."""

    tasks: list[str]
    component_of: dict[str, str]
    order: dict[str, int]
    load: dict[str, float]
    memory: dict[str, float]
    rates: dict[str, dict[str, float]]
    connected: dict[str, set[str]]
    source: str
    """``measured``, ``declared`` or ``uniform`` (where the rates came from)."""


def build_profile(topology: Topology, cpu_of: dict[str, float] | None = None) -> Profile:
    """The T3 input from a topology; ``cpu_of`` overrides executor loads (speed scaling)."""
    cpu_of = cpu_of or {}
    components = topological_components(topology)
    user = set(components)
    tasks: list[str] = []
    component_of: dict[str, str] = {}
    load: dict[str, float] = {}
    memory: dict[str, float] = {}
    for component in components:
        for executor in topology.executors_of(component):
            tasks.append(executor.id)
            component_of[executor.id] = component
            load[executor.id] = cpu_of.get(executor.id, executor.cpu)
            memory[executor.id] = executor.memory_mb
    order = {t: i for i, t in enumerate(tasks)}
    rates: dict[str, dict[str, float]] = {t: {} for t in tasks}
    connected: dict[str, set[str]] = {c: set() for c in components}
    for edge in topology.merged_edges:
        if edge.source in user and edge.target in user:
            connected[edge.source].add(edge.target)
            connected[edge.target].add(edge.source)
    declared = any(e.traffic > 0 for e in topology.merged_edges)
    if topology.has_measured_traffic or declared:
        source = "measured" if topology.has_measured_traffic else "declared"
        for src, dst, rate in topology.pair_traffics():
            if src in order and dst in order and src != dst:
                rates[src][dst] = rates[src].get(dst, 0.0) + rate
                rates[dst][src] = rates[dst].get(src, 0.0) + rate
                a, b = component_of[src], component_of[dst]
                if a != b:
                    connected[a].add(b)
                    connected[b].add(a)
    else:
        source = "uniform"
        for edge in topology.merged_edges:
            if edge.source in user and edge.target in user:
                for s in topology.executors_of(edge.source):
                    for t in topology.executors_of(edge.target):
                        rates[s.id][t.id] = rates[s.id].get(t.id, 0.0) + 1.0
                        rates[t.id][s.id] = rates[t.id].get(s.id, 0.0) + 1.0
    if topology.executor_cpu:
        source = "measured"
    return Profile(tasks, component_of, order, load, memory, rates, connected, source)


# --------------------------------------------------------------------------------------
# Simplified graph (§4.2)
# --------------------------------------------------------------------------------------


@dataclass
class Group:
    gid: int
    component: str
    tasks: list[str]
    rank: tuple[int, int]
    assigned: bool = False


@dataclass
class SimplifiedGraph:
    profile: Profile
    groups: dict[int, Group] = field(default_factory=dict)
    _weights: dict[tuple[int, int], float] = field(default_factory=dict)
    _ids: itertools.count = field(default_factory=itertools.count)
    component_rank: dict[str, int] = field(default_factory=dict)
    log: list[str] = field(default_factory=list)

    @classmethod
    def of(cls, profile: Profile) -> SimplifiedGraph:
        graph = cls(profile)
        components: list[str] = []
        for task in profile.tasks:
            if profile.component_of[task] not in components:
                components.append(profile.component_of[task])
        graph.component_rank = {c: i for i, c in enumerate(components)}
        for component in components:
            graph._add(
                component, [t for t in profile.tasks if profile.component_of[t] == component]
            )
        return graph

    def _add(self, component: str, tasks: list[str]) -> Group:
        order = self.profile.order
        tasks = sorted(tasks, key=order.__getitem__)
        group = Group(
            next(self._ids), component, tasks, (self.component_rank[component], order[tasks[0]])
        )
        self.groups[group.gid] = group
        return group

    def split(self, group: Group, selected: Iterable[str]) -> tuple[Group | None, Group | None]:
        """Replace ``group`` by (selected part, leftover); either may be ``None`` if empty."""
        chosen = set(selected)
        first = [t for t in group.tasks if t in chosen]
        rest = [t for t in group.tasks if t not in chosen]
        if not rest:
            return group, None
        if not first:
            return None, group
        del self.groups[group.gid]
        return self._add(group.component, first), self._add(group.component, rest)

    def unassigned(self) -> list[Group]:
        return sorted((g for g in self.groups.values() if not g.assigned), key=lambda g: g.rank)

    def connected(self, a: Group, b: Group) -> bool:
        return b.component in self.profile.connected[a.component]

    def weight(self, a: Group, b: Group) -> float:
        """Σ R over the task pairs of two groups (cached; groups never change in place)."""
        key = (a.gid, b.gid) if a.gid < b.gid else (b.gid, a.gid)
        if key not in self._weights:
            rates = self.profile.rates
            small, large = (a, b) if len(a.tasks) <= len(b.tasks) else (b, a)
            members = set(large.tasks)
            self._weights[key] = sum(
                r for t in small.tasks for s, r in rates[t].items() if s in members
            )
        return self._weights[key]

    def load(self, tasks: Iterable[str]) -> float:
        return sum(self.profile.load[t] for t in tasks)

    def memory(self, tasks: Iterable[str]) -> float:
        return sum(self.profile.memory[t] for t in tasks)


# --------------------------------------------------------------------------------------
# First level (§4.4)
# --------------------------------------------------------------------------------------


@dataclass
class Bin:
    """The node being filled: what is left of C(n), memory and the task-count limit."""

    node: Node
    cpu: float
    memory: float
    count: float
    tasks: list[str] = field(default_factory=list)

    def fits(self, load: float, memory: float, count: int) -> bool:
        return (
            load <= self.cpu + EPSILON
            and memory <= self.memory + EPSILON
            and count <= self.count + EPSILON
        )

    def take(self, graph: SimplifiedGraph, tasks: list[str]) -> None:
        self.cpu -= graph.load(tasks)
        self.memory -= graph.memory(tasks)
        self.count -= len(tasks)
        self.tasks.extend(tasks)


def pair_partition(
    graph: SimplifiedGraph, a: Group, b: Group, room: Bin, *, single_fallback: bool = True
) -> list[str]:
    """§4.4.2 / App. A: the tasks of (A₁, B₁) — highest-rate task pairs first, two new
    tasks per step (scenarios 1-3), the single new task when no partner fits."""
    profile = graph.profile
    rates, order = profile.rates, profile.order
    side = {t: a for t in a.tasks} | {t: b for t in b.tasks}
    pairs = sorted(
        ((rates[x].get(y, 0.0), x, y) for x in a.tasks for y in b.tasks),
        key=lambda p: (-p[0], order[p[1]], order[p[2]]),
    )
    selected: set[str] = set()
    load = memory = 0.0

    def fits(*tasks: str) -> bool:
        return room.fits(
            load + sum(profile.load[t] for t in tasks),
            memory + sum(profile.memory[t] for t in tasks),
            len(selected) + len(tasks),
        )

    while True:
        pick: tuple[str, ...] = ()
        for _, x, y in pairs:
            if x in selected and y in selected:  # scenario 3
                continue
            if x not in selected and y not in selected:  # scenario 1
                if fits(x, y):
                    pick = (x, y)
                    break
                continue
            new = y if x in selected else x  # scenario 2
            old_side = side[x if x in selected else y]
            partners = sorted(
                (t for t in old_side.tasks if t not in selected),
                key=lambda t: (-rates[t].get(new, 0.0), order[t]),
            )
            partner = next((t for t in partners if fits(t, new)), None)
            if partner is not None:
                pick = (partner, new)
                break
            if single_fallback and fits(new):
                pick = (new,)
                break
        if not pick:
            return [t for t in a.tasks + b.tasks if t in selected]
        selected.update(pick)
        load += sum(profile.load[t] for t in pick)
        memory += sum(profile.memory[t] for t in pick)


def single_partition(graph: SimplifiedGraph, group: Group, room: Bin) -> list[str]:
    """§4.4.3 / App. B: the tasks of A₁ — by highest single rate to the sub-graph (then
    summed rate, then task order); a task that does not fit is skipped."""
    profile = graph.profile
    rates, order = profile.rates, profile.order
    on_node = room.tasks

    def key(t: str) -> tuple[float, float, int]:
        links = [rates[t].get(s, 0.0) for s in on_node]
        return (-max(links, default=0.0), -sum(links), order[t])

    selected: list[str] = []
    load = memory = 0.0
    for t in sorted(group.tasks, key=key):
        if room.fits(load + profile.load[t], memory + profile.memory[t], len(selected) + 1):
            selected.append(t)
            load += profile.load[t]
            memory += profile.memory[t]
    return selected


def _starting_point(
    graph: SimplifiedGraph, skipped: set
) -> tuple[Group, Group] | tuple[Group] | None:
    """The heaviest pair of communicating unassigned groups (first maximum in rank order);
    without any, the single unassigned group with the largest load."""
    groups = graph.unassigned()
    best: tuple[float, Group, Group] | None = None
    for i, g in enumerate(groups):
        for h in groups[i + 1 :]:
            if not graph.connected(g, h) or (g.gid, h.gid) in skipped:
                continue
            w = graph.weight(g, h)
            if best is None or w > best[0]:
                best = (w, g, h)
    if best is not None:
        return best[1], best[2]
    singles = [g for g in groups if g.gid not in skipped]
    if not singles:
        return None
    return (max(singles, key=lambda g: (graph.load(g.tasks), -g.rank[0], -g.rank[1])),)


def _neighbour(graph: SimplifiedGraph, on_node: list[Group], skipped: set) -> Group | None:
    """The unassigned group communicating most with the node's sub-graph (Σ of weights)."""
    best: tuple[float, Group] | None = None
    for g in graph.unassigned():
        if g.gid in skipped:
            continue
        linked = [h for h in on_node if graph.connected(g, h)]
        if not linked:
            continue
        w = sum(graph.weight(g, h) for h in linked)
        if best is None or w > best[0]:
            best = (w, g)
    return None if best is None else best[1]


def _full(graph: SimplifiedGraph, room: Bin) -> bool:
    profile = graph.profile
    return not any(
        room.fits(profile.load[t], profile.memory[t], 1)
        for g in graph.unassigned()
        for t in g.tasks
    )


def first_level(graph: SimplifiedGraph, room: Bin, *, single_fallback: bool = True) -> list[Group]:
    """Fill one node (Alg. 1 FIRST_LEVEL + Alg. 2 GROUP_SELECTION); returns its groups."""
    on_node: list[Group] = []
    skipped: set = set()
    name = room.node.id

    def assign(group: Group) -> None:
        group.assigned = True
        on_node.append(group)
        room.take(graph, group.tasks)

    while graph.unassigned() and not _full(graph, room):
        neighbour = _neighbour(graph, on_node, skipped) if on_node else None
        if neighbour is not None:
            if room.fits(
                graph.load(neighbour.tasks), graph.memory(neighbour.tasks), len(neighbour.tasks)
            ):
                assign(neighbour)
                continue
            chosen = single_partition(graph, neighbour, room)
            if not chosen:
                skipped.add(neighbour.gid)
                continue
            part, _ = graph.split(neighbour, chosen)
            graph.log.append(
                f"{name}: single group partitioning of {neighbour.component} "
                f"{_span(neighbour.tasks)} -> {_span(chosen)}"
            )
            assign(part)
            continue
        start = _starting_point(graph, skipped)
        if start is None:
            break
        tasks = [t for g in start for t in g.tasks]
        if room.fits(graph.load(tasks), graph.memory(tasks), len(tasks)):
            for g in start:
                assign(g)
            continue
        if len(start) == 1:
            (group,) = start
            chosen = single_partition(graph, group, room)
            if not chosen:
                skipped.add(group.gid)
                continue
            part, _ = graph.split(group, chosen)
            graph.log.append(f"{name}: split single group {group.component} -> {_span(chosen)}")
            assign(part)
            continue
        a, b = start
        chosen = pair_partition(graph, a, b, room, single_fallback=single_fallback)
        if not chosen:
            skipped.add((a.gid, b.gid))
            continue
        graph.log.append(
            f"{name}: group pair partitioning of ({a.component}, {b.component}) -> {_span(chosen)}"
        )
        for group in (a, b):
            part, _ = graph.split(group, [t for t in chosen if t in set(group.tasks)])
            if part is not None:
                assign(part)
    return on_node


def _span(tasks: list[str]) -> str:
    return "[" + ", ".join(tasks) + "]"


# --------------------------------------------------------------------------------------
# The scheduler
# --------------------------------------------------------------------------------------


@register(
    "t3",
    paper="002 T3-Scheduler (FGCS'18) §4, Alg. 1-2, Eq. 3",
    summary="T3: fill the highest-capacity nodes with sub-graphs of highly communicating "
    "component groups (pair / single group partitioning), then METIS k-way into "
    "⌈t/T⌉ workers per node; uses measured loads and rates when present.",
    params={
        "u_max": (0.8, "node utilisation threshold: C(n) = u_max × Node.cpu"),
        "tasks_per_worker": (5, "T, the maximum tasks per worker (Eq. 3: w = ⌈t/T⌉)"),
        "slot_aware": (False, "first level also limits a node to T × free slots tasks"),
        "pair_single_fallback": (True, "pair partitioning adds a single task when no pair fits"),
        "seed": (0, "METIS seed (second level)"),
        "ufactor": (30, "METIS imbalance (30 = 1.03)"),
        "normalise_speed": (
            False,
            "measured executor CPU is raw % of the current node's cores: scale by its speed",
        ),
    },
)
def plan(
    problem: Problem,
    *,
    u_max: float = 0.8,
    tasks_per_worker: int = 5,
    slot_aware: bool = False,
    pair_single_fallback: bool = True,
    seed: int = 0,
    ufactor: int = 30,
    normalise_speed: bool = False,
) -> Placement:
    """Place ``problem.topology`` with T3.

    Parameters
    ----------
    u_max:
        Fraction of ``Node.cpu`` T3 may fill (the paper's 80 %).
    tasks_per_worker:
        T of Eq. 3 (5 in the paper's §6; App. C uses 6).
    slot_aware:
        Count ``T × slots`` as a second capacity in the first level (notes A13).
    pair_single_fallback:
        Notes A8 (on); off = only two-new-task steps after the first pair.
    seed, ufactor:
        METIS options of the second level.
    normalise_speed:
        Read measured executor CPU as raw % on the node of ``problem.current`` and scale it
        by that node's ``speed`` (:func:`measured_cpu_in_reference_units`).

    Returns
    -------
    Placement
        ``worker_of`` = logical worker per node; ``report``: ``costs`` (measured /
        declared / uniform), ``nodes`` (per node: tasks, workers, cut inside the node),
        ``interworker_cut``, ``capped_workers`` (nodes whose slots capped ``w``) and the
        partitioning ``log``.

    Raises
    ------
    InfeasibleError
        Tasks remain when every node is full.

    Example
    -------
    >>> from scheduler_py.model import Component, Edge, Node, Problem, Topology
    >>> topo = Topology("t", (Component("a", 2, 2), Component("b", 2, 2)), (Edge("a", "b", 4),))
    >>> nodes = (Node("big", 4, slots=1), Node("small", 2, slots=1))
    >>> sorted(plan(Problem(nodes, topo), u_max=1.0).node_of.items())
    [('a#0', 'big'), ('a#1', 'big'), ('b#0', 'big'), ('b#1', 'big')]
    """
    if not 0 < u_max <= 1.0 + EPSILON:
        raise SchedulingError(f"t3: u_max must be in (0, 1], got {u_max}")
    if tasks_per_worker < 1:
        raise SchedulingError(f"t3: tasks_per_worker must be >= 1, got {tasks_per_worker}")
    topology = problem.topology
    check_feasible(problem)
    profile = build_profile(
        topology, measured_cpu_in_reference_units(problem) if normalise_speed else None
    )
    _check_capped(problem, profile, u_max)
    graph = SimplifiedGraph.of(profile)
    nodes = sorted((n for n in problem.nodes if n.slots > 0), key=lambda n: (-u_max * n.cpu, n.id))
    bins: list[Bin] = []
    for node in nodes:
        if not graph.unassigned():
            break
        count = tasks_per_worker * node.slots if slot_aware else math.inf
        room = Bin(node, u_max * node.cpu, node.memory_mb, count)
        first_level(graph, room, single_fallback=pair_single_fallback)
        if room.tasks:
            bins.append(room)
    if graph.unassigned():
        raise _leftover(problem, graph, nodes, u_max, bins)
    node_of: dict[str, str] = {}
    worker_of: dict[str, int] = {}
    details: dict[str, dict[str, object]] = {}
    capped: list[str] = []
    for room in bins:
        wanted = math.ceil(len(room.tasks) / tasks_per_worker)
        workers = min(wanted, room.node.slots)
        if workers < wanted:
            capped.append(room.node.id)
        parts = kway(
            sorted(room.tasks, key=profile.order.__getitem__),
            profile.rates,
            workers,
            max_part=tasks_per_worker,
            seed=seed,
            ufactor=ufactor,
        )
        for index, part in enumerate(parts):
            for task in part:
                node_of[task] = room.node.id
                worker_of[task] = index
        details[room.node.id] = {
            "capacity": u_max * room.node.cpu,
            "load": graph.load(room.tasks),
            "tasks": len(room.tasks),
            "workers": len(parts),
            "worker_cut": cut_weight(parts, profile.rates),
        }
    _place_system(problem, u_max, bins, node_of, worker_of)
    return Placement(
        topology.id,
        node_of,
        worker_of=worker_of,
        report={
            "costs": profile.source,
            "u_max": u_max,
            "tasks_per_worker": tasks_per_worker,
            "nodes": details,
            "interworker_cut": sum(d["worker_cut"] for d in details.values()),
            "capped_workers": capped,
            "log": list(graph.log),
        },
    )


def _check_capped(problem: Problem, profile: Profile, u_max: float) -> None:
    """Necessary conditions under C(n) = u_max × cpu, with an operator-facing reason."""
    nodes = [n for n in problem.nodes if n.slots > 0]
    best = max(nodes, key=lambda n: (n.cpu, n.id))
    capacity = u_max * best.cpu
    for task in profile.tasks:
        if profile.load[task] > capacity + EPSILON:
            component = profile.component_of[task]
            raise InfeasibleError(
                f"topology {problem.topology.id}: component {component} needs "
                f"{profile.load[task]:.1f}% CPU per executor but T3 may fill the best node "
                f"{best.id} only up to {capacity:.1f}% (u_max = {u_max:g} of "
                f"{best.cpu:.1f}%); raise the component's parallelism, raise u_max or add "
                f"capacity",
                resource="cpu",
                component=component,
                needed=profile.load[task],
                best_available=capacity,
                best_node=best.id,
            )
    total = sum(profile.load.values())
    available = sum(u_max * n.cpu for n in nodes)
    if total > available + EPSILON:
        heaviest = max(
            {profile.component_of[t] for t in profile.tasks},
            key=lambda c: (
                sum(profile.load[t] for t in profile.tasks if profile.component_of[t] == c),
                c,
            ),
        )
        raise InfeasibleError(
            f"topology {problem.topology.id}: needs {total:.1f}% CPU in total but T3 may "
            f"use {available:.1f}% (u_max = {u_max:g} of the nodes' CPU); largest consumer: "
            f"component {heaviest}; add capacity, raise u_max or lower the load",
            resource="cpu",
            component=heaviest,
            needed=total,
            best_available=available,
        )


def _leftover(
    problem: Problem, graph: SimplifiedGraph, nodes: list[Node], u_max: float, bins: list[Bin]
) -> InfeasibleError:
    profile = graph.profile
    left = [t for g in graph.unassigned() for t in g.tasks]
    first = min(left, key=profile.order.__getitem__)
    component = profile.component_of[first]
    rooms = {b.node.id: b for b in bins}
    remaining = {
        n.id: (rooms[n.id].cpu, rooms[n.id].memory)
        if n.id in rooms
        else (u_max * n.cpu, n.memory_mb)
        for n in nodes
    }
    best = max(remaining, key=lambda n: (remaining[n][0], n)) if remaining else None
    cpu_left = remaining[best][0] if best else 0.0
    resource = "cpu"
    needed, offer = profile.load[first], cpu_left
    if best and profile.load[first] <= cpu_left + EPSILON:
        resource, needed, offer = "memory", profile.memory[first], remaining[best][1]
    return InfeasibleError(
        f"topology {problem.topology.id}: T3 filled every node and {len(left)} executor(s) "
        f"are left, first {first} of component {component} ({profile.load[first]:.1f}% CPU, "
        f"{profile.memory[first]:.1f} MB); the best remaining node {best} has "
        f"{offer:.1f}{'% CPU' if resource == 'cpu' else ' MB'} left under u_max = {u_max:g}. "
        f"The greedy groups fragment capacity when loads are unequal: raise u_max, add "
        f"capacity or raise the component's parallelism",
        resource=resource,
        component=component,
        needed=needed,
        best_available=offer,
        best_node=best,
    )


def _place_system(
    problem: Problem,
    u_max: float,
    bins: list[Bin],
    node_of: dict[str, str],
    worker_of: dict[str, int],
) -> None:
    """Notes A15: system executors round-robin over the topology's workers, starting with
    the first spout's, on the first whose node has room; else any node with room."""
    topology = problem.topology
    system = [e for c in topology.components if c.is_system for e in topology.executors_of(c.id)]
    if not system:
        return
    left_cpu = {n.id: u_max * n.cpu for n in problem.nodes}
    left_mem = {n.id: n.memory_mb for n in problem.nodes}
    for room in bins:
        left_cpu[room.node.id] = room.cpu
        left_mem[room.node.id] = room.memory
    workers = sorted({(node_of[t], worker_of[t]) for t in node_of})
    spouts = [
        t
        for c in topology.components
        if c.is_spout and not c.is_system
        for t in (e.id for e in topology.executors_of(c.id))
        if t in node_of
    ]
    if spouts:
        start = workers.index((node_of[spouts[0]], worker_of[spouts[0]]))
        workers = workers[start:] + workers[:start]
    nodes = problem.node_by_id
    for i, executor in enumerate(system):
        ring = workers[i % len(workers) :] + workers[: i % len(workers)] if workers else []
        target = next(
            (
                (n, w)
                for n, w in ring
                if executor.cpu <= left_cpu[n] + EPSILON
                and executor.memory_mb <= left_mem[n] + EPSILON
            ),
            None,
        )
        if target is None:
            used = {n for n, _ in workers}
            spare = sorted(
                (
                    n
                    for n in nodes.values()
                    if n.slots > 0
                    and executor.cpu <= left_cpu[n.id] + EPSILON
                    and executor.memory_mb <= left_mem[n.id] + EPSILON
                    and (n.id in used or n.slots > 0)
                ),
                key=lambda n: (n.id not in used, -left_cpu[n.id], n.id),
            )
            if not spare:
                best = max(nodes.values(), key=lambda n: (left_cpu[n.id], n.id))
                raise InfeasibleError(
                    f"topology {topology.id}: no node has room for system executor "
                    f"{executor.id} ({executor.cpu:.1f}% CPU, {executor.memory_mb:.1f} MB) "
                    f"after T3; the best node {best.id} has {left_cpu[best.id]:.1f}% CPU left "
                    f"under u_max = {u_max:g}",
                    resource="cpu",
                    component=executor.component,
                    needed=executor.cpu,
                    best_available=left_cpu[best.id],
                    best_node=best.id,
                )
            node = spare[0]
            existing = sorted(w for n, w in workers if n == node.id)
            target = (node.id, existing[0] if existing else 0)
            if not existing:
                workers.append(target)
        n, w = target
        node_of[executor.id] = n
        worker_of[executor.id] = w
        left_cpu[n] -= executor.cpu
        left_mem[n] -= executor.memory_mb
