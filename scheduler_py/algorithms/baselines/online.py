"""Aniello et al.'s traffic-aware *online* scheduler ("OLS"; Aniello, Baldoni, Querzoni,
"Adaptive online scheduling in Storm", DEBS 2013, §4.3).

What is implemented, and from where. The DEBS paper describes a greedy, two-phase,
traffic-driven placement recomputed at run time from measured executor-pair traffic and
executor CPU load; T3's paper (002 §2, §6) and its notes (002 §6.2) summarise it as "sort the
communicating executor pairs by traffic, descending, and put each pair on the least loaded
node that can take it". The details below follow the authors' public code
(``leonardoaniello/storm-adaptive-schedulers``, ``OnlineScheduler.computeBestScheduling``,
``Topology``, ``Slot``, ``NodeManager``), read through the notes' code index:

* **Phase 1, executors → k worker slots** (k = ``topology.workers``): executor pairs by
  descending traffic. Neither executor placed → both into the least loaded slot that can
  take both, else each into the least loaded slot that can take it (the destination
  preferably joining the source). One or both placed → candidate slots = the slots holding
  them plus the least loaded slot able to take the heavier one; both are lifted and put
  back on the candidate combination with the least inter-slot traffic. A slot takes at
  most ``⌈E/k⌉ + ⌈α·(E − k + 1 − ⌈E/k⌉)⌉`` executors (``alpha``). Empty slots at the end
  receive the executor (from a slot with several) whose move adds the least traffic.
* **Phase 2, slots → nodes**: the same procedure on slot pairs by descending inter-slot
  traffic, with nodes instead of slots: a node takes a slot while its load stays within
  ``load_cap × Node.cpu`` (OLS's per-node capacity percentage), it has a free slot, and it
  holds at most ``⌈k/m⌉ + ⌈δ·(k − m + 1 − ⌈k/m⌉)⌉`` of the topology's slots, where
  ``m = ⌈k/m'⌉ + ⌈β·(min(m', k) − ⌈k/m'⌉)⌉`` is the number of nodes to use (``beta``;
  ``m'`` = usable nodes). Finally, while the topology uses fewer than ``m`` nodes, the slot
  move to an unused node that adds the least inter-node traffic is applied.
* **Adaptive trigger**: given ``problem.current`` (a complete, valid placement), the new
  plan replaces it only if its inter-node traffic ≤ (1 − ``min_improvement``/100) × the
  current one's (OLS's ``traffic.improvement``); otherwise the current placement is
  returned unchanged (report ``kept_current``). The rescheduling period
  (``reschedule.timeout``, 180 s) belongs to the caller.

Deviations (ours):

* Loads are executor CPU in the model's reference-core percent (OLS: Hz from thread CPU
  time × core clock — the same measure normalised); node capacity ``load_cap × Node.cpu``.
  "Least loaded" compares *utilisation* (load / capacity), ties by absolute load, executor
  count and id, so heterogeneous nodes are compared fairly (OLS compares absolute Hz).
* The public code adds each slot's *node's own* load instead of the slot's when assigning
  (``Node.assign``: ``this.load += load``), so its capacity check never binds; the
  paper's intent (node load = Σ slot loads) is implemented.
* A slot is also capped at the largest node's capacity (CPU and memory) so that phase 2 can
  always place it alone; memory (not modelled by OLS) is a hard constraint everywhere.
* When phase 2 cannot place a slot (OLS throws), the plan is retried with one more worker
  slot, up to the number of executors or of free slots, then with fewer slots than the
  start; only then :class:`InfeasibleError`.
* k starts at ``max(workers or topology.workers, ⌈Σload / largest capacity⌉)``.
* OLS's per-node slot cap is one number for all nodes; when nodes have fewer free slots
  than that cap and their slots could not hold the k slots, the cap is raised until they
  can (the model's nodes differ in free slots).
* Executors in no traffic pair (OLS leaves them to Storm's EvenScheduler) go to the least
  loaded slot that can take them.
* OLS's γ (per-slot load relative to the average) is not exposed.

References
----------
L. Aniello, R. Baldoni, L. Querzoni, "Adaptive online scheduling in Storm", DEBS 2013,
§4.3 (online scheduler). Notes ``002_t3.md`` §6.2 (OLS monitoring and plan), §4 (OLS as
T3's baseline).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

from scheduler_py.algorithms.registry import register
from scheduler_py.model.capacity import check_feasible, usable_nodes
from scheduler_py.model.cost import evaluate, violations
from scheduler_py.model.errors import InfeasibleError, SchedulingError
from scheduler_py.model.types import EPSILON, Node, Placement, Problem


class _Retry(Exception):
    """Phase 2 could not place a slot: try again with one more worker slot."""

    def __init__(self, reason: str, slot_load: float = 0.0) -> None:
        super().__init__(reason)
        self.slot_load = slot_load


@dataclass
class _Bin:
    """A slot (phase 1) or a node (phase 2): members, load, memory, limits."""

    key: str
    index: int
    cpu_cap: float
    memory_cap: float
    count_cap: int
    members: list = field(default_factory=list)
    load: float = 0.0
    memory: float = 0.0

    def can_take(self, count: int, load: float, memory: float) -> bool:
        return (
            len(self.members) + count <= self.count_cap
            and self.load + load <= self.cpu_cap + EPSILON
            and self.memory + memory <= self.memory_cap + EPSILON
        )

    def utilisation(self) -> float:
        if self.cpu_cap > 0:
            return self.load / self.cpu_cap
        return 0.0 if self.load <= EPSILON else math.inf


class _Packer:
    """The greedy pair procedure shared by both phases (items → bins)."""

    def __init__(
        self,
        bins: list[_Bin],
        load: Callable[[object], float],
        memory: Callable[[object], float],
        rates: dict[object, dict[object, float]],
    ) -> None:
        self.bins = bins
        self.load = load
        self.memory = memory
        self.rates = rates
        self.bin_of: dict[object, _Bin] = {}

    def put(self, item: object, target: _Bin) -> None:
        target.members.append(item)
        target.load += self.load(item)
        target.memory += self.memory(item)
        self.bin_of[item] = target

    def lift(self, item: object) -> _Bin:
        source = self.bin_of.pop(item)
        source.members.remove(item)
        source.load -= self.load(item)
        source.memory -= self.memory(item)
        return source

    def least_loaded(
        self, count: int, load: float, memory: float, exclude: set[int] | None = None
    ) -> _Bin | None:
        candidates = [
            b
            for b in self.bins
            if b.can_take(count, load, memory) and not (exclude and b.index in exclude)
        ]
        if not candidates:
            return None
        return min(candidates, key=lambda b: (b.utilisation(), b.load, len(b.members), b.index))

    def traffic_by_bin(self, item: object, skip: object = None) -> tuple[float, dict[int, float]]:
        """Traffic of ``item`` to placed items (``skip`` ignored): total and per bin."""
        total = 0.0
        by_bin: dict[int, float] = {}
        for other, rate in self.rates.get(item, {}).items():
            if other in (skip, item):
                continue
            placed = self.bin_of.get(other)
            if placed is not None:
                total += rate
                by_bin[placed.index] = by_bin.get(placed.index, 0.0) + rate
        return total, by_bin

    def place_pair(self, u: object, v: object, rate: float) -> bool:
        lu, lv = self.load(u), self.load(v)
        mu, mv = self.memory(u), self.memory(v)
        bu, bv = self.bin_of.get(u), self.bin_of.get(v)
        if bu is None and bv is None:
            target = self.least_loaded(2, lu + lv, mu + mv)
            if target is not None:
                self.put(u, target)
                self.put(v, target)
                return True
            first = self.least_loaded(1, lu, mu)
            if first is None:
                return False
            self.put(u, first)
            if first.can_take(1, lv, mv):
                self.put(v, first)
                return True
            second = self.least_loaded(1, lv, mv)
            if second is None:
                return False
            self.put(v, second)
            return True
        heavier = max(lu, lv)
        spare = self.least_loaded(1, heavier, mu if lu >= lv else mv)
        candidates = [b for b in self.bins if b is bu or b is bv]
        if spare is not None and spare not in candidates:
            candidates.append(spare)
        previous = {u: bu, v: bv}
        for item, where in previous.items():
            if where is not None:
                self.lift(item)
        # inter-bin traffic if u goes to a and v to b, up to a constant (the rest is fixed)
        total_u, to_u = self.traffic_by_bin(u, skip=v)
        total_v, to_v = self.traffic_by_bin(v, skip=u)
        best: tuple[float, _Bin, _Bin] | None = None
        for a in candidates:
            if not a.can_take(1, lu, mu):
                continue
            for b in candidates:
                fits = a.can_take(2, lu + lv, mu + mv) if a is b else b.can_take(1, lv, mv)
                if not fits:
                    continue
                cost = total_u - to_u.get(a.index, 0.0) + total_v - to_v.get(b.index, 0.0)
                cost += rate if a is not b else 0.0
                if best is None or cost < best[0] - EPSILON:
                    best = (cost, a, b)
        if best is None:  # put them back where they were (OLS would throw)
            for item, where in previous.items():
                if where is not None:
                    self.put(item, where)
            missing = [i for i, w in previous.items() if w is None]
            for item in missing:
                target = self.least_loaded(1, self.load(item), self.memory(item))
                if target is None:
                    return False
                self.put(item, target)
            return True
        self.put(u, best[1])
        self.put(v, best[2])
        return True

    def place_alone(self, item: object) -> bool:
        target = self.least_loaded(1, self.load(item), self.memory(item))
        if target is None:
            return False
        self.put(item, target)
        return True


def _sorted_pairs(rates: dict, order: dict) -> list[tuple[object, object, float]]:
    pairs = [
        (u, v, r)
        for u, neighbours in rates.items()
        for v, r in neighbours.items()
        if order[u] < order[v] and r > 0
    ]
    pairs.sort(key=lambda p: (-p[2], order[p[0]], order[p[1]]))
    return pairs


@register(
    "online",
    paper="Aniello et al., DEBS'13 §4.3 (OLS; baseline of 002 T3)",
    summary="Traffic-aware online scheduler: executor pairs by descending traffic into the "
    "least loaded worker slot, then slot pairs into the least utilised node under a load "
    "cap; replaces the current placement only if inter-node traffic improves enough.",
    params={
        "workers": (0, "worker slots k; 0 = topology.workers (raised if the load needs more)"),
        "alpha": (0.0, "α in [0,1]: 0 = executors spread evenly over the slots"),
        "beta": (1.0, "β in [0,1]: 1 = use as many nodes as possible"),
        "delta": (0.0, "δ in [0,1]: 0 = the fewest slots of the topology per node"),
        "load_cap": (1.0, "node capacity as a fraction of Node.cpu (OLS's capacity %)"),
        "min_improvement": (
            0.0,
            "percent inter-node traffic reduction needed to replace problem.current",
        ),
        "normalise_speed": (
            False,
            "measured executor CPU is raw % of the current node's cores: scale by its speed",
        ),
    },
)
def plan(
    problem: Problem,
    *,
    workers: int = 0,
    alpha: float = 0.0,
    beta: float = 1.0,
    delta: float = 0.0,
    load_cap: float = 1.0,
    min_improvement: float = 0.0,
    normalise_speed: bool = False,
) -> Placement:
    """Place ``problem.topology`` with Aniello et al.'s online scheduler.

    ``normalise_speed``: measured executor CPU is raw % of the cores of the node in
    ``problem.current``; OLS's Hz measure is that times the clock, so it is scaled by the
    node's ``speed`` (:func:`scheduler_py.algorithms.t3.measured_cpu_in_reference_units`).

    Returns
    -------
    Placement
        ``worker_of`` = the OLS slot's index on its node; ``report``: ``workers`` (k used),
        ``nodes_target`` (m), ``kept_current``, ``current_internode`` / ``new_internode``
        when a current placement was compared.

    Raises
    ------
    InfeasibleError
        No k up to the number of executors / free slots gives a placement.

    Example
    -------
    >>> from scheduler_py.model import Component, Edge, Node, Problem, Topology
    >>> topo = Topology("t", (Component("a", 2, 40), Component("b", 2, 40)),
    ...                 (Edge("a", "b", 8),), workers=2)
    >>> placement = plan(Problem((Node("n1", 100), Node("n2", 100)), topo))
    >>> sorted(sorted(placement.executors_on(n)) for n in placement.nodes_used)
    [['a#0', 'b#0'], ['a#1', 'b#1']]
    """
    for name, value in (("alpha", alpha), ("beta", beta), ("delta", delta)):
        if not 0.0 <= value <= 1.0:
            raise SchedulingError(f"online: {name} must be in [0, 1], got {value}")
    if load_cap <= 0:
        raise SchedulingError(f"online: load_cap must be > 0, got {load_cap}")
    topology = problem.topology
    check_feasible(problem)
    nodes = sorted(usable_nodes(problem), key=lambda n: n.id)
    executors = list(topology.executors)
    biggest_cpu = max(load_cap * n.cpu for n in nodes)
    biggest_mem = max(n.memory_mb for n in nodes)
    cpu_of = {e.id: e.cpu for e in executors}
    if normalise_speed:
        from scheduler_py.algorithms.t3.plan import measured_cpu_in_reference_units

        cpu_of |= measured_cpu_in_reference_units(problem)
    for executor in executors:
        if cpu_of[executor.id] > biggest_cpu + EPSILON:
            best = max(nodes, key=lambda n: (n.cpu, n.id))
            raise InfeasibleError(
                f"topology {topology.id}: component {executor.component} needs "
                f"{cpu_of[executor.id]:.1f}% CPU per executor but the online scheduler may "
                f"load the best node {best.id} only up to {biggest_cpu:.1f}% "
                f"(load_cap = {load_cap:g}); raise the component's parallelism, load_cap or "
                f"add capacity",
                resource="cpu",
                component=executor.component,
                needed=cpu_of[executor.id],
                best_available=biggest_cpu,
                best_node=best.id,
            )
    total = sum(cpu_of.values())
    limit = min(len(executors), sum(n.slots for n in nodes))
    first_k = max(workers or topology.workers, math.ceil(total / biggest_cpu - EPSILON), 1)
    last_error: _Retry | None = None
    result = None
    start = min(first_k, limit)
    for k in [*range(start, limit + 1), *range(start - 1, 0, -1)]:
        try:
            result = _attempt(
                problem, nodes, k, alpha, beta, delta, load_cap, biggest_cpu, biggest_mem, cpu_of
            )
            break
        except _Retry as retry:
            last_error = retry
    if result is None:
        free = max(nodes, key=lambda n: (load_cap * n.cpu, n.id))
        raise InfeasibleError(
            f"topology {topology.id}: the online scheduler could not pack the topology's "
            f"worker slots onto the nodes with any k from 1 to {limit} "
            f"({last_error}); total load {total:.1f}% against "
            f"{sum(load_cap * n.cpu for n in nodes):.1f}% usable (load_cap = {load_cap:g}); "
            f"add capacity or raise load_cap",
            resource="cpu",
            component=max(topology.components, key=lambda c: (c.cpu, c.id)).id,
            needed=last_error.slot_load if last_error else total,
            best_available=load_cap * free.cpu,
            best_node=free.id,
        )
    placement = result
    current = problem.current
    if current is not None and not violations(problem, current):
        new = evaluate(problem, placement).internode_traffic
        old = evaluate(problem, current).internode_traffic
        report = dict(placement.report, current_internode=old, new_internode=new)
        if new > (1.0 - min_improvement / 100.0) * old + EPSILON:
            return Placement(
                topology.id,
                current.node_of,
                worker_of=current.worker_of,
                report=dict(report, kept_current=True),
            )
        return Placement(
            topology.id, placement.node_of, worker_of=placement.worker_of, report=report
        )
    return placement


def _attempt(
    problem: Problem,
    nodes: list[Node],
    k: int,
    alpha: float,
    beta: float,
    delta: float,
    load_cap: float,
    slot_cpu: float,
    slot_mem: float,
    cpu_of: dict[str, float],
) -> Placement:
    topology = problem.topology
    executors = list(topology.executors)
    order = {e.id: i for i, e in enumerate(executors)}
    by_id = topology.executor_by_id
    rates: dict[object, dict[object, float]] = {e.id: {} for e in executors}
    for src, dst, rate in topology.pair_traffics():
        if src in rates and dst in rates and src != dst:
            rates[src][dst] = rates[src].get(dst, 0.0) + rate
            rates[dst][src] = rates[dst].get(src, 0.0) + rate

    # phase 1: executors -> k slots
    count = len(executors)
    low = math.ceil(count / k)
    per_slot = low + math.ceil(alpha * (count - k + 1 - low))
    slots = [_Bin(f"slot{i}", i, slot_cpu, slot_mem, per_slot) for i in range(k)]
    packer = _Packer(slots, cpu_of.__getitem__, lambda e: by_id[e].memory_mb, rates)
    for u, v, rate in _sorted_pairs(rates, order):
        if not packer.place_pair(u, v, rate):
            raise _Retry(f"no worker slot can take executor {u} or {v}")
    for executor in executors:
        if executor.id not in packer.bin_of and not packer.place_alone(executor.id):
            raise _Retry(f"no worker slot can take executor {executor.id}")
    for empty in [s for s in slots if not s.members]:
        # the executor whose move out of a shared slot adds the least inter-slot traffic
        moves = [
            (sum(rates[e].get(f, 0.0) for f in s.members if f != e), s.index, order[e], e)
            for s in slots
            if len(s.members) > 1
            for e in s.members
        ]
        if not moves:
            continue
        *_, executor = min(moves, key=lambda m: m[:3])
        packer.lift(executor)
        packer.put(executor, empty)
    slots = [s for s in slots if s.members]

    # phase 2: slots -> nodes
    slot_rates: dict[object, dict[object, float]] = {s.index: {} for s in slots}
    for u, v, rate in _sorted_pairs(rates, order):
        a, b = packer.bin_of[u].index, packer.bin_of[v].index
        if a != b:
            slot_rates[a][b] = slot_rates[a].get(b, 0.0) + rate
            slot_rates[b][a] = slot_rates[b].get(a, 0.0) + rate
    slot_by_index = {s.index: s for s in slots}
    node_count = min(len(nodes), len(slots))
    low_nodes = math.ceil(len(slots) / node_count)
    nodes_target = low_nodes + math.ceil(beta * (min(node_count, len(slots)) - low_nodes))
    low_slots = math.ceil(len(slots) / nodes_target)
    per_node = low_slots + math.ceil(delta * (len(slots) - nodes_target + 1 - low_slots))
    # nodes with fewer free slots than the cap: raise the cap until the slots can hold k
    while per_node < len(slots) and sum(min(n.slots, per_node) for n in nodes) < len(slots):
        per_node += 1
    bins = [
        _Bin(n.id, i, load_cap * n.cpu, n.memory_mb, min(n.slots, per_node))
        for i, n in enumerate(nodes)
    ]
    placer = _Packer(
        bins,
        lambda s: slot_by_index[s].load,
        lambda s: slot_by_index[s].memory,
        slot_rates,
    )
    slot_order = {s.index: s.index for s in slots}
    for a, b, rate in _sorted_pairs(slot_rates, slot_order):
        if not placer.place_pair(a, b, rate):
            raise _Retry(
                f"no node can take worker slot(s) of load {slot_by_index[a].load:.1f}%",
                slot_by_index[a].load,
            )
    for slot in slots:
        if slot.index not in placer.bin_of and not placer.place_alone(slot.index):
            raise _Retry(f"no node can take a worker slot of load {slot.load:.1f}%", slot.load)
    _spread(placer, bins, nodes_target)

    node_of: dict[str, str] = {}
    worker_of: dict[str, int] = {}
    for node_bin in bins:
        for position, index in enumerate(sorted(node_bin.members)):
            for executor in slot_by_index[index].members:
                node_of[executor] = node_bin.key
                worker_of[executor] = position
    return Placement(
        topology.id,
        node_of,
        worker_of=worker_of,
        report={
            "workers": len(slots),
            "executors_per_slot": per_slot,
            "nodes_target": nodes_target,
            "slots_per_node": per_node,
            "load_cap": load_cap,
            "kept_current": False,
        },
    )


def _spread(placer: _Packer, bins: list[_Bin], target: int) -> None:
    """OLS's last step: while fewer than ``target`` nodes are used, move the slot (from a
    node holding several) whose move to an empty node adds the least inter-node traffic."""
    while sum(1 for b in bins if b.members) < target:
        best: tuple[float, object, _Bin, _Bin] | None = None
        for source in bins:
            if len(source.members) < 2:
                continue
            for slot in source.members:
                load, memory = placer.load(slot), placer.memory(slot)
                empty = next(
                    (b for b in bins if not b.members and b.can_take(1, load, memory)), None
                )
                if empty is None:
                    continue
                added = sum(placer.rates.get(slot, {}).get(o, 0.0) for o in source.members)
                if best is None or (added, slot) < (best[0], best[1]):
                    best = (added, slot, source, empty)
        if best is None:
            return
        _, slot, _, empty = best
        placer.lift(slot)
        placer.put(slot, empty)
