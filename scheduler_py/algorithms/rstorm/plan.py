"""R-Storm: resource-aware scheduling (Peng, Hosseini, Hong, Farivar, Campbell, Middleware 2015).

A static, all-or-nothing placement of one topology from its declared per-executor CPU
(points, 100 = one core) and memory (MB), following the paper's §4:

1. **Task selection** (Alg. 2 + 3, §4.1.1): a breadth-first traversal of the component
   graph from the spouts, then a round-robin over the components in BFS order taking one
   executor of each per pass, so that executors of adjacent components are placed in close
   succession.
2. **Node selection** (Alg. 4, §4.2): the first executor goes to the *Ref node*, the node
   with the most available resources in the rack with the most available resources; every
   other executor goes to the feasible node minimising the weighted Euclidean distance
   ``√(w_m(m_τ − m_θ)² + w_c(c_τ − c_θ)² + w_b·ND(Ref, θ))`` between its demand and the
   node's *remaining* resources, where ND is the network distance (same node < same rack <
   other rack). Memory is a hard constraint; CPU is treated as hard too (see below).
3. **Schedule** (Alg. 1): the mapping is computed tentatively and committed only when every
   executor found a node (all-or-nothing, §4.1); otherwise :class:`InfeasibleError` names
   the component, the binding resource, its need and the best remaining node's offer.

Racks are read from :attr:`Node.rack` (see :mod:`scheduler_py.model.racks`). Executors of one
topology on one node share one worker (the authors' prototype), except in the ``asf1.0``
variant, which opens a new worker when the per-worker heap cap would be exceeded.

Variants (``variant``; notes 003 §2.5, §2.7):

=============  ===============  ================  ============  ==================  ==========
variant        ND node/rack/    network term      resource      Ref node            Ref moves
               other                              terms
=============  ===============  ================  ============  ==================  ==========
``paper``      0 / 1 / 2        ``w_b·ND``        raw           most resources      no
``proto2015``  1 / 1 / 2        ``(w_b·ND)²``     raw           closest fit         no
``asf1.0``     0 / 0.5 / 1      ``(w_b·ND)²``     normalised    closest fit         to the last
                                                  ``/(x_θ+1)``                      placement
=============  ===============  ================  ============  ==================  ==========

``proto2015`` also scores racks by ``Σ(availMem + availMem)`` (the prototype's bug; CPU
ignored), the others by ``Σ(availMem + availCPU)``. ``asf1.0`` caps a worker's summed memory
at ``worker_max_heap_mb`` (768 MB, ``topology.worker.max.heap.size.mb``).

Deviations from the printed pseudo-code, and the choices the paper leaves open (notes 003
§6, A1-A17):

* **CPU is hard** by default (``cpu_hard=True``): the text calls CPU soft, but the authors'
  code and ASF 1.0 filter nodes on CPU, and only that reproduces the paper's "6 / 7 / 6
  machines" (A1). ``cpu_hard=False`` is the paper-literal variant; it may over-commit CPU,
  which :func:`scheduler_py.algorithms.registry.run` rejects (call :func:`plan` directly).
* Hard constraints use ``≥`` (the code), not the printed strict ``>``; ``strict_memory=True``
  gives the printed form (A2).
* ND values, squaring and weights are not given by the paper (A3, A4); the defaults above
  reproduce the paper's machine counts. Line 13 of Alg. 4 is OCR-garbled; the CPU term is
  read as ``w_c(c_τ − c_θ)²``.
* "Most available resources" = the largest ``availMem + availCPU`` (A5); the Ref node is
  chosen among the nodes of that rack that can host the first executor (all feasible nodes
  when none can). Ties: lowest rack id, then lowest node id (the paper does not say).
* The Ref node is fixed per topology and per call (A6).
* BFS neighbours are children then parents, each sorted by id, marked visited on enqueue;
  roots are all spouts sorted by id (each starts a BFS if still unvisited), then any
  component not reached from a spout (in declaration order), so disconnected and
  multi-spout topologies are complete (A7). Without flagged spouts, the components with
  no incoming edge are the spouts.
* "Task" = executor; within a component executors are taken by ascending index (A8).
* System components (``Component.is_system``: ackers, metrics consumers, event loggers)
  are not traversed; their executors are appended after all user executors, round-robin,
  and placed with the same node selection (A10, as ASF 1.0).
* Nodes with no free slot are never used (A9). When a node's memory is unknown
  (``memory_mb`` infinite), memory cannot be compared: the memory term is dropped from the
  distance and from the rack/node scores for all nodes, while the hard memory check still
  applies (it always passes there).
* ``asf1.0``: the heap cap applies to an executor's whole ``memory_mb`` (the model does not
  split on-/off-heap; ASF's default off-heap is 0).
* ``problem.current`` is ignored: R-Storm computes an initial schedule from the declared
  demands (§1, §4); re-planning a running topology plans it from scratch.
* Heterogeneous nodes: capacities are the model's, already in reference-core percent
  (``Node.cpu``); the raw-unit distance then behaves as memory best-fit and may prefer a
  small node elsewhere to a roomy Ref node (notes 003 §2.6, A17).

References
----------
B. Peng, M. Hosseini, Z. Hong, R. Farivar, R. Campbell, "R-Storm: Resource-Aware Scheduling
in Storm", Middleware 2015, §3 (model), §4 (Alg. 1-4), §5 (implementation).
Notes ``003_rstorm.md`` §2 (worked cases T1-T12), §5 (relation to Storm's RAS), §6.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass

from scheduler_py.algorithms.registry import register
from scheduler_py.model.capacity import check_feasible, usable_nodes
from scheduler_py.model.errors import InfeasibleError, SchedulingError
from scheduler_py.model.types import EPSILON, Executor, Node, Placement, Problem, Topology

VARIANTS = ("paper", "proto2015", "asf1.0")


@dataclass(frozen=True)
class VariantSpec:
    """What distinguishes the three R-Storm variants (module docstring table)."""

    network_distance: tuple[float, float, float]
    """ND for same node, same rack, other rack."""
    squared_network: bool
    normalize: bool
    rack_score_memory_twice: bool
    ref_policy: str
    """``"most"`` (most available resources) or ``"closest"`` (closest fit)."""
    ref_follows_last: bool
    worker_max_heap_mb: float


VARIANT_SPECS = {
    "paper": VariantSpec((0.0, 1.0, 2.0), False, False, False, "most", False, math.inf),
    "proto2015": VariantSpec((1.0, 1.0, 2.0), True, False, True, "closest", False, math.inf),
    "asf1.0": VariantSpec((0.0, 0.5, 1.0), True, True, False, "closest", True, 768.0),
}


# --------------------------------------------------------------------------------------
# Task selection (Alg. 2 and 3)
# --------------------------------------------------------------------------------------


def spouts_of(topology: Topology) -> list[str]:
    """Spout component ids, sorted; components without inputs when none is flagged."""
    user = [c for c in topology.components if not c.is_system]
    flagged = sorted(c.id for c in user if c.is_spout)
    if flagged:
        return flagged
    targets = {e.target for e in topology.merged_edges}
    return sorted(c.id for c in user if c.id not in targets)


def bfs_components(topology: Topology) -> list[str]:
    """Alg. 2 over the user components: BFS from every spout (sorted), neighbours = sorted
    children then sorted parents, visited marked on enqueue; then BFS from any component
    not reached yet, in declaration order."""
    user = [c.id for c in topology.components if not c.is_system]
    allowed = set(user)
    children: dict[str, set[str]] = {c: set() for c in user}
    parents: dict[str, set[str]] = {c: set() for c in user}
    for edge in topology.merged_edges:
        if edge.source in allowed and edge.target in allowed:
            children[edge.source].add(edge.target)
            parents[edge.target].add(edge.source)
    visited: list[str] = []
    seen: set[str] = set()
    for root in [*spouts_of(topology), *user]:
        if root in seen:
            continue
        queue = deque([root])
        seen.add(root)
        visited.append(root)
        while queue:
            component = queue.popleft()
            for neighbour in [*sorted(children[component]), *sorted(parents[component])]:
                if neighbour not in seen:
                    seen.add(neighbour)
                    visited.append(neighbour)
                    queue.append(neighbour)
    return visited


def _round_robin(topology: Topology, components: Iterable[str]) -> list[Executor]:
    queues = [deque(topology.executors_of(c)) for c in components]
    order: list[Executor] = []
    while any(queues):
        for queue in queues:
            if queue:
                order.append(queue.popleft())
    return order


def task_order(topology: Topology) -> list[Executor]:
    """Alg. 3: one executor per component per pass over the BFS order; system
    components' executors appended at the end (also round-robin)."""
    system = [c.id for c in topology.components if c.is_system]
    return _round_robin(topology, bfs_components(topology)) + _round_robin(topology, system)


# --------------------------------------------------------------------------------------
# Node selection (Alg. 4)
# --------------------------------------------------------------------------------------


class _State:
    """Remaining resources and this topology's workers per node during one plan."""

    def __init__(self, nodes: tuple[Node, ...], heap_cap: float) -> None:
        self.nodes = {n.id: n for n in nodes}
        self.cpu = {n.id: n.cpu for n in nodes}
        self.memory = {n.id: n.memory_mb for n in nodes}
        self.workers: dict[str, list[float]] = {n.id: [] for n in nodes}
        self.heap_cap = heap_cap
        self.memory_known = all(math.isfinite(n.memory_mb) for n in nodes)

    def memory_ok(self, node: str, need: float, strict: bool) -> bool:
        have = self.memory[node]
        return have > need + EPSILON if strict else need <= have + EPSILON

    def cpu_ok(self, node: str, need: float) -> bool:
        return need <= self.cpu[node] + EPSILON

    def worker_for(self, node: str, memory: float) -> int | None:
        """The worker index the executor would join on ``node`` (None: no room)."""
        heaps = self.workers[node]
        if not math.isfinite(self.heap_cap):
            return 0 if heaps or self.nodes[node].slots > 0 else None
        for index, heap in enumerate(heaps):
            if heap + memory <= self.heap_cap + EPSILON:
                return index
        if len(heaps) < self.nodes[node].slots and memory <= self.heap_cap + EPSILON:
            return len(heaps)
        return None

    def take(self, node: str, executor: Executor, worker: int) -> None:
        self.cpu[node] -= executor.cpu
        self.memory[node] -= executor.memory_mb
        heaps = self.workers[node]
        if worker == len(heaps):
            heaps.append(0.0)
        heaps[worker] += executor.memory_mb


def _network_distance(spec: VariantSpec, nodes: dict[str, Node], ref: str, node: str) -> float:
    same_node, same_rack, other_rack = spec.network_distance
    if ref == node:
        return same_node
    return same_rack if nodes[ref].rack == nodes[node].rack else other_rack


def _resource_terms(
    state: _State, spec: VariantSpec, normalize: bool, executor: Executor, node: str
) -> tuple[float, float]:
    """Squared memory and CPU differences between demand and remaining resources."""
    avail_cpu, avail_mem = state.cpu[node], state.memory[node]
    d_cpu = executor.cpu - avail_cpu
    d_mem = executor.memory_mb - avail_mem if state.memory_known else 0.0
    if normalize or spec.normalize:
        d_cpu /= avail_cpu + 1.0
        if state.memory_known:
            d_mem /= avail_mem + 1.0
    return d_mem * d_mem, d_cpu * d_cpu


def _distance(
    state: _State,
    spec: VariantSpec,
    normalize: bool,
    weights: tuple[float, float, float],
    executor: Executor,
    ref: str,
    node: str,
) -> float:
    """DISTANCE of Alg. 4: demand vs remaining resources, plus the network distance."""
    weight_memory, weight_cpu, weight_network = weights
    d_mem, d_cpu = _resource_terms(state, spec, normalize, executor, node)
    nd = weight_network * _network_distance(spec, state.nodes, ref, node)
    network = nd * nd if spec.squared_network else nd
    return math.sqrt(max(0.0, weight_memory * d_mem + weight_cpu * d_cpu + network))


def _available_sum(state: _State, spec: VariantSpec, node: str) -> float:
    """ "Most available resources" of a node (notes 003 A5)."""
    memory = state.memory[node] if state.memory_known else 0.0
    if spec.rack_score_memory_twice and state.memory_known:
        return 2.0 * memory
    return memory + state.cpu[node]


@register(
    "rstorm",
    paper="003 R-Storm (Middleware'15) §4, Alg. 1-4",
    summary="R-Storm: BFS-round-robin executor order, Ref node in the richest rack, then "
    "the feasible node nearest in (memory, CPU, network distance); hard memory and CPU; "
    "all-or-nothing.",
    params={
        "variant": ("paper", "paper | proto2015 | asf1.0 (notes 003 §2.5)"),
        "weight_memory": (1.0, "w_m of the distance"),
        "weight_cpu": (1.0, "w_c of the distance"),
        "weight_network": (1.0, "w_b of the network-distance term"),
        "cpu_hard": (True, "CPU as a hard constraint (the authors' code); False = paper text"),
        "strict_memory": (False, "printed strict '>' for hard constraints instead of '>='"),
        "normalize": (False, "divide resource differences by (available + 1) as ASF 1.0"),
        "worker_max_heap_mb": (
            0.0,
            "per-worker memory cap; 0 = the variant's (768 for asf1.0, none otherwise)",
        ),
    },
)
def plan(
    problem: Problem,
    *,
    variant: str = "paper",
    weight_memory: float = 1.0,
    weight_cpu: float = 1.0,
    weight_network: float = 1.0,
    cpu_hard: bool = True,
    strict_memory: bool = False,
    normalize: bool = False,
    worker_max_heap_mb: float = 0.0,
) -> Placement:
    """Place ``problem.topology`` with R-Storm.

    Parameters
    ----------
    variant:
        ``"paper"`` (default), ``"proto2015"`` or ``"asf1.0"`` (module docstring).
    weight_memory, weight_cpu, weight_network:
        The distance's weights (1, 1, 1 in the authors' code and ASF 1.0).
    cpu_hard:
        Filter nodes on CPU (default, as the authors' code). ``False`` = the paper's soft
        CPU, which can over-commit nodes (notes 003 T3).
    strict_memory:
        ``available > need`` (printed) instead of ``≥``.
    normalize:
        Divide the resource differences by ``available + 1`` (always on in ``asf1.0``).
    worker_max_heap_mb:
        Per-worker memory cap (``0`` = the variant's; ``inf`` = none).

    Returns
    -------
    Placement
        ``worker_of`` only when a node hosts more than one worker (``asf1.0``);
        ``report``: ``variant``, ``ref_node``, ``ref_rack``, ``nodes_used``.

    Raises
    ------
    InfeasibleError
        Some executor finds no node; nothing is assigned (all-or-nothing).

    Example
    -------
    >>> from scheduler_py.model import Component, Edge, Node, Problem, Topology
    >>> topo = Topology("t", (Component("s", 2, 60, 200, is_spout=True),
    ...                       Component("b", 2, 60, 200)), (Edge("s", "b", 1.0),))
    >>> nodes = (Node("n1", 100, memory_mb=1000), Node("n2", 100, memory_mb=1000))
    >>> sorted(plan(Problem(nodes, topo)).node_of.items())  # order s#0 b#0 s#1 b#1
    [('b#0', 'n1'), ('b#1', 'n2'), ('s#0', 'n1'), ('s#1', 'n1')]
    """
    if variant not in VARIANT_SPECS:
        raise SchedulingError(f"rstorm: variant must be one of {VARIANTS}, got {variant!r}")
    spec = VARIANT_SPECS[variant]
    heap_cap = worker_max_heap_mb if worker_max_heap_mb > 0 else spec.worker_max_heap_mb
    topology = problem.topology
    if cpu_hard:
        check_feasible(problem)
    nodes = usable_nodes(problem)
    if not nodes:
        check_feasible(problem)  # raises the "no free slot" error
    state = _State(nodes, heap_cap)
    node_ids = sorted(state.nodes)
    ref: str | None = None
    first_ref: str | None = None
    ref_rack: str | None = None
    node_of: dict[str, str] = {}
    worker_of: dict[str, int] = {}
    order = task_order(topology)
    for placed, executor in enumerate(order):
        feasible = [
            (n, w)
            for n in node_ids
            if state.memory_ok(n, executor.memory_mb, strict_memory)
            and (not cpu_hard or state.cpu_ok(n, executor.cpu))
            and (w := state.worker_for(n, executor.memory_mb)) is not None
        ]
        if not feasible:
            raise _failure(problem, state, executor, placed, len(order), cpu_hard, strict_memory)
        if ref is None:
            chosen, ref_rack = _reference_node(state, spec, normalize, executor, feasible)
            ref = first_ref = chosen
        else:
            weights = (weight_memory, weight_cpu, weight_network)
            chosen = min(
                feasible,
                key=lambda item: (
                    _distance(state, spec, normalize, weights, executor, ref, item[0]),
                    item[0],
                ),
            )[0]
        worker = dict(feasible)[chosen]
        state.take(chosen, executor, worker)
        node_of[executor.id] = chosen
        worker_of[executor.id] = worker
        if spec.ref_follows_last:
            ref = chosen
    return Placement(
        topology.id,
        node_of,
        worker_of=worker_of if any(worker_of.values()) else {},
        report={
            "variant": variant,
            "ref_node": first_ref,
            "ref_rack": ref_rack,
            "nodes_used": len(set(node_of.values())),
            "cpu_hard": cpu_hard,
        },
    )


def _reference_node(
    state: _State,
    spec: VariantSpec,
    normalize: bool,
    executor: Executor,
    feasible: list[tuple[str, int]],
) -> tuple[str, str]:
    """§4.2: the rack with the most available resources, then its node with the most
    available resources (``paper``) or the closest fit (``proto2015``, ``asf1.0``)."""
    scores: dict[str, float] = {}
    for node_id, node in state.nodes.items():
        scores[node.rack] = scores.get(node.rack, 0.0) + _available_sum(state, spec, node_id)
    rack = min(scores, key=lambda r: (-scores[r], r))
    candidates = [n for n, _ in feasible if state.nodes[n].rack == rack] or [n for n, _ in feasible]
    if spec.ref_policy == "most":
        chosen = min(candidates, key=lambda n: (-_available_sum(state, spec, n), n))
    else:
        chosen = min(
            candidates,
            key=lambda n: (sum(_resource_terms(state, spec, normalize, executor, n)), n),
        )
    return chosen, state.nodes[chosen].rack


def _failure(
    problem: Problem,
    state: _State,
    executor: Executor,
    placed: int,
    total: int,
    cpu_hard: bool,
    strict_memory: bool,
) -> InfeasibleError:
    """Name the binding resource for an executor no node can take."""
    nodes = sorted(state.nodes)
    need_cpu, need_mem = executor.cpu, executor.memory_mb
    mem_ok = [n for n in nodes if state.memory_ok(n, need_mem, strict_memory)]
    cpu_ok = [n for n in nodes if state.cpu_ok(n, need_cpu)]
    if not mem_ok:
        resource, needed = "memory", need_mem
        best = max(nodes, key=lambda n: (state.memory[n], n))
        offer = state.memory[best]
    elif cpu_hard and not cpu_ok:
        resource, needed = "cpu", need_cpu
        best = max(nodes, key=lambda n: (state.cpu[n], n))
        offer = state.cpu[best]
    elif cpu_hard and not set(mem_ok) & set(cpu_ok):
        resource, needed = "cpu", need_cpu
        best = max(mem_ok, key=lambda n: (state.cpu[n], n))
        offer = state.cpu[best]
    else:
        resource, needed = "slots", need_mem
        best = max(nodes, key=lambda n: (state.memory[n], n))
        offer = state.heap_cap - min(state.workers[best], default=0.0)
    unit = "% CPU" if resource == "cpu" else " MB"
    return InfeasibleError(
        f"topology {problem.topology.id}: R-Storm cannot place executor {executor.id} of "
        f"component {executor.component}, which needs {need_cpu:.1f}% CPU and "
        f"{need_mem:.1f} MB; the binding resource is {resource}: the best remaining node "
        f"{best} offers {offer:.1f}{unit} (CPU {state.cpu[best]:.1f}%, memory "
        f"{state.memory[best]:.1f} MB, {len(state.workers[best])} worker(s) of "
        f"{state.nodes[best].slots} slot(s)) after {placed} of {total} executors; nothing "
        f"was assigned (all-or-nothing). Add capacity, lower the component's declared "
        f"resources, or raise its parallelism",
        resource=resource,
        component=executor.component,
        needed=needed,
        best_available=offer,
        best_node=best,
    )
