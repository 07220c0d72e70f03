"""Seedable problem generators for the benchmarks of paper 000 (Chatzistergiou & Viglas,
CIKM'14, §7) and a scaling family.

Every generator is a pure function of its arguments: the same seed gives the same
:class:`~scheduler_py.model.types.Problem`, drawn from its own ``random.Random(seed)``
(never the global generator). Component ids are ``g0, g1, ...`` (zero-padded when there are
more than ten groups) in topological order, so that sorting ids, as Storm does when it
numbers tasks, keeps that order; node ids are ``n0, n1, ...`` likewise.

Units follow the paper: CPU in % of one core (a node's capacity 100 = one core), traffic in
MB/s.

References:
    Notes ``000_topdown.md`` §5.1 (the §7.3 instance generator), §5.2 (the §7.2 pipeline),
    §4.1 (the §7.1 micro-benchmark scenarios).
"""

from __future__ import annotations

import itertools
import math
import random

from scheduler_py.model.types import Component, Edge, Node, Problem, Topology

SECTION73_TASKS = 17
SECTION73_GROUPS = (3, 7)
SECTION73_TOTAL_PC = 500.0
SECTION73_NODES = 8
SECTION73_CAPACITY = 100.0
SECTION73_IMC = (5.0, 20.0)
SECTION73_FANOUT = ((1, 2, 3), (0.70, 0.25, 0.05))
PC_NOISE = (0.5, 1.5)
"""``w_v = |v| · U(0.5, 1.5)``: PC correlated with the task count, ±50 % noise
(``docs/algorithms/000-topdown.md``)."""


def _ids(prefix: str, count: int) -> list[str]:
    width = len(str(count - 1)) if count > 10 else 1
    return [f"{prefix}{i:0{width}d}" for i in range(count)]


def _nodes(count: int, capacity: float, slots: int = 4) -> tuple[Node, ...]:
    return tuple(Node(node_id, capacity, slots=slots) for node_id in _ids("n", count))


def _problem(
    name: str,
    sizes: list[int],
    pcs: list[float],
    edges: list[tuple[int, int, float]],
    nodes: int,
    capacity: float,
) -> Problem:
    """A problem whose ``topology.workers`` is the node count (so ``even`` spreads over all)."""
    ids = _ids("g", len(sizes))
    components = tuple(
        Component(ids[i], size, cpu=pc, is_spout=i == 0)
        for i, (size, pc) in enumerate(zip(sizes, pcs, strict=True))
    )
    topology = Topology(
        id=name,
        components=components,
        edges=tuple(Edge(ids[i], ids[j], traffic) for i, j, traffic in edges),
        workers=nodes,
        name=name,
    )
    return Problem(_nodes(nodes, capacity), topology)


def _composition(rng: random.Random, total: int, parts: int) -> list[int]:
    """A uniformly random composition of ``total`` into ``parts`` sizes ≥ 1 (cut points)."""
    cuts = sorted(rng.sample(range(1, total), parts - 1))
    bounds = [0, *cuts, total]
    return [b - a for a, b in itertools.pairwise(bounds)]


def _random_dag(rng: random.Random, groups: int) -> list[tuple[int, int]]:
    """Every group but the last gets fanout 1/2/3 (p = .70/.25/.05), capped at the number
    of later groups, with distinct targets drawn uniformly among the later groups."""
    values, weights = SECTION73_FANOUT
    pairs = []
    for i in range(groups - 1):
        fanout = min(rng.choices(values, weights)[0], groups - 1 - i)
        for j in sorted(rng.sample(range(i + 1, groups), fanout)):
            pairs.append((i, j))
    return pairs


def _correlated_pcs(
    rng: random.Random, sizes: list[int], total_pc: float
) -> tuple[list[float], list[float]]:
    weights = [size * rng.uniform(*PC_NOISE) for size in sizes]
    scale = total_pc / sum(weights)
    pcs = [w * scale for w in weights]
    return pcs, [pc / size for pc, size in zip(pcs, sizes, strict=True)]


def section73_instance(seed: int) -> Problem:
    """One random job of the paper's §7.3 class, exactly per ``docs/algorithms/000-topdown.md``

    1. ``g ~ Uniform{3..7}`` groups in topological order;
    2. 17 tasks split by g − 1 distinct cut points drawn from {1..16} (sizes ≥ 1);
    3. ``w_v = |v| · U(0.5, 1.5)``, ``c^pc_v = 500 · w_v / Σw``; the draw is **rejected**
       (steps 1-3 are redrawn from the same generator) if a task would exceed 100 %;
    4. each group i < g − 1 gets fanout f ∈ {1, 2, 3} with p = (.70, .25, .05), capped at
       g − 1 − i, targets drawn uniformly without replacement among the later groups;
    5. IMC per edge ``~ U(5, 20)`` MB/s (group-pair total, split by Eq. 1 in the model);
    6. 8 nodes × 100 %.

    The draws are made in that order from ``random.Random(seed)``. The notes' Appendix A
    code is not available, so the same seed does not give our notes' instance, only one of
    the same distribution.
    """
    rng = random.Random(seed)
    while True:
        groups = rng.randint(*SECTION73_GROUPS)
        sizes = _composition(rng, SECTION73_TASKS, groups)
        pcs, per_task = _correlated_pcs(rng, sizes, SECTION73_TOTAL_PC)
        if max(per_task) <= SECTION73_CAPACITY:
            break
    edges = [(i, j, rng.uniform(*SECTION73_IMC)) for i, j in _random_dag(rng, groups)]
    return _problem(f"s73-{seed}", sizes, pcs, edges, SECTION73_NODES, SECTION73_CAPACITY)


def pipeline_instance(
    groups: int = 4,
    tasks: int = 100,
    nodes: int = 8,
    capacity: float = 100.0,
    seed: int = 0,
    *,
    group_pc: float = 100.0,
    imc: float = 10.0,
) -> Problem:
    """The §7.2 throughput input (``docs/algorithms/000-topdown.md``): a pipeline ``g0 → g1 → … ``
    of ``groups``
    groups × ``tasks`` tasks, every group with PC ``group_pc`` (equal), IMC per edge
    ``imc · U(0.95, 1.05)`` ("approximately equal"), on ``nodes`` × ``capacity``."""
    rng = random.Random(seed)
    edges = [(i, i + 1, imc * rng.uniform(0.95, 1.05)) for i in range(groups - 1)]
    return _problem(
        f"pipeline-{groups}x{tasks}-{nodes}x{capacity:g}-{seed}",
        [tasks] * groups,
        [group_pc] * groups,
        edges,
        nodes,
        capacity,
    )


SCALING_EXECUTORS = (100, 500, 1000, 2000, 5000, 10000)
EXECUTORS_PER_NODE = 20
"""The scaling family puts 20 executors per node: 10,000 executors on 500 nodes."""


def scaling_nodes(executors: int) -> int:
    """Nodes of the scaling family: ``executors / 20``, between 2 and 500."""
    return max(2, min(500, math.ceil(executors / EXECUTORS_PER_NODE)))


def scaling_groups(executors: int) -> int:
    """Groups of the scaling family: about √executors (tasks per group ≈ groups), 4..100."""
    return max(4, min(100, round(math.sqrt(executors))))


def scaling_instance(
    executors: int,
    nodes: int | None = None,
    seed: int = 0,
    *,
    groups: int | None = None,
    capacity: float = 100.0,
    load: float = 0.625,
) -> Problem:
    """A large job of the §7.3 shape: a random DAG (fanout 1/2/3 at .70/.25/.05) of
    ``groups`` groups (default :func:`scaling_groups`) sharing ``executors`` tasks by a
    random composition, PC correlated with task count (±50 %) summing to ``load`` of the
    total capacity (0.625 = §7.3's 500 % on 800 %), IMC ``U(5, 20)`` per edge, on ``nodes``
    (default :func:`scaling_nodes`) × ``capacity``. Per-task PC stays far below a node's
    capacity at these sizes; draws where it would not are rejected as in §7.3.
    """
    nodes = scaling_nodes(executors) if nodes is None else nodes
    groups = scaling_groups(executors) if groups is None else groups
    if not 1 <= groups <= executors:
        raise ValueError(f"need 1 <= groups <= executors, got {groups} and {executors}")
    rng = random.Random(seed)
    total_pc = load * capacity * nodes
    while True:
        sizes = _composition(rng, executors, groups)
        pcs, per_task = _correlated_pcs(rng, sizes, total_pc)
        if max(per_task) <= capacity:
            break
    edges = [(i, j, rng.uniform(*SECTION73_IMC)) for i, j in _random_dag(rng, groups)]
    return _problem(f"scaling-{executors}-{nodes}-{seed}", sizes, pcs, edges, nodes, capacity)


# §7.1 micro-benchmark scenarios (``docs/algorithms/000-topdown.md``). The paper gives shapes, not
# numbers; the
# parameters below are our notes' illustrative ones, task counts marked [ours].

PRIORITISATION_IMC2 = (200.0, 180.0, 160.0, 140.0, 120.0, 100.0)


def prioritisation_instance(
    imc2: float,
    imc1: float = 100.0,
    *,
    tasks: int = 5,
    pcs: tuple[float, float, float] = (40.0, 40.0, 160.0),
    nodes: int = 4,
    capacity: float = 80.0,
) -> Problem:
    """§7.1(a) task prioritisation: a pipeline ``g0 → g1 → g2`` whose first two groups
    have equal PC and the third a much higher one (40/40/160 on 4 × 80,
    ``docs/algorithms/000-topdown.md``); the
    first pair carries ``imc1`` and the second ``imc2``, which the experiment shrinks from
    2 × ``imc1`` to ``imc1``. ``tasks`` per group is [ours] (the text gives none); 5 makes
    TL-IMC's gain fall linearly as in our notes' run."""
    return _problem(
        f"prio-{imc2:g}",
        [tasks] * 3,
        list(pcs),
        [(0, 1, imc1), (1, 2, imc2)],
        nodes,
        capacity,
    )


TASK_COUNT_SECOND = (10, 20, 30, 40, 50, 60, 70)


def task_count_instance(
    second: int,
    first: int = 10,
    *,
    nodes: int = 6,
    node_capacity: float = 100.0,
    spare: float = 0.8,
    imc: float = 100.0,
) -> Problem:
    """§7.1(b) impact of task count: a group pair ``g0 → g1`` with ``first`` = 10 tasks
    and ``second`` ∈ 10..70 tasks, each group's PC twice a node's capacity (200 %), on 6
    nodes whose spare capacity is 80 % of 100 %, IMC 100 (``docs/algorithms/000-topdown.md``). The
    optimum is 20
    for every ``second``."""
    return _problem(
        f"taskcount-{first}x{second}",
        [first, second],
        [2 * node_capacity, 2 * node_capacity],
        [(0, 1, imc)],
        nodes,
        spare * node_capacity,
    )
