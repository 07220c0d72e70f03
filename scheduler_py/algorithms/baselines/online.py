"""Aniello et al.'s traffic-aware *online* scheduler ("OLS"; Aniello, Baldoni, Querzoni,
"Adaptive online scheduling in Storm", DEBS 2013, §4.3).

What is implemented, and from where. The DEBS paper describes a greedy, two-phase,
traffic-driven placement recomputed at run time from measured executor-pair traffic and
executor CPU load; T3's paper (002 §2, §6) and ``docs/algorithms/baselines.md`` summarise it as
"sort the communicating executor pairs by traffic, descending, and put each pair on the least loaded
node that can take it". The details below follow the authors' public code
(``leonardoaniello/storm-adaptive-schedulers``, ``OnlineScheduler.computeBestScheduling``,
``Topology``, ``Slot``, ``NodeManager``), as summarised in ``docs/algorithms/baselines.md``:

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

The pair packing both phases use is :mod:`scheduler_py.algorithms.baselines.online_packer`.

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
§4.3 (online scheduler). ``docs/algorithms/baselines.md`` §"online"; paper 002 §6 (OLS as
T3's baseline).
"""

from __future__ import annotations

import math

from scheduler_py.algorithms.baselines.online_packer import Bin, Packer, sorted_pairs, spread
from scheduler_py.algorithms.registry import register
from scheduler_py.model.budget import UNLIMITED, Budget
from scheduler_py.model.capacity import check_feasible, usable_nodes
from scheduler_py.model.cost import evaluate, violations
from scheduler_py.model.errors import InfeasibleError, SchedulingError
from scheduler_py.model.types import EPSILON, Node, Placement, Problem


class _Retry(Exception):
    """Phase 2 could not place a slot: try again with one more worker slot."""

    def __init__(self, reason: str, slot_load: float = 0.0) -> None:
        super().__init__(reason)
        self.slot_load = slot_load


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
    budget: Budget = UNLIMITED,
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
    slots = [Bin(f"slot{i}", i, slot_cpu, slot_mem, per_slot) for i in range(k)]
    packer = Packer(slots, cpu_of.__getitem__, lambda e: by_id[e].memory_mb, rates)
    for u, v, rate in sorted_pairs(rates, order):
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
    for u, v, rate in sorted_pairs(rates, order):
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
        Bin(n.id, i, load_cap * n.cpu, n.memory_mb, min(n.slots, per_node))
        for i, n in enumerate(nodes)
    ]
    placer = Packer(
        bins,
        lambda s: slot_by_index[s].load,
        lambda s: slot_by_index[s].memory,
        slot_rates,
    )
    slot_order = {s.index: s.index for s in slots}
    for a, b, rate in sorted_pairs(slot_rates, slot_order):
        if not placer.place_pair(a, b, rate):
            raise _Retry(
                f"no node can take worker slot(s) of load {slot_by_index[a].load:.1f}%",
                slot_by_index[a].load,
            )
    for slot in slots:
        if slot.index not in placer.bin_of and not placer.place_alone(slot.index):
            raise _Retry(f"no node can take a worker slot of load {slot.load:.1f}%", slot.load)
    spread(placer, bins, nodes_target)

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
