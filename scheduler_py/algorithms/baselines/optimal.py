"""The exact optimum of φ under CPU, memory and slot capacity (the yardstick of paper 000 §7.3).

Maximise the IMC gain φ(X) (paper 000 §2.2, ``docs/algorithms/000-topdown.md`` §1.4: every directed
executor link counted once) subject to every node's CPU and memory capacity; a node without a free
slot hosts nothing. Two exact methods, both from ``docs/algorithms/000-topdown.md`` §5.1 "Computing
the exact optimum":

* **Counting DP** (``method="dp"``). Executors of a component with the same CPU and memory are
  interchangeable (Eq. 1: the same traffic to every partner), so a node's contents is a
  *pattern*: a count per executor class, and its gain is ``Σ_{c<d} w_cd·p_c·p_d``. With
  identical nodes, ``best(k, rem)`` = the best gain for the remaining count vector ``rem`` on
  the ``K − k`` nodes not yet used, where the next node's pattern must contain ≥ 1 executor of
  the first class with executors left (the canonical-order trick that removes permutations
  of identical nodes). With nodes of different capacity the nodes are taken in a fixed order
  and ``best(i, rem)`` ranges over node ``i``'s patterns, the empty one included.
  Memoised on the state.
* **Unary-count MILP** (``method="milp"``, HiGHS through :func:`scipy.optimize.milp`, with a
  time limit and the proven gap in the report). Binary ``b[c,n,k]`` = "node n hosts ≥ k
  executors of class c", ``b[c,n,k] ≥ b[c,n,k+1]``, ``Σ_{n,k} b[c,n,k] = |c|``, capacity rows,
  and for a pair of classes with traffic either the ``z[c,d,n,k,l] ≤ b[c,n,k],
  b[d,n,l]`` (small classes) or the compact ``y[c,d,n,k] ≤ a[d,n], y ≤ m·b[c,n,k]``
  (large ones; exact as well, since the objective only pushes y up). Identical nodes get the
  symmetry breaking (the first class's count per node non-increasing; ordering by the
  total count, which HiGHS solved 4× slower on our instances). With measured
  per-executor-pair traffic every executor is its own class of size 1, so ``b`` is the
  executor-level ``x[e,n]`` and ``z`` the linearised product of a pair with traffic.

``method="auto"`` (default) runs the DP when its state space is small and falls back to the
MILP when the DP exceeds ``dp_budget`` pattern evaluations.

Deviations and additions (ours):

* Memory is a second capacity row / DP dimension, slots are honoured by excluding nodes with
  no free slot (one worker per node, the model's default).
* Two DP prunings that keep it exact: a remainder that fits on one node is best placed on that
  node whole (φ is supermodular when traffic is non-negative), and a remainder whose CPU
  exceeds the capacity of the nodes left is infeasible. With identical nodes the state is
  keyed on ``(min(nodes left, executors left), rem)``.
* When HiGHS hits the time limit without an incumbent, the heuristic ``tdls`` placement is
  returned with the MILP's bound, so the report still states a proven gap.

References: A. Chatzistergiou, S. D. Viglas, "Fast Heuristics for Near-Optimal Task Allocation
in Data Stream Processing over Clusters", CIKM 2014, §2.2 and §7.3;
``docs/algorithms/000-topdown.md`` §1.4 and §5.1.
"""

from __future__ import annotations

import math
import time

from scheduler_py.algorithms.baselines.optimal_dp import (
    BudgetExceeded,
    Solution,
    dp_state_space,
    solve_dp,
)
from scheduler_py.algorithms.baselines.optimal_milp import solve_milp
from scheduler_py.algorithms.registry import register
from scheduler_py.algorithms.topdown import tdls
from scheduler_py.algorithms.topdown.counts import (
    CountModel,
    TaskClass,
    count_model,
)
from scheduler_py.model.budget import UNLIMITED, Budget
from scheduler_py.model.capacity import check_feasible
from scheduler_py.model.cost import imc_gain
from scheduler_py.model.errors import InfeasibleError, SchedulingError
from scheduler_py.model.types import EPSILON, Node, Placement, Problem


def _infeasible(problem: Problem, model: CountModel, solve) -> InfeasibleError:
    """Name the resource that makes a proven-infeasible problem infeasible."""
    check_feasible(problem)  # the clear message for the necessary conditions
    topology = problem.topology
    cpu_only = CountModel(
        tuple(TaskClass(c.component, c.executors, c.cpu, 0.0) for c in model.classes),
        model.weight,
        0.0,
        tuple(Node(n.id, n.cpu, n.slots) for n in model.nodes),
        model.uniform,
    )
    if solve(cpu_only).counts is None:
        resource, need = "cpu", lambda cls: cls.cpu
        caps = [n.cpu for n in model.nodes]
        unit = "% CPU"
    else:
        resource, need = "memory", lambda cls: cls.memory_mb
        caps = [n.memory_mb for n in model.nodes]
        unit = " MB memory"
    hardest = max(model.classes, key=lambda cls: (need(cls), cls.component))
    total = sum(need(cls) * cls.size for cls in model.classes)
    return InfeasibleError(
        f"topology {topology.id}: the executors cannot be packed into the nodes' {resource} "
        f"capacity: {total:.1f}{unit} in total against {sum(caps):.1f}{unit} on "
        f"{len(caps)} usable node(s), but no packing exists (largest executors: component "
        f"{hardest.component} at {need(hardest):.1f}{unit} each); raise the parallelism of "
        f"the largest components or add capacity",
        resource=resource,
        component=hardest.component,
        needed=need(hardest),
        best_available=max(caps),
    )


@register(
    "optimal",
    paper="000 §7.3 (exact optimum), docs/algorithms/000-topdown.md §5.1",
    summary="Exact maximum of φ under CPU/memory capacity: counting DP over interchangeable "
    "executors, or the unary-count MILP (HiGHS) with a time limit and proven gap.",
    params={
        "method": ("auto", "auto (DP when small, else MILP), dp or milp"),
        "time_limit": (30.0, "MILP time limit in seconds; the report gives the proven gap"),
        "dp_budget": (
            1_000_000,
            "auto: pattern evaluations the DP may spend before switching to the MILP",
        ),
        "dp_max_states": (200_000, "auto: largest Π(|class|+1) for which the DP is tried"),
    },
)
def plan(
    problem: Problem,
    *,
    method: str = "auto",
    time_limit: float = 30.0,
    dp_budget: int = 1_000_000,
    dp_max_states: int = 200_000,
    budget: Budget = UNLIMITED,
) -> Placement:
    """Place ``problem`` maximising φ exactly (or within the MILP's time limit).

    ``budget`` (:mod:`scheduler_py.model.budget`) caps ``time_limit``; when the cap stops
    HiGHS before it proves the optimum, the incumbent is returned with
    ``report["budget_exhausted"]`` and its proven gap.

    Parameters
    ----------
    method:
        ``"auto"``, ``"dp"`` (always the DP, unbounded) or ``"milp"``.
    time_limit:
        Seconds HiGHS may spend; on expiry the incumbent is returned with its proven gap.
    dp_budget, dp_max_states:
        When ``auto`` tries the DP and when it gives up on it.

    Returns
    -------
    Placement
        ``report``: ``objective`` (= φ of the placement), ``bound`` (proven upper bound),
        ``gap`` (relative), ``status``, ``proven_optimal``, ``method`` and solver details.

    Raises
    ------
    InfeasibleError
        No placement fits; names the resource (cpu, memory or slots).

    Example
    -------
    >>> from scheduler_py.model import Component, Edge, Node, Problem, Topology
    >>> topo = Topology("t", (Component("a", 2, 40), Component("b", 2, 40)), (Edge("a", "b", 8),))
    >>> plan(Problem((Node("n0", 100), Node("n1", 100)), topo)).report["objective"]
    8.0
    """
    if method not in ("auto", "dp", "milp"):
        raise SchedulingError(f"optimal: method must be auto, dp or milp, got {method!r}")
    started = time.perf_counter()
    check_feasible(problem)
    model = count_model(problem)
    solution: Solution | None = None
    used = method
    cut: list[str] = []
    if method == "dp" or (method == "auto" and dp_state_space(model) <= dp_max_states):
        try:
            solution = solve_dp(
                model, budget=dp_budget if method == "auto" else None, deadline=budget
            )
            used = "dp"
        except BudgetExceeded as error:
            if error.out_of_time:
                cut.append("the counting DP")
            solution = None
    milp_limit = budget.cap(time_limit)
    if solution is None and not cut and milp_limit > 0:
        solution = solve_milp(model, time_limit=milp_limit)
        used = "milp"
        if solution.status == "time_limit" and milp_limit < time_limit:
            cut.append(f"the MILP (time limit {milp_limit:.3g} s instead of {time_limit:g} s)")
    if solution is None:  # the budget ended before any exact method could finish
        if not cut:
            cut.append("every exact method (no time left)")
        solution = Solution(None, math.inf, "budget", False, {})
        used = "none"

    def feasibility(m: CountModel) -> Solution:
        if used == "dp":
            return solve_dp(m, ignore_traffic=True)
        return solve_milp(m, time_limit=time_limit, ignore_traffic=True)

    if solution.status == "infeasible":
        raise _infeasible(problem, model, feasibility)
    counts = solution.counts
    status = solution.status
    if counts is None:  # no incumbent: the heuristic, with the MILP's bound when there is one
        try:
            counts = model.counts_of(tdls.plan(problem, budget=budget).node_of)
        except InfeasibleError as error:
            raise SchedulingError(
                f"optimal: no exact method found a feasible placement for topology "
                f"{problem.topology.id} within {milp_limit:g} s and the heuristic failed too "
                f"({error}); raise time_limit"
            ) from error
        status = "time_limit_heuristic"
    for c, cls in enumerate(model.classes):
        if sum(row[c] for row in counts) != cls.size:  # pragma: no cover - a solver bug
            raise SchedulingError(f"optimal: solution misplaces executors of {cls.component}")
    node_of = model.node_of(counts)
    objective = imc_gain(problem.topology, node_of)
    own = model.phi(counts)
    if abs(own - objective) > 1e-6 * max(1.0, abs(objective)):
        raise SchedulingError(
            f"optimal: count-model φ {own} disagrees with cost.imc_gain {objective}"
        )
    solver_objective = solution.detail.get("milp_objective")
    if solver_objective is not None and status != "time_limit_heuristic":
        # the linearised products can only under-count an incumbent's φ (they are pushed up
        # by the objective, not forced); at a proven optimum they are exact
        slack = 1e-5 * max(1.0, abs(objective))
        if solver_objective > objective + slack or (
            solution.proven and abs(solver_objective - objective) > slack
        ):
            raise SchedulingError(
                f"optimal: MILP objective {solver_objective} disagrees with φ {objective}"
            )
    bound = objective if solution.proven else max(solution.bound, objective)
    if solution.proven:
        gap = 0.0
    elif objective > 0:
        gap = (bound - objective) / objective
    else:
        gap = 0.0 if bound <= EPSILON else math.inf
    report = {
        "objective": objective,
        "bound": bound,
        "gap": gap,
        "status": status,
        "proven_optimal": solution.proven,
        "method": used,
        "seconds": time.perf_counter() - started,
        **solution.detail,
    }
    if cut:
        report["budget_exhausted"] = True
        report["budget_note"] = (
            f"the time budget cut {' and '.join(cut)}; the placement is "
            f"{'tdls' if status == 'time_limit_heuristic' else 'the best incumbent'}"
            f" (gap {gap:.1%}), not proven optimal"
        )
    return Placement(problem.topology.id, node_of, report=report)
