"""topDown (TD): the group-aware linear-time allocator of paper 000 §4 (Alg. 4-5), with §5.

A job is a DAG of groups (components) whose tasks (executors) all talk to all tasks of a
connected group (§2.1). TD prioritises the group pairs ``U`` on relative significance
``s = IMC / (PC_i + PC_j)`` (Eq. 2) and, pair by pair,

* fuses the whole pair onto the node with the most spare capacity when it fits;
* otherwise splits both groups into balanced slices (``r = ⌊|v_j|/|v_i|⌋`` tasks of the
  larger group per task of the smaller), filling the freest node and recursing on the rest;
* when one side is already placed, puts as much of the other side as fits next to it;
* when both sides are placed, each on one node, fuses the two nodes if the load fits.

Leftover tasks (``R``) are placed last, heaviest first, on the freest node (Alg. 3).

Parameters (registered as ``td``):

``key`` (``"rs"``)
    Edge priority: ``rs`` (Eq. 2), ``imc_group`` (the pair's total IMC, Fig. 8's TD-IMC) or
    ``imc_task`` (IMC of one task pair).
``k0_guard`` (``"degrade"``)
    What Alg. 5 does when not even one balanced unit σ fits the freest node (k = 0, E11):
    ``degrade`` (``docs/algorithms/000-topdown.md`` §2.5 G1: one task of the smaller group plus what
    fits of the other, then continue), ``minimal`` (G0: both remainders to R) or ``maxprod`` (G2:
    the slices that maximise ``a·b``).
``second_mode`` (``"next"``)
    One side placed (Alg. 5 mode *second*): ``literal`` fills only the best node of ``N_u``
    and sends the rest to R (E14); ``next`` keeps filling the next node of ``N_u``.
``subgroup_margin`` (``0.2``)
    §5 skew relaxation (``docs/algorithms/000-topdown.md`` §2.7c) for topologies with measured
    per-executor CPU or executor-pair traffic; ``≤ 0`` disables the bucketing (slices are still
    costed exactly).
``normalise_speed`` (``False``)
    §5 heterogeneity: treat measured executor CPU as raw % on the node in
    ``problem.current`` and scale it by that node's ``speed`` (see below).
``fallback`` (``True``)
    When TD fails, try the chain of ``docs/algorithms/000-topdown.md`` §2.6: TL (RS key, lex order),
    then first-fit-decreasing; ``False`` raises at once.

Deviations from the printed pseudo-code (erratum ids of ``docs/algorithms/000-topdown.md`` §2.8):

* **E1** Alg. 4 l.5 pops ``U``, not ``V``. **E7** ``allocateSingleTasks`` runs after the loop.
* **E2** ``resolveSplits`` returns each side as "fully placed" or "the unplaced remainder";
  the l.9-10 test means "placed", possibly on several nodes. Because every allocation inside
  the loop takes a prefix of a group's unplaced remainder, a group is kept as index ranges:
  ``nxt[g]`` plus an append-only list of ``[group, start, end, node]`` records (the paper's
  "sequence of splits", ``docs/algorithms/000-topdown.md`` §2.4). Executors are expanded once, at
  the end; no task-pair loop exists anywhere in TD.
* **E3** ``N_u`` (l.13-14) is prioritised on the expected IMC gain
  ``a_n · min(|u_j|, fit_n)`` (``a_n`` = tasks of the placed side on n, ``fit_n`` = tasks of
  the other side that fit on n; the per-link IMC is a common factor), ties to larger
  ``a_n``, more spare CPU, lower node id.
* **E4-E6** (l.19-24) the node with the larger *initial* capacity (ties: lower id) receives
  **every** task hosted on the other node (whole-node move, so φ never drops), its load is
  ``n_j.μ^init − n_j.μ`` (E5) and the emptied node gets its initial capacity back. Fusion
  is tried only when each side sits on exactly one node and the two differ.
* **E9** σ uses per-task costs: ``σ = c_{t_i} + r·c_{t_j}``. **E10** the larger group is
  sliced at ``k·r``. **E12** ``k ≤ |v_i|`` (and ``≤ |v_j|`` in mode *second*). **E13** the
  swap of l.13 swaps costs too and never happens in mode *second*. **E15** slice costs are
  ``|slice| · c_t`` (or exact prefix sums for skewed subgroups). The recursion of l.20 is a
  loop with ``N.top()`` and ``r`` re-evaluated each round.
* **E11** k = 0 has an exit (``k0_guard``); the default G1 is what brings TD near the
  optimum (``docs/algorithms/000-topdown.md`` §5.1: G0 78.8 %, G1 94.1 %, G1 + 'next' 94.7 %).
* **E14** mode *second* with ``second_mode="next"`` (ours) spills onto further nodes of
  ``N_u`` instead of sending the rest to R (fixes ``docs/algorithms/000-topdown.md`` §2.9 TC7: φ
  66.67 vs 58.33).
* **E20** ``R`` is lazy: it is never materialised; after the loop every still-unplaced task
  (which includes tasks of isolated groups, ``docs/algorithms/000-topdown.md`` §2.1) is placed
  heaviest first, ties in Storm task order (component id, executor index). Identical to pushing
  ranges and skipping placed tasks (footnote 1). **E21** Alg. 3 failing is a failure of TD.
* Ties everywhere are deterministic: ``U`` by (key desc, edge id), ``N`` by (spare CPU desc,
  node id); edges are the topology's merged edges (parallel streams summed, a pair declared
  in both directions counted once, ``docs/algorithms/000-topdown.md`` §1.5); ``s = +∞`` when both
  PCs are 0.
* Capacity comparisons use the model's ε (``docs/algorithms/000-topdown.md`` §2.1).

Additions (ours, documented here because the paper has only CPU):

* **Memory** is a second hard capacity (via :class:`~scheduler_py.model.capacity.
  CapacityTracker`): every fit count is the minimum over CPU and memory; ``N.top()`` stays
  the freest-CPU node (the paper's order). A single task that lacks memory on ``N.top()``
  goes to the next node in ``N`` order with room for both.
* **Slots**: nodes with ``slots == 0`` are unusable; the plan uses one logical worker per
  node (``worker_of`` is left empty).
* **Heterogeneity (§5, ``docs/algorithms/000-topdown.md`` §2.7b)**: the model already states node
  capacity in % of a reference core (``Node.cpu``), so normalising capacities to the least capable
  node is a no-op. With ``normalise_speed`` measured executor CPU (``Topology.executor_cpu``) is
  read as raw % on the node of ``problem.current`` and multiplied by that node's ``speed``; to stay
  valid under the model's verifier (which reads ``executor.cpu`` as reference units) the
  planning cost is ``max(raw, raw·speed)``.
* **Skew (§5, ``docs/algorithms/000-topdown.md`` §2.7c)**: with measured executor CPU or pair
  traffic, each component's executors are bucketed by ``⌊log_{1+m}(x)⌋`` of their CPU and (with
  traffic) their in- and out-rates; each bucket is a group, and group pairs carry the measured
  traffic between them (Eq. 1's share of the component edge when only CPU is measured). Traffic
  inside one subgroup cannot be an edge and is ignored by the heuristic (not by the cost module).
* **Granularity (§5, ``docs/algorithms/000-topdown.md`` §2.6-2.7a)**: on failure the fallback chain
  TD → TL(RS) → first-fit-decreasing runs and is recorded in ``report["fallback"]`` (``used``, the
  ``failed`` reasons and a ``granularity_suggestion``: the gcd re-parallelisation and a
  smaller doubling step). Re-parallelising needs a Storm rebalance, so it is only
  suggested, never applied; the same advice ends the :class:`InfeasibleError` message.
* Necessary conditions (:func:`~scheduler_py.model.capacity.check_feasible`) are checked
  when an allocation fails, before the fallback chain, so an impossible problem gets the
  model's resource-naming error; the success path does not pay the extra O(|T|) pass.

Complexity: ``O(|E| log |E| + (|E| + splits) log |N|)`` for the pair loop plus
``O(|R| log |R| + |R| log |N|)`` for the singles and ``O(|T|)`` to expand the result.

Example:
    >>> from scheduler_py.model.types import Component, Edge, Node, Problem, Topology
    >>> topo = Topology("t", (Component("a", 2, 20), Component("b", 4, 20)), (Edge("a", "b", 10),))
    >>> sorted(set(plan(Problem((Node("n0", 100),), topo)).node_of.values()))
    ['n0']

References:
    A. Chatzistergiou, S. D. Viglas, "Fast Heuristics for Near-Optimal Task Allocation in
    Data Stream Processing over Clusters", CIKM 2014, §3.2-§5; ``docs/algorithms/000-topdown.md``
    (§2.1-2.9).

About 550 lines because this docstring lists every erratum the code implements (~120 lines);
the grouping step lives in :mod:`scheduler_py.algorithms.topdown.td_groups`.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Mapping
from heapq import heappop, heapreplace

from scheduler_py.algorithms.registry import check_choice, register
from scheduler_py.algorithms.topdown import tl as tasklevel
from scheduler_py.algorithms.topdown.groups import (
    INF,
    KEYS,
    AllocationFailure,
    NodePool,
    count_fit,
    edge_key,
    ensure_usable,
    first_fit_decreasing,
    granularity_suggestion,
    infeasible,
    planning_cpu,
    single_task_failure,
    suggestion_hint,
)
from scheduler_py.algorithms.topdown.td_groups import Groups, build_groups
from scheduler_py.model.budget import UNLIMITED, Budget
from scheduler_py.model.capacity import check_feasible
from scheduler_py.model.types import EPSILON, Placement, Problem

K0_GUARDS = ("degrade", "minimal", "maxprod")
SECOND_MODES = ("next", "literal")


class _TopDown:
    """One run of Alg. 4/5 on index ranges (``docs/algorithms/000-topdown.md`` §2.4 "O(1)
    bookkeeping").

    During the pair loop every allocation takes a prefix of a group's unplaced remainder, so
    a group's state is ``nxt[g]`` (its first unplaced position) plus an append-only list of
    placement records ``[g, start, end, node]`` (the paper's "sequence of splits"). The
    records on a node are also listed in ``pool.members[node]`` so a node fusion rewrites
    their node in place. Executors are expanded once, at the end.
    """

    def __init__(
        self, groups: Groups, pool: NodePool, guard: str, next_mode: bool, name: str = "td"
    ) -> None:
        self.g = groups
        self.pool = pool
        self.guard = guard
        self.next_mode = next_mode
        self.name = name
        self.nxt = [0] * len(groups.size)
        self.records: list[list[list]] = [[] for _ in groups.size]
        self.splits = 0
        self.singles = 0
        self.single_places: list[tuple[int, int, str]] = []

    # -- group arithmetic (Eq. 1 / prefix sums) ------------------------------------------
    def cost(self, g: int, a: int, b: int) -> float:
        unit = self.g.cpu_t[g]
        if unit is not None:
            return (b - a) * unit
        pre = self.g.cpu_pre[g]
        return pre[b] - pre[a]

    def fit(self, g: int, a: int, free_c: float, free_m: float) -> int:
        """How many tasks of ``g`` from position ``a`` on fit in (free_c, free_m)."""
        size = self.g.size[g]
        unit = self.g.cpu_t[g]
        if unit is not None:
            k = count_fit(free_c, unit)
        else:
            pre = self.g.cpu_pre[g]
            k = bisect_right(pre, pre[a] + free_c + EPSILON, a, size + 1) - 1 - a
        if k > size - a:
            k = size - a
        mem_t = self.g.mem_t[g]
        if mem_t > 0.0 and free_m != INF:
            k = min(k, count_fit(free_m, mem_t))
        return k if k > 0 else 0

    def place(self, g: int, count: int, nid: str) -> None:
        a = self.nxt[g]
        rec = [g, a, a + count, nid]
        self.records[g].append(rec)
        self.pool.members[nid].append(rec)
        self.nxt[g] = a + count

    # -- Alg. 4 ---------------------------------------------------------------------------
    def run(self, order: list[tuple[int, int, float]]) -> None:
        nxt, size = self.nxt, self.g.size
        for gi, gj, _ in order:  # E1: U.pop()
            done_i = nxt[gi] == size[gi]  # resolveSplits: fully placed or fully unplaced
            done_j = nxt[gj] == size[gj]
            if done_i and done_j:  # l.19-24: fuse the two nodes (E4-E6)
                a, b = self.sole_node(gi), self.sole_node(gj)
                if a is not None and b is not None and a != b:
                    moved = self.pool.merge(a, b)
                    if moved is not None:
                        target, records = moved
                        for rec in records:
                            rec[3] = target
            elif done_i:
                self.second(gi, gj)
            elif done_j:
                self.second(gj, gi)  # l.11-12: u_i is the placed side
            else:
                self.both(gi, gj)
        self.allocate_singles()

    def sole_node(self, g: int) -> str | None:
        records = self.records[g]
        nid = records[0][3]
        for rec in records:
            if rec[3] != nid:
                return None
        return nid

    # -- Alg. 5, mode "second" ------------------------------------------------------------
    def second(self, gi: int, gj: int) -> None:
        """Put as much of the unplaced ``gj`` as fits next to the placed ``gi``.

        ``N_u`` = the nodes hosting ``gi``, prioritised on expected IMC gain (E3):
        ``a_n · min(|u_j|, fit_n)`` (the per-link IMC is a common factor), ties to larger
        ``a_n``, more spare CPU, lower id. Literal (E14): only the top node receives tasks
        and the rest goes to R. 'next' (ours): keep filling the next node of ``N_u``.
        """
        here: dict[str, int] = {}
        for _, a, b, nid in self.records[gi]:
            here[nid] = here.get(nid, 0) + b - a
        pool, g = self.pool, self.g
        cpu, mem = pool.cpu, pool.mem
        mem_t = g.mem_t[gj]
        size = g.size[gj]
        candidates = list(here)
        while candidates:
            start = self.nxt[gj]
            rem = size - start
            best_key = None
            best = None
            for nid in candidates:
                f = self.fit(gj, start, cpu[nid], mem[nid])
                a = here[nid]
                k = (-a * min(rem, f), -a, -cpu[nid], nid)
                if best_key is None or k < best_key:
                    best_key, best, best_fit = k, nid, f
            k = min(rem, best_fit)
            if k > 0:
                pool.take(best, self.cost(gj, start, start + k), k * mem_t)
                self.place(gj, k, best)
                if k < rem:
                    self.splits += 1
            if k == rem or not self.next_mode or k == 0:
                return  # the rest stays unplaced: it is in R (lazy R, E20)
            candidates.remove(best)

    # -- Alg. 5, mode "both" --------------------------------------------------------------
    def both(self, gi: int, gj: int) -> None:
        """Fuse the pair on ``N.top()`` or split both groups in balanced slices (E9-E13)."""
        pool, g, nxt = self.pool, self.g, self.nxt
        size, cpu_t, mem_t = g.size, g.cpu_t, g.mem_t
        cpu, mem = pool.cpu, pool.mem
        while True:
            nid = pool.top()
            fc, fm = cpu[nid], mem[nid]
            ai, aj = nxt[gi], nxt[gj]
            ri, rj = size[gi] - ai, size[gj] - aj
            ci, cj = self.cost(gi, ai, size[gi]), self.cost(gj, aj, size[gj])
            mi, mj = ri * mem_t[gi], rj * mem_t[gj]
            if ci + cj <= fc + EPSILON and mi + mj <= fm + EPSILON:  # l.4-6: fuse
                pool.take(nid, ci + cj, mi + mj)
                self.place(gi, ri, nid)
                self.place(gj, rj, nid)
                return
            if ri > rj:  # l.13 (E13: the costs travel with the groups)
                gi, gj, ai, aj, ri, rj = gj, gi, aj, ai, rj, ri
            r = rj // ri
            ui, uj = cpu_t[gi], cpu_t[gj]
            if ui is not None and uj is not None:  # l.14 with per-task costs (E9), E12
                k = min(ri, count_fit(fc, ui + r * uj))
                per_m = mem_t[gi] + r * mem_t[gj]
                if per_m > 0.0 and fm != INF:
                    k = min(k, count_fit(fm, per_m))
            else:
                k = self.balanced_k(gi, gj, ai, aj, ri, r, fc, fm)
            if k > 0:
                ki, kj = k, k * r  # l.15: slice the larger group at k·r (E10)
            else:  # E11: the K0 guard
                ki, kj = self.k0(gi, gj, ai, aj, ri, fc, fm)
                if ki == 0:
                    return  # G0: both remainders go to R
            pool.take(
                nid,
                self.cost(gi, ai, ai + ki) + self.cost(gj, aj, aj + kj),
                ki * mem_t[gi] + kj * mem_t[gj],
            )
            self.place(gi, ki, nid)
            self.place(gj, kj, nid)
            self.splits += 1
            if nxt[gi] == size[gi] or nxt[gj] == size[gj]:
                return  # terminations (b) and (c): a lone remainder goes to R

    def balanced_k(
        self, gi: int, gj: int, ai: int, aj: int, ri: int, r: int, fc: float, fm: float
    ) -> int:
        """Largest k ≤ ri whose slices (k of gi, k·r of gj) fit: binary search (skewed costs)."""
        per_m = self.g.mem_t[gi] + r * self.g.mem_t[gj]
        lo, hi = 0, ri
        while lo < hi:
            mid = (lo + hi + 1) // 2
            c = self.cost(gi, ai, ai + mid) + self.cost(gj, aj, aj + mid * r)
            if c <= fc + EPSILON and mid * per_m <= fm + EPSILON:
                lo = mid
            else:
                hi = mid - 1
        return lo

    def k0(
        self, gi: int, gj: int, ai: int, aj: int, ri: int, fc: float, fm: float
    ) -> tuple[int, int]:
        """Slice sizes when not even one balanced unit σ fits (0, 0 = G0: give up)."""
        if self.guard == "minimal":  # G0
            return 0, 0
        mem_i = self.g.mem_t[gi]
        if self.guard == "degrade":  # G1: one task of the smaller group + what fits of the other
            c1 = self.cost(gi, ai, ai + 1)
            kj = self.fit(gj, aj, fc - c1, fm - mem_i) if c1 <= fc + EPSILON else 0
            if kj == 0 or mem_i > fm + EPSILON:
                return 0, 0
            return 1, kj
        best = (0, 0)  # G2 "maxprod": the a·b-maximal slices (first maximum = fewest of gi)
        for a in range(1, self.fit(gi, ai, fc, fm) + 1):
            b = self.fit(gj, aj, fc - self.cost(gi, ai, ai + a), fm - a * mem_i)
            if a * b > best[0] * best[1]:
                best = (a, b)
        return best

    # -- Alg. 3 -----------------------------------------------------------------------------
    def allocate_singles(self) -> None:
        """Every still-unplaced task (R, lazily; isolated groups too), heaviest first.

        Order: CPU descending, ties in Storm task order (component id, executor index)
        (E20). Uniform groups form runs of equal tasks, so they are ordered run-wise; a
        task goes to ``N.top()`` (or, memory permitting, the next node in ``N`` order) and
        Alg. 3 fails at the first task that fits nowhere (E21).
        """
        g, nxt, size = self.g, self.nxt, self.g.size
        todo = [grp for grp in range(len(size)) if nxt[grp] < size[grp]]
        if not todo:
            return
        runs = [(-(g.cpu_t[grp] or 0.0), g.comp[grp], grp) for grp in todo]
        if all(g.cpu_t[grp] is not None for grp in todo) and len(
            {(c, comp) for c, comp, _ in runs}
        ) == len(runs):
            runs.sort()
            items = [(grp, pos) for _, _, grp in runs for pos in range(nxt[grp], size[grp])]
        else:
            keyed = [
                (-g.task_cpu(grp, pos), g.comp[grp], g.index_of(grp, pos), grp, pos)
                for grp in todo
                for pos in range(nxt[grp], size[grp])
            ]
            keyed.sort()
            items = [(grp, pos) for *_, grp, pos in keyed]
        pool = self.pool
        heap, cpu, mem = pool.heap, pool.cpu, pool.mem
        used_cpu, used_mem = pool.used_cpu, pool.used_mem
        mem_bound = pool.mem_bound
        cpu_t, mem_t = g.cpu_t, g.mem_t
        placed = self.single_places
        for done, (grp, pos) in enumerate(items):
            c = cpu_t[grp]
            if c is None:
                c = g.task_cpu(grp, pos)
            m = mem_t[grp]
            while True:  # N.top(), dropping stale heap entries
                neg, nid = heap[0]
                if -neg == cpu[nid]:
                    break
                heappop(heap)
            free = cpu[nid]
            if c <= free + EPSILON and (not mem_bound or m <= mem[nid] + EPSILON):
                free -= c
                heapreplace(heap, (-free, nid))  # the top entry is this node's own
                cpu[nid] = free
                mem[nid] -= m
                used_cpu[nid] += c
                used_mem[nid] += m
            else:
                nid = pool.best_fit_for(c, m)
                if nid is None:
                    raise single_task_failure(self.name, pool, g.comp[grp], c, m, len(items) - done)
                pool.take(nid, c, m)
            placed.append((grp, pos, nid))
        self.singles = len(items)

    def node_of(self) -> dict[str, str]:
        result: dict[str, str] = {}
        ids_of = self.g.executor_ids
        for grp, records in enumerate(self.records):
            if records:
                ids = ids_of(grp)
                for _, a, b, nid in records:
                    result.update(dict.fromkeys(ids[a:b], nid))
        last, ids = -1, []
        for grp, pos, nid in self.single_places:  # runs of one group: fetch its ids once
            if grp != last:
                last, ids = grp, ids_of(grp)
            result[ids[pos]] = nid
        return result


def priority_order(groups: Groups, key: str) -> list[tuple[int, int, float]]:
    """``U`` prioritised on ``key`` (descending), ties in edge-id order
    (``docs/algorithms/000-topdown.md`` §2.1)."""
    pc, size = groups.pc, groups.size
    keyed = [
        (-edge_key(key, imc, pc[a], pc[b], size[a], size[b]), n, (a, b, imc))
        for n, (a, b, imc) in enumerate(groups.edges)
    ]
    keyed.sort()
    return [edge for _, _, edge in keyed]


def allocate(
    problem: Problem,
    *,
    key: str = "rs",
    k0_guard: str = "degrade",
    second_mode: str = "next",
    subgroup_margin: float = 0.2,
    cpu_of: Mapping[str, float] | None = None,
) -> tuple[dict[str, str], dict[str, object]]:
    """Run TD once; returns ``(executor -> node, statistics)``.

    Raises :class:`~scheduler_py.algorithms._groups.AllocationFailure` when a single task
    fits nowhere at the end (Alg. 3's failure, E21).
    """
    nodes = ensure_usable(problem)
    groups = build_groups(problem, subgroup_margin, cpu_of)
    pool = NodePool(nodes)
    run = _TopDown(groups, pool, k0_guard, second_mode == "next")
    run.run(priority_order(groups, key))
    stats = {
        "groups": len(groups.size),
        "subgrouped": groups.subgrouped,
        "splits": run.splits,
        "merges": pool.merges,
        "singles": run.singles,
    }
    return run.node_of(), stats


@register(
    "td",
    paper="000 §4, Alg. 4-5 (+ §5 relaxations)",
    summary="topDown: fuse group pairs by relative significance, split groups in balanced "
    "slices only when needed; linear in groups and edges.",
    params={
        "key": ("rs", "edge priority: rs (relative significance, Eq. 2), imc_group, imc_task"),
        "k0_guard": (
            "degrade",
            "when no balanced split fits (k = 0): degrade (G1), minimal (G0), maxprod (G2)",
        ),
        "second_mode": ("next", "one side placed: next (fill further nodes) or literal (→ R)"),
        "subgroup_margin": (
            0.2,
            "skew subgrouping margin m (buckets ⌊log_{1+m} cost⌋) for measured costs; ≤ 0 off",
        ),
        "normalise_speed": (
            False,
            "measured executor CPU is raw % of the current node's cores: scale by its speed",
        ),
        "fallback": (
            True,
            "on failure try TL (RS) then first-fit-decreasing "
            "(docs/algorithms/000-topdown.md §2.6)",
        ),
    },
)
def plan(
    problem: Problem,
    *,
    key: str = "rs",
    k0_guard: str = "degrade",
    second_mode: str = "next",
    subgroup_margin: float = 0.2,
    normalise_speed: bool = False,
    fallback: bool = True,
    budget: Budget = UNLIMITED,
) -> Placement:
    """Place ``problem`` with topDown; see the module docstring for every deviation.

    Raises:
        InfeasibleError: no valid placement (after the fallback chain when enabled).
    """
    check_choice("td", "key", key, KEYS)
    check_choice("td", "k0_guard", k0_guard, K0_GUARDS)
    check_choice("td", "second_mode", second_mode, SECOND_MODES)
    topology = problem.topology
    cpu_of = planning_cpu(problem) if normalise_speed else None
    params = {"key": key, "k0_guard": k0_guard, "second_mode": second_mode}
    try:
        node_of, stats = allocate(problem, subgroup_margin=subgroup_margin, cpu_of=cpu_of, **params)
    except AllocationFailure as error:
        failure = error
    else:
        report = {**params, **stats, "fallback": None}
        return Placement(topology.id, node_of, algorithm="td", report=report)

    # TD failed (``docs/algorithms/000-topdown.md`` §2.6): impossible problems get the model's
    # error, then the chain
    check_feasible(problem)
    suggestion = granularity_suggestion(problem)
    hint = suggestion_hint(problem, suggestion)
    if not fallback:
        raise infeasible(problem, failure, tried=("td",), hint=hint)
    failed = [failure.sentence()]
    used = "tl"
    try:
        node_of, _ = tasklevel.allocate(problem, key="rs", pair_order="lex", cpu_of=cpu_of)
    except AllocationFailure as error:
        failed.append(error.sentence())
        used = "ffd"
        try:
            node_of = first_fit_decreasing(problem, cpu_of=cpu_of)
        except AllocationFailure as error:
            failure = error
            used = ""
    if not used:
        raise infeasible(problem, failure, tried=("td", "tl", "ffd"), hint=hint)
    report = {
        **params,
        "fallback": {"used": used, "failed": failed, "granularity_suggestion": suggestion},
    }
    return Placement(topology.id, node_of, algorithm="td", report=report)
