"""The naive fusion baseline of paper 000 §3.1 (``docs/algorithms/000-topdown.md`` §2.2).

A direct adaptation of the classic fusion-style heuristics the paper cites ([17, 19, 28,
38]): break the job into task pairs, sort them by task-pair IMC (descending), and walk the
nodes in descending capacity order, pushing the next pair onto the current node until it
no longer fits, then moving on. A pair that fits no node is broken into single tasks,
which are placed last. It ignores the group structure, which is what TL and TD improve on.

Registered as ``naive``; no parameters.

Readings and deviations (ours, ``docs/algorithms/000-topdown.md`` §2.2):

* "Move on to the next node" is a cursor that only moves forward: a pair goes to the first
  node at or after the cursor with room for it, and the cursor stays there.
* The paper's "improved" variant is used: a pair with both tasks placed is skipped; a pair
  with one task placed tries to put the other next to it, otherwise that task becomes a
  single.
* Single tasks are placed with Alg. 3 (heaviest first on the node with the most spare
  capacity, ties to the lower node id); the paper does not say how. Tasks that were already
  placed by a later pair are ignored (footnote 1), and so is ``R``'s order of insertion.
* Task-pair IMC is Eq. 1's uniform split of each (merged) edge, or the measured
  executor-pair traffic when the topology carries it; pairs with no traffic are not
  considered (their tasks are singles). Ties keep the edge order, source-task-major.
* Memory is a second hard capacity and nodes with ``slots == 0`` are unusable, as in TL/TD;
  the plan uses one logical worker per node.

Example:
    >>> from scheduler_py.model.types import Component, Edge, Node, Problem, Topology
    >>> topo = Topology("t", (Component("a", 2, 20), Component("b", 4, 20)), (Edge("a", "b", 10),))
    >>> sorted(set(plan(Problem((Node("n0", 100), Node("n1", 100)), topo)).node_of.values()))
    ['n0']

References:
    A. Chatzistergiou, S. D. Viglas, "Fast Heuristics for Near-Optimal Task Allocation in
    Data Stream Processing over Clusters", CIKM 2014, §3.1; ``docs/algorithms/000-topdown.md`` §2.2.
"""

from __future__ import annotations

from scheduler_py.algorithms.registry import register
from scheduler_py.algorithms.topdown.groups import (
    AllocationFailure,
    NodePool,
    allocate_single_tasks,
    ensure_usable,
    infeasible_with_suggestion,
)
from scheduler_py.model.budget import UNLIMITED, Budget
from scheduler_py.model.types import EPSILON, Placement, Problem


def allocate(problem: Problem) -> tuple[dict[str, str], dict[str, object]]:
    """Run the naive fusion heuristic once; returns ``(executor -> node, statistics)``."""
    nodes = ensure_usable(problem)
    topology = problem.topology
    executors = topology.executors
    position = {e.id: t for t, e in enumerate(executors)}
    cpu = [e.cpu for e in executors]
    mem = [e.memory_mb for e in executors]
    # every task pair with traffic, most communication-intensive first (stable: edge order)
    pairs = sorted(
        (p for p in topology.pair_traffics() if p[0] in position and p[1] in position),
        key=lambda p: -p[2],
    )
    order = [n.id for n in sorted(nodes, key=lambda n: (-n.cpu, n.id))]
    pool = NodePool(nodes)
    free_cpu, free_mem = pool.cpu, pool.mem
    node: list[str | None] = [None] * len(executors)
    cursor = 0
    broken = 0
    for src, dst, _ in pairs:
        m, n = position[src], position[dst]
        nm, nn = node[m], node[n]
        if nm is not None and nn is not None:
            continue  # both allocated: next pair ("improved" variant)
        if nm is not None or nn is not None:  # one allocated: try to collocate the other
            host, t = (nm, n) if nm is not None else (nn, m)
            if cpu[t] <= free_cpu[host] + EPSILON and mem[t] <= free_mem[host] + EPSILON:
                pool.take(host, cpu[t], mem[t])
                node[t] = host
            else:
                broken += 1  # the free task is unlinked: allocated last
            continue
        c, k = cpu[m] + cpu[n], mem[m] + mem[n]
        for j in range(cursor, len(order)):  # keep filling the current node, then move on
            nid = order[j]
            if c <= free_cpu[nid] + EPSILON and k <= free_mem[nid] + EPSILON:
                cursor = j
                pool.take(nid, c, k)
                node[m] = node[n] = nid
                break
        else:
            broken += 1  # fits no node: break the pair into single tasks

    singles = allocate_single_tasks("naive", pool, executors, node, cpu, mem)
    node_of = {e.id: node[t] for t, e in enumerate(executors)}
    return node_of, {"broken_pairs": broken, "singles": singles}  # type: ignore[return-value]


@register(
    "naive",
    paper="000 §3.1",
    summary="Naive fusion baseline: task pairs by task IMC, fill nodes largest first, "
    "break pairs that fit nowhere into single tasks.",
)
def plan(problem: Problem, *, budget: Budget = UNLIMITED) -> Placement:
    """Place ``problem`` with the naive fusion heuristic.

    Raises:
        InfeasibleError: a single task fits on no node at the end.
    """
    try:
        node_of, stats = allocate(problem)
    except AllocationFailure as error:
        failure = error
    else:
        return Placement(problem.topology.id, node_of, algorithm="naive", report=stats)
    raise infeasible_with_suggestion(problem, failure)
