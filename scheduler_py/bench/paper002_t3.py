"""T3 vs the exact optimum (§5): linear/diamond/star, 10-32 tasks, homogeneous 10×4 and
heterogeneous 3×6+3×4+4×2 clusters; plus App. C (TC-C).

T3-Scheduler (002) §5: T3 against the exact optimum on the linear / diamond / star
micro-benchmarks, 10-32 tasks, on a homogeneous (10 × 4) and a heterogeneous
(3 × 6 + 3 × 4 + 4 × 2) cluster; capacity in tasks, every task load 1, every communicating
task pair rate 1, cost = Eq. 1 = the number of task pairs cut between nodes.

The paper solved the task-level ILP with CPLEX (up to 12.9 days for one instance). The
notes (002 §3.3) give exact formulations that exploit the structure and take
milliseconds; they are implemented here and are the "OPT" column:

* **linear** — a chain DP over the operators in order; the state is the multiset of
  (remaining capacity, tasks of the previous operator) over the nodes, equal nodes merged
  (:func:`chain_optimum`);
* **diamond / star** — with uniform weights they are complete bipartite graphs
  (K₈,₂ₖ: source ∪ sink vs the middle operators; K₄,₂ₖ: hub vs the outer operators), so
  OPT = |P||Q| − max Σ_n a_n b_n subject to Σ a = |P|, Σ b = |Q|, a_n + b_n ≤ C_n — a DP over
  the nodes (:func:`bipartite_optimum`).

When the ``optimal`` algorithm is registered it is also run (the project's generic exact
solver, a counting DP / HiGHS MILP with a time limit) and its cost printed with whether it
proved optimality — a cross-check of both.

The notes' reference values (their T3 and exact optimum, ``docs/algorithms/002-t3.md``) are printed
beside ours; the paper's own values exist only in its Fig. 5.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator, Sequence
from functools import lru_cache
from itertools import pairwise

from scheduler_py.algorithms import registry
from scheduler_py.bench import report
from scheduler_py.bench.registry import BenchOptions, seconds_setting
from scheduler_py.model.cost import evaluate
from scheduler_py.model.types import Component, Edge, Node, Problem, Topology

PAPER = "002 T3-Scheduler (FGCS'18) §5, Fig. 5-6; ``docs/algorithms/002-t3.md``"
SIZES = tuple(range(10, 33, 2))
LAYOUTS = ("linear", "diamond", "star")
CLUSTERS = {"hom": (4,) * 10, "het": (6,) * 3 + (4,) * 3 + (2,) * 4}

NOTES_T3 = {
    ("linear", "hom"): (8, 8, 12, 12, 16, 16, 20, 20, 24, 24, 28, 28),
    ("linear", "het"): (4, 4, 8, 8, 8, 12, 12, 16, 16, 20, 20, 24),
    ("diamond", "hom"): (12, 24, 36, 48, 64, 80, 96, 112, 128, 144, 160, 176),
    ("diamond", "het"): (8, 16, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176),
    ("star", "hom"): (16, 24, 32, 40, 48, 56, 64, 72, 80, 88, 96, 104),
    ("star", "het"): (16, 24, 32, 40, 48, 56, 64, 72, 80, 88, 96, 104),
}
NOTES_OPT = {
    ("linear", "hom"): (8, 8, 12, 12, 16, 16, 20, 20, 24, 24, 28, 28),
    ("linear", "het"): (4, 4, 8, 8, 8, 12, 12, 16, 16, 20, 20, 24),
    ("diamond", "hom"): (10, 22, 36, 48, 64, 78, 94, 108, 124, 138, 154, 168),
    ("diamond", "het"): (8, 16, 30, 42, 54, 70, 84, 100, 114, 130, 146, 162),
    ("star", "hom"): (16, 22, 30, 36, 44, 52, 60, 68, 76, 84, 92, 100),
    ("star", "het"): (12, 16, 24, 32, 38, 46, 54, 62, 70, 78, 86, 94),
}


# --------------------------------------------------------------------------------------
# Workloads (§5.1)
# --------------------------------------------------------------------------------------


def _component(cid: str, tasks: int, spout: bool = False) -> Component:
    return Component(cid, tasks, cpu=float(tasks), is_spout=spout)


def _edge(a: Component, b: Component) -> Edge:
    return Edge(a.id, b.id, float(a.parallelism * b.parallelism))


def linear(tasks: int) -> Topology:
    """A chain of ``tasks / 2`` operators of 2 tasks each."""
    ops = [_component(f"op{i:02d}", 2, i == 0) for i in range(tasks // 2)]
    return Topology(
        f"linear-{tasks}",
        tuple(ops),
        tuple(_edge(a, b) for a, b in pairwise(ops)),
    )


def diamond(tasks: int) -> Topology:
    """A 4-task source, ``(tasks − 8) / 2`` middle operators of 2 tasks, a 4-task sink."""
    source, sink = _component("source", 4, True), _component("sink", 4)
    middle = [_component(f"mid{i:02d}", 2) for i in range((tasks - 8) // 2)]
    return Topology(
        f"diamond-{tasks}",
        (source, *middle, sink),
        tuple(_edge(source, m) for m in middle) + tuple(_edge(m, sink) for m in middle),
    )


def star(tasks: int) -> Topology:
    """A 4-task hub with ``(tasks − 4) / 2`` outer operators of 2 tasks, alternately a
    source and a sink."""
    outer = (tasks - 4) // 2
    sources = [_component(f"src{i:02d}", 2, True) for i in range(0, outer, 2)]
    sinks = [_component(f"dst{i:02d}", 2) for i in range(1, outer, 2)]
    hub = _component("hub", 4)
    return Topology(
        f"star-{tasks}",
        (*sources, hub, *sinks),
        tuple(_edge(s, hub) for s in sources) + tuple(_edge(hub, d) for d in sinks),
    )


WORKLOADS = {"linear": linear, "diamond": diamond, "star": star}


def nodes(cluster: str) -> tuple[Node, ...]:
    """Table 3's clusters: capacity in tasks (= CPU, each task has load 1), ids n0..n9 in
    decreasing capacity."""
    return tuple(Node(f"n{i}", float(c), slots=4) for i, c in enumerate(CLUSTERS[cluster]))


def problem(layout: str, cluster: str, tasks: int) -> Problem:
    return Problem(nodes(cluster), WORKLOADS[layout](tasks))


# --------------------------------------------------------------------------------------
# Exact optimum (``docs/algorithms/002-t3.md``)
# --------------------------------------------------------------------------------------


def _distributions(
    classes: Sequence[tuple[tuple[int, int], int]], tasks: int
) -> Iterator[list[tuple[tuple[int, int], int]]]:
    """Every way to put ``tasks`` identical tasks on nodes grouped in classes
    ``((remaining, previous count), multiplicity)``: yields per-node ``(class, x)``."""
    if tasks == 0:
        yield []
        return
    if not classes:
        return
    (state, multiplicity), rest = classes[0], classes[1:]
    remaining = state[0]

    def parts(left: int, slots: int, most: int) -> Iterator[list[int]]:
        """Non-increasing lists of positive ints ≤ most, summing ≤ left, length ≤ slots."""
        yield []
        if slots == 0:
            return
        for first in range(min(most, left), 0, -1):
            for tail in parts(left - first, slots - 1, first):
                yield [first, *tail]

    for chosen in parts(tasks, multiplicity, remaining):
        for tail in _distributions(rest, tasks - sum(chosen)):
            yield [(state, x) for x in chosen] + tail


def chain_optimum(sizes: Sequence[int], rates: Sequence[float], capacities: Sequence[int]) -> float:
    """Exact Eq. 1 optimum of a chain of operators (``sizes[i]`` tasks, every task pair of
    operators i, i+1 at rate ``rates[i]``) on nodes of the given task capacities.

    DP over the operators in chain order; the state is the multiset of (remaining
    capacity, tasks of the previous operator) per node. Two reductions keep it small
    without losing exactness: a node's remaining capacity is capped at the number of
    tasks still to come (more is never usable), and nodes with nothing left are dropped.
    The memo is keyed on the suffix of the chain, so instances that share a suffix (the
    §5 sizes) share work.
    """
    sizes, rates = tuple(sizes), tuple(float(r) for r in rates)
    total = sum(rates[i] * sizes[i] * sizes[i + 1] for i in range(len(sizes) - 1))
    start = _canonical(((c, 0) for c in capacities), sum(sizes))
    collocated = _chain_best(sizes, (0.0, *rates), start)
    if collocated == float("-inf"):
        raise ValueError("infeasible: the tasks do not fit the capacities")
    return total - collocated


def _canonical(states, tasks_left: int) -> tuple[tuple[int, int], ...]:
    return tuple(sorted((min(r, tasks_left), c) for r, c in states if min(r, tasks_left) > 0))


@lru_cache(maxsize=200_000)
def _chain_best(
    sizes: tuple[int, ...], rates: tuple[float, ...], state: tuple[tuple[int, int], ...]
) -> float:
    """Best collocated traffic for operators ``sizes`` (``rates[i]`` links operator i to
    the one before it) from node ``state``."""
    if not sizes:
        return 0.0
    if sum(r for r, _ in state) < sum(sizes):
        return float("-inf")
    after = sum(sizes[1:])
    rate = rates[0]
    result = float("-inf")
    for placed in _placements(state, sizes[0]):
        gain = 0.0
        rest = list(state)
        new: list[tuple[int, int]] = []
        for node_state, x in placed:
            rest.remove(node_state)
            gain += x * node_state[1]
            new.append((node_state[0] - x, x))
        new.extend((r, 0) for r, _ in rest)
        value = rate * gain + _chain_best(sizes[1:], rates[1:], _canonical(new, after))
        if value > result:
            result = value
    return result


def _placements(state: tuple[tuple[int, int], ...], tasks: int):
    """The ways to put ``tasks`` identical tasks on the nodes of ``state`` (equal nodes are
    interchangeable): lists of (node state, tasks put there)."""
    classes = sorted(Counter(state).items())
    if tasks == 1:
        return [[(c, 1)] for c, _ in classes]
    if tasks == 2:
        result = [[(c, 2)] for c, _ in classes if c[0] >= 2]
        for i, (a, multiplicity) in enumerate(classes):
            if multiplicity >= 2:
                result.append([(a, 1), (a, 1)])
            result.extend([(a, 1), (b, 1)] for b, _ in classes[i + 1 :])
        return result
    return list(_distributions(classes, tasks))


def bipartite_optimum(left: int, right: int, capacities: Sequence[int]) -> int:
    """Exact cut of K_{left,right} (unit rates) on nodes of the given task capacities:
    ``left·right − max Σ a_n b_n`` with ``Σ a = left``, ``Σ b = right``, ``a_n + b_n ≤ C_n``."""
    neg = -(10**9)
    table = {(0, 0): 0}
    for capacity in capacities:
        new: dict[tuple[int, int], int] = {}
        for (a_used, b_used), value in table.items():
            for a in range(0, min(capacity, left - a_used) + 1):
                for b in range(0, min(capacity - a, right - b_used) + 1):
                    key = (a_used + a, b_used + b)
                    if value + a * b > new.get(key, neg):
                        new[key] = value + a * b
        table = new
    if (left, right) not in table:
        raise ValueError("infeasible: the tasks do not fit the capacities")
    return left * right - table[(left, right)]


def optimum(layout: str, cluster: str, tasks: int) -> float:
    """The exact §5 optimum (cost) by the structure-specific formulation."""
    capacities = CLUSTERS[cluster]
    if layout == "linear":
        return chain_optimum([2] * (tasks // 2), [1.0] * (tasks // 2 - 1), capacities)
    if layout == "diamond":
        return float(bipartite_optimum(8, tasks - 8, capacities))
    if layout == "star":
        return float(bipartite_optimum(4, tasks - 4, capacities))
    raise ValueError(f"unknown layout {layout!r}")


def t3_cost(layout: str, cluster: str, tasks: int, **params) -> tuple[float, float]:
    """T3's Eq. 1 cost (u_max = 1: capacities are exact task counts) and its seconds."""
    prob = problem(layout, cluster, tasks)
    started = time.perf_counter()
    placement = registry.run("t3", prob, {"u_max": 1.0, **params})
    seconds = time.perf_counter() - started
    return evaluate(prob, placement).internode_traffic, seconds


# --------------------------------------------------------------------------------------
# The benchmark
# --------------------------------------------------------------------------------------


def _optimal_cost(prob: Problem, time_limit: float) -> tuple[float | None, bool, float]:
    outcome = report.attempt("optimal", prob, {"time_limit": time_limit})
    if not outcome.ok or outcome.placement is None:
        return None, False, outcome.seconds
    cost = evaluate(prob, outcome.placement).internode_traffic
    proven = bool(outcome.placement.report.get("proven_optimal", False))
    return cost, proven, outcome.seconds


NAME = "paper002_t3"


def run(options: BenchOptions) -> None:
    report.title("T3-Scheduler vs the exact optimum (Eq. 1 cost = task pairs cut)", PAPER)
    sizes = (10, 14, 18) if options.quick else SIZES
    has_optimal = "optimal" in registry.algorithms()
    optimal_limit = seconds_setting(
        options.extra, "optimal_time_limit", 2.0 if options.quick else 10.0
    )
    optimal_max = int(options.extra.get("optimal_max_tasks", 12 if options.quick else 18))
    baselines = report.available(["rstorm", "online"], note=" (context columns)")
    results: dict[str, list[dict[str, object]]] = {}
    matches_notes = True
    linear_equal = True
    for layout in LAYOUTS:
        for cluster in CLUSTERS:
            key = f"{layout}/{cluster}"
            headers = ["tasks", "T3", "OPT", "T3/OPT", "notes T3", "notes OPT"]
            if has_optimal:
                headers += ["optimal (solver)", "solver s"]
            headers += [f"{b}" for b in baselines] + ["T3 ms", "OPT ms"]
            table = report.Table(headers, caption=f"{layout}, {cluster} cluster")
            rows = []
            for tasks in report.progress(sizes, desc=key):
                index = SIZES.index(tasks)
                cost, seconds = t3_cost(layout, cluster, tasks)
                started = time.perf_counter()
                best = optimum(layout, cluster, tasks)
                opt_seconds = time.perf_counter() - started
                row: dict[str, object] = {
                    "tasks": tasks,
                    "t3": cost,
                    "opt": best,
                    "t3_seconds": seconds,
                    "opt_seconds": opt_seconds,
                    "notes_t3": NOTES_T3[(layout, cluster)][index],
                    "notes_opt": NOTES_OPT[(layout, cluster)][index],
                }
                matches_notes &= cost == row["notes_t3"] and best == row["notes_opt"]
                if layout == "linear":
                    linear_equal &= cost == best
                cells = [
                    tasks,
                    report.fmt(cost, ".0f"),
                    report.fmt(best, ".0f"),
                    report.ratio(cost, best),
                    row["notes_t3"],
                    row["notes_opt"],
                ]
                if has_optimal:
                    if tasks <= optimal_max:
                        solver, proven, solver_s = _optimal_cost(
                            problem(layout, cluster, tasks), optimal_limit
                        )
                        row |= {
                            "solver": solver,
                            "solver_proven": proven,
                            "solver_seconds": solver_s,
                        }
                        cells += [
                            None if solver is None else f"{solver:.0f}{'' if proven else '*'}",
                            report.fmt(solver_s, ".2f"),
                        ]
                    else:
                        cells += [None, None]
                for name in baselines:
                    prob = problem(layout, cluster, tasks)
                    params = {"u_max": 1.0} if name == "t3" else {}
                    outcome = report.attempt(name, prob, params)
                    value = (
                        evaluate(prob, outcome.placement).internode_traffic if outcome.ok else None
                    )
                    row[name] = value
                    cells.append(report.fmt(value, ".0f") if value is not None else "fail")
                cells += [report.fmt(1000 * seconds, ".2f"), report.fmt(1000 * opt_seconds, ".2f")]
                table.add(*cells)
                rows.append(row)
            if has_optimal:
                table.notes.append(
                    f"optimal (solver): the registered 'optimal' algorithm, time limit "
                    f"{optimal_limit:g} s, up to {optimal_max} tasks; * = not proven optimal"
                )
            table.print()
            results[key] = rows

    report.line()
    prob, placement = tc_c()
    evaluation = evaluate(prob, placement)
    report.line(
        f"App. C (top trending topics, a,b,c = 3,2,1, T = 6): inter-node cost "
        f"{evaluation.internode_traffic:.0f} (paper: 20a+26b+3c = 115), workers per node "
        f"{dict(sorted(evaluation.node_workers.items()))} (paper: node3 2, node1 1, node4 1), "
        f"METIS cut on node3 {placement.report['nodes']['node3']['worker_cut']:.0f} (13a = 39)"
    )
    report.line()
    report.line("Targets:")
    report.target_line(
        "T3 equals the optimum on every linear instance (paper §5)", linear_equal, ""
    )
    report.target_line(
        "T3 and OPT equal our notes' reference values (docs/algorithms/002-t3.md)",
        matches_notes,
        "",
    )
    report.target_line("App. C inter-node cost 115", evaluation.internode_traffic == 115, "")

    def draw(axes) -> None:
        for ax, layout in zip(axes, LAYOUTS, strict=True):
            for cluster, style in (("hom", "-"), ("het", "--")):
                rows = results[f"{layout}/{cluster}"]
                xs = [r["tasks"] for r in rows]
                ax.plot(xs, [r["t3"] for r in rows], style, marker="o", label=f"T3 {cluster}")
                ax.plot(xs, [r["opt"] for r in rows], style, marker="x", label=f"OPT {cluster}")
            ax.set_title(layout)
            ax.set_xlabel("tasks")
            ax.set_ylabel("Eq. 1 cost (pairs cut)")
            ax.legend(fontsize=7)

    report.publish(options, NAME, PAPER, draw, {"results": results}, panels=3, width=4.5)


def tc_c(a: float = 3.0, b: float = 2.0, c: float = 1.0):
    """App. C: top trending topics (5, 9, 4, 1 tasks), rates a > b > c per task pair,
    nodes 6, 4, 10, 6, 5 (node3 with 4 slots, the others 2), T = 6."""
    topology = Topology(
        "trending",
        (
            Component("A", 5, 5.0, is_spout=True),
            Component("B", 9, 9.0),
            Component("C", 4, 4.0),
            Component("D", 1, 1.0),
        ),
        (Edge("A", "B", 45 * a), Edge("B", "C", 36 * b), Edge("C", "D", 4 * c)),
    )
    cluster = (
        Node("node1", 6.0, slots=2),
        Node("node2", 4.0, slots=2),
        Node("node3", 10.0, slots=4),
        Node("node4", 6.0, slots=2),
        Node("node5", 5.0, slots=2),
    )
    prob = Problem(cluster, topology)
    return prob, registry.run("t3", prob, {"u_max": 1.0, "tasks_per_worker": 6})
