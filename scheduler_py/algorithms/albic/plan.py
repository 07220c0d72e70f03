"""ALBIC and the load-balancing MILP (paper 001: K. G. S. Madsen, Y. Zhou, J. Cao,
"Integrative Dynamic Reconfiguration in a Parallel Stream Processing Engine",
arXiv 1602.03770, 2016, §4.3; ``docs/algorithms/001-albic.md``).

One call is one adaptation round of the integrative framework (Algorithm 1, lines 1-8):
the controller (our service) calls it once per statistics period with the measured
per-executor load (``Topology.executor_cpu``) and pair traffic (``Topology.pair_traffic``)
and the deployed placement (``Problem.current``). The maths lives in
:mod:`.milp` (the MILP), :mod:`.anytime` (solving it within a time limit), :mod:`.core`
(ALBIC Steps 1-4) and :mod:`.baselines` (Flux, COLA, LPT, METIS splits).

Mapping onto Storm (``docs/algorithms/001-albic.md`` §6.1):

* **key group = executor** (set parallelism = numTasks so that fields grouping makes each
  executor one hash partition); every executor, system ones included, is an item;
* **node = the topology's worker process on a supervisor**: one worker per node (moved
  executors join the node's existing worker, the lowest index); collocation saves
  serialisation only inside one worker, hence one worker per node;
* **load** L_g = the bottleneck resource (``resource = auto``: the one with the higher
  total utilisation, CPU or memory) in percent of the node's capacity; the other
  resource, and CPU/memory capacities, are hard constraints (§4.3.1 multi-dimensional);
* **migration cost** c_g = 1 per moved executor (the count budget the paper uses against
  Flux, ``max_migrations``); in Storm each move restarts the source and destination
  workers (``docs/algorithms/001-albic.md`` §6.3 item 2), so the report counts ``moves`` and
  ``restarts`` (workers whose executor set changed) and ``max_restarts`` optionally bounds restarted
  workers;
* **scale-in**: ``remove_nodes`` lists the node ids marked for removal (R); they only
  drain (Lemma 1, enforced) and the report names nodes already empty (``released_nodes``,
  Algorithm 1 lines 1-3); **scale-out**: nodes of the problem that hold nothing are part
  of N and the MILP fills them; the scaling decision itself is the caller's (the paper
  gives no rule; ``scaling_hint`` in the report is our advisory [O]).

Without ``Problem.current`` there is nothing to adapt: the placement is the initial
allocation the paper recommends for job submission, COLA-style partitioning (balanced
min-cut parts packed largest-first; ``initial = cola``) or plain LPT (``initial = lpt``),
with 0 moves and 0 restarts.

Deviations from the printed paper (for the table in docs/algorithms.md):

* the MILP's algebra is our reconstruction (the math was lost in our copy);
  heterogeneous loads are percentages of each node's capacity;
* HiGHS (scipy) instead of CPLEX, with a time limit per solve and no warm start: every
  solve without a forced pair is bounded by, and falls back to, the admissible "no move",
  so a timeout never returns something worse;
* ``neighbourhood = restricted`` (default): the first solve only offers over→under-loaded
  moves (Flux's suitability test), then fix-and-optimise re-solves the MILP over the most
  deviating nodes with everything else fixed; ``full`` is the monolithic model;
* Lemma 1 is enforced as a constraint (the paper proves it only for optimal solutions);
* Lemma 2 does not hold for indivisible key groups (3 nodes at 50 %, one 90 % key group
  in R: LD 30 before draining, 60 after, so an LD-minimising solver never drains), hence a
  progress floor ``drain_min`` (default 1 key group leaves R per round, so R empties
  within as many rounds as it held key groups; "no move" is then the current allocation
  plus a greedy drain);
* lost parameters take our substitutes: sf = 2, maxLD = 10 pp, δ = 5 pp
  (maxPL₀ = 25 % is the paper's);
* collocated pairs are the candidates currently on one node (``docs/algorithms/001-albic.md`` §5
  item 7, interpretation A); Step 3 never targets a node in R and skips pairs whose forced move
  breaks the budget or capacity; a partition may cost up to the whole budget (≤, not <);
* a current allocation over capacity is repaired beyond the budget (reported);
* ``min_gain``, ``max_restarts``, ``flux_seed`` and the scaling hint are our additions.
"""

from __future__ import annotations

import math
from collections import defaultdict

import numpy as np

from scheduler_py.algorithms.albic import milp as mm
from scheduler_py.algorithms.albic.baselines import cola, lpt
from scheduler_py.algorithms.albic.core import (
    AlbicParams,
    KeyGroups,
    RoundResult,
    albic_round,
    drain_quota,
    repair_capacity,
)
from scheduler_py.algorithms.registry import check_choice, register
from scheduler_py.model.budget import UNLIMITED, Budget
from scheduler_py.model.capacity import check_feasible, usable_nodes
from scheduler_py.model.cost import imc_gain, total_traffic
from scheduler_py.model.errors import InvalidProblemError, SchedulingError
from scheduler_py.model.types import Placement, Problem

RESOURCES = ("auto", "cpu", "memory")
NEIGHBOURHOODS = ("restricted", "full")
INITIALS = ("cola", "lpt")


def parse_node_list(text: str) -> list[str]:
    return [part.strip() for part in str(text or "").split(",") if part.strip()]


def build_instance(
    problem: Problem,
    *,
    remove_nodes: str = "",
    max_migrations: int = 10,
    max_restarts: int = 0,
    resource: str = "auto",
) -> tuple[KeyGroups, list, list, dict]:
    """The integer ALBIC instance of ``problem``: (key groups, node ids, executor ids, info)."""
    topology = problem.topology
    nodes = list(usable_nodes(problem))
    node_ids = [n.id for n in nodes]
    index = {nid: i for i, nid in enumerate(node_ids)}
    executors = list(topology.executors)
    exec_ids = [e.id for e in executors]
    exec_index = {eid: i for i, eid in enumerate(exec_ids)}
    wanted = parse_node_list(remove_nodes)
    unknown = [n for n in wanted if n not in index]
    removing = np.array([nid in set(wanted) for nid in node_ids], dtype=bool)
    if nodes and removing.all():
        raise InvalidProblemError(
            f"albic: every usable node ({', '.join(node_ids)}) is marked for removal; keep at "
            "least one node in remove_nodes' complement"
        )
    cpu = np.array([e.cpu for e in executors], dtype=float)
    mem = np.array([e.memory_mb for e in executors], dtype=float)
    cap_cpu = np.array([n.cpu for n in nodes], dtype=float)
    cap_mem = np.array([n.memory_mb for n in nodes], dtype=float)
    if resource == "auto":
        util_cpu = cpu.sum() / cap_cpu.sum() if cap_cpu.sum() > 0 else 0.0
        finite = np.isfinite(cap_mem)
        util_mem = mem.sum() / cap_mem[finite].sum() if finite.all() and cap_mem.sum() > 0 else 0.0
        resource = "memory" if util_mem > util_cpu else "cpu"
    load, cap = (mem, cap_mem) if resource == "memory" else (cpu, cap_cpu)
    home = np.full(len(executors), -1, dtype=int)
    if problem.current is not None:
        for eid, nid in problem.current.node_of.items():
            if eid in exec_index and nid in index:
                home[exec_index[eid]] = index[nid]
    traffic: dict[tuple[int, int], float] = defaultdict(float)
    for src, dst, rate in topology.pair_traffics():
        if src in exec_index and dst in exec_index and src != dst:
            traffic[(exec_index[src], exec_index[dst])] += rate
    downstream_of: dict[str, int] = defaultdict(int)
    for edge in topology.merged_edges:
        downstream_of[edge.source] += topology.component_by_id[edge.target].parallelism
    seen_targets: dict[int, set] = defaultdict(set)
    for g, h in traffic:
        seen_targets[g].add(h)
    downstream = np.array(
        [
            max(downstream_of.get(e.component, 0) or len(seen_targets[i]), 1)
            for i, e in enumerate(executors)
        ],
        dtype=float,
    )
    balance = mm.Balance(
        load=load,
        cpu=cpu,
        mem=mem,
        cap=cap,
        cap_cpu=cap_cpu,
        cap_mem=cap_mem,
        home=home,
        cost=np.where(home >= 0, 1.0, 0.0),
        removing=removing,
        budget=float(max_migrations),
        restart_budget=int(max_restarts) if max_restarts > 0 else None,
    )
    info = {"bottleneck": resource, "remove_nodes_unknown": unknown}
    return KeyGroups(balance, dict(traffic), downstream), node_ids, exec_ids, info


def restarted_workers(old: Placement | None, new: Placement) -> list[tuple[str, int]]:
    """Workers (node, logical index) of ``new`` that Storm (re)starts: a worker whose
    executor set changed, or a new one (``docs/algorithms/001-albic.md`` §6.3 item 2: ``Slot`` kills
    a worker whose assignment changed). Workers that ``new`` no longer uses are stopped, not
    counted: the rule of :func:`scheduler_py.model.slots.restarted_workers`, here on logical workers
    (the slot mapping keeps every unchanged worker in its port)."""
    if old is None:
        return []

    def sets(placement: Placement) -> dict[tuple[str, int], frozenset]:
        out: dict[tuple[str, int], set] = defaultdict(set)
        for e in placement.node_of:
            out[placement.worker_key(e)].add(e)
        return {k: frozenset(v) for k, v in out.items()}

    before, after = sets(old), sets(new)
    return sorted(k for k, members in after.items() if before.get(k) != members)


SOLVES_PER_ROUND = 3
"""MILP solves one ALBIC round makes at most in the usual case: load balancing, then the
collocation re-solve and the lowered-cap retry (the budget is shared over them)."""


@register(
    "albic",
    paper="001 Madsen, Zhou & Cao 2016 §4.3.1 (MILP), §4.3.2 (ALBIC), Alg. 1",
    summary="Runtime adaptation: MILP minimising the load distance under a migration budget "
    "(HiGHS, time-limited, never worse than no move), with scale-in draining and ALBIC's "
    "gradual collocation of heavily communicating executors.",
    params={
        "max_migrations": (10, "migration budget per round: executors moved (c_g = 1)"),
        "max_restarts": (0, "optional budget of restarted workers per round (0 = none)"),
        "remove_nodes": ("", "comma-separated node ids marked for removal (scale-in)"),
        "collocation": (True, "ALBIC Steps 1-3 (false: the pure MILP of §4.3.1)"),
        "sf": (2.0, "score factor: candidate iff O[g,g'] > sf * O[g] / D[g]"),
        "max_ld": (10.0, "maxLD, the accepted load distance in percentage points"),
        "max_pl": (25.0, "initial maxPL, the largest partition load in % of a node"),
        "delta": (5.0, "δ, the maxPL decrease per recalculation (percentage points)"),
        "time_limit": (10.0, "seconds per MILP solve (HiGHS)"),
        "neighbourhood": ("restricted", "MILP moves: restricted (over→under-loaded) | full"),
        "resource": ("auto", "balanced resource: auto (bottleneck) | cpu | memory"),
        "initial": ("cola", "no current placement: cola (partitioned) | lpt"),
        "flux_seed": (False, "also guard with a Flux result, not only the current one"),
        "seed": (0, "random tie-breaks of Step 3"),
        "drain_min": (1, "scale-in progress floor: key groups leaving R per round (ours)"),
        "min_gain": (
            0.0,
            "deploy a rebalance only if LD drops by more than this (pp; 0 = "
            "paper: any improvement)",
        ),
    },
)
def plan(
    problem: Problem,
    *,
    max_migrations: int = 10,
    max_restarts: int = 0,
    remove_nodes: str = "",
    collocation: bool = True,
    sf: float = 2.0,
    max_ld: float = 10.0,
    max_pl: float = 25.0,
    delta: float = 5.0,
    time_limit: float = 10.0,
    neighbourhood: str = "restricted",
    resource: str = "auto",
    initial: str = "cola",
    flux_seed: bool = False,
    seed: int = 0,
    min_gain: float = 0.0,
    drain_min: int = 1,
    budget: Budget = UNLIMITED,
) -> Placement:
    """One ALBIC adaptation round (see the module docstring).

    ``budget`` (:mod:`scheduler_py.model.budget`): a round makes up to
    :data:`SOLVES_PER_ROUND` MILP solves, so each gets at most that share of what is left;
    a solve stopped by it keeps its incumbent (``report["budget_exhausted"]``).

    Raises :class:`~scheduler_py.model.errors.InfeasibleError` when the topology cannot
    fit, :class:`SchedulingError` for invalid parameters.
    """
    check_choice("albic", "resource", resource, RESOURCES)
    check_choice("albic", "neighbourhood", neighbourhood, NEIGHBOURHOODS)
    check_choice("albic", "initial", initial, INITIALS)
    if min(max_migrations, max_restarts, drain_min) < 0 or time_limit <= 0 or delta < 0:
        raise SchedulingError(
            "albic: max_migrations, max_restarts and drain_min must be >= 0, time_limit > 0, "
            "delta >= 0"
        )
    check_feasible(problem)
    requested_limit = time_limit
    time_limit = max(0.01, budget.cap(time_limit * SOLVES_PER_ROUND) / SOLVES_PER_ROUND)
    topology = problem.topology
    kg, node_ids, exec_ids, info = build_instance(
        problem,
        remove_nodes=remove_nodes,
        max_migrations=max_migrations,
        max_restarts=max_restarts,
        resource=resource,
    )
    b = kg.balance
    b.drain = drain_quota(b, drain_min) if problem.current is not None else 0
    params = AlbicParams(
        sf=sf,
        max_ld=max_ld,
        max_pl=max_pl,
        delta=delta,
        time_limit=time_limit,
        neighbourhood=neighbourhood,
        collocation=collocation,
        flux_seed=flux_seed,
        seed=seed,
        min_gain=min_gain,
    )
    if problem.current is None:
        if initial == "cola":
            symmetric: dict[tuple[int, int], float] = defaultdict(float)
            for (g, h), rate in kg.traffic.items():
                symmetric[(min(g, h), max(g, h))] += rate
            assign = cola(b, dict(symmetric), max_ld)
        else:
            assign = lpt(b)
        result = RoundResult(assign, None, mm.assignment_ld(b, assign), f"initial-{initial}")
    else:
        result = albic_round(kg, params)
    assign = result.assign
    repairs = 0
    if not mm.capacity_ok(b, assign):
        assign, repairs = repair_capacity(b, assign)
    node_of = {eid: node_ids[assign[i]] for i, eid in enumerate(exec_ids)}
    worker_of = _workers(problem.current, node_of)
    placement = Placement(topology.id, node_of, worker_of=worker_of)
    report = _report(problem, kg, node_ids, exec_ids, info, result, assign, placement, repairs)
    report["params"] = {
        "max_migrations": max_migrations,
        "max_restarts": max_restarts,
        "remove_nodes": remove_nodes,
        "collocation": collocation,
        "sf": sf,
        "max_ld": max_ld,
        "max_pl": max_pl,
        "delta": delta,
        "time_limit": time_limit,
        "neighbourhood": neighbourhood,
        "resource": resource,
        "initial": initial,
        "flux_seed": flux_seed,
        "seed": seed,
        "min_gain": min_gain,
        "drain_min": drain_min,
        "requested_time_limit": requested_limit,
    }
    if time_limit < requested_limit and budget.expired():
        report["budget_exhausted"] = True
        report["budget_note"] = f"MILP solves limited to {time_limit:.2f} s each"
    return Placement(topology.id, node_of, worker_of=worker_of, report=report)


def _workers(current: Placement | None, node_of: dict[str, str]) -> dict[str, int]:
    """Unmoved executors keep their worker; moved ones join the node's lowest worker."""
    if current is None:
        return {e: 0 for e in node_of}
    lowest: dict[str, int] = {}
    for e, n in current.node_of.items():
        w = current.worker_of.get(e, 0)
        lowest[n] = min(lowest.get(n, w), w)
    out = {}
    for e, n in node_of.items():
        if current.node_of.get(e) == n:
            out[e] = current.worker_of.get(e, 0)
        else:
            out[e] = lowest.get(n, 0)
    return out


def collocation_factor(problem: Problem, node_of) -> float | None:
    """CF (``docs/algorithms/001-albic.md`` §5 item 6): % of the measured traffic between executors
    on one node, scored by
    the shared cost module."""
    total = total_traffic(problem.topology)
    if total <= 0:
        return None
    return 100.0 * imc_gain(problem.topology, node_of) / total


def _report(
    problem, kg, node_ids, exec_ids, info, result: RoundResult, assign, placement, repairs
) -> dict:
    b = kg.balance
    absolute = mm.node_load(assign, b.load, b.n_nodes)
    relative = 100.0 * absolute / np.where(b.cap > 0, b.cap, np.inf)
    homed = b.home >= 0
    moves = int(((assign != b.home) & homed).sum())
    restarted = restarted_workers(problem.current, placement)
    removing = [node_ids[i] for i in np.flatnonzero(b.removing)]
    left = {node_ids[i]: int((assign == i).sum()) for i in np.flatnonzero(b.removing)}
    avg = b.average
    active = int((~b.removing).sum())
    total = float(b.load.sum())
    mean_cap = float(b.cap[~b.removing].mean()) if active else 0.0
    hint = "none"
    if mean_cap > 0 and relative.size and relative.max() > 80.0:
        need = math.ceil(total / (0.8 * mean_cap)) - active
        hint = f"scale_out: about {max(need, 1)} node(s) (max node load > 80 %)"
    elif active > 1 and mean_cap > 0 and total / ((active - 1) * mean_cap) * 100 <= 50.0:
        hint = "scale_in: one node could be marked for removal (load would stay <= 50 %)"
    current_node_of = problem.current.node_of if problem.current is not None else None
    return {
        "chosen": result.chosen,
        "bottleneck": info["bottleneck"],
        "moves": moves,
        "forced_moves": int((~homed).sum()) if problem.current is not None else 0,
        "restarts": len(restarted),
        "restarted_workers": [f"{n}/{w}" for n, w in restarted],
        "migration_budget": b.budget,
        "restart_budget": b.restart_budget,
        "capacity_repairs": repairs,
        "load_distance_before": result.ld_before,
        "load_distance": mm.load_distance(absolute, b.cap, b.removing, total),
        "average_load": avg,
        "node_load": {node_ids[i]: float(relative[i]) for i in range(len(node_ids))},
        "removing": removing,
        "remove_nodes_unknown": info["remove_nodes_unknown"],
        "left_on_removing": left,
        "released_nodes": [n for n, count in left.items() if count == 0],
        "collocation_factor_before": (
            collocation_factor(problem, current_node_of) if current_node_of is not None else None
        ),
        "collocation_factor": collocation_factor(problem, placement.node_of),
        "candidates": result.candidates,
        "collocated_candidates": result.collocated_candidates,
        "forced_pair": (
            [exec_ids[result.pair[0]], exec_ids[result.pair[1]]] if result.pair else None
        ),
        "forced_node": node_ids[result.pair_node] if result.pair_node is not None else None,
        "max_pl": result.max_pl,
        "partitions": result.partitions,
        "solves": result.solves,
        "scaling_hint": hint,
    }
