"""Aggregate (contract §4) → the model's measured costs; the brain's side of monitoring.

:func:`measured_topology` is what the scheduling round's view
(``scheduler_py/scheduling/view.py``) calls, through :meth:`MeasuredCostsSource.costs_for`
(the :class:`~scheduler_py.scheduling.interfaces.CostSource` interface), when the service runs
with ``--zookeeper``:

* it asks a :class:`MeasuredCostsSource` for the topology's aggregate
  (:class:`ZooKeeperAggregates` reads ``<root>/aggregate/<topology-id>`` and caches it a
  few seconds; :class:`StaticAggregates` serves aggregates held in memory);
* the aggregate is used only when it is **fresh**: ``computed_at_ms`` and its newest window
  both within ``scheduler.brain.metrics.max.age.secs`` (topology conf, default 180 s) of
  now, with at least one window and one executor;
* ``executor_cpu``: the aggregate's ``cpu_percent`` for every model executor whose Storm
  task range it lists (exact range, else the model executor containing the aggregate's
  range); executors it does not list keep their declared CPU;
* ``pair_traffic``: bytes/s when the aggregate has any bytes, else tuples/s (a pair with
  tuples but no bytes is priced at the aggregate's mean bytes per tuple). Measured traffic
  replaces Eq. 1's uniform split for all pairs, so a *source* executor the aggregate does
  not list (its worker is missing) gets, towards each executor of a downstream component,
  the mean measured per-pair rate of that component edge; component edges carry the
  measured totals (edges seen only in measurements are added, grouping ``unknown``);
* ``work_seconds``: each component's measured CPU per tuple for the throughput model, from
  its CPU and its tuples/s (also when the traffic is in bytes/s), a bolt's at most Storm's
  execute latency (the aggregate's ``execute_ms``;
  :func:`~scheduler_py.model.throughput.measured_work_seconds`);
* ``payload_bytes``: the bytes of a user tuple between workers, from the workers' Netty
  totals (the aggregate's ``wire``, ``monitoring/wire_size.py``) — what the throughput
  model's links carry per tuple (``algorithms/fastest.py`` plans for that one size instead of
  the sizes it assumes when none is known);
* the pairs are exact (the hooks, ``traffic_source: exact``), estimated from Storm's counts
  (``estimated``, counts mode: ``monitoring/pair_estimate.py``) or both (``mixed``); an edge the
  aggregate lists in ``declared_edges`` (a grouping the estimate does not model, missing or
  reset counts) is priced as declared: the uniform split (paper 000 §2.2, Eq. 1) of its total
  from the counts, else of its declared weight scaled like the measured edges
  (:func:`~scheduler_py.model.flows.declared_weights`); with neither, the topology's traffic
  stays declared (its CPU is still measured);
* anything unusable (no aggregate, stale, malformed, ZooKeeper down) leaves the declared
  costs in place, and the note says why; the note ends up in the plan's reason as
  ``costs: measured (6 windows, 60 s, bytes/s, exact pairs)`` or ``costs: declared (…)``; a
  stale one
  reads ``declared (stale: aggregate 95 s old > scheduler.brain.metrics.max.age.secs = 30)``
  (:func:`stale_reason`, which the reconfiguration trigger asks too, through
  :meth:`MeasuredCostsSource.stale`: it does not fire on a stale aggregate).
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from scheduler_py.config import keys
from scheduler_py.model.flows import declared_weights
from scheduler_py.model.throughput import measured_work_seconds
from scheduler_py.model.types import Edge, Topology
from scheduler_py.monitoring import znodes

log = logging.getLogger(__name__)

MAX_AGE_KEY = keys.METRICS_MAX_AGE.name
DEFAULT_MAX_AGE_SECS = float(keys.METRICS_MAX_AGE.default)
FUTURE_TOLERANCE_MS = 60_000
"""An aggregate up to this far in the future (clock skew between hosts) still counts."""

ExecutorKey = tuple[int, int]


class NotUsable(ValueError):
    """The aggregate cannot price this topology; the message says why."""


# --------------------------------------------------------------------------- sources


class MeasuredCostsSource:
    """Where the brain finds aggregates. Subclasses implement :meth:`aggregate`."""

    def aggregate(self, topology_id: str) -> Mapping[str, Any] | None:
        """The topology's aggregate document, or ``None`` when there is none."""
        raise NotImplementedError

    def now_ms(self) -> int:
        return int(time.time() * 1000)

    def missing_reason(self, topology_id: str) -> str:
        """Why :meth:`aggregate` last answered ``None`` for the topology (the declared
        costs' note)."""
        return "no aggregate"

    def costs_for(
        self,
        topology: Topology,
        storm_executor: Mapping[str, ExecutorKey],
        conf: Mapping[str, Any],
    ) -> tuple[Topology, str]:
        """The topology with this source's measured costs (:func:`measured_topology`)."""
        return measured_topology(topology, storm_executor, conf, self)

    def stale(self, aggregate: Mapping[str, Any], conf: Mapping[str, Any]) -> str | None:
        """Why ``aggregate`` is too old for a topology with ``conf`` (:func:`stale_reason`,
        the rule :func:`measured_topology` prices by), or ``None`` while it is fresh."""
        try:
            return stale_reason(aggregate, self.now_ms(), max_age_secs(conf))
        except NotUsable as error:
            return str(error)

    def connect(self) -> None:
        """Start opening connections (the service calls it at start); none here."""

    def close(self) -> None:
        """Release connections (the service calls it on shutdown)."""


class StaticAggregates(MeasuredCostsSource):
    """Aggregates held in memory (replays, offline planning, tests); ``clock`` returns
    "now" in ms."""

    def __init__(
        self,
        aggregates: Mapping[str, Mapping[str, Any]] | None = None,
        clock: Callable[[], int] | None = None,
    ) -> None:
        self.aggregates = dict(aggregates or {})
        self._clock = clock

    def aggregate(self, topology_id: str) -> Mapping[str, Any] | None:
        return self.aggregates.get(topology_id)

    def now_ms(self) -> int:
        return self._clock() if self._clock else super().now_ms()


class ZooKeeperAggregates(MeasuredCostsSource):
    """Reads ``<root>/aggregate/<topology-id>`` with kazoo, caching every answer read
    (also "no aggregate" and read errors) for ``cache_secs``. The connection is opened in
    the background on first use and kazoo reconnects by itself; while it is down the answer
    is ``None`` at once (declared costs), and a read never waits longer than ``timeout``.
    """

    def __init__(
        self,
        hosts: str,
        root: str = znodes.DEFAULT_ROOT,
        cache_secs: float = 5.0,
        timeout: float = 1.0,
    ) -> None:
        self.hosts = hosts
        self.root = znodes.normalise_root(root)
        self.cache_secs = cache_secs
        self.timeout = timeout
        self._client = None
        self._lock = threading.Lock()
        self._cache: dict[str, tuple[float, Mapping[str, Any] | None]] = {}
        self._problems: dict[str, str] = {}
        """topology id -> why its last answer was ``None``, when not for want of an aggregate"""
        self._warned = False

    def connect(self) -> None:
        """Open the ZooKeeper connection in the background now, rather than on the first
        round's read, which would then plan on declared costs ("not connected")."""
        self._connected_client()

    def _connected_client(self):
        from scheduler_py.monitoring.zk import connect_in_background

        with self._lock:
            if self._client is None:
                self._client = connect_in_background(self.hosts)
            client = self._client
        return client if client.connected else None

    def aggregate(self, topology_id: str) -> Mapping[str, Any] | None:
        now = time.monotonic()
        cached = self._cache.get(topology_id)
        if cached is not None and now - cached[0] < self.cache_secs:
            return cached[1]
        client = self._connected_client()
        if client is None:  # not cached: answered at once, and the connection may come up
            problem = f"not connected to ZooKeeper {self.hosts}"
            self._warn(f"{problem} (yet)")
            self._problems[topology_id] = problem
            return None
        self._problems.pop(topology_id, None)
        document = self._read(client, topology_id)
        self._cache[topology_id] = (now, document)
        return document

    def _read(self, client: Any, topology_id: str) -> Mapping[str, Any] | None:
        from kazoo.exceptions import NoNodeError

        from scheduler_py.monitoring.records import CorruptRecord, decode

        path = znodes.aggregate_path(self.root, topology_id)
        try:
            data, _ = client.get_async(path).get(timeout=self.timeout)
            document = decode(data)
        except NoNodeError:
            return None
        except CorruptRecord as error:
            log.warning("%s: unreadable aggregate: %s", path, error)
            return None
        except Exception as error:  # timeouts, connection loss: declared costs this round
            problem = f"reading {path} from ZooKeeper {self.hosts} failed: {type(error).__name__}"
            self._warn(f"{problem}: {error}")
            self._problems[topology_id] = problem
            return None
        self._warned = False
        return document if isinstance(document, dict) else None

    def missing_reason(self, topology_id: str) -> str:
        return self._problems.get(topology_id, "no aggregate")

    def _warn(self, message: str) -> None:
        if not self._warned:
            log.warning("measured costs unavailable: %s", message)
            self._warned = True

    def close(self) -> None:
        from scheduler_py.monitoring.zk import close_quietly

        with self._lock:
            client, self._client = self._client, None
        close_quietly(client)


# --------------------------------------------------------------------------- mapping


@dataclass(frozen=True)
class MeasuredCosts:
    """Model costs read from one aggregate."""

    executor_cpu: Mapping[str, float]
    pair_traffic: Mapping[tuple[str, str], float]
    unit: str
    """``bytes/s`` or ``tuples/s``"""
    windows: int
    seconds: float
    declared: tuple[str, ...] = ()
    """model executors the aggregate does not list (they keep their declared CPU)"""
    traffic_source: str = "exact"
    """``exact`` (hooks), ``estimated`` (Storm's counts), ``mixed``, or ``declared``"""
    declared_edges: tuple[str, ...] = ()
    """component edges ``a->b`` priced as declared (the aggregate's ``declared_edges``)"""
    tuple_traffic: Mapping[tuple[str, str], float] = field(default_factory=dict)
    """:attr:`pair_traffic` in tuples/s whatever :attr:`unit` is: what the CPU per tuple is
    measured against"""
    execute_seconds: Mapping[str, float] = field(default_factory=dict)
    """component -> Storm's mean execute latency in seconds (the aggregate's per-component
    ``execute_ms``: ``docs/monitoring-format.md``)"""
    payload_bytes: float = 0.0
    """bytes of a user tuple between workers, framing left out (the aggregate's
    ``wire.payload_bytes``, ``monitoring/wire_size.py``); 0: not measured"""

    @property
    def note(self) -> str:
        text = f"measured ({self.windows} windows, {self.seconds:.0f} s, {self.unit}"
        text += f", {_SOURCE_NOTES.get(self.traffic_source, self.traffic_source)}"
        if self.payload_bytes:
            text += f", {self.payload_bytes:.0f} B per tuple between workers"
        if self.declared_edges:
            text += f"; edges priced as declared: {', '.join(self.declared_edges)}"
        if self.declared:
            text += f"; {len(self.declared)} executor(s) not measured"
        return text + ")"


_SOURCE_NOTES = {
    "exact": "exact pairs",
    "estimated": "pairs estimated from Storm's counts",
    "mixed": "pairs exact and estimated from Storm's counts",
    "none": "no pair traffic",
    "declared": "traffic declared",
}


def max_age_secs(conf: Mapping[str, Any]) -> float:
    raw = conf.get(MAX_AGE_KEY)
    if raw in (None, ""):
        return DEFAULT_MAX_AGE_SECS
    try:
        value = float(raw)
    except (TypeError, ValueError) as error:
        raise NotUsable(f"{MAX_AGE_KEY} must be a number of seconds, found {raw!r}") from error
    if not math.isfinite(value) or value <= 0:
        raise NotUsable(f"{MAX_AGE_KEY} must be > 0, found {raw!r}")
    return value


def _number(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise NotUsable(f"malformed aggregate: {what} is {value!r}")
    return float(value)


def _key(value: Any, what: str) -> ExecutorKey:
    if (
        not isinstance(value, (list, tuple))
        or len(value) != 2
        or not all(isinstance(v, int) and not isinstance(v, bool) for v in value)
    ):
        raise NotUsable(f"malformed aggregate: {what} is {value!r}")
    return int(value[0]), int(value[1])


def _entries(aggregate: Mapping[str, Any], name: str) -> list[Any]:
    """The aggregate's list ``name`` (none: empty)."""
    value = aggregate.get(name)
    if value is None:
        return []
    if not isinstance(value, list):
        raise NotUsable(f"malformed aggregate: {name} is {value!r:.60}, expected a list")
    return value


def _stamps(aggregate: Mapping[str, Any]) -> tuple[tuple[str, float], ...]:
    computed = _number(aggregate.get("computed_at_ms"), "computed_at_ms")
    newest = _number(aggregate.get("window_end_ms", computed), "window_end_ms")
    return ("aggregate", computed), ("newest window", newest)


def stale_reason(aggregate: Mapping[str, Any], now_ms: int, max_age: float) -> str | None:
    """Why ``aggregate`` is stale — its ``computed_at_ms`` or its newest window older than
    ``max_age`` seconds (``scheduler.brain.metrics.max.age.secs``) — with its age; ``None``
    when it is not. A malformed time stamp raises :class:`NotUsable`."""
    for label, stamp in _stamps(aggregate):
        age = now_ms - stamp
        if age > max_age * 1000.0:
            return f"stale: {label} {age / 1000:.0f} s old > {MAX_AGE_KEY} = {max_age:g}"
    return None


def check_fresh(aggregate: Any, now_ms: int, max_age: float) -> None:
    """Raise :class:`NotUsable` unless ``aggregate`` is a fresh, non-empty aggregate."""
    if not isinstance(aggregate, Mapping):
        raise NotUsable("no aggregate")
    if aggregate.get("v") != 1:
        raise NotUsable(f"aggregate version {aggregate.get('v')!r} is not 1")
    problem = stale_reason(aggregate, now_ms, max_age)
    if problem:
        raise NotUsable(problem)
    for label, stamp in _stamps(aggregate):
        if now_ms - stamp < -FUTURE_TOLERANCE_MS:
            raise NotUsable(f"{label} {(stamp - now_ms) / 1000:.0f} s in the future (clock skew?)")
    windows = aggregate.get("windows")
    if not isinstance(windows, int) or windows < 1:
        raise NotUsable("no window in the aggregate's sliding window (monitors silent?)")
    if not aggregate.get("executors"):
        raise NotUsable("the aggregate lists no executor")


def costs_from_aggregate(
    aggregate: Any,
    topology: Topology,
    storm_executor: Mapping[str, ExecutorKey],
    now_ms: int,
    max_age: float = DEFAULT_MAX_AGE_SECS,
) -> MeasuredCosts:
    """Translate a fresh aggregate to model costs (see the module docstring)."""
    check_fresh(aggregate, now_ms, max_age)
    to_model = _RangeMap(storm_executor)

    cpu: dict[str, float] = {}
    for item in _entries(aggregate, "executors"):
        if not isinstance(item, Mapping):
            raise NotUsable(f"malformed aggregate: executor {item!r}")
        key = _key([item.get("task_start"), item.get("task_end")], "an executor's task range")
        eid = to_model.get(key)
        if eid is not None:
            cpu[eid] = cpu.get(eid, 0.0) + max(0.0, _number(item.get("cpu_percent"), "cpu_percent"))

    raw: list[tuple[str, str, float, float]] = []
    for item in _entries(aggregate, "pairs"):
        if not isinstance(item, Mapping):
            raise NotUsable(f"malformed aggregate: pair {item!r}")
        src = to_model.get(_key(item.get("src"), "a pair's src"))
        dst = to_model.get(_key(item.get("dst"), "a pair's dst"))
        tuples = max(0.0, _number(item.get("tuples_per_s", 0.0), "tuples_per_s"))
        size = max(0.0, _number(item.get("bytes_per_s", 0.0), "bytes_per_s"))
        if src is not None and dst is not None:
            raw.append((src, dst, tuples, size))

    total_tuples = sum(t for _, _, t, b in raw if b > 0)
    total_bytes = sum(b for _, _, _, b in raw)
    pairs: dict[tuple[str, str], float] = defaultdict(float)
    tuple_pairs: dict[tuple[str, str], float] = defaultdict(float)
    for src, dst, tuples, _ in raw:
        tuple_pairs[(src, dst)] += tuples
    if total_bytes > 0:
        unit = "bytes/s"
        per_tuple = total_bytes / total_tuples if total_tuples else 0.0
        for src, dst, tuples, size in raw:
            pairs[(src, dst)] += size if size > 0 else tuples * per_tuple
    else:
        unit = "tuples/s"
        pairs = defaultdict(float, tuple_pairs)
    measured_sources = set(cpu)
    _fill_unmeasured_sources(topology, pairs, measured_sources)
    _fill_unmeasured_sources(topology, tuple_pairs, measured_sources)
    source = aggregate.get("traffic_source", "exact")
    if not isinstance(source, str):
        raise NotUsable(f"malformed aggregate: traffic_source is {source!r}")
    flagged = _declared_edges(aggregate, topology)
    if flagged:
        per_tuple = (
            (total_bytes / total_tuples if total_tuples else 0.0) if unit == "bytes/s" else 1
        )
        if not _price_declared(topology, pairs, flagged, per_tuple):
            pairs.clear()
            source = "declared"
        if not _price_declared(topology, tuple_pairs, flagged, 1.0):
            tuple_pairs.clear()

    declared = tuple(e.id for e in topology.executors if e.id not in cpu)
    end = _number(aggregate.get("window_end_ms"), "window_end_ms")
    start = _number(aggregate.get("window_start_ms", end), "window_start_ms")
    return MeasuredCosts(
        executor_cpu=cpu,
        pair_traffic={k: v for k, v in pairs.items() if v > 0},
        unit=unit,
        windows=int(aggregate["windows"]),
        seconds=max(0.0, (end - start) / 1000.0),
        declared=declared,
        traffic_source=source,
        declared_edges=tuple(f"{a}->{b}" for a, b in sorted(flagged)),
        tuple_traffic={k: v for k, v in tuple_pairs.items() if v > 0},
        execute_seconds=_execute_seconds(aggregate, topology),
        payload_bytes=_payload_bytes(aggregate),
    )


def _payload_bytes(aggregate: Mapping[str, Any]) -> float:
    """The aggregate's ``wire.payload_bytes`` (contract §4), 0 when it has none."""
    wire = aggregate.get("wire")
    if wire is None:
        return 0.0
    if not isinstance(wire, Mapping):
        raise NotUsable(f"malformed aggregate: wire is {wire!r:.60}, expected a map")
    if wire.get("payload_bytes") is None:
        return 0.0
    return max(0.0, _number(wire["payload_bytes"], "wire.payload_bytes"))


def _execute_seconds(aggregate: Mapping[str, Any], topology: Topology) -> dict[str, float]:
    """component -> mean execute latency (s) of the aggregate's ``components`` that are
    components of ``topology`` and carry an ``execute_ms`` (bolts, counts mode)."""
    components = aggregate.get("components")
    if components is None:
        return {}
    if not isinstance(components, Mapping):
        raise NotUsable(f"malformed aggregate: components is {components!r:.60}, expected a map")
    known = {c.id for c in topology.components}
    result = {}
    for name, entry in components.items():
        if name not in known or not isinstance(entry, Mapping) or "execute_ms" not in entry:
            continue
        latency = _number(entry["execute_ms"], f"{name}'s execute_ms")
        if latency > 0:
            result[name] = latency / 1000.0
    return result


def _declared_edges(
    aggregate: Mapping[str, Any], topology: Topology
) -> dict[tuple[str, str], float | None]:
    """``(from, to) -> tuples/s`` (``None``: unknown) of the aggregate's ``declared_edges``
    that are edges between components of ``topology``."""
    components = {c.id for c in topology.components}
    flagged: dict[tuple[str, str], float | None] = {}
    for item in _entries(aggregate, "declared_edges"):
        if not isinstance(item, Mapping):
            raise NotUsable(f"malformed aggregate: declared edge {item!r}")
        key = (item.get("from"), item.get("to"))
        if key[0] not in components or key[1] not in components:
            continue
        total = item.get("tuples_per_s")
        total = None if total is None else max(0.0, _number(total, "a declared edge's total"))
        if key not in flagged:
            flagged[key] = total
        else:  # two streams of one component edge: a sum, unknown if either is
            known = flagged[key]
            flagged[key] = None if known is None or total is None else known + total
    return flagged


def _price_declared(
    topology: Topology,
    pairs: dict[tuple[str, str], float],
    flagged: Mapping[tuple[str, str], float | None],
    per_tuple: float,
) -> bool:
    """Replace the pairs of each flagged component edge by the uniform split of its total
    (its declared weight scaled like the measured edges when the counts gave none); ``False``
    when a total cannot be found (nothing measured to scale a declared weight by)."""
    component_of = {e.id: e.component for e in topology.executors}
    weights = declared_weights(topology)
    measured: dict[tuple[str, str], float] = defaultdict(float)
    for (src, dst), rate in list(pairs.items()):
        key = (component_of[src], component_of[dst])
        if key in flagged:
            del pairs[(src, dst)]
        else:
            measured[key] += rate
    basis = [(rate, weights[key]) for key, rate in measured.items() if weights.get(key)]
    scale = sum(r for r, _ in basis) / sum(w for _, w in basis) if basis else None
    for (a, b), total in flagged.items():
        if total is not None:
            rate = total * per_tuple
        elif scale is not None and (a, b) in weights:
            rate = weights[(a, b)] * scale
        else:
            return False
        senders, receivers = topology.executors_of(a), topology.executors_of(b)
        if not senders or not receivers:
            continue
        share = rate / (len(senders) * len(receivers))
        for sender in senders:
            for receiver in receivers:
                pairs[(sender.id, receiver.id)] += share
    return True


class _RangeMap:
    """Storm task range → model executor id: the exact range, else the model executor whose
    range contains it (a one-task fallback range of the aggregate)."""

    def __init__(self, storm_executor: Mapping[str, ExecutorKey]) -> None:
        self.exact = {tuple(key): eid for eid, key in storm_executor.items()}
        self.ranges = sorted((key[0], key[1], eid) for eid, key in storm_executor.items())

    def get(self, key: ExecutorKey) -> str | None:
        eid = self.exact.get(key)
        if eid is not None:
            return eid
        for start, end, candidate in self.ranges:
            if start <= key[0] and key[1] <= end:
                return candidate
        return None


def _fill_unmeasured_sources(
    topology: Topology, pairs: dict[tuple[str, str], float], measured: set[str]
) -> None:
    """Give each unmeasured source executor of a measured component edge the edge's mean
    measured per-pair rate towards every executor of the target component."""
    component_of = {e.id: e.component for e in topology.executors}
    edge_total: dict[tuple[str, str], float] = defaultdict(float)
    for (src, dst), rate in pairs.items():
        edge_total[(component_of[src], component_of[dst])] += rate
    for (source, target), total in list(edge_total.items()):
        if total <= 0 or source == target:
            continue
        senders = topology.executors_of(source)
        receivers = topology.executors_of(target)
        silent = [e for e in senders if e.id not in measured]
        heard = len(senders) - len(silent)
        if not silent or heard == 0:
            continue
        mean = total / (heard * len(receivers))
        for sender in silent:
            for receiver in receivers:
                pairs[(sender.id, receiver.id)] += mean


def apply_costs(topology: Topology, costs: MeasuredCosts) -> Topology:
    """``topology`` with the measured CPU, pair traffic, component-edge totals and CPU per
    tuple (from the tuple rates, whatever unit the traffic is in)."""
    component_of = {e.id: e.component for e in topology.executors}
    totals: dict[tuple[str, str], float] = defaultdict(float)
    for (src, dst), rate in costs.pair_traffic.items():
        a, b = component_of[src], component_of[dst]
        if a != b:
            totals[(a, b)] += rate
    edges = []
    seen: set[tuple[str, str]] = set()
    for edge in topology.edges:
        key = (edge.source, edge.target)
        edges.append(replace(edge, traffic=totals.get(key, 0.0) if key not in seen else 0.0))
        seen.add(key)
    for (a, b), rate in sorted(totals.items()):
        if (a, b) not in seen:
            edges.append(Edge(a, b, rate, "unknown"))
    return replace(
        topology,
        edges=tuple(edges),
        executor_cpu=dict(costs.executor_cpu),
        pair_traffic=dict(costs.pair_traffic),
        payload_bytes=costs.payload_bytes or topology.payload_bytes,
        work_seconds=measured_work_seconds(
            replace(
                topology,
                executor_cpu=costs.executor_cpu,
                pair_traffic=costs.tuple_traffic,
                work_seconds={},
            ),
            costs.execute_seconds,
        ),
    )


def measured_topology(
    topology: Topology,
    storm_executor: Mapping[str, ExecutorKey],
    conf: Mapping[str, Any],
    source: MeasuredCostsSource,
) -> tuple[Topology, str]:
    """``(topology with measured costs, note)``, or ``(topology, "declared (why)")``.

    Never raises: monitoring must not cost a scheduling round.
    """
    try:
        max_age = max_age_secs(conf)
        aggregate = source.aggregate(topology.id)
        if aggregate is None:
            return topology, f"declared ({source.missing_reason(topology.id)})"
        costs = costs_from_aggregate(aggregate, topology, storm_executor, source.now_ms(), max_age)
        return apply_costs(topology, costs), costs.note
    except NotUsable as error:
        return topology, f"declared ({error})"
    except Exception as error:
        log.exception("measured costs of %s failed", topology.id)
        return topology, f"declared (measured costs failed: {type(error).__name__}: {error})"
