"""taskLevel (TL): the improved task-pair allocator of paper 000 §3.2 (Alg. 1-3).

The job is broken into task pairs ``P`` (every task of ``v_i`` with every task of ``v_j``
for each edge), prioritised on the relative significance of their host groups. Pairs are
placed in order: a pair with a placed task goes to that task's node; a new group pair starts
on the node with the most spare capacity; within a group pair TL stays on the last node
until the pair no longer fits (``pickNode``, Alg. 2). A pair that does not fit is broken and
its unplaced tasks go to ``R``; a pair whose tasks sit on two nodes triggers a fusion of the
two nodes when the load fits. ``R`` is placed last, heaviest first, on the freest node
(``allocateSingleTasks``, Alg. 3). Quadratic in tasks: ``O(|T|² log |T|²)``.

Parameters (registered as ``tl``):

``key`` (``"rs"``)
    Group-pair priority: ``rs`` (Eq. 2, as specified), ``imc_task`` (task-pair IMC, the
    "IMC" ordering of the paper's evaluation, E27) or ``imc_group`` (group IMC).
``pair_order`` (``"lex"``)
    Order of the task pairs inside one group pair, which decides TL's result
    (``docs/algorithms/000-topdown.md`` §2.9: 36, 84, 96 or 100 collocated links on Figure 2):
    ``lex`` (source-task-major) or ``random`` (a uniform shuffle per group pair).
``seed`` (``0``)
    Seed of ``random``: the same seed always gives the same placement.

:func:`allocate` also accepts an explicit ``pair_sequence`` of executor-id pairs, to
reproduce a given order (test vector TC2), and a CPU override (used by TD's fallback).

Deviations from the printed pseudo-code (erratum ids of ``docs/algorithms/000-topdown.md`` §2.8):

* **E16** ``pickNode`` receives the last node ``n_i`` (Alg. 1 l.7 passes three arguments).
  **E28** the last node is the one ``pickNode`` *returned*, whether or not the pair fitted.
* **E17** ``P`` is prioritised on the key of the *host group pair* (Eq. 2 is defined on
  groups); ties in edge-id order keep each group pair's task pairs contiguous.
* **E18** no fusion when both tasks already share a node. **E19** the fusion target is the
  node with the larger initial capacity, ties to the lower node id; **every** task on the
  other node moves (whole-node move, as Alg. 1 l.23), so φ never drops.
* **E20** ``R`` is lazy: it holds no duplicates or placed tasks; at the end every
  still-unplaced task (including tasks of groups without edges) is placed heaviest first,
  ties in Storm task order (component id, executor index). **E21** Alg. 3 stopping with
  ``R`` non-empty is a failure: :class:`~scheduler_py.model.errors.InfeasibleError`.
* Node ties (``N.top()``) go to the lower node id; capacity comparisons use the model's ε.
* A pair declared in both directions is one group pair (the gain is symmetric); with
  measured executor-pair traffic a group pair's IMC is the measured total (Eq. 1 is then
  only the prioritisation model, the cost module scores the measured traffic).

Additions (ours): memory is a second hard capacity (every fit test checks CPU and memory;
``pickNode``'s "does it still fit" too; a single task that lacks memory on ``N.top()`` goes
to the next node in ``N`` order with room for both); nodes with ``slots == 0`` are unusable
and the plan uses one logical worker per node. Necessary conditions
(:func:`~scheduler_py.model.capacity.check_feasible`) are checked when the allocation
fails, so an impossible problem gets the model's resource-naming error; otherwise the
error names the first executor that fit nowhere and adds the §5 granularity suggestion.

Example:
    >>> from scheduler_py.model.types import Component, Edge, Node, Problem, Topology
    >>> topo = Topology("t", (Component("a", 2, 20), Component("b", 4, 20)), (Edge("a", "b", 10),))
    >>> sorted(set(plan(Problem((Node("n0", 100), Node("n1", 100)), topo)).node_of.values()))
    ['n0']

References:
    A. Chatzistergiou, S. D. Viglas, "Fast Heuristics for Near-Optimal Task Allocation in
    Data Stream Processing over Clusters", CIKM 2014, §3.2; ``docs/algorithms/000-topdown.md`` §2.3.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from itertools import product

from scheduler_py.algorithms.registry import check_choice, register
from scheduler_py.algorithms.topdown.groups import (
    KEYS,
    AllocationFailure,
    NodePool,
    allocate_single_tasks,
    component_edges,
    edge_key,
    ensure_usable,
    infeasible_with_suggestion,
)
from scheduler_py.model.budget import UNLIMITED, Budget
from scheduler_py.model.errors import SchedulingError
from scheduler_py.model.types import EPSILON, Placement, Problem

PAIR_ORDERS = ("lex", "random")


def task_pairs(
    problem: Problem, key: str, pair_order: str, seed: int, cpu: Sequence[float]
) -> Iterable[tuple[tuple[int, int], Iterable[tuple[int, int]]]]:
    """``P``: chunks ``(group pair, task pairs)`` in processing order (Alg. 1 l.2, E17).

    Group pairs by ``key`` descending, ties in edge-id order, so the task pairs of one
    group pair stay contiguous (pickNode relies on it). Inside a group pair: ``lex`` is
    source-task-major (a1b1, a1b2, …); ``random`` is a uniform shuffle drawn from
    ``random.Random(seed)``, so a given seed always gives the same order.
    """
    topology = problem.topology
    tasks: list[range] = []
    start = 0
    for comp in topology.components:
        tasks.append(range(start, start + comp.parallelism))
        start += comp.parallelism
    pc = [sum(cpu[t] for t in r) for r in tasks]
    edges = component_edges(topology)
    ordered = sorted(
        range(len(edges)),
        key=lambda n: (
            -edge_key(
                key,
                edges[n][2],
                pc[edges[n][0]],
                pc[edges[n][1]],
                len(tasks[edges[n][0]]),
                len(tasks[edges[n][1]]),
            ),
            n,
        ),
    )
    rng = random.Random(seed)
    for n in ordered:
        a, b, _ = edges[n]
        pairs: Iterable[tuple[int, int]] = product(tasks[a], tasks[b])
        if pair_order == "random":
            pairs = list(pairs)
            rng.shuffle(pairs)
        yield (a, b), pairs


def allocate(
    problem: Problem,
    *,
    key: str = "rs",
    pair_order: str = "lex",
    seed: int = 0,
    cpu_of: Mapping[str, float] | None = None,
    pair_sequence: Sequence[tuple[str, str]] | None = None,
    name: str = "tl",
) -> tuple[dict[str, str], dict[str, object]]:
    """Run taskLevel once; returns ``(executor -> node, statistics)``.

    ``pair_sequence`` replaces ``P`` by an explicit sequence of executor-id pairs (used to
    reproduce a specific intra-pair order, e.g. test vector TC2). ``cpu_of`` overrides
    executor CPU. Raises :class:`~scheduler_py.algorithms._groups.AllocationFailure` when a
    single task fits nowhere at the end (E21).
    """
    nodes = ensure_usable(problem)
    topology = problem.topology
    executors = topology.executors
    cpu = [cpu_of.get(e.id, e.cpu) if cpu_of else e.cpu for e in executors]
    mem = [e.memory_mb for e in executors]
    comp_index = {c.id: i for i, c in enumerate(topology.components)}
    group = [comp_index[e.component] for e in executors]
    if pair_sequence is None:
        chunks = task_pairs(problem, key, pair_order, seed, cpu)
    else:
        position = {e.id: t for t, e in enumerate(executors)}
        try:
            explicit = [(position[m], position[n]) for m, n in pair_sequence]
        except KeyError as error:
            raise SchedulingError(f"{name}: unknown executor {error} in pair sequence") from None
        chunks = (((group[m], group[n]), ((m, n),)) for m, n in explicit)

    pool = NodePool(nodes)
    node: list[str | None] = [None] * len(executors)
    free_cpu, free_mem, members = pool.cpu, pool.mem, pool.members
    gp_last: tuple[int, int] | None = None
    n_last: str | None = None
    broken = 0
    for gp, pairs in chunks:
        for m, n in pairs:
            nm, nn = node[m], node[n]
            if nm is None or nn is None:
                # pickNode (Alg. 2) with the last node passed in (E16, E28)
                if nm is not None:
                    sel = nm
                elif nn is not None:
                    sel = nn
                elif (
                    gp != gp_last
                    or n_last is None
                    or cpu[m] + cpu[n] > free_cpu[n_last] + EPSILON
                    or mem[m] + mem[n] > free_mem[n_last] + EPSILON
                ):
                    sel = pool.top()
                else:
                    sel = n_last
                n_last, gp_last = sel, gp
                c = (0.0 if nm is not None else cpu[m]) + (0.0 if nn is not None else cpu[n])
                k = (0.0 if nm is not None else mem[m]) + (0.0 if nn is not None else mem[n])
                if c <= free_cpu[sel] + EPSILON and k <= free_mem[sel] + EPSILON:
                    pool.take(sel, c, k)
                    if nm is None:
                        node[m] = sel
                        members[sel].append(m)
                    if nn is None:
                        node[n] = sel
                        members[sel].append(n)
                else:
                    broken += 1  # l.15-16: the unplaced tasks go to R (lazily, E20)
            elif nm != nn:  # l.17-23: fuse the two nodes, whole (E18, E19)
                moved = pool.merge(nm, nn)
                if moved is not None:
                    target, tasks = moved
                    for t in tasks:
                        node[t] = target

    # allocateSingleTasks (Alg. 3): R's distinct unplaced tasks + isolated groups, heaviest first
    singles = allocate_single_tasks(name, pool, executors, node, cpu, mem)
    node_of = {e.id: node[t] for t, e in enumerate(executors)}
    stats = {"broken_pairs": broken, "merges": pool.merges, "singles": singles}
    return node_of, stats  # type: ignore[return-value]


@register(
    "tl",
    paper="000 §3.2, Alg. 1-3",
    summary="taskLevel: task pairs in group-pair priority order, stay on a node within a "
    "group pair, fuse nodes when a pair is split across two; quadratic in tasks.",
    params={
        "key": ("rs", "group-pair priority: rs (Eq. 2), imc_task (the evaluation's TL), imc_group"),
        "pair_order": ("lex", "task-pair order inside a group pair: lex or random"),
        "seed": (0, "seed of the random pair order"),
    },
)
def plan(
    problem: Problem,
    *,
    key: str = "rs",
    pair_order: str = "lex",
    seed: int = 0,
    budget: Budget = UNLIMITED,
) -> Placement:
    """Place ``problem`` with taskLevel; see the module docstring for every deviation.

    Raises:
        InfeasibleError: a single task fits on no node at the end (Alg. 3 fails).
    """
    check_choice("tl", "key", key, KEYS)
    check_choice("tl", "pair_order", pair_order, PAIR_ORDERS)
    try:
        node_of, stats = allocate(problem, key=key, pair_order=pair_order, seed=seed)
    except AllocationFailure as error:
        failure = error
    else:
        report = {"key": key, "pair_order": pair_order, "seed": seed, **stats}
        return Placement(problem.topology.id, node_of, algorithm="tl", report=report)
    raise infeasible_with_suggestion(problem, failure)
