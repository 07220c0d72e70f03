"""The sustainable spout rate of a placement and the resource that limits it (a bottleneck
model of how Storm routes; ``docs/algorithms/throughput-model.md``).

With acking a spout keeps ``topology.max.spout.pending`` tuples in flight, so in steady state
the topology runs as fast as its busiest resource lets it (``README.md``, "Evaluation on an
emulated network": throughput × the busiest routed link was constant within ±10 % over every
scheduler's placement). The model follows one *round* — every spout executor emits one tuple
— through the placement, edge by edge in topological order, routed as Storm routes it:

* shuffle-like groupings (``shuffle``, ``local_or_shuffle``, ``none``) with load-aware
  messaging on go to the targets in the narrowest non-empty scope of the sender (its worker,
  its host, its rack, anywhere; Storm 2.8 ``LoadAwareShuffleGrouping``, and
  :mod:`scheduler_py.model.loadaware`); with it off (``topology.disable.loadaware.messaging``)
  evenly to every target;
* ``all`` sends one copy to every target, ``global`` to the target with the lowest task
  (index 0), ``fields``, ``direct`` and custom groupings split evenly;
* a bolt emits on each edge what reaches it times the edge's gain (the declared flows of
  :func:`~scheduler_py.model.flows.flows`; measured pair traffic where there is some, or the
  gains kept of it when declared costs replaced it, :func:`measured_gains`).

Each resource accumulates what one round puts on it: a host's CPU the seconds of its
executors' per-tuple work (:attr:`ThroughputInputs.work_seconds`) plus Storm's own cost per
tuple handled, per tuple serialised or deserialised between workers and per ack handled by an
acker (:class:`Constants`); a host's link out and in, and a rack's uplink out and in, the bytes
of the tuples and acks that cross it (payload plus framing). With one spout executor the rate
is ``min(capacity / load)`` over every resource, in spout tuples per second. With several, each
spout is held back only by the resources on its own path (its own
``topology.max.spout.pending``): the rates are filled progressively (max-min fair) and summed —
on the emulated network RAS's Star put two spouts behind the 50 Mbit/s rack link and two in the
other rack, and the latter ran at twice the rate.

**Widening under overload.** Storm widens a load-aware sender's scope when its targets'
receive queues pass ``topology.localityaware.higher.bound`` (0.8 by default) of
``topology.executor.receive.buffer.size`` (32,768), and then splits by load over the wider
scope. A queue can only fill that far when enough tuples are in flight: with
``topology.max.spout.pending`` set, an executor's queue holds at most the in-flight spout
tuples times what it handles per spout tuple, so on the emulated runs (1,000 pending per spout
executor) no queue ever reached the bound and the strict scopes held — `rstorm`'s Diamond-CPU
plan ran at half RAS's rate with one rack's copies idle (``README.md``). Where the queues can
reach the bound, the model widens to a fixed point: while the bottleneck is a host's CPU that
receives scope-restricted shuffles, the senders feeding it widen to the next scope with more
targets, kept when it raises the rate (:data:`MAX_WIDENINGS` steps at most).

**Shifting off a saturated host.** Within its scope a load-aware sender does not split
evenly for long: ``LoadAwareShuffleGrouping.updateRing`` takes 10 points of weight (of 100)
per load update from every target whose load is more than 0.05 above the least loaded
target's, and gives 1 back otherwise. A remote target's load is at least its connection's
pending messages / 1,024 (``Client.getLoad``), so about 51 messages waiting for a
CPU-saturated worker already move tuples to the other targets. Where that many tuples can be
in flight (:data:`SHIFT_PENDING`), while the bottleneck is the CPU of a host that receives a
load-aware route spanning several hosts, the model scales that host's weight in every such
route by :data:`SHIFT_FACTOR`, kept when it raises the rate (:data:`MAX_SHIFTS` steps at
most): the weight settles no lower than about a third of the even share, as the recorded runs
show it does (``docs/results/throughput-calibration/shift_grid.py``). Routes whose targets
are all on one host are not affected, so a plan that keeps its routes on their hosts is
scored as before (``docs/algorithms/throughput-model.md``, "The model").
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from scheduler_py.model.flows import component_order, flows
from scheduler_py.model.types import Placement, Problem, Topology

ACKER = "__acker"
"""Storm's acker component id."""

SHUFFLE_LIKE = frozenset({"shuffle", "local_or_shuffle", "none"})
"""Groupings Storm routes through ``LoadAwareShuffleGrouping`` when load-aware messaging is on
(the same set as :data:`scheduler_py.model.loadaware.SHUFFLE_LIKE`)."""

SCOPES = ("worker", "host", "rack", "everything")
"""``LoadAwareShuffleGrouping``'s locality scopes, narrowest first."""

FAIR_SPOUTS = 16
"""Spout executors up to which each spout's rate is filled on its own (:func:`_filled`);
above, every spout emits at the same rate (one routing instead of one per spout)."""

LOAD_RESIDUE = 1e-9
"""share of a resource's load under which what is left of it after subtracting the other
spouts' loads is rounding, not load (:func:`_filled`)"""

MAX_WIDENINGS = 4
"""Widening steps the fixed point tries at most (one per scope level and a margin)."""

SHIFT_PENDING = 0.05 * 1024
"""Messages waiting on one connection at which ``LoadAwareShuffleGrouping`` starts taking
weight from its target (its congestion margin times ``Client.getLoad``'s 1,024)."""

SHIFT_FACTOR = 0.6
"""What one shifting step leaves of a saturated host's weight. With :data:`MAX_SHIFTS` it is
fitted on the 63 CPU-bound runs measured at their levelled-off rate
(``docs/results/throughput-calibration/shift_grid.py``): the weight goes no lower than 0.36
of the even share. Halving it four times (to 1/16) put the brain's packed Star-CPU plans
25–31 % above their measured rate: Storm stops well short of balancing the hosts. Why is not
checked (``updateRing`` moves a weight by −10 or +1 points per load update, which may swing
around the balance point rather than settle on it)."""

MAX_SHIFTS = 2
"""Shifting steps tried at most per placement (every step routes the round again)."""


@dataclass(frozen=True)
class Constants:
    """Storm's own costs, calibrated on the emulated-network runs
    (``scheduler-py bench cluster_calibration``; ``docs/algorithms/throughput-model.md``).

    CPU in seconds of one reference core, sizes in bytes."""

    tuple_cpu: float = 5e-6
    """per tuple an executor handles (receive, execute's bookkeeping, emit); not fitted: every
    recorded run sends most tuples between workers, and the fit drives it to zero"""
    remote_cpu: float = 62e-6
    """per tuple that crosses workers, at each end (serialise, Netty, deserialise)"""
    ack_cpu: float = 14e-6
    """per ack message an acker handles (init, each bolt's ack, the completion)"""
    framing_bytes: float = 1.0
    """per tuple crossing hosts beyond the payload (what is left of Storm's header once
    :attr:`link_efficiency` takes the TCP/IP overhead)"""
    ack_bytes: float = 71.0
    """per ack message crossing hosts"""
    worker_cpu: float = 0.008
    """cores a worker uses whatever its load (heartbeats, metrics, GC)"""
    link_efficiency: float = 0.95
    """share of a link's nominal bandwidth tuples can use (not fitted: one degree of freedom
    with :attr:`framing_bytes` on these runs)"""


DEFAULT_CONSTANTS = Constants()


@dataclass(frozen=True)
class ThroughputInputs:
    """What the model needs beyond the problem and the placement.

    ``work_seconds``: per component, CPU seconds of its own work per tuple it handles
    (measured where the topology has measured costs, see :func:`measured_work_seconds`; what
    the caller declares otherwise; 0 when unknown). ``host_bandwidth``: bytes/s of each host's
    link each way (a node's ``bandwidth`` when it has one); ``rack_bandwidth``: bytes/s of
    each rack's uplink each way (``None``: racks are not a limit); ``rack_uplinks``: bytes/s
    of the uplinks of the racks whose own are known, in place of ``rack_bandwidth``."""

    loadaware: bool = True
    payload_bytes: float = 1024.0
    work_seconds: Mapping[str, float] = field(default_factory=dict)
    host_bandwidth: float = 125e6
    rack_bandwidth: float | None = None
    rack_uplinks: Mapping[str, float] = field(default_factory=dict)
    acking: bool = True
    in_flight: float | None = None
    """spout tuples in flight at most (``topology.max.spout.pending`` × spout executors);
    ``None``: unbounded (Storm's default)"""
    receive_buffer: int = 32768
    """``topology.executor.receive.buffer.size``"""
    higher_bound: float = 0.8
    """``topology.localityaware.higher.bound``"""
    constants: Constants = DEFAULT_CONSTANTS


@dataclass(frozen=True)
class Throughput:
    """The model's answer: ``rate`` spout tuples/s, limited by ``bottleneck`` (``"h1 cpu"``,
    ``"h1 out"``, ``"/rack-1 in"``, …); ``loads``: per resource, its utilisation at ``rate``
    (the bottleneck's is 1); ``widened``: widening steps the fixed point kept; ``crossing``:
    payload tuples crossing hosts per spout tuple; ``shifted``: shifting steps kept."""

    rate: float
    bottleneck: str
    loads: Mapping[str, float]
    widened: int = 0
    crossing: float = 0.0
    """payload tuples that cross hosts per spout tuple"""
    shifted: int = 0
    """shifting steps kept (weight scaled by :data:`SHIFT_FACTOR` on a saturated host)"""

    def summary(self) -> dict[str, float | str]:
        return {"predicted_throughput": self.rate, "bottleneck": self.bottleneck}


def measured_work_seconds(
    topology: Topology, execute_seconds: Mapping[str, float] | None = None
) -> dict[str, float]:
    """Per component, the measured CPU seconds per tuple it handles: its executors' measured
    CPU (% of a core) over the tuples it handles in the measured pair traffic (pair traffic in
    tuples/s) — only where both were measured; the topology's own
    :attr:`~scheduler_py.model.types.Topology.work_seconds` when it has them (set with its
    measured costs, kept when those were replaced by its declared resources).

    - A bolt handles what it receives from user components. Its thread's CPU also holds what
      Storm's idle wait strategy burns between tuples (``topology.bolt.wait.strategy``
      ``WaitStrategyProgressive``: up to 1,000 ``parkNanos(1)`` before it sleeps;
      ``docs/results/wait-strategy/``), which a lightly fed bolt's CPU is mostly made of, so
      its CPU per tuple is capped at Storm's measured execute latency, the time a tuple spent in
      ``execute`` (``execute_seconds``: bolt component -> seconds, the aggregate's
      ``execute_ms``).
    - A spout handles the tuples it emits: the most it sends to any one component it feeds
      (every subscriber of a stream receives each tuple once); the ack-init messages it sends
      the ackers are not tuples it emits."""
    if topology.work_seconds:
        return dict(topology.work_seconds)
    if not topology.executor_cpu or not topology.pair_traffic:
        return {}
    component = topology.component_of_executor
    system = {c.id for c in topology.components if c.is_system}
    received: dict[str, float] = defaultdict(float)
    sent: dict[tuple[str, str], float] = defaultdict(float)
    for src, dst, rate in topology.pair_traffics():
        source, target = component.get(src, ""), component.get(dst, "")
        if source in system or target in system:
            continue
        received[target] += rate
        sent[(source, target)] += rate
    emitted: dict[str, float] = defaultdict(float)
    for (source, _), rate in sent.items():
        emitted[source] = max(emitted[source], rate)
    cpu: dict[str, float] = defaultdict(float)
    for eid, percent in topology.executor_cpu.items():
        if eid in component:
            cpu[component[eid]] += percent / 100.0
    result = {}
    for comp, cores in cpu.items():
        if comp in system:
            continue
        spout = topology.component_by_id[comp].is_spout
        tuples = emitted[comp] if spout else received[comp]
        if tuples > 0:
            result[comp] = cores / tuples
            latency = (execute_seconds or {}).get(comp, 0.0)
            if not spout and latency > 0:
                result[comp] = min(result[comp], latency)
    return result


class Shape:
    """What the model needs of a topology whatever the placement: computed once, reused for
    every placement scored (``scheduler_py/algorithms/fastest.py`` scores hundreds)."""

    def __init__(self, topology: Topology) -> None:
        self.topology = topology
        self.order = component_order(topology)
        self.gain = _gains(topology, self.order)
        by_id = topology.component_by_id
        self.edges_from: dict[str, list] = defaultdict(list)
        for edge in topology.merged_edges:
            if not by_id[edge.target].is_system and not by_id[edge.source].is_system:
                self.edges_from[edge.source].append(edge)
        self.component = {e.id: e.component for e in topology.executors}
        self.spout = {c.id: c.is_spout for c in topology.components}
        self.system = {c.id: c.is_system for c in topology.components}
        self.executors = {
            c.id: [e.id for e in topology.executors_of(c.id)] for c in topology.components
        }
        self.ackers = list(self.executors.get(ACKER, []))


class _Round:
    """One round routed through a placement, with per-sender scope levels."""

    def __init__(
        self, problem: Problem, placement: Placement, inputs: ThroughputInputs, shape: Shape
    ):
        self.problem = problem
        self.topology = problem.topology
        self.shape = shape
        self.placement = placement
        self.inputs = inputs
        self.node_of = placement.node_of
        nodes = problem.node_by_id
        self.rack_of = {n: nodes[n].rack if n in nodes else "" for n in set(self.node_of.values())}
        self.order = shape.order
        self.gain = shape.gain
        self.crossing = 0.0
        self.handled: Mapping[str, float] = {}
        self.restricted: dict[tuple, list[str]] = {}
        """the restricted routes of the last :meth:`route` (what :func:`_widen` widens)"""
        self.only: str | None = None
        """the one spout executor that emits (:func:`_filled`); ``None``: every spout"""
        self.level: dict[tuple[str, str, str], int] = {}
        """(source component, target component, sender worker) -> scope level"""
        self.weight: dict[str, float] = {}
        """host -> its weight in the load-aware routes spanning several hosts (1 unless
        shifted off)"""
        self.shared_hosts: set[str] = set()
        """the hosts that receive a load-aware route spanning several hosts in the last
        :meth:`route` (where shifting can move tuples)"""
        self._placed: dict[str, list[str]] = {}
        self._groups: dict[tuple[str, str], dict[object, list[str]]] = {}
        self._scoped: dict[tuple, tuple[list[str], int]] = {}
        """((edge, sender worker), level) -> the route's targets and their scope level: the
        same for every routing of the round (widening and shifting route it again)"""
        self._by_host: dict[int, dict[str, list[str]]] = {}
        """id of a route's target list (lists the round keeps) -> its targets by host"""

    def placed(self, component: str) -> list[str]:
        """The component's executors the placement places, in the topology's order (one list
        per round: routes are grouped by the identity of their target lists)."""
        targets = self._placed.get(component)
        if targets is None:
            node_of = self.node_of
            targets = [t for t in self.shape.executors[component] if t in node_of]
            self._placed[component] = targets
        return targets

    def _scope_key(self, executor: str, scope: str) -> object:
        node = self.node_of.get(executor)
        if scope == "worker":
            return self.placement.worker_key(executor)
        if scope == "host":
            return node
        if scope == "rack":
            return self.rack_of.get(node or "")
        return None

    def _grouped(self, component: str, scope: str) -> dict[object, list[str]]:
        """The component's placed executors by their key in ``scope`` (each list in the
        placed order): a sender's targets in a scope are one look-up, not a pass over every
        target."""
        groups = self._groups.get((component, scope))
        if groups is None:
            groups = {}
            for target in self.placed(component):
                groups.setdefault(self._scope_key(target, scope), []).append(target)
            self._groups[(component, scope)] = groups
        return groups

    def targets_in_scope(self, source: str, component: str, level: int) -> tuple[list[str], int]:
        """The executors of ``component`` in the narrowest non-empty scope of ``source`` at
        or above ``level``, and that scope's level."""
        for index in range(level, len(SCOPES)):
            scope = SCOPES[index]
            if scope == "everything":
                return self.placed(component), index
            chosen = self._grouped(component, scope).get(self._scope_key(source, scope))
            if chosen:
                return chosen, index
        return self.placed(component), len(SCOPES) - 1

    def route(self) -> tuple[dict[str, float], dict[tuple, float], dict[int, list[str]]]:
        """``(tuples each executor handles, {(sender worker, id of a target list): tuples per
        target}, {id: target list})``: a sender spreads what it sends on a route over the
        route's target list, one share per target. The restricted routes (``(edge, sender
        worker) -> chosen targets`` below everything) go to :attr:`restricted`. Spreads are
        summed per sender worker and list, so a fields grouping between 50 and 100 executors
        is one spread per sending worker, not 5,000 flows; :func:`_spread_loads` turns them
        into loads per resource."""
        shape, loadaware, node_of = self.shape, self.inputs.loadaware, self.node_of
        worker = self.placement.worker_key
        handled: dict[str, float] = defaultdict(float)
        spread: dict[tuple, float] = defaultdict(float)
        lists: dict[int, list[str]] = {}
        restricted: dict[tuple, list[str]] = {}
        split: dict[int, list[tuple[list[str], float]]] = {}
        scoped = self._scoped
        self.shared_hosts = set()
        for component in self.order:
            sources = [e for e in shape.executors[component] if e in node_of]
            if shape.spout[component]:
                for source in sources:
                    if self.only is None or source == self.only:
                        handled[source] += 1.0
            for edge in shape.edges_from.get(component, ()):
                targets = self.placed(edge.target)
                if not targets:
                    continue
                gain = self.gain.get((edge.source, edge.target), 1.0)
                per_target: dict[int, float] = defaultdict(float)
                first = targets[:1]
                for source in sources:
                    amount = handled[source] * gain
                    if amount <= 0:
                        continue
                    sender = worker(source)
                    if edge.grouping == "all":
                        chosen, share = targets, amount
                    elif edge.grouping == "global":
                        chosen, share = first, amount
                    elif loadaware and edge.grouping in SHUFFLE_LIKE:
                        key = (edge.source, edge.target, sender)
                        at = (key, self.level.get(key, 0))
                        if at not in scoped:  # the scope depends on the sender's worker only
                            scoped[at] = self.targets_in_scope(source, edge.target, at[1])
                        chosen, level = scoped[at]
                        if level < len(SCOPES) - 1:
                            restricted[key] = chosen
                        parts = split.get(id(chosen))
                        if parts is None:
                            parts = split[id(chosen)] = self._weighted(chosen)
                        for part, fraction in parts:
                            lists[id(part)] = part
                            per_target[id(part)] += amount * fraction
                            spread[(sender, id(part))] += amount * fraction
                        continue
                    else:
                        chosen, share = targets, amount / len(targets)
                    lists[id(chosen)] = chosen
                    per_target[id(chosen)] += share
                    spread[(sender, id(chosen))] += share
                for list_id, share in per_target.items():
                    for target in lists[list_id]:
                        handled[target] += share
        self.restricted = restricted
        return handled, spread, lists

    def snapshot(self) -> tuple:
        """The round's scope levels and weights, and what the last :meth:`route` left on it
        (to :meth:`restore` when a trial step is not kept)."""
        return (
            dict(self.level),
            dict(self.weight),
            self.handled,
            self.crossing,
            self.restricted,
            self.shared_hosts,
        )

    def restore(self, saved: tuple) -> None:
        (
            self.level,
            self.weight,
            self.handled,
            self.crossing,
            self.restricted,
            self.shared_hosts,
        ) = saved

    def _weighted(self, chosen: list[str]) -> list[tuple[list[str], float]]:
        """A load-aware route's targets as ``(targets, share of what the sender sends, per
        target)``: one part with an even share when they are on one host; else one part per
        host, each target's share its host's :attr:`weight` over the targets' summed weights
        (and the hosts noted in :attr:`shared_hosts`)."""
        by_host = self._by_host.get(id(chosen))
        if by_host is None:
            by_host = self._by_host[id(chosen)] = {}
            for target in chosen:
                by_host.setdefault(self.node_of[target], []).append(target)
        if len(by_host) == 1:
            return [(chosen, 1.0 / len(chosen))]
        self.shared_hosts.update(by_host)
        if not any(host in self.weight for host in by_host):
            return [(chosen, 1.0 / len(chosen))]
        weight = self.weight
        total = sum(weight.get(host, 1.0) * len(part) for host, part in by_host.items())
        return [(part, weight.get(host, 1.0) / total) for host, part in by_host.items()]


def measured_gains(topology: Topology) -> dict[tuple[str, str], float]:
    """Per user edge, the tuples it carries per tuple its source handles (a spout: emits) as
    the measured pair traffic shows them — what the topology kept of them
    (:attr:`~scheduler_py.model.types.Topology.edge_gains`) when that traffic was replaced by
    the declared one; empty when no traffic was measured (the declared flows give the gains)."""
    if not topology.edge_gains and not topology.has_measured_traffic:
        return {}
    return _gains(topology, component_order(topology))  # the kept gains first, as it reads them


def _gains(topology: Topology, order: list[str]) -> dict[tuple[str, str], float]:
    """Per user edge, the tuples it carries per tuple its source handles (a spout: emits):
    those the topology kept of its measured traffic
    (:attr:`~scheduler_py.model.types.Topology.edge_gains`), else from its :func:`flows`."""
    if topology.edge_gains:
        return dict(topology.edge_gains)
    edge_flows = flows(topology)
    by_id = topology.component_by_id
    reaching: dict[str, float] = defaultdict(float)
    for (_, target), flow in edge_flows.items():
        reaching[target] += flow
    gains: dict[tuple[str, str], float] = {}
    for component in order:
        out = {k: v for k, v in edge_flows.items() if k[0] == component}
        if not out:
            continue
        if by_id[component].is_spout:
            base = by_id[component].parallelism if not topology.has_measured_traffic else 0.0
            base = base or max(out.values())
        else:
            base = reaching[component]
        for key, flow in out.items():
            copies = by_id[key[1]].parallelism if _grouping(topology, key) == "all" else 1
            gains[key] = flow / (base * copies) if base > 0 else 1.0
    return gains


def _grouping(topology: Topology, key: tuple[str, str]) -> str:
    for edge in topology.merged_edges:
        if (edge.source, edge.target) == key:
            return edge.grouping
    return "shuffle"


def _loads(state: _Round) -> tuple[dict[str, float], dict[str, float]]:
    """Per resource, what one round puts on it and its capacity (the tuples each executor
    handles are kept in ``state.handled``)."""
    inputs, constants = state.inputs, state.inputs.constants
    node_of, rack_of = state.node_of, state.rack_of
    handled, spread, lists = state.route()
    state.handled = handled
    load: dict[str, float] = defaultdict(float)
    component = state.shape.component
    for executor, tuples in handled.items():
        work = inputs.work_seconds.get(component[executor], 0.0)
        load[f"{node_of[executor]} cpu"] += tuples * (work + constants.tuple_cpu)
    state.crossing = _spread_loads(state, spread, lists, load)
    ackers = [e for e in state.shape.ackers if e in node_of]
    if inputs.acking and ackers:
        _acks(state, handled, ackers, load)
    nodes = state.problem.node_by_id
    worker = state.placement.worker_key
    workers_on: dict[str, int] = defaultdict(int)
    for node, _ in {worker(e) for e in node_of}:
        workers_on[node] += 1
    capacity: dict[str, float] = {}
    link = inputs.host_bandwidth * constants.link_efficiency
    for node in set(node_of.values()):
        known = nodes.get(node)
        cores = (known.cpu * (known.speed if known else 1.0) / 100.0) if known else 1.0
        capacity[f"{node} cpu"] = max(1e-6, cores - constants.worker_cpu * workers_on[node])
        own = known.bandwidth if known is not None and known.bandwidth else None
        host_link = own * constants.link_efficiency if own else link
        capacity[f"{node} out"] = capacity[f"{node} in"] = host_link
    if inputs.rack_bandwidth or inputs.rack_uplinks:
        for rack in set(rack_of.values()):
            nominal = inputs.rack_uplinks.get(rack) or inputs.rack_bandwidth
            if nominal:
                uplink = nominal * constants.link_efficiency
                capacity[f"{rack} out"] = capacity[f"{rack} in"] = uplink
    return dict(load), capacity


def _spread_loads(
    state: _Round,
    spread: Mapping[tuple, float],
    lists: Mapping[int, list[str]],
    load: dict[str, float],
) -> float:
    """Add to ``load`` what the spreads of :meth:`_Round.route` put on the resources — per
    tuple crossing workers :attr:`Constants.remote_cpu` at both ends, per tuple crossing hosts
    its bytes on both hosts' links and, between racks, on both uplinks — and return the
    payload tuples crossing hosts.

    A sender spreading ``S`` per target over a list of ``N`` targets, ``c(x)`` of them in its
    worker, host or rack ``x``, sends ``S (N - c(x))`` out of ``x``; a worker, host or rack
    ``x`` receives ``c(x) (T - S(x))`` of the list's total ``T`` (less what its own senders
    spread). That is the sum over every (sender, target) pair, in one pass over the
    senders and one over the targets per list."""
    constants, node_of, rack_of = state.inputs.constants, state.node_of, state.rack_of
    worker = state.placement.worker_key
    tuple_bytes = state.inputs.payload_bytes + constants.framing_bytes
    racks = (
        state.inputs.rack_bandwidth is not None
        or bool(state.inputs.rack_uplinks)
        or len(set(rack_of.values())) > 1
    )
    by_list: dict[int, list[tuple[tuple, float]]] = defaultdict(list)
    for (sender, list_id), share in spread.items():
        by_list[list_id].append((sender, share))
    crossing = 0.0
    for list_id, senders in by_list.items():
        chosen = lists[list_id]
        size = len(chosen)
        in_worker: dict[tuple, int] = defaultdict(int)
        in_host: dict[str, int] = defaultdict(int)
        for target in chosen:
            in_worker[worker(target)] += 1
            in_host[node_of[target]] += 1
        total = 0.0
        from_worker: dict[tuple, float] = defaultdict(float)
        from_host: dict[str, float] = defaultdict(float)
        for sender, share in senders:
            total += share
            from_worker[sender] += share
            from_host[sender[0]] += share
        for sender, share in senders:
            remote = share * (size - in_worker.get(sender, 0))
            if remote > 0:
                load[f"{sender[0]} cpu"] += remote * constants.remote_cpu
            away = share * (size - in_host.get(sender[0], 0))
            if away > 0:
                crossing += away
                load[f"{sender[0]} out"] += away * tuple_bytes
        for receiver, count in in_worker.items():
            remote = count * (total - from_worker.get(receiver, 0.0))
            if remote > 0:
                load[f"{receiver[0]} cpu"] += remote * constants.remote_cpu
        for host, count in in_host.items():
            arriving = count * (total - from_host.get(host, 0.0))
            if arriving > 0:
                load[f"{host} in"] += arriving * tuple_bytes
        if racks:
            _spread_uplinks(senders, chosen, node_of, rack_of, total, load, tuple_bytes)
    return crossing


def _spread_uplinks(
    senders: list[tuple[tuple, float]],
    chosen: list[str],
    node_of: Mapping[str, str],
    rack_of: Mapping[str, str],
    total: float,
    load: dict[str, float],
    tuple_bytes: float,
) -> None:
    """The rack uplinks' share of :func:`_spread_loads`: what leaves and enters each rack."""
    size = len(chosen)
    in_rack: dict[str, int] = defaultdict(int)
    for target in chosen:
        in_rack[rack_of.get(node_of[target])] += 1
    from_rack: dict[str, float] = defaultdict(float)
    for sender, share in senders:
        from_rack[rack_of.get(sender[0])] += share
    for rack, share in from_rack.items():
        leaving = share * (size - in_rack.get(rack, 0))
        if leaving > 0:
            load[f"{rack} out"] += leaving * tuple_bytes
    for rack, count in in_rack.items():
        entering = count * (total - from_rack.get(rack, 0.0))
        if entering > 0:
            load[f"{rack} in"] += entering * tuple_bytes


def _acks(
    state: _Round, handled: Mapping[str, float], ackers: list[str], load: dict[str, float]
) -> None:
    """Storm's acking: a spout sends one init per tuple and receives one completion; every
    bolt executor sends one ack per tuple it handles; each goes to an acker chosen by the
    tuple's id (uniformly over the ackers)."""
    constants, node_of, rack_of = state.inputs.constants, state.node_of, state.rack_of
    shape = state.shape
    share = 1.0 / len(ackers)
    sent: dict[tuple[str, bool], float] = defaultdict(float)  # (node, spout) -> tuples
    for executor, tuples in handled.items():
        component = shape.component[executor]
        if not shape.system[component]:
            sent[(node_of[executor], shape.spout[component])] += tuples
    for (node, spout), tuples in sent.items():
        messages = 2.0 * tuples if spout else tuples
        for acker in ackers:
            load[f"{node_of[acker]} cpu"] += messages * share * constants.ack_cpu
            size = tuples * share * constants.ack_bytes
            _cross(load, node, node_of[acker], rack_of, size)
            if spout:  # the completion goes back to the spout
                _cross(load, node_of[acker], node, rack_of, size)


def _cross(
    load: dict[str, float], sender: str, receiver: str, rack_of: Mapping[str, str], size: float
) -> None:
    if sender == receiver:
        return
    load[f"{sender} out"] += size
    load[f"{receiver} in"] += size
    if rack_of.get(sender) != rack_of.get(receiver):
        load[f"{rack_of.get(sender)} out"] += size
        load[f"{rack_of.get(receiver)} in"] += size


RATE_TIE = 1e-9
"""relative difference under which two resources limit the rate alike: the bottleneck is
then the first by name, whatever the order the loads were summed in"""


def _rate(load: Mapping[str, float], capacity: Mapping[str, float]) -> tuple[float, str]:
    rounds = {r: capacity[r] / amount for r, amount in load.items() if r in capacity and amount > 0}
    if not rounds:
        return math.inf, ""
    best = min(rounds.values())
    return best, min(r for r, value in rounds.items() if value <= best * (1 + RATE_TIE))


def throughput(
    problem: Problem,
    placement: Placement,
    inputs: ThroughputInputs | None = None,
    shape: Shape | None = None,
) -> Throughput:
    """The placement's sustainable spout rate (spout tuples/s) and its bottleneck resource;
    ``shape``: the topology's :class:`Shape` when the caller scores many placements."""
    inputs = inputs or ThroughputInputs()
    state = _Round(problem, placement, inputs, shape or Shape(problem.topology))
    spouts = sum(
        1
        for component, executors in state.shape.executors.items()
        if state.shape.spout[component]
        for e in executors
        if e in state.node_of
    )
    load, capacity = _loads(state)
    rounds, bottleneck = _rate(load, capacity)
    widened = shifted = 0
    if inputs.loadaware and _queues_can_fill(state, inputs, spouts):
        load, rounds, bottleneck, widened = _fixed_point(
            state, (load, rounds, bottleneck), MAX_WIDENINGS, _widen
        )
    if inputs.loadaware and (inputs.in_flight is None or inputs.in_flight >= SHIFT_PENDING):
        load, rounds, bottleneck, shifted = _fixed_point(
            state, (load, rounds, bottleneck), MAX_SHIFTS, _shift
        )
    crossing = state.crossing / max(spouts, 1)
    if math.isinf(rounds):
        return Throughput(math.inf, "", {}, widened, crossing, shifted)
    if 1 < spouts <= FAIR_SPOUTS:
        total, first, utilisation = _filled(state, capacity, load)
        return Throughput(total, first, utilisation, widened, crossing, shifted)
    utilisation = {r: load[r] * rounds / capacity[r] for r in sorted(load) if r in capacity}
    return Throughput(rounds * max(spouts, 1), bottleneck, utilisation, widened, crossing, shifted)


def _fixed_point(
    state: _Round,
    start: tuple[dict[str, float], float, str],
    steps: int,
    step: Callable[[_Round, str], bool],
) -> tuple[dict[str, float], float, str, int]:
    """Apply ``step`` to the host whose CPU is the bottleneck, routing the round again after
    each, while the rate rises (``steps`` at most); a step that does not raise it is undone.
    Returns the kept loads, rate and bottleneck, and the steps kept."""
    load, rounds, bottleneck = start
    kept = 0
    for _ in range(steps):
        if not bottleneck.endswith(" cpu"):
            break
        saved = state.snapshot()
        if not step(state, bottleneck.removesuffix(" cpu")):
            break
        trial_load, trial_capacity = _loads(state)
        trial_rounds, trial_bottleneck = _rate(trial_load, trial_capacity)
        if trial_rounds <= rounds * (1 + 1e-9):
            state.restore(saved)
            break
        load, rounds, bottleneck, kept = trial_load, trial_rounds, trial_bottleneck, kept + 1
    return load, rounds, bottleneck, kept


def _shift(state: _Round, host: str) -> bool:
    """Scale ``host``'s weight in the load-aware routes spanning several hosts by
    :data:`SHIFT_FACTOR`; whether it receives one (the routes of the last routing)."""
    if host not in state.shared_hosts:
        return False
    state.weight[host] = state.weight.get(host, 1.0) * SHIFT_FACTOR
    return True


def _filled(
    state: _Round, capacity: Mapping[str, float], total: Mapping[str, float]
) -> tuple[float, str, dict[str, float]]:
    """Each spout executor's own rate by progressive filling: every spout's rate grows alike
    until a resource saturates; the spouts using it stop there and the others go on (each
    spout is held back by its own ``max.spout.pending`` and the queues on its own path). The
    sum of the rates, the resource that saturated first, and each resource's utilisation.

    ``total``: what one tuple of every spout puts on each resource, as routed now. Loads are
    linear in the tuples each executor handles, so the last spout's are ``total`` less the
    others' (one routing fewer per plan scored; :data:`LOAD_RESIDUE` of a resource's total
    left by the subtraction counts as none)."""
    spouts = [
        e
        for component, executors in state.shape.executors.items()
        if state.shape.spout[component]
        for e in executors
        if e in state.node_of
    ]
    per_spout: dict[str, dict[str, float]] = {}
    for spout in spouts[:-1]:
        state.only = spout
        per_spout[spout] = _loads(state)[0]
    state.only = None
    rest = dict(total)
    for loads in per_spout.values():
        for resource, amount in loads.items():
            rest[resource] = rest.get(resource, 0.0) - amount
    per_spout[spouts[-1]] = {
        resource: amount
        for resource, amount in rest.items()
        if amount > LOAD_RESIDUE * total.get(resource, 0.0)
    }
    residual = dict(capacity)
    rate = dict.fromkeys(spouts, 0.0)
    active = set(spouts)
    first = ""
    while active:
        demand: dict[str, float] = defaultdict(float)
        for spout in active:
            for resource, amount in per_spout[spout].items():
                if resource in residual and amount > 0:
                    demand[resource] += amount
        if not demand:
            return math.inf, first, {}
        steps = {r: max(0.0, residual[r]) / amount for r, amount in demand.items()}
        step = min(steps.values())
        limit = min(r for r, value in steps.items() if value <= step * (1 + RATE_TIE))
        for spout in active:
            rate[spout] += step
        for resource, amount in demand.items():
            residual[resource] -= step * amount
        saturated = {r for r in demand if residual[r] <= 1e-9 * capacity[r]}
        saturated.add(limit)
        first = first or limit
        active = {
            spout for spout in active if not any(per_spout[spout].get(r, 0) > 0 for r in saturated)
        }
    utilisation = {r: 1.0 - residual[r] / capacity[r] for r in sorted(residual)}
    return sum(rate.values()), first, {r: u for r, u in utilisation.items() if u > 0}


def _queues_can_fill(state: _Round, inputs: ThroughputInputs, spouts: int) -> bool:
    """Whether some executor's receive queue can pass the higher bound: the in-flight spout
    tuples times the most an executor handles per spout tuple reach ``higher_bound`` ×
    ``receive_buffer`` (always, with no bound on the tuples in flight)."""
    if inputs.in_flight is None:
        return True
    most = max(state.handled.values(), default=0.0) / max(spouts, 1)
    return inputs.in_flight * most >= inputs.higher_bound * inputs.receive_buffer


def _widen(state: _Round, host: str) -> bool:
    """Widen every restricted load-aware route whose chosen targets include an executor on
    ``host`` to the next scope that holds more targets; whether any was widened (the
    restricted routes are those of the last routing, at the current levels)."""
    changed = False
    for key, chosen in list(state.restricted.items()):
        if not any(state.node_of[t] == host for t in chosen):
            continue
        source = next(
            e
            for e in state.shape.executors[key[0]]
            if e in state.node_of and state.placement.worker_key(e) == key[2]
        )
        _, level = state.targets_in_scope(source, key[1], state.level.get(key, 0))
        for wider in range(level + 1, len(SCOPES)):
            more, reached = state.targets_in_scope(source, key[1], wider)
            if len(more) > len(chosen):
                state.level[key] = reached
                changed = True
                break
    return changed


def renamed_bottleneck(bottleneck: str, names: Mapping[str, str]) -> str:
    """A bottleneck resource (``"<node> cpu"``, ``"<node> out"``, ``"<rack> uplink in"`` …)
    with its node under the name ``names`` gives it (a canonical name's node id, a supervisor
    id's host); a resource whose node ``names`` lacks, a rack's uplink, is kept as it is."""
    resource, _, kind = bottleneck.rpartition(" ")
    return f"{names.get(resource, resource)} {kind}" if resource else bottleneck


def rate_text(rate: Any) -> str:
    """A predicted spout rate for people: ``12,345``, or ``unbounded`` (no finite rate, as
    the model and its JSON reports give it: ``inf`` or ``None``)."""
    finite = isinstance(rate, int | float) and math.isfinite(rate)
    return f"{rate:,.0f}" if finite else UNBOUNDED


UNBOUNDED = "unbounded"
""":func:`rate_text` of a rate no resource limits"""
