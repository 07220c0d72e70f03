"""``links``: the placement whose busiest network link carries the least, for uniform shuffles
(ours; ``docs/evaluation.md``, "Load-aware messaging off").

Why. With ``topology.disable.loadaware.messaging: true`` Storm splits a shuffle evenly over
every target executor, wherever it is (paper 000 §2.2, Eq. 1), and on hosts joined by links
of limited bandwidth the throughput is set by the busiest link, not by the total traffic
between hosts. The traffic-minimising algorithms (``td``, ``tdls``, ``metis``) collocate whole
components and can leave the remaining streams converging on one host: on the emulated
network their Linear ran at 0.62× Storm's RAS while moving half the bytes RAS moved
(``docs/results/emulated-network/loadaware-off/``). R-Storm models bandwidth as rack distance only
(``docs/algorithms/003-rstorm.md``); here the links themselves are scored.

The model. Every node has one link, used in each direction: what its executors send to
executors on other nodes (egress) and what they receive from them (ingress), each divided by
the node's ``bandwidth`` (all nodes alike when none is given). Two or more racks add, per
rack, the link to the other racks: what crosses it each way divided by ``rack_link`` × the
mean host bandwidth (``rack_link`` = 0.5: a rack's uplink carries half of what one host's
link does, as on the emulated network: ``deploy/README.md``, "Emulated hosts"). The traffic is
the user executors' pair traffic under the uniform split — measured pairs where there are
some, else each edge's :func:`~scheduler_py.model.flows.declared_weights` (tuples per spout
tuple) spread over its executor pairs (:func:`~scheduler_py.model.loadaware.uniform_pair_traffic`).
System streams (acking, metrics) carry small tuples and are left out.

The plan minimises, lexicographically, the link utilisations sorted from the busiest down
(so, first, the busiest link; on a tie, the next busiest), then the traffic crossing nodes,
then the nodes used. Declared CPU and memory are hard limits per node, and at most
``topology.workers`` nodes are used, one worker each (the nodes
:func:`~scheduler_py.model.capacity.worker_nodes` keeps). The search: complete starts — the
components packed in order (fewest nodes), the executors dealt round-robin, a greedy placement
in topological order onto the node that keeps the links lowest, then :data:`RANDOM_STARTS`
seeded random ones — each improved by moving one executor to another node or swapping two on
different nodes, taking the best improvement each pass until none is left; the best plan
found is kept. It stops at the caller's budget or after ``seconds``, whichever comes first,
with ``report["budget_exhausted"]`` when that cut a search short; ``report["busiest_link"]``
is the plan's busiest utilisation. System executors (ackers, metrics) are placed with the
rest and move like them.
"""

from __future__ import annotations

import itertools
import random
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from scheduler_py.algorithms.registry import register
from scheduler_py.model.budget import UNLIMITED, Budget
from scheduler_py.model.capacity import (
    CapacityTracker,
    check_feasible,
    usable_nodes,
    worker_nodes,
)
from scheduler_py.model.errors import InfeasibleError
from scheduler_py.model.flows import component_order
from scheduler_py.model.loadaware import uniform_pair_traffic
from scheduler_py.model.types import Executor, Node, Placement, Problem

DEFAULT_RACK_LINK = 0.5
"""A rack's link to the other racks, relative to one host's link (the emulated network's
50 Mbit/s against 100 Mbit/s per host)."""

DEFAULT_SECONDS = 2.0
"""The search stops after this long even when the caller allows more. The starts are complete
plans, so a search cut short still returns the best of those it finished; it does get cut: every
candidate move re-scores the whole plan, and on 24-executor Linear, Diamond and Star instances
on 3 hosts (``scheduler_py/bench/instances.py``) the random starts use the whole 2 s."""

RANDOM_STARTS = 32
"""Seeded random starts tried after the three fixed ones while the budget lasts."""

SWAP_LIMIT = 200
"""Above this many executors a pass tries moves only: swaps grow with the square."""

ROUNDING = 9
"""Utilisations are compared rounded to this many decimals, so float noise is no improvement."""


@dataclass(frozen=True)
class LinkLoads:
    """What a placement puts on each link: per node and per rack, traffic out and in."""

    node_out: Mapping[str, float]
    node_in: Mapping[str, float]
    rack_out: Mapping[str, float]
    rack_in: Mapping[str, float]
    crossing: float


class _Search:
    """One placement being improved: node of every executor, free capacity, link loads."""

    def __init__(
        self,
        nodes: Sequence[Node],
        executors: Sequence[Executor],
        pairs: Mapping[tuple[str, str], float],
        rack_link: float,
    ) -> None:
        self.rack_of = {n.id: n.rack for n in nodes}
        given = [n.bandwidth for n in nodes if n.bandwidth]
        mean = sum(given) / len(given) if given else 1.0
        self.node_capacity = {n.id: (n.bandwidth or mean) for n in nodes}
        racks = sorted(set(self.rack_of.values()))
        self.rack_capacity = {r: rack_link * mean for r in racks} if len(racks) > 1 else {}
        self.executors = {e.id: e for e in executors}
        self.out_edges: dict[str, list[tuple[str, float]]] = defaultdict(list)
        self.in_edges: dict[str, list[tuple[str, float]]] = defaultdict(list)
        for (src, dst), rate in pairs.items():
            if src in self.executors and dst in self.executors and src != dst and rate > 0:
                self.out_edges[src].append((dst, rate))
                self.in_edges[dst].append((src, rate))
        self.node_of: dict[str, str] = {}
        self.free = CapacityTracker(nodes)
        self.node_out = dict.fromkeys(self.node_capacity, 0.0)
        self.node_in = dict.fromkeys(self.node_capacity, 0.0)
        self.rack_out = dict.fromkeys(self.rack_capacity, 0.0)
        self.rack_in = dict.fromkeys(self.rack_capacity, 0.0)
        self.crossing = 0.0
        self.count = dict.fromkeys(self.node_capacity, 0)

    # ---------------------------------------------------------------- bookkeeping

    def _flow(self, src_node: str, dst_node: str, rate: float) -> None:
        if src_node == dst_node:
            return
        self.node_out[src_node] += rate
        self.node_in[dst_node] += rate
        self.crossing += rate
        src_rack, dst_rack = self.rack_of[src_node], self.rack_of[dst_node]
        if src_rack != dst_rack and self.rack_capacity:
            self.rack_out[src_rack] += rate
            self.rack_in[dst_rack] += rate

    def _edges(self, executor: str, sign: float) -> None:
        node = self.node_of[executor]
        for target, rate in self.out_edges.get(executor, ()):
            if target in self.node_of:
                self._flow(node, self.node_of[target], sign * rate)
        for source, rate in self.in_edges.get(executor, ()):
            if source in self.node_of:
                self._flow(self.node_of[source], node, sign * rate)

    def put(self, executor: str, node: str) -> None:
        self.node_of[executor] = node
        self.free.take_executor(node, self.executors[executor])
        self.count[node] += 1
        self._edges(executor, +1.0)

    def remove(self, executor: str) -> str:
        self._edges(executor, -1.0)
        node = self.node_of.pop(executor)
        self.free.release_executor(node, self.executors[executor])
        self.count[node] -= 1
        return node

    def move(self, executor: str, node: str) -> None:
        self.remove(executor)
        self.put(executor, node)

    # ---------------------------------------------------------------- scoring

    def utilisations(self) -> list[float]:
        values = [self.node_out[n] / c for n, c in self.node_capacity.items()]
        values += [self.node_in[n] / c for n, c in self.node_capacity.items()]
        values += [self.rack_out[r] / c for r, c in self.rack_capacity.items()]
        values += [self.rack_in[r] / c for r, c in self.rack_capacity.items()]
        return sorted((round(v, ROUNDING) for v in values), reverse=True)

    def key(self) -> tuple:
        used = sum(1 for c in self.count.values() if c > 0)
        return (self.utilisations(), round(self.crossing, ROUNDING), used)

    def fits(self, executor: str, node: str) -> bool:
        return self.free.fits_executor(node, self.executors[executor])

    def loads(self) -> LinkLoads:
        return LinkLoads(
            dict(self.node_out),
            dict(self.node_in),
            dict(self.rack_out),
            dict(self.rack_in),
            self.crossing,
        )

    # ---------------------------------------------------------------- local search

    def improve(self, budget: Budget) -> bool:
        """Best-improvement passes of moves and swaps; ``False`` when the budget ended first."""
        ids = list(self.executors)
        swaps = len(ids) <= SWAP_LIMIT
        while True:
            current = self.key()
            best: tuple | None = None
            best_step: tuple[str, str, str | None] | None = None
            for executor in ids:
                home = self.node_of[executor]
                for node in self.node_capacity:
                    if node == home or not self._fits_after_leaving(executor, node, None):
                        continue
                    if budget.expired():
                        return False
                    self.move(executor, node)
                    candidate = self.key()
                    self.move(executor, home)
                    if candidate < current and (best is None or candidate < best):
                        best, best_step = candidate, (executor, node, None)
            if swaps:
                for a, b in itertools.combinations(ids, 2):
                    if budget.expired():
                        return False
                    node_a, node_b = self.node_of[a], self.node_of[b]
                    if node_a == node_b or not self._swap_fits(a, b):
                        continue
                    self.move(a, node_b)
                    self.move(b, node_a)
                    candidate = self.key()
                    self.move(b, node_b)
                    self.move(a, node_a)
                    if candidate < current and (best is None or candidate < best):
                        best, best_step = candidate, (a, node_b, b)
            if best_step is None:
                return True
            executor, node, other = best_step
            if other is None:
                self.move(executor, node)
            else:
                home = self.node_of[executor]
                self.move(executor, node)
                self.move(other, home)

    def _fits_after_leaving(self, executor: str, node: str, leaving: str | None) -> bool:
        moving = self.executors[executor]
        cpu, memory = moving.cpu, moving.memory_mb
        if leaving is not None:
            cpu -= self.executors[leaving].cpu
            memory -= self.executors[leaving].memory_mb
        return self.free.fits(node, cpu, memory)

    def _swap_fits(self, a: str, b: str) -> bool:
        return self._fits_after_leaving(a, self.node_of[b], b) and self._fits_after_leaving(
            b, self.node_of[a], a
        )


# -------------------------------------------------------------------- starts


def _random(seed: int) -> Callable[[_Search, Sequence[str], Budget], None]:
    """A start that puts each executor on a node with room drawn at random (seeded, so a plan
    is reproducible): local search from the three fixed starts can stop at a local optimum
    (Diamond on the emulated network: 8 from them, 6 from random starts)."""

    def start(search: _Search, order: Sequence[str], budget: Budget) -> None:
        draw = random.Random(seed)
        for executor in order:
            room = [n for n in search.node_capacity if search.fits(executor, n)]
            if not room:
                raise _infeasible(search, executor)
            search.put(executor, draw.choice(room))

    return start


class _OutOfTime(Exception):
    """The budget ended before a start was complete."""


def _greedy(search: _Search, order: Sequence[str], budget: Budget) -> None:
    """Each executor onto the node that keeps the links lowest with what is placed so far."""
    for executor in order:
        if budget.expired():
            raise _OutOfTime
        best: tuple | None = None
        best_node: str | None = None
        for node in search.node_capacity:
            if not search.fits(executor, node):
                continue
            search.put(executor, node)
            candidate = search.key()
            search.remove(executor)
            if best is None or candidate < best:
                best, best_node = candidate, node
        if best_node is None:
            raise _infeasible(search, executor)
        search.put(executor, best_node)


def _packed(search: _Search, order: Sequence[str], budget: Budget) -> None:
    """Executors in order, each onto the first node (in the kept order) with room."""
    for executor in order:
        node = next((n for n in search.node_capacity if search.fits(executor, n)), None)
        if node is None:
            raise _infeasible(search, executor)
        search.put(executor, node)


def _dealt(search: _Search, order: Sequence[str], budget: Budget) -> None:
    """Executors in order dealt over the nodes in turn, skipping nodes without room."""
    nodes = list(search.node_capacity)
    for position, executor in enumerate(order):
        turn = nodes[position % len(nodes) :] + nodes[: position % len(nodes)]
        node = next((n for n in turn if search.fits(executor, n)), None)
        if node is None:
            raise _infeasible(search, executor)
        search.put(executor, node)


def _infeasible(search: _Search, executor: str) -> InfeasibleError:
    needed = search.executors[executor]
    best = search.free.freest()
    return InfeasibleError(
        f"no node has room left for executor {executor} ({needed.cpu:.1f}% CPU, "
        f"{needed.memory_mb:.0f} MB) after placing the executors before it (most free: "
        f"{best} with {search.free.cpu[best]:.1f}% CPU); add capacity or lower the declared "
        "resources",
        resource="cpu",
        component=needed.component,
        needed=needed.cpu,
        best_available=search.free.cpu[best],
        best_node=best,
    )


def executor_order(problem: Problem) -> list[str]:
    """User executors in topological order of their components, then system executors."""
    topology = problem.topology
    user = [e.id for c in component_order(topology) for e in topology.executors_of(c)]
    placed = set(user)
    return user + [e.id for e in topology.executors if e.id not in placed]


def user_pairs(problem: Problem) -> dict[tuple[str, str], float]:
    """The uniform pair traffic between user executors (module docstring, "The model")."""
    topology = problem.topology
    system = {e.id for e in topology.executors if topology.component_by_id[e.component].is_system}
    return {
        pair: rate
        for pair, rate in uniform_pair_traffic(problem).items()
        if pair[0] not in system and pair[1] not in system
    }


def link_loads(
    problem: Problem, placement: Placement, rack_link: float = DEFAULT_RACK_LINK
) -> tuple[LinkLoads, float]:
    """The link loads ``placement`` puts on ``problem``'s nodes under the uniform split, and the
    busiest link's utilisation (traffic per unit of the host bandwidth of the module
    docstring)."""
    search = _Search(problem.nodes, problem.topology.executors, user_pairs(problem), rack_link)
    for executor, node in placement.node_of.items():
        if executor in search.executors and node in search.node_capacity:
            search.put(executor, node)
    return search.loads(), max(search.utilisations(), default=0.0)


def _searched(
    problem: Problem, nodes: Sequence[Node], rack_link: float, budget: Budget
) -> tuple[tuple, dict[str, str], bool]:
    """The best plan of every start (module docstring), its key, and whether the budget cut
    the search short (a start not tried or a local search stopped)."""
    order = executor_order(problem)
    pairs = user_pairs(problem)
    best: tuple[tuple, dict[str, str]] | None = None
    failure: InfeasibleError | None = None
    cut_short = False
    starts = [_packed, _dealt, _greedy, *(_random(seed) for seed in range(RANDOM_STARTS))]
    for start in starts:  # cheap first: a plan exists before time runs out
        if best is not None and budget.expired():
            cut_short = True
            break
        search = _Search(nodes, problem.topology.executors, pairs, rack_link)
        try:
            start(search, order, budget)
        except InfeasibleError as error:
            failure = failure or error
            continue
        except _OutOfTime:
            cut_short = True
            break
        cut_short = not search.improve(budget) or cut_short
        if best is None or search.key() < best[0]:
            best = (search.key(), dict(search.node_of))
    if best is None:
        assert failure is not None
        raise failure
    return best[0], best[1], cut_short


@register(
    "links",
    paper="ours: the busiest link lowest, for uniform shuffles (docs/evaluation.md)",
    summary="Executors placed so that the most loaded host or rack link carries the least "
    "traffic under Storm's uniform shuffle (load-aware messaging off), within declared CPU.",
    params={
        "rack_link": (
            DEFAULT_RACK_LINK,
            "a rack's link to the other racks, relative to one host's link",
        ),
        "seconds": (
            DEFAULT_SECONDS,
            "the search's time limit when the caller's budget is longer or unlimited",
        ),
    },
)
def plan(
    problem: Problem,
    *,
    rack_link: float = DEFAULT_RACK_LINK,
    seconds: float = DEFAULT_SECONDS,
    budget: Budget = UNLIMITED,
) -> Placement:
    if rack_link <= 0:
        raise ValueError(f"rack_link must be > 0 (relative link capacity), got {rack_link}")
    if seconds <= 0:
        raise ValueError(f"seconds must be > 0 (the search's time limit), got {seconds}")
    if budget.remaining() > seconds:
        budget = Budget.of(seconds)
    check_feasible(problem)
    topology = problem.topology
    nodes = usable_nodes(problem)
    kept = worker_nodes(nodes, topology.workers)
    try:
        key, node_of, exhausted = _searched(problem, kept, rack_link, budget)
    except InfeasibleError:
        if len(kept) == len(nodes):
            raise
        # more nodes than topology.workers: the scheduling round refuses it with the reason
        key, node_of, exhausted = _searched(problem, nodes, rack_link, budget)
    report: dict[str, object] = {"busiest_link": round(key[0][0] if key[0] else 0.0, 6)}
    if exhausted:
        report["budget_exhausted"] = True
    return Placement(topology.id, node_of, worker_of=dict.fromkeys(node_of, 0), report=report)
