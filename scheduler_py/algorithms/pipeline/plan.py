"""Pipeline-based linear scheduling (paper 004: Tantalaki, Souravlas, Roumeliotis,
Katsavounis, "Pipeline-Based Linear Scheduling of Big Data Streams in the Cloud",
IEEE Access 8, 2020).

A *static*, topology-only scheme: it reads the component DAG and the parallelisms, never
CPU, memory or traffic. The matrix algorithms live in :mod:`.matrix`; this
module maps a :class:`~scheduler_py.model.types.Problem` onto them and back:

1. **Components** (§II.B, ``docs/algorithms/004-pipeline.md`` §2.1/A23): user components numbered
   0..n-1 by stage level (longest path from the sources), spouts first, ties by id; executor k of v
   is the model's executor ``v#k``; system components (``__acker`` ...) are outside the matrix.
2. **Nodes** (``docs/algorithms/004-pipeline.md`` §7.3): nodes with a free slot, ordered by
   ``node_order`` (default rack then id, so index distance stands in for the paper's proximity);
   ``node_unit = slot`` makes every worker slot a matrix node (``docs/algorithms/004-pipeline.md``
   §7.6 (a)), neighbours sharing a host.
3. **Plan**: t = max p_v; Algorithm 1 (§III.A, Eqs. 4, 6, 10, 11); Algorithm 2
   (``refinement``); completion to the N x N step matrix S (§III.B); row-order
   placement rule (``docs/algorithms/004-pipeline.md`` §2.6).
4. **Output**: one worker per used node (``docs/algorithms/004-pipeline.md`` §7.3 step 6); system
   executors dealt round-robin over the used workers (or over the spouts' workers).

``Problem.current`` is ignored: the scheme is static and deterministic given (DAG,
parallelism, ordered nodes), so re-planning an unchanged problem reproduces the same
placement; when to re-plan after a node change is the service's decision
(``docs/algorithms/004-pipeline.md`` §7.4).

The placement is what Storm can enforce. Algorithm 3's timetable (stage l runs step
(delta - l) mod P in slot delta, node j sending to S[p][j]) needs a custom stream grouping
(``docs/algorithms/004-pipeline.md`` §7.5), so it is only exposed in ``Placement.report`` with its
steady-state statistics: per-node load, intra-node share, steps with no traffic and stalls.

Deviations from the printed paper (each also listed in the table of docs/algorithms.md):

* typos of Algorithm 1 fixed (divide by t; N' = N/G; ``docs/algorithms/004-pipeline.md`` A1); Eq.
  10/11 directions as in ``docs/algorithms/004-pipeline.md`` A3/A4; Algorithm 2's "GoTo Line 3" =
  abandon the pair and reset the counter (A8); the Bitmap is directed, R^- counts edges in either
  direction;
* ``refinement = robust`` (default) keeps groups live and refuses a swap that would add
  inter-node task pairs (our guard); ``faithful`` is the literal static-list version;
* G = 1 (not handled by the paper's algorithms): t padded to the smallest t~ with
  gcd(t~, N) > 1 (the Conclusions' remedy, ``docs/algorithms/004-pipeline.md`` A10), or ``g1_fix =
  drop_node`` uses the largest N~ < N with gcd(t, N~) > 1, or ``none`` keeps G = 1 (no refinement
  possible);
* t > N (not discussed): placement uses all t rows, S = the first N rows
  (``docs/algorithms/004-pipeline.md`` A9);
* n > N (not handled): ``overflow = stack`` splits the components, in stage order, into
  ceil(n/N) chunks of near-equal size, each with its own t x N plan and S; an edge uses
  the S of its source's chunk; ``overflow = slots`` first retries with slots as nodes;
* capacity (ignored by the paper): ``capacity = repair`` moves an executor whose planned
  node lacks CPU/memory to the nearest node index that has it, and lists every such
  deviation in the report; ``strict`` raises :class:`InfeasibleError` instead;
* stall accounting over all stages of a slot, stage of an edge = longest-path level of its
  source (``docs/algorithms/004-pipeline.md`` A12, A15); the printed Fig. 7(a) period of 9 is read
  as P = N = 8 (A7).

References: paper 004 §II-IV; ``docs/algorithms/004-pipeline.md`` §2, §3, §6, §7.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from math import gcd

from scheduler_py.algorithms.pipeline import matrix as pm
from scheduler_py.algorithms.registry import check_choice, register
from scheduler_py.model.budget import UNLIMITED, Budget
from scheduler_py.model.capacity import CapacityTracker, check_feasible, usable_nodes
from scheduler_py.model.cost import imc_gain, total_traffic
from scheduler_py.model.errors import InfeasibleError, SchedulingError
from scheduler_py.model.types import Component, Edge, Node, Placement, Problem, Topology

REFINEMENTS = ("robust", "faithful", "off")
G1_FIXES = ("pad_t", "drop_node", "none")
NODE_UNITS = ("supervisor", "slot")
OVERFLOWS = ("stack", "slots")
NODE_ORDERS = ("rack", "id", "given")
CAPACITY_MODES = ("repair", "strict")
SYSTEM_MODES = ("round_robin", "with_spouts")


@dataclass(frozen=True)
class PipelineLayout:
    """How the problem was mapped onto matrix IDs and node indices, and the chunk plans."""

    components: tuple[Component, ...]
    """User components in ID order (stage level, spouts first, id)."""
    level: tuple[int, ...]
    edges: tuple[tuple[int, int], ...]
    """Merged user edges as (source ID, target ID)."""
    slots: tuple[tuple[str, int], ...]
    """Matrix node index -> (node id, logical worker index)."""
    chunks: tuple[tuple[int, ...], ...]
    """IDs planned together (one chunk unless n > N)."""
    plans: tuple[pm.MatrixPlan, ...]


def order_nodes(problem: Problem, node_order: str) -> list[Node]:
    """Usable nodes (a free slot) in matrix-index order."""
    nodes = list(usable_nodes(problem))
    if node_order == "rack":
        nodes.sort(key=lambda n: (n.rack, n.id))
    elif node_order == "id":
        nodes.sort(key=lambda n: n.id)
    return nodes


def order_components(topology: Topology) -> tuple[list[Component], list[int], list[tuple]]:
    """User components in stage order, their levels and the merged user edges as IDs."""
    user = [c for c in topology.components if not c.is_system]
    index = {c.id: i for i, c in enumerate(user)}
    raw = [
        (index[e.source], index[e.target])
        for e in topology.merged_edges
        if e.source in index and e.target in index
    ]
    level = pm.stage_levels(len(user), raw)
    order = sorted(range(len(user)), key=lambda i: (level[i], not user[i].is_spout, user[i].id))
    new_id = {old: new for new, old in enumerate(order)}
    components = [user[i] for i in order]
    edges = sorted({(new_id[u], new_id[v]) for u, v in raw})
    return components, [level[i] for i in order], edges


def _chunks(n: int, N: int) -> list[tuple[int, ...]]:
    m = -(-n // N)
    base, extra = divmod(n, m)
    out, start = [], 0
    for c in range(m):
        size = base + (1 if c < extra else 0)
        out.append(tuple(range(start, start + size)))
        start += size
    return out


def layout(
    problem: Problem,
    *,
    refinement: str = "robust",
    g1_fix: str = "pad_t",
    node_unit: str = "supervisor",
    overflow: str = "stack",
    node_order: str = "rack",
) -> PipelineLayout:
    """Map the problem onto the matrix scheme and plan every chunk (no capacity repair)."""
    check_choice("pipeline", "refinement", refinement, REFINEMENTS)
    check_choice("pipeline", "g1_fix", g1_fix, G1_FIXES)
    check_choice("pipeline", "node_unit", node_unit, NODE_UNITS)
    check_choice("pipeline", "overflow", overflow, OVERFLOWS)
    check_choice("pipeline", "node_order", node_order, NODE_ORDERS)
    components, level, edges = order_components(problem.topology)
    if not components:
        raise SchedulingError(f"topology {problem.topology.id}: no user components to place")
    nodes = order_nodes(problem, node_order)
    n = len(components)
    if node_unit == "supervisor" and overflow == "slots" and n > len(nodes):
        node_unit = "slot"
    if node_unit == "slot":
        slots = [(node.id, w) for node in nodes for w in range(node.slots)]
    else:
        slots = [(node.id, 0) for node in nodes]
    t = max(c.parallelism for c in components)
    N = len(slots)
    if g1_fix == "drop_node" and N > 1 and gcd(t, N) == 1:
        fewer = [m for m in range(N - 1, 1, -1) if gcd(t, m) > 1 and m >= min(n, N)]
        if fewer:
            N = fewer[0]
            slots = slots[:N]
    chunks = _chunks(n, N)
    plans = []
    for chunk in chunks:
        local = {v: i for i, v in enumerate(chunk)}
        plans.append(
            pm.plan_matrix(
                [components[v].parallelism for v in chunk],
                [(local[u], local[v]) for u, v in edges if u in local and v in local],
                N,
                refinement=refinement,
                pad_g1=g1_fix != "none",
            )
        )
    return PipelineLayout(
        tuple(components), tuple(level), tuple(edges), tuple(slots), tuple(chunks), tuple(plans)
    )


def _nearest_fitting(
    tracker: CapacityTracker, slots: tuple, want: int, cpu: float, memory: float
) -> int | None:
    for distance in range(len(slots)):
        for index in (want - distance, want + distance):
            if 0 <= index < len(slots) and tracker.fits(slots[index][0], cpu, memory):
                return index
    return None


def _place(
    tracker: CapacityTracker,
    slots: tuple,
    executor,
    want: int,
    capacity: str,
    repaired: list[str],
) -> int:
    node = slots[want][0]
    if tracker.fits_executor(node, executor):
        tracker.take_executor(node, executor)
        return want
    got = None
    if capacity == "repair":
        got = _nearest_fitting(tracker, slots, want, executor.cpu, executor.memory_mb)
    if got is None:
        best = max(tracker.cpu, key=lambda k: (tracker.cpu[k], k))
        raise InfeasibleError(
            f"pipeline: executor {executor.id} (component {executor.component}) needs "
            f"{executor.cpu:.1f}% CPU and {executor.memory_mb:.1f} MB but its planned node "
            f"{node} has {tracker.cpu[node]:.1f}% / {tracker.memory[node]:.1f} MB left"
            + (" and no other node fits it" if capacity == "repair" else " (capacity=strict)")
            + "; add capacity, lower the declared load or use capacity=repair",
            resource="cpu" if executor.cpu > tracker.cpu[node] else "memory",
            component=executor.component,
            needed=executor.cpu,
            best_available=tracker.cpu[best],
            best_node=best,
        )
    tracker.take_executor(slots[got][0], executor)
    repaired.append(
        f"{executor.id}: planned index {want} ({node}) lacked capacity, placed on "
        f"index {got} ({slots[got][0]})"
    )
    return got


@register(
    "pipeline",
    paper="004 Tantalaki et al. 2020 §II-IV (Alg. 1-3, Props. 1-2)",
    summary="Static topology-only t x N matrix scheme: Latin-square task distribution, "
    "DAG-driven refinement into groups of G nodes, pipelined all-to-all step timetable "
    "(reported, not enforced).",
    params={
        "refinement": (
            "robust",
            "Algorithm 2: robust (live groups, non-worsening) | "
            "faithful (paper's static lists) | off",
        ),
        "g1_fix": ("pad_t", "gcd(t,N)=1: pad_t (smallest t~ with gcd>1) | drop_node | none"),
        "node_unit": ("supervisor", "matrix node = supervisor (one worker) | slot"),
        "overflow": ("stack", "more components than nodes: stack (chunked plans) | slots"),
        "node_order": ("rack", "node index order: rack (rack, id) | id | given"),
        "capacity": ("repair", "planned node lacks CPU/memory: repair (nearest index) | strict"),
        "system_executors": (
            "round_robin",
            "system executors: round_robin over used workers | with_spouts",
        ),
    },
)
def plan(
    problem: Problem,
    *,
    refinement: str = "robust",
    g1_fix: str = "pad_t",
    node_unit: str = "supervisor",
    overflow: str = "stack",
    node_order: str = "rack",
    capacity: str = "repair",
    system_executors: str = "round_robin",
    budget: Budget = UNLIMITED,
) -> Placement:
    """Place ``problem.topology`` with the pipeline scheme (see the module docstring).

    Raises :class:`InfeasibleError` when no node has a free slot or an executor fits
    nowhere, :class:`SchedulingError` for unknown parameter values.

    >>> from scheduler_py.model.types import Component, Edge, Node, Problem, Topology
    >>> topo = Topology("t", (Component("s", 2, is_spout=True), Component("b", 2)),
    ...                 (Edge("s", "b", 1.0),))
    >>> nodes = tuple(Node(f"n{i}", cpu=400) for i in range(4))
    >>> sorted(plan(Problem(nodes, topo)).node_of.items())
    [('b#0', 'n1'), ('b#1', 'n0'), ('s#0', 'n0'), ('s#1', 'n1')]
    """
    check_choice("pipeline", "capacity", capacity, CAPACITY_MODES)
    check_choice("pipeline", "system_executors", system_executors, SYSTEM_MODES)
    check_feasible(problem)
    topology = problem.topology
    lay = layout(
        problem,
        refinement=refinement,
        g1_fix=g1_fix,
        node_unit=node_unit,
        overflow=overflow,
        node_order=node_order,
    )
    tracker = CapacityTracker(problem.nodes)
    repaired: list[str] = []
    positions: list[list[int]] = [[] for _ in lay.components]
    for chunk, matrix_plan in zip(lay.chunks, lay.plans, strict=True):
        for local, v in enumerate(chunk):
            component = lay.components[v]
            for k, executor in enumerate(topology.executors_of(component.id)):
                want = matrix_plan.positions[local][k]
                positions[v].append(_place(tracker, lay.slots, executor, want, capacity, repaired))
    node_of: dict[str, str] = {}
    worker_of: dict[str, int] = {}
    for v, component in enumerate(lay.components):
        for executor, index in zip(topology.executors_of(component.id), positions[v], strict=True):
            node_of[executor.id], worker_of[executor.id] = lay.slots[index]
    used = sorted({i for p in positions for i in p})
    spout_slots = sorted(
        {i for v, c in enumerate(lay.components) if c.is_spout for i in positions[v]}
    )
    pool = spout_slots if system_executors == "with_spouts" and spout_slots else used
    system = [e for e in topology.executors if topology.component_by_id[e.component].is_system]
    for i, executor in enumerate(system):
        index = _place(tracker, lay.slots, executor, pool[i % len(pool)], capacity, repaired)
        node_of[executor.id], worker_of[executor.id] = lay.slots[index]
    placement = Placement(
        topology.id,
        node_of,
        worker_of=worker_of,
    )
    report = plan_report(problem, lay, positions, placement)
    report["capacity_repairs"] = repaired
    report["params"] = {
        "refinement": refinement,
        "g1_fix": g1_fix,
        "node_unit": node_unit,
        "overflow": overflow,
        "node_order": node_order,
        "capacity": capacity,
        "system_executors": system_executors,
    }
    return Placement(topology.id, node_of, worker_of=placement.worker_of, report=report)


def unit_topology(topology: Topology) -> Topology:
    """The user part of the topology with every merged edge carrying 1 unit (shuffle)."""
    user = tuple(c for c in topology.components if not c.is_system)
    ids = {c.id for c in user}
    edges = tuple(
        Edge(e.source, e.target, 1.0)
        for e in topology.merged_edges
        if e.source in ids and e.target in ids
    )
    return Topology(topology.id, user, edges)


def intra_node_share(topology: Topology, node_of) -> float:
    """``docs/algorithms/004-pipeline.md`` §5.1 f_intra: share of shuffle task pairs on one
    node, every edge weighted 1, scored with the shared cost module's φ on the unit-traffic
    topology."""
    unit = unit_topology(topology)
    if not unit.edges:
        return 0.0
    return imc_gain(unit, node_of) / len(unit.merged_edges)


def plan_report(
    problem: Problem, lay: PipelineLayout, positions: list[list[int]], placement: Placement
) -> dict:
    """Per-plan numbers for the operator (JSON-friendly)."""
    topology = problem.topology
    names = [c.id for c in lay.components]
    schedules = [p.schedule for p in lay.plans]
    chunk_of = {v: c for c, chunk in enumerate(lay.chunks) for v in chunk}
    same_period = len({s.shape for s in schedules}) == 1
    stats = None
    if same_period:
        stats = pm.analyse_pipeline(
            schedules[0],
            positions,
            list(lay.edges),
            list(lay.level),
            edge_schedule=[chunk_of[u] for u, _ in lay.edges],
            schedules=schedules,
        )
    load = Counter(
        placement.node_of[e.id] for c in lay.components for e in topology.executors_of(c.id)
    )
    per_node = {node.id: load.get(node.id, 0) for node in problem.nodes}
    traffic = total_traffic(topology)

    def label(chunk: tuple[int, ...], local_id: int) -> str:
        return names[chunk[local_id]] if local_id < len(chunk) else f"~dummy{local_id}"

    chunks = []
    for chunk, mp in zip(lay.chunks, lay.plans, strict=True):
        shape = mp.shape
        chunks.append(
            {
                "components": [names[v] for v in chunk],
                "t": mp.t,
                "t_used": shape.t,
                "G": shape.G,
                "t_prime": shape.t1,
                "N_prime": shape.N1,
                "padded_for_g1": mp.padded,
                "swaps": [
                    [label(chunk, a), label(chunk, b)]
                    for a, b in (mp.refinement.swaps if mp.refinement else ())
                ],
                "refused_swaps": [
                    [label(chunk, a), label(chunk, b)]
                    for a, b in (mp.refinement.rejected if mp.refinement else ())
                ],
                "groups": [
                    [
                        label(chunk, int(x))
                        for x in sorted(
                            set(mp.fin[: shape.G, c * shape.G : (c + 1) * shape.G].ravel())
                        )
                    ]
                    for c in range(shape.N1)
                ],
                "schedule": mp.schedule.tolist(),
            }
        )
    s = 1 + max((lay.level[u] for u, _ in lay.edges), default=-1)
    P = schedules[0].shape[0]
    report: dict = {
        "node_index": [
            f"{node}/{w}" if any(x[1] for x in lay.slots) else node for node, w in lay.slots
        ],
        "component_ids": names,
        "stage_of_edge": {f"{names[u]}->{names[v]}": lay.level[u] for u, v in lay.edges},
        "stages": s,
        "period": P,
        "timetable_rule": "in slot d, stage l runs step (d - l) mod P; in step p node j sends "
        "to node schedule[p][j] (per chunk when stacked)",
        "timetable": [
            [(d - stage) % P if d >= stage else None for stage in range(s)]
            for d in range(s - 1 + P)
        ]
        if s
        else [],
        "chunks": chunks,
        "stacked": len(lay.chunks) > 1,
        "per_node_load": per_node,
        "empty_nodes": sum(1 for x in per_node.values() if x == 0),
        "intra_node_share": intra_node_share(topology, placement.node_of),
        "traffic_intra_share": (
            imc_gain(topology, placement.node_of) / traffic if traffic > 0 else None
        ),
        "mean_index_distance": pm.shuffle_distance(positions, list(lay.edges)),
    }
    if stats is not None:
        report.update(
            {
                "steps_with_no_traffic": list(stats.empty_steps),
                "empty_stage_steps": stats.empty_stage_steps,
                "busy_stage_steps": stats.busy_stage_steps,
                "transfers_per_period": stats.transfers_per_period,
                "intra_transfers_per_period": stats.intra_transfers_per_period,
                "stall_count": stats.stall_slots_per_period,
                "stall_h_per_period": stats.stall_h_per_period,
                "max_fan_in": stats.max_fan_in,
            }
        )
    return report
