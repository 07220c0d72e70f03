"""``throughput``: the plan with the highest predicted throughput under Storm's routing — a
portfolio of the registered algorithms, then a local search on the throughput model (ours;
``docs/algorithms/throughput-model.md``).

Why. Which algorithm places a topology fastest depends on the topology and on Storm's settings
(``README.md``, "Evaluation on an emulated network": ``locality`` 2.9× DefaultScheduler on
Diamond, ``td`` 0.51× on Linear; ``links`` when load-aware messaging is off), while the
throughput model (:mod:`scheduler_py.model.throughput`) predicted every recorded run's
throughput within a median 2 %. So this algorithm asks the model instead of the operator.

**Objective.** The predicted sustainable spout rate
(:func:`~scheduler_py.model.throughput.throughput`), higher is better, compared with a relative
tolerance of :data:`TIE`; then fewer nodes; then fewer payload tuples between nodes as Storm
routes them (:attr:`~scheduler_py.model.throughput.Throughput.crossing`). Per-tuple CPU is
measured where the topology has measured costs
(:func:`~scheduler_py.model.throughput.measured_work_seconds`), else Storm's own costs only:
declared CPU points are a capacity, not a cost per tuple; the report says which
(``work_costs``).

**Search.** The candidates (:data:`CANDIDATES`: ``locality`` with the topology's load-aware
setting, ``td``, ``rstorm``, ``even``) run in turn within :data:`CANDIDATES_SHARE`
of the budget, each verified by :func:`~scheduler_py.algorithms.registry.run` and scored;
a re-plan's running placement, where it is valid, is scored before them and wins ties.
The best is improved by moving one executor to another node, or swapping it with an executor
elsewhere — the executors of a saturated resource's host (a saturated rack uplink's hosts)
first — taking the first move that improves the objective, or keeps the rate with fewer
resources saturated (the way off a plateau of tied bottlenecks), until none does, the budget
ends or
:data:`MAX_EVALUATIONS` plans were scored. Moves keep declared CPU and memory within each
node and use at most ``topology.workers`` nodes (or as many as the start used). Above
:data:`SEARCH_ABOVE` executors the search is skipped: the best candidate is the plan.

**Hosts.** The ``hosts`` parameter (:mod:`scheduler_py.algorithms.host_cap`) caps the nodes a
plan may use: ``packed`` (the default) as many as a first-fit packing of the declared CPU and
memory opens, as Storm's ResourceAwareScheduler packs; ``all`` none; a number that many.
Under a cap the packed plan is a candidate too, plans using more nodes are scored and reported
but not chosen, and the search adds no node past the cap.

**Memo.** The plans of recent canonical problems are remembered (:class:`_Memo`), also one
its budget cut short: a round placing many copies of one topology on a large cluster plans
once (the shortlist of the freest nodes, renamed, is the same problem each time). Within a
round, the canonical order of the cluster's nodes is kept up to date for the few nodes each
claim replaces (:class:`_CanonicalOrder`) rather than sorted for every topology, and
topologies that see the same shortlist share its renamed nodes (:class:`_Renamed`). A plan
two candidates agree on is scored once.

**Determinism.** The algorithms break ties by node id, and node ids are Storm's random
supervisor ids. This algorithm plans on a copy of the problem whose nodes are renamed in a
canonical order — by rack, then free CPU, memory and slots, highest first — so a cluster plans
the same way whatever its supervisor ids, up to the renaming of interchangeable nodes
(``tests/test_fastest.py``).
"""

from __future__ import annotations

import functools
import math
import threading
import time
from bisect import bisect_left
from collections import OrderedDict, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from operator import attrgetter
from typing import Any

from scheduler_py.algorithms import registry
from scheduler_py.algorithms.host_cap import (
    DEFAULT_HOSTS,
    declared_capacity,
    hosts_text,
    node_limit,
    packed_plan,
    parse_hosts,
)
from scheduler_py.algorithms.links import DEFAULT_RACK_LINK
from scheduler_py.config import topology_conf
from scheduler_py.model.budget import UNLIMITED, Budget
from scheduler_py.model.capacity import CapacityTracker
from scheduler_py.model.cost import violations
from scheduler_py.model.errors import BudgetExhaustedError, SchedulingError
from scheduler_py.model.throughput import (
    UNBOUNDED,
    Shape,
    Throughput,
    ThroughputInputs,
    measured_work_seconds,
    rate_text,
    renamed_bottleneck,
    throughput,
)
from scheduler_py.model.types import MBIT, Node, NodeTable, Placement, Problem, Topology

NAME = "throughput"
CANDIDATES = ("locality", "td", "rstorm", "even")
"""in running order: the emulated evaluation's fastest plan first (``locality``), ``td`` the
fast group-aware one, then ``rstorm`` and Storm's round robin. ``links`` is not a default
candidate: its random starts stop at a clock, so its plan depends on the machine's speed, and
from ``td``'s plan the search reaches the rate of ``links``'s on every emulated topology
(``docs/algorithms/throughput-model.md``)."""
PACKED_CANDIDATE = "packed"
"""the name of the packed plan among the scored plans under a ``hosts`` cap
(:func:`~scheduler_py.algorithms.host_cap.packed_plan`)"""
RUNNING = "running placement"
"""the name of a re-plan's running placement among the scored plans (``chosen`` in the
report when no plan beats it)"""
UNIFORM_ONLY = frozenset({"links"})
"""candidates that plan for uniform shuffles: skipped with load-aware messaging on (``links``
scores the uniform split; with it on ``locality`` plans for the routing Storm does)"""
LOADAWARE_ONLY = frozenset({"locality"})
"""candidates skipped with load-aware messaging off (``locality`` then hands over to
``links``, which runs anyway)"""
CANDIDATES_SHARE = 0.5
"""of the budget for the candidates; the search has the rest (and what they leave)"""
DEFAULT_SECONDS = 0.25
"""the budget per topology when the round's share is larger: the search on the emulated
topologies ends by itself within 400 scored plans (about 60 ms on the 2-core machine of
``docs/algorithms/throughput-model.md``); a round's equal share (1.5 s / topologies) cuts it
below that when many topologies are new at once"""
MAX_EVALUATIONS = 600
"""plans the local search scores at most"""
SEARCH_ABOVE = 400
"""executors above which the local search is skipped"""
TIE = 1e-6
"""relative difference in predicted throughput under which two plans count as equal"""
SHORTLIST_ABOVE = 32
"""usable nodes above which the candidates plan on a shortlist (:func:`shortlist`)"""
SHORTLIST_NODES = 16
"""nodes a shortlist holds at least, beyond ``topology.workers``"""
SHORTLIST_SPARE = 2.0
"""a shortlist's CPU and memory, relative to the topology's"""
DEFAULT_HOST_MBIT = 1000.0
"""Mbit/s of a node's link each way when the node gives none (1 Gbit/s Ethernet)"""
UNKNOWN_PAYLOAD = 0.0
"""``payload_bytes`` when the tuple size is not given (the default: Storm's snapshot carries
none): the plan is made for the size the worker monitor measured
(:attr:`~scheduler_py.model.types.Topology.payload_bytes`), else for every size in
:data:`PAYLOAD_HYPOTHESES`"""
PAYLOAD_HYPOTHESES = (256.0, 4096.0, 65536.0)
"""bytes per tuple a plan must hold up under when the tuple size is not known. A small tuple
makes the hosts' CPU the bottleneck, a large one the links; which plan is fastest changes
between them (on the emulated Star, the plan for 1 KiB tuples runs at 0.74× the plan for
8 KiB tuples when they are 8 KiB, and the plan for 8 KiB at 0.81× the other when they are
small: ``docs/algorithms/throughput-model.md``, "When the tuple size is not known"). So the
plan is searched once per size, and the plan kept is the one whose lowest ratio to the
best plan found for each size is highest (the least relative regret)."""
REPORTED_PAYLOAD = 4096.0
"""the size whose predicted rate and bottleneck the report and Storm's status show when the
tuple size is not known (each size's rate is in ``predicted_by_payload``)"""


def canonical_problem(problem: Problem) -> tuple[Problem, dict[str, str]]:
    """``problem`` with its nodes renamed and ordered canonically (rack, then free CPU,
    memory, slots, speed and bandwidth, highest first; interchangeable nodes keep their
    relative order), cut to a shortlist on large clusters (:func:`shortlist`), and the map
    from the new names back to the node ids."""
    return _renamed_problem(problem, canonical_nodes(problem))


def canonical_nodes(problem: Problem) -> list[Node]:
    """The nodes :func:`canonical_problem` keeps, in its order, under their own ids."""
    every = _ORDER.ordered(problem.table)
    one_rack = every[0].rack == every[-1].rack  # sorted by rack first
    usable = len(problem.usable_nodes)
    if one_rack and usable > SHORTLIST_ABOVE:
        ordered = _first_fitting(problem, every)
    else:
        ordered = shortlist(problem, every)
    current = problem.current
    if current is not None:  # the nodes it runs on stay candidates
        kept = {n.id for n in ordered}
        running = set(current.node_of.values())
        ordered = [n for n in every if n.id in kept | running]
    return ordered


def _renamed_problem(problem: Problem, ordered: list[Node]) -> tuple[Problem, dict[str, str]]:
    """:func:`canonical_problem` of the nodes :func:`canonical_nodes` kept."""
    nodes, to_canonical, back = _RENAMED.renamed(ordered)
    current = problem.current
    if current is not None:
        current = replace(
            current,
            node_of={e: to_canonical.get(n, n) for e, n in current.node_of.items()},
            slot_of={},
        )
    return Problem(nodes, problem.topology, current), dict(back)


@functools.lru_cache(maxsize=64)
def _canonical_names(count: int) -> tuple[str, ...]:
    """The names of ``count`` canonical nodes, in order: ``n0 … n9``, ``n00 … n99``, …"""
    width = len(str(count))
    return tuple(f"n{i:0{width}d}" for i in range(count))


def _node_key(node: Node) -> tuple:
    return (
        node.rack,
        -node.cpu,
        -node.memory_mb,
        -node.slots,
        -node.speed,
        -(node.bandwidth or 0.0),
        -(node.rack_uplink or 0.0),
    )


class _CanonicalOrder:
    """The nodes of the last table in canonical order (:func:`_node_key`, ties by position:
    ``sorted``'s order), updated for the nodes a round's claims replaced. A round's
    topologies see one table each, derived from the one before by
    :meth:`~scheduler_py.model.types.NodeTable.replaced` (same ids in the same positions, a
    few nodes replaced, which the table names), so 50 topologies on 500 supervisors sort 500
    nodes once and then move a few per claim (``scheduling/round.py``;
    ``tests/test_fastest.py`` checks the order against ``sorted``). Thread-safe: rounds and
    re-plans plan in worker threads."""

    MOST_CHANGED = 0.125
    """share of the nodes above which a table is sorted again rather than updated"""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.table: NodeTable | None = None
        self.entries: list[tuple[tuple, int]] = []
        """(key, position) of every node of :attr:`table`, sorted"""
        self.keys: list[tuple] = []
        """the key of the node at each position of :attr:`table`"""
        self.nodes: list[Node] = []
        """the nodes of :attr:`entries`, in their order"""

    def ordered(self, table: NodeTable) -> list[Node]:
        with self.lock:
            if not self._updated(table):
                keys = [_node_key(node) for node in table]
                if any(_unordered(key) for key in keys):  # NaN: no order to update
                    self.table, self.entries, self.keys, self.nodes = None, [], [], []
                    return sorted(table, key=_node_key)
                self.entries = sorted(zip(keys, range(len(keys)), strict=True))
                self.keys = keys
                self.nodes = [table[index] for _, index in self.entries]
            self.table = table
            return list(self.nodes)

    def _updated(self, table: NodeTable) -> bool:
        """Whether :attr:`entries` and :attr:`keys` now describe ``table``: it is the last
        table, or one with the same ids in the same positions and a few nodes replaced
        (left unusable, to be built again, when not)."""
        previous = self.table
        if previous is None or len(previous) != len(table):
            return False
        if previous is table:
            return True
        if previous.position is not table.position:
            return False
        changed = table.replaced_positions(previous)
        if changed is None:
            changed = tuple(
                i for i, (a, b) in enumerate(zip(previous, table, strict=True)) if a is not b
            )
        if len(changed) > self.MOST_CHANGED * len(table):
            return False
        entries, keys, nodes = self.entries, self.keys, self.nodes
        for index in changed:
            node = table[index]
            key = _node_key(node)
            if _unordered(key):
                return False
            where = bisect_left(entries, (keys[index], index))
            del entries[where], nodes[where]
            where = bisect_left(entries, (key, index))
            entries.insert(where, (key, index))
            nodes.insert(where, node)
            keys[index] = key
        return True


def _unordered(key: tuple) -> bool:
    """Whether a node's key has a NaN (no place in a sorted order): the one value not equal
    to itself (the key's parts are strings and numbers)."""
    return any(part != part for part in key)


_ORDER = _CanonicalOrder()


class _Renamed:
    """The last shortlist renamed ``n0, n1, …``: the topologies of a round that see the same
    shortlist (the same node objects: nothing claimed on them in between) share its renamed
    nodes instead of building them again. Thread-safe."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.last: tuple[list[Node], NodeTable, dict[str, str], dict[str, str]] | None = None

    def renamed(self, ordered: list[Node]) -> tuple[NodeTable, dict[str, str], dict[str, str]]:
        """The renamed nodes (a table), node id -> new name, new name -> node id."""
        with self.lock:
            last = self.last
            if (
                last is not None
                and len(last[0]) == len(ordered)
                and all(a is b for a, b in zip(last[0], ordered, strict=True))
            ):
                return last[1], last[2], last[3]
            names = _canonical_names(len(ordered))
            to_canonical = {n.id: name for n, name in zip(ordered, names, strict=True)}
            nodes = NodeTable(_named(n, to_canonical[n.id]) for n in ordered)
            back = {new: old for old, new in to_canonical.items()}
            self.last = (list(ordered), nodes, to_canonical, back)
            return nodes, to_canonical, back


def _named(node: Node, name: str) -> Node:
    """``node`` under the id ``name`` (``dataclasses.replace`` spelled out: a round renames
    every shortlisted node of every topology, and ``replace`` costs several times more)."""
    return Node(
        name,
        node.cpu,
        node.slots,
        node.memory_mb,
        node.rack,
        node.bandwidth,
        node.speed,
        node.rack_uplink,
    )


_RENAMED = _Renamed()


_CPU = attrgetter("cpu")


def shortlist(problem: Problem, ordered: list[Node]) -> list[Node]:
    """Above :data:`SHORTLIST_ABOVE` nodes, the nodes the candidates see: whole racks first
    (most free CPU first, as :func:`~scheduler_py.model.capacity.worker_nodes` keeps them),
    within a rack in canonical order, until there are :data:`SHORTLIST_NODES` nodes and
    ``topology.workers`` more, with :data:`SHORTLIST_SPARE` times the topology's CPU and
    memory; canonical order kept. Every plan on it is a plan on the whole cluster."""
    usable = [n for n in ordered if n.slots > 0]
    if len(usable) <= SHORTLIST_ABOVE:
        return ordered
    topology = problem.topology
    cpu = SHORTLIST_SPARE * topology.total_cpu
    memory = SHORTLIST_SPARE * sum(e.memory_mb for e in topology.executors)
    count = SHORTLIST_NODES + max(1, topology.workers)
    racks: dict[str, list[Node]] = defaultdict(list)
    for node in usable:
        racks[node.rack].append(node)
    kept: set[str] = set()
    for rack in sorted(racks, key=lambda r: (-sum(map(_CPU, racks[r])), r)):
        for node in racks[rack]:
            if len(kept) >= count and cpu <= 0 and memory <= 0:
                break
            kept.add(node.id)
            cpu -= node.cpu
            memory -= node.memory_mb
    return [n for n in ordered if n.id in kept]


def _first_fitting(problem: Problem, ordered: list[Node]) -> list[Node]:
    """:func:`shortlist` of a cluster of one rack with more than :data:`SHORTLIST_ABOVE`
    usable nodes: its first usable nodes, in order, until the same counts are reached — a
    walk over the few nodes kept rather than over every node (``tests/test_fastest.py``
    compares the two)."""
    topology = problem.topology
    cpu = SHORTLIST_SPARE * topology.total_cpu
    memory = SHORTLIST_SPARE * sum(e.memory_mb for e in topology.executors)
    count = SHORTLIST_NODES + max(1, topology.workers)
    kept: list[Node] = []
    for node in ordered:
        if node.slots <= 0:
            continue
        if len(kept) >= count and cpu <= 0 and memory <= 0:
            break
        kept.append(node)
        cpu -= node.cpu
        memory -= node.memory_mb
    return kept


def conf_params(conf: Mapping[str, Any]) -> dict[str, Any]:
    """The parameters a round takes from the topology's conf: load-aware messaging
    (``topology.disable.loadaware.messaging``) and ``topology.max.spout.pending``
    (:mod:`scheduler_py.config.topology_conf`)."""
    return {
        "loadaware": topology_conf.loadaware_messaging(conf),
        "max_spout_pending": topology_conf.max_spout_pending(conf),
    }


def model_inputs(
    problem: Problem,
    loadaware: bool,
    payload_bytes: float,
    rack_link: float,
    host_mbit: float = DEFAULT_HOST_MBIT,
    max_spout_pending: int = 0,
) -> tuple[ThroughputInputs, str]:
    """The throughput model's inputs for ``problem`` and what its CPU per tuple rests on.

    Links: a node's declared ``bandwidth``, else the mean of those declared, else
    ``host_mbit``; a rack's uplink: the smallest its nodes declare, else ``rack_link`` times
    the host link when the nodes span racks."""
    work = measured_work_seconds(problem.topology)
    given = [n.bandwidth for n in problem.nodes if n.bandwidth]
    host = sum(given) / len(given) if given else host_mbit * MBIT
    racks = {n.rack for n in problem.nodes}
    uplinks: dict[str, float] = {}
    for node in problem.nodes:
        if node.rack_uplink:
            uplinks[node.rack] = min(node.rack_uplink, uplinks.get(node.rack, node.rack_uplink))
    spouts = sum(c.parallelism for c in problem.topology.components if c.is_spout)
    inputs = ThroughputInputs(
        loadaware=loadaware,
        payload_bytes=payload_bytes,
        work_seconds=work,
        host_bandwidth=host,
        rack_bandwidth=rack_link * host if len(racks) > 1 else None,
        rack_uplinks=uplinks,
        in_flight=float(max_spout_pending * spouts) if max_spout_pending > 0 else None,
    )
    costs = "measured CPU per tuple" if work else "CPU per tuple not measured (Storm's own costs)"
    return inputs, costs


def link_capacities(problem: Problem, host_mbit: float, rack_link: float) -> str:
    """Where the plan's link capacities come from, for its report and Storm's status: the
    supervisors' declarations (``scheduler.host.link.mbit``, ``scheduler.rack.uplink.mbit``)
    or the algorithm's parameters."""
    nodes = problem.nodes
    hosts = sum(1 for n in nodes if n.bandwidth)
    racks = {n.rack for n in nodes}
    if hosts == len(nodes):
        host = "host links declared"
    elif hosts:
        host = f"host links declared on {hosts} of {len(nodes)} nodes (the rest: their mean)"
    else:
        host = f"host links not declared (assumed {host_mbit:g} Mbit/s)"
    if len(racks) == 1:
        return host
    uplinks = {n.rack for n in nodes if n.rack_uplink}
    if uplinks == racks:
        return f"{host}; rack uplinks declared"
    if uplinks:
        return f"{host}; rack uplinks declared for {len(uplinks)} of {len(racks)} racks"
    return f"{host}; rack uplinks not declared (assumed {rack_link:g} of a host link)"


class _Scorer:
    """Scores plans on the throughput model: ``(-rate, nodes, traffic)``, lower is better."""

    def __init__(self, problem: Problem, inputs: ThroughputInputs, shape: Shape) -> None:
        self.problem = problem
        self.inputs = inputs
        self.shape = shape
        self.evaluations = 0

    def score(self, node_of: Mapping[str, str]) -> tuple[tuple[float, int, float], Throughput]:
        self.evaluations += 1
        placement = Placement(self.problem.topology.id, node_of)
        result = throughput(self.problem, placement, self.inputs, self.shape)
        rate = result.rate if math.isfinite(result.rate) else 1e300
        return (-rate, len(set(node_of.values())), result.crossing), result


def _plan_key(node_of: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """A plan as a hashable value (the same for the same executor -> node map)."""
    return tuple(sorted(node_of.items()))


def _saturated(result: Throughput) -> list[str]:
    """The resources at the bottleneck's utilisation (within :data:`TIE`), by name."""
    return sorted(r for r, u in result.loads.items() if u >= 1 - TIE)


def _better(a: tuple[float, int, float], b: tuple[float, int, float]) -> bool:
    scale = max(abs(a[0]), abs(b[0]), 1e-12)
    if abs(a[0] - b[0]) > TIE * scale:
        return a[0] < b[0]
    if a[1] != b[1]:
        return a[1] < b[1]
    return a[2] < b[2] - 1e-12 * max(1.0, abs(b[2]))


def _search(
    problem: Problem,
    scorer: _Scorer,
    start: dict[str, str],
    key: tuple[float, int, float],
    result: Throughput,
    budget: Budget,
    max_nodes: int | None = None,
) -> tuple[dict[str, str], tuple[float, int, float], Throughput, int]:
    """First-improvement moves and swaps, the saturated resources' executors first, then the
    others; returns the best plan, its key and model result, and how many moves improved it.
    No move takes the plan past ``max_nodes`` nodes (the ``hosts`` cap) when it is given."""
    executors = problem.topology.executor_by_id
    nodes = problem.usable_nodes
    limit = max(problem.topology.workers, len(set(start.values())))
    if max_nodes is not None:  # the start is within it (only such plans are started from)
        limit = min(limit, max_nodes)
    tracker = CapacityTracker(nodes)
    node_of = dict(start)
    for executor, node in node_of.items():
        tracker.take_executor(node, executors[executor])
    rack_of = {n.id: n.rack for n in nodes}
    improved = 0
    while scorer.evaluations < MAX_EVALUATIONS and not budget.expired():
        used = list(dict.fromkeys(sorted(node_of.values(), key=problem.node_index.__getitem__)))
        hot = _hot_nodes(_saturated(result), used, rack_of)
        spare = [n.id for n in nodes if n.id not in set(used)][: max(0, limit - len(used))]
        by_node: dict[str, list[str]] = defaultdict(list)
        for executor, node in sorted(node_of.items()):
            by_node[node].append(executor)
        found = False
        order = [*hot, *(n for n in used if n not in hot)]  # the saturated hosts' first
        for executor in (e for n in order for e in by_node[n]):
            if found or scorer.evaluations >= MAX_EVALUATIONS or budget.expired():
                break
            here = node_of[executor]
            moves: list[dict[str, str]] = []
            for target in (*used, *spare[:1]):
                if target != here and tracker.fits_executor(target, executors[executor]):
                    moves.append({executor: target})
            for target in used:
                if target == here:
                    continue
                for other in by_node[target]:
                    if _swap_fits(tracker, executors, executor, here, other, target):
                        moves.append({executor: target, other: here})
            for move in moves:
                if scorer.evaluations >= MAX_EVALUATIONS or budget.expired():
                    break
                trial = node_of | move
                trial_key, trial_result = scorer.score(trial)
                if _improves(trial_key, trial_result, key, result):
                    for moved, target in move.items():
                        tracker.release_executor(node_of[moved], executors[moved])
                        tracker.take_executor(target, executors[moved])
                    node_of, key, result = trial, trial_key, trial_result
                    improved += 1
                    found = True
                    break
        if not found:
            break
    return node_of, key, result, improved


def _hot_nodes(saturated: list[str], used: list[str], rack_of: Mapping[str, str]) -> list[str]:
    """The nodes whose executors the search moves: the hosts of the saturated resources, or
    the hosts of a saturated rack uplink's rack."""
    hot: list[str] = []
    for bottleneck in saturated:
        resource = bottleneck.rpartition(" ")[0]
        for node in [resource] if resource in used else used:
            if (node == resource or rack_of.get(node) == resource) and node not in hot:
                hot.append(node)
    return hot


def _improves(
    key: tuple[float, int, float],
    result: Throughput,
    best_key: tuple[float, int, float],
    best: Throughput,
) -> bool:
    """The search's acceptance, one order from rate to traffic: a higher predicted rate;
    at the same rate fewer hosts; then fewer resources saturated (a step off a plateau of
    tied bottlenecks); then less traffic (:func:`_better`'s order with the plateau step
    inside it). One order, so the search cannot step back: with the plateau step outside it,
    a plan with fewer saturated resources and one with less traffic each accepted the other,
    and a search alternated between them until its evaluations ran out."""
    scale = max(abs(key[0]), abs(best_key[0]), 1e-12)
    if abs(key[0] - best_key[0]) > TIE * scale or key[1] != best_key[1]:
        return _better(key, best_key)
    saturated, best_saturated = len(_saturated(result)), len(_saturated(best))
    if saturated != best_saturated:
        return saturated < best_saturated
    return _better(key, best_key)


def _swap_fits(
    tracker: CapacityTracker,
    executors: Mapping[str, Any],
    a: str,
    node_a: str,
    b: str,
    node_b: str,
) -> bool:
    ea, eb = executors[a], executors[b]
    return tracker.fits(node_b, ea.cpu - eb.cpu, ea.memory_mb - eb.memory_mb) and tracker.fits(
        node_a, eb.cpu - ea.cpu, eb.memory_mb - ea.memory_mb
    )


@dataclass(frozen=True)
class _Scored:
    """A plan scored for each tuple size: its keys (:meth:`_Scorer.score`) and model results
    in the order of the sizes, and where it came from."""

    name: str
    node_of: dict[str, str]
    keys: list[tuple[float, int, float]]
    results: list[Throughput]


def _scored(
    scored: dict[tuple, _Scored], scorers: list[_Scorer], name: str, node_of: dict[str, str]
) -> _Scored:
    """The plan ``node_of`` scored by every scorer, once (kept in ``scored``)."""
    plan_key = _plan_key(node_of)
    entry = scored.get(plan_key)
    if entry is None:
        pairs = [scorer.score(node_of) for scorer in scorers]
        entry = _Scored(name, node_of, [k for k, _ in pairs], [r for _, r in pairs])
        scored[plan_key] = entry
    return entry


def _best_for(entries: Iterable[_Scored], index: int) -> _Scored:
    """The best of ``entries`` for the ``index``-th tuple size (the first of equals)."""
    best: _Scored | None = None
    for entry in entries:
        if best is None or _better(entry.keys[index], best.keys[index]):
            best = entry
    assert best is not None
    return best


def _least_regret(entries: list[_Scored]) -> tuple[_Scored, float]:
    """The plan whose lowest ratio to the best predicted rate for each tuple size is
    highest, and that ratio (1 with one size: the best plan); ties (within :data:`TIE`):
    fewer nodes, then fewer tuples crossing hosts, then the first found."""
    sizes = len(entries[0].keys)
    if sizes == 1:
        return _best_for(entries, 0), 1.0
    best_rate = [max(-e.keys[i][0] for e in entries) for i in range(sizes)]

    def ratio(entry: _Scored) -> float:
        return min(
            (-entry.keys[i][0] / best_rate[i]) if best_rate[i] > 0 else 1.0 for i in range(sizes)
        )

    chosen, chosen_key = entries[0], (-ratio(entries[0]), *entries[0].keys[0][1:])
    for entry in entries[1:]:
        key = (-ratio(entry), *entry.keys[0][1:])
        if _better(key, chosen_key):
            chosen, chosen_key = entry, key
    return chosen, -chosen_key[0]


def _tried(entry: _Scored, sizes: tuple[float, ...]) -> dict[str, Any]:
    """A scored plan's entry in the report's ``candidates``: its rate and bottleneck at the
    reported size, and the nodes it uses."""
    shown = entry.results[_reported(sizes)]
    return {
        "predicted_throughput": shown.rate,
        "bottleneck": shown.bottleneck,
        "nodes_used": entry.keys[0][1],
    }


def _reported(sizes: tuple[float, ...]) -> int:
    """Which size's result the report shows: the only one, or :data:`REPORTED_PAYLOAD`."""
    return sizes.index(REPORTED_PAYLOAD) if len(sizes) > 1 else 0


def _size_text(size: float) -> str:
    return f"{size / 1024:.3g} KiB" if size >= 1024 else f"{size:.0f} B"


def payload_sizes(payload_bytes: float, topology: Topology) -> tuple[float, ...]:
    """The tuple sizes a plan is made for: ``payload_bytes`` when given (> 0), else the
    measured one (:attr:`~scheduler_py.model.types.Topology.payload_bytes`, from the
    workers' Netty totals: ``monitoring/wire_size.py``), else every size of
    :data:`PAYLOAD_HYPOTHESES`."""
    if payload_bytes > 0:
        return (payload_bytes,)
    if topology.payload_bytes > 0:
        return (topology.payload_bytes,)
    return PAYLOAD_HYPOTHESES


def _payload_text(sizes: tuple[float, ...], regret: float, given: bool) -> str:
    """What the plan assumed of the tuple size, for its report and Storm's status."""
    if len(sizes) == 1:
        return f"{_size_text(sizes[0])} per tuple ({'given' if given else 'measured'})"
    shown = ", ".join(_size_text(s) for s in sizes)
    return (
        f"tuple size not measured: the plan keeps {regret:.0%} of the best predicted rate "
        f"for tuples of {shown}; rate shown for {_size_text(REPORTED_PAYLOAD)}"
    )


PARAMS: dict[str, tuple[Any, str]] = {
    "loadaware": (True, "Storm's load-aware messaging is on (the round sets it from conf)"),
    "payload_bytes": (
        UNKNOWN_PAYLOAD,
        "bytes per tuple; 0: the measured size, else plan for 256 B to 64 KiB",
    ),
    "rack_link": (DEFAULT_RACK_LINK, "a rack's uplink relative to one host's link"),
    "host_mbit": (DEFAULT_HOST_MBIT, "Mbit/s of a node's link each way"),
    "max_spout_pending": (0, "topology.max.spout.pending (0: unbounded; the round sets it)"),
    "seconds": (DEFAULT_SECONDS, "the most time per topology, within the round's share"),
    "candidates": (",".join(CANDIDATES), "comma-separated algorithms to score, in order"),
    "hosts": (
        DEFAULT_HOSTS,
        "nodes a plan may use: packed (as many as a first-fit packing of the declared CPU and "
        "memory needs, as Storm's RAS packs); all (any node with room); or a number",
    ),
}
"""this algorithm's parameters: name -> (default, description)"""


def recall(problem: Problem, **params: Any) -> Placement | None:
    """The plan :func:`plan` remembered for ``problem`` with ``params`` (:data:`PARAMS`, the
    defaults for those not given; the memo of the module docstring), or ``None``: a lookup that
    plans nothing, so a round makes it in its own thread
    (:func:`~scheduler_py.algorithms.registry.recall`). Parameters :func:`plan` refuses were
    never remembered."""
    given = {name: default for name, (default, _) in PARAMS.items()} | params
    ordered = canonical_nodes(problem)
    memo_params = _memo_params(
        given["loadaware"],
        given["payload_bytes"],
        given["rack_link"],
        given["host_mbit"],
        given["max_spout_pending"],
        _candidate_names(given["candidates"]),
        parse_hosts(given["hosts"], NAME).text,
    )
    return _remembered(problem, ordered, _memo_key(problem, ordered, memo_params))


def planned_on(problem: Problem, params: Mapping[str, Any]) -> Problem:
    """The problem :func:`plan` plans with ``params`` and is checked on: under a ``hosts``
    cap, the declared CPU as each executor's capacity
    (:func:`~scheduler_py.algorithms.host_cap.declared_capacity`); else ``problem``."""
    cap = parse_hosts(params.get("hosts", DEFAULT_HOSTS), NAME)
    return declared_capacity(problem) if cap.capped else problem


def _candidate_names(candidates: str) -> list[str]:
    return [n.strip() for n in candidates.split(",") if n.strip()]


def _memo_params(
    loadaware: bool,
    payload_bytes: float,
    rack_link: float,
    host_mbit: float,
    max_spout_pending: int,
    names: list[str],
    hosts: str,
) -> tuple:
    """What of a plan's parameters its memo key holds (the time budget is not one)."""
    return (loadaware, payload_bytes, rack_link, host_mbit, max_spout_pending, tuple(names), hosts)


def _remembered(problem: Problem, ordered: list[Node], memo_key: tuple | None) -> Placement | None:
    """The memo's plan for ``memo_key`` on ``problem``'s own node ids, or ``None``; the
    canonical names are the positions in ``ordered``, so no node is renamed."""
    remembered = _MEMO.get(memo_key) if memo_key is not None else None
    if remembered is None:
        return None
    node_of, report = remembered
    back = dict(zip(_canonical_names(len(ordered)), (n.id for n in ordered), strict=True))
    return _placement(problem, node_of, report | {"remembered": True}, back)


@registry.register(
    NAME,
    paper="ours: the highest predicted throughput under Storm's routing "
    "(docs/algorithms/throughput-model.md)",
    summary="Runs locality, td, rstorm and even, scores each plan by the throughput "
    "model (the busiest host CPU, host link or rack uplink under Storm's routing), then moves "
    "executors off the bottleneck while the predicted rate rises; ties: fewer nodes, less "
    "traffic. Plans the same whatever the supervisor ids. On no more nodes than Storm's RAS "
    "packs the topology onto (hosts=packed, the default; hosts=all: any node).",
    params=PARAMS,
    recall=recall,
    planned_on=planned_on,
)
def plan(
    problem: Problem,
    *,
    loadaware: bool = True,
    payload_bytes: float = UNKNOWN_PAYLOAD,
    rack_link: float = DEFAULT_RACK_LINK,
    host_mbit: float = DEFAULT_HOST_MBIT,
    max_spout_pending: int = 0,
    seconds: float = DEFAULT_SECONDS,
    candidates: str = ",".join(CANDIDATES),
    hosts: str = DEFAULT_HOSTS,
    budget: Budget = UNLIMITED,
) -> Placement:
    if seconds <= 0 or rack_link <= 0 or host_mbit <= 0 or payload_bytes < 0:
        raise SchedulingError(
            f"{NAME}: seconds, rack_link and host_mbit must be > 0 and payload_bytes >= 0, "
            f"found {seconds}, {rack_link}, {host_mbit} and {payload_bytes}"
        )
    names = _candidate_names(candidates)
    known = registry.algorithms()
    if not names or any(n in (NAME, "auto") or n not in known for n in names):
        raise SchedulingError(
            f"{NAME}: candidates must be registered algorithms other than {NAME} and auto, "
            f"found {names}; the default list: {', '.join(CANDIDATES)}"
        )
    cap = parse_hosts(hosts, NAME)
    own = Budget.of(seconds)
    if budget.limited and budget.remaining() < own.remaining():
        own = budget
    ordered = canonical_nodes(problem)
    memo_params = _memo_params(
        loadaware, payload_bytes, rack_link, host_mbit, max_spout_pending, names, cap.text
    )
    memo_key = _memo_key(problem, ordered, memo_params)
    remembered = _remembered(problem, ordered, memo_key)
    if remembered is not None:
        return remembered
    # under a cap `problem` already has its declared CPU as capacity: registry.run plans
    # and checks :func:`planned_on`'s problem
    canonical, back = _renamed_problem(problem, ordered)
    packed = packed_plan(canonical) if cap.capped else None
    max_nodes = node_limit(cap, packed, NAME)
    sizes = payload_sizes(payload_bytes, problem.topology)
    inputs, costs = model_inputs(
        canonical, loadaware, sizes[0], rack_link, host_mbit, max_spout_pending
    )
    shape = Shape(canonical.topology)  # what scoring needs of the topology, for every size
    scorers = [_Scorer(canonical, replace(inputs, payload_bytes=size), shape) for size in sizes]
    tried: dict[str, Any] = {}
    scored: dict[tuple, _Scored] = {}
    """plans already scored: candidates often agree (``td`` and ``rstorm`` on a small
    topology), and the model need not route the same plan twice"""
    running = canonical.current
    if running is not None and not violations(canonical, running):
        # a re-plan: the running placement is scored first, so a plan only as good keeps it
        # (no worker restarts for nothing) and the search can start from it
        entry = _scored(scored, scorers, RUNNING, dict(running.node_of))
        tried[RUNNING] = _tried(entry, sizes)
    phase = own.share(CANDIDATES_SHARE)
    names = [
        n
        for n in names
        if not (loadaware and n in UNIFORM_ONLY) and not (not loadaware and n in LOADAWARE_ONLY)
    ] or names
    for index, name in enumerate(names):
        if scored and phase.expired():
            tried[name] = {"skipped": "no time left in the budget"}
            continue
        params: dict[str, Any] = {"loadaware": loadaware} if name == "locality" else {}
        if name in ("locality", "links"):
            params["rack_link"] = rack_link
        share = phase.share(1.0 / (len(names) - index))
        started = time.perf_counter()
        try:
            placement = registry.run(name, canonical, params, budget=share)
        except (BudgetExhaustedError, SchedulingError) as error:
            tried[name] = {"skipped": str(error)}
            continue
        entry = _scored(scored, scorers, name, dict(placement.node_of))
        tried[name] = _tried(entry, sizes) | {"seconds": time.perf_counter() - started}
    if packed is not None:
        entry = _scored(scored, scorers, PACKED_CANDIDATE, packed)
        tried[PACKED_CANDIDATE] = _tried(entry, sizes)
    if max_nodes is not None:
        for entry in tried.values():
            if entry.get("nodes_used", 0) > max_nodes:
                entry["over_hosts"] = f"uses {entry['nodes_used']} nodes, the cap is {max_nodes}"
    if not scored:
        reasons = "; ".join(f"{n}: {t.get('skipped')}" for n, t in tried.items())
        raise BudgetExhaustedError(f"{NAME}: no candidate produced a plan ({reasons})")

    def eligible() -> list[_Scored]:
        return [e for e in scored.values() if max_nodes is None or e.keys[0][1] <= max_nodes]

    starts = [_best_for(eligible(), index) for index in range(len(sizes))]
    for index, start in enumerate(starts):
        if len(start.node_of) > SEARCH_ABOVE or own.expired():
            break
        turn = own.share(1.0 / (len(sizes) - index))
        node_of, _, _, improved = _search(
            canonical,
            scorers[index],
            start.node_of,
            start.keys[index],
            start.results[index],
            turn,
            max_nodes,
        )
        if improved:
            name = f"{start.name} + {improved} move(s)"
            if len(sizes) > 1:
                name += f" for {_size_text(sizes[index])} tuples"
            _scored(scored, scorers, name, node_of)
    chosen, regret = _least_regret(eligible())
    shown = _reported(sizes)
    result = chosen.results[shown]
    report: dict[str, Any] = {
        "chosen": chosen.name,
        "predicted_throughput": result.rate if math.isfinite(result.rate) else None,
        "bottleneck": result.bottleneck,
        "work_costs": costs,
        "link_capacities": link_capacities(canonical, host_mbit, rack_link),
        "payload": _payload_text(sizes, regret, given=payload_bytes > 0),
        "evaluations": sum(s.evaluations for s in scorers),
        "candidates": tried,
    }
    if cap.capped:
        report["hosts"] = hosts_text(cap, max_nodes)
    if len(sizes) > 1:
        report["predicted_by_payload"] = {
            f"{size:g}": (r.rate if math.isfinite(r.rate) else None)
            for size, r in zip(sizes, chosen.results, strict=True)
        }
    node_of = chosen.node_of
    if own.expired():
        report["budget_note"] = f"{chosen.name} was the best of what finished in time"
    if memo_key is not None:  # a plan its budget cut short too: valid, and the copies agree
        _MEMO.put(memo_key, (dict(node_of), report))
    return _placement(problem, node_of, report, back)


def _placement(
    problem: Problem, node_of: Mapping[str, str], report: Mapping[str, Any], back: Mapping[str, str]
) -> Placement:
    """The canonical plan ``node_of`` on the problem's own node ids; the report's bottleneck
    and candidates' bottlenecks renamed too."""
    renamed = dict(report)
    renamed["bottleneck"] = renamed_bottleneck(str(report.get("bottleneck") or ""), back)
    renamed["candidates"] = {
        name: (
            entry | {"bottleneck": renamed_bottleneck(str(entry["bottleneck"]), back)}
            if "bottleneck" in entry
            else entry
        )
        for name, entry in dict(report.get("candidates") or {}).items()
    }
    return Placement(problem.topology.id, {e: back[n] for e, n in node_of.items()}, report=renamed)


class _Memo:
    """The plans of the last :data:`MEMO_SIZE` canonical problems: a round that places 50
    copies of one topology on a large cluster sees the same shortlist of fresh nodes each time
    (the freest nodes, renamed), so it plans once. Thread-safe: rounds plan in a worker
    thread."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.entries: OrderedDict[tuple, tuple[dict[str, str], dict[str, Any]]] = OrderedDict()
        self.lock = threading.Lock()

    def get(self, key: tuple) -> tuple[dict[str, str], dict[str, Any]] | None:
        with self.lock:
            entry = self.entries.get(key)
            if entry is not None:
                self.entries.move_to_end(key)
            return entry

    def put(self, key: tuple, entry: tuple[dict[str, str], dict[str, Any]]) -> None:
        with self.lock:
            self.entries[key] = entry
            self.entries.move_to_end(key)
            while len(self.entries) > self.size:
                self.entries.popitem(last=False)


MEMO_SIZE = 256
"""canonical problems whose plans are remembered"""
_MEMO = _Memo(MEMO_SIZE)


def _memo_key(problem: Problem, ordered: list[Node], params: tuple) -> tuple | None:
    """What a plan depends on: the canonical nodes (:func:`canonical_nodes`; their names
    are their positions, so their fields and order), the topology's shape and ``params``,
    its id left out; ``None`` (not remembered) for a re-plan (the current placement matters)
    or a topology with measured costs (they change every window)."""
    topology = problem.topology
    if problem.current is not None or topology.has_measured_costs:
        return None
    return (
        tuple(
            (n.cpu, n.slots, n.memory_mb, n.rack, n.bandwidth, n.speed, n.rack_uplink)
            for n in ordered
        ),
        topology.components,
        topology.edges,
        topology.workers,
        params,
    )


PREDICTED_FIELDS = (
    "predicted_throughput",
    "bottleneck",
    "work_costs",
    "link_capacities",
    "payload",
)
"""what a plan summary (the plan log, the status) carries of this algorithm's report"""


def predicted_summary(report: Mapping[str, Any]) -> dict[str, Any]:
    """The :data:`PREDICTED_FIELDS` of a plan's report; empty when the plan has none (another
    algorithm's plan)."""
    if report.get("predicted_throughput") is None and not report.get("bottleneck"):
        return {}
    return {key: report.get(key) for key in PREDICTED_FIELDS}


def predicted_text(summary: Mapping[str, Any]) -> str:
    """One line for the decision's reason (Storm's status string): the predicted rate, the
    bottleneck and what the CPU per tuple and the link capacities rest on."""
    rate = summary.get("predicted_throughput")
    shown = rate_text(rate)
    if shown != UNBOUNDED:
        shown += " spout tuples/s"
    basis = "; ".join(
        str(summary[field])
        for field in ("work_costs", "link_capacities", "payload")
        if summary.get(field)
    )
    return (
        f"predicted throughput {shown}, bottleneck {summary.get('bottleneck') or 'none'} ({basis})"
    )


def predicted_rates(
    problem: Problem, node_of: Mapping[str, str], params: Mapping[str, Any] | None = None
) -> dict[float, Throughput]:
    """The model's answer for the plan ``node_of`` (executor -> node id of ``problem``) at every
    tuple size this algorithm plans for with ``params`` (its registered parameters, as the round
    passes them): the given ``payload_bytes``, else the measured one, else each of
    :data:`PAYLOAD_HYPOTHESES` (:func:`payload_sizes`). What a re-plan by this algorithm is
    judged on: the running placement and the new plan, each scored as it stands
    (``scheduling/proposal.py``)."""
    info = registry.get(NAME)
    given = {key: default for key, (default, _) in info.params.items()}
    given |= registry.coerce_params(info, params)
    sizes = payload_sizes(given["payload_bytes"], problem.topology)
    inputs, _ = model_inputs(
        problem,
        given["loadaware"],
        sizes[0],
        given["rack_link"],
        given["host_mbit"],
        given["max_spout_pending"],
    )
    shape = Shape(problem.topology)
    placement = Placement(problem.topology.id, dict(node_of))
    return {
        size: throughput(problem, placement, replace(inputs, payload_bytes=size), shape)
        for size in sizes
    }
