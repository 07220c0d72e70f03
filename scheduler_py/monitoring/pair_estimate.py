"""Executor-pair traffic from Storm's per-task counts (counts mode, ``docs/monitoring-format.md``
§1.1–1.2): a prior from Storm's routing, fitted to the counted margins.

Storm counts, per task, the tuples it emitted on each output stream and, per bolt task, the
tuples it executed from each *source component* and stream — never which source task sent a
tuple. For every route of the topology (a component's stream read by a target component
through a grouping) :func:`estimate_pairs` builds the (source task × target task) matrix:

* **prior**, from what Storm does with the grouping:
  ``shuffle``, ``none`` and ``local_or_shuffle`` with load-aware messaging on: the narrowest
  locality scope (same worker, same host, anywhere) that holds a target, uniform inside it
  (``model/loadaware.py`` models the scopes); ``local_or_shuffle`` first keeps the targets in
  the sender's worker when there are any; with load-aware messaging off, uniform. ``fields``:
  uniform (which keys a task hashes is not known; the target margins decide). ``all``: every
  target task receives every tuple (no fitting: each pair carries the source's emits).
  ``global``: everything to the lowest target task;
* **iterative proportional fitting** of the prior to the margins: each source task's emit
  rate on the stream (every subscribing component receives all of it) and each target task's
  execute rate of ``"<source component>:<stream>"``, the latter scaled to the former's total
  (both are sampled; the emit side is what an exact hook counts). When the prior's zeros
  cannot meet the margins (a loaded worker-local target makes Storm widen the scope) the fit
  is repeated with every pair allowed.

Sources whose records carry exact traffic (exact mode, or version 1) keep it; their pairs are
subtracted from the target margins before the other sources are fitted.

An edge the estimate cannot price is returned in :attr:`PairEstimate.declared` with the
reason, and left out of the pairs, so the brain prices it as declared
(``monitoring/measured.py``): a grouping the estimate does not model (``custom``, ``direct``,
``partial_key``), a topology whose stats are sampled at 0, a source or target task that
reported no counts in the window, a worker whose counters went backwards (a reset or
restarted registry: ``reset_counters`` or a negative count).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from scheduler_py.model.loadaware import locality_scope
from scheduler_py.model.types import Placement
from scheduler_py.monitoring.records import Route, WindowRecord, input_key, split_input

TaskPair = tuple[int, int]

FITTED = frozenset({"shuffle", "local_or_shuffle", "none", "fields"})
"""Groupings whose pairs are fitted to the margins."""
KNOWN = FITTED | {"all", "global"}
"""Groupings the estimate prices; every other one (custom, direct, partial_key) is declared."""
ITERATIONS = 200
TOLERANCE = 1e-9
"""Stop fitting when every margin is within this relative error."""
WIDEN_ABOVE = 1e-3
"""A fit whose margins stay further off than this (relative L1) is repeated with every pair
allowed: the prior's locality scopes cannot carry what was counted."""
WIDENED_WEIGHT = 1e-3
"""Prior weight of an out-of-scope pair, relative to the mean in-scope weight, in the refit."""


@dataclass(frozen=True)
class DeclaredEdge:
    """A route the estimate does not price: the brain keeps its declared costs."""

    source: str
    stream: str
    target: str
    grouping: str
    reason: str
    tuples_per_s: float | None = None
    """the edge's total from the counts, when its source tasks all reported"""

    @property
    def label(self) -> str:
        return f"{self.source} -[{self.stream}, {self.grouping}]-> {self.target}"


@dataclass
class PairEstimate:
    """Per (source task, target task): tuples/s and bytes/s; what could not be priced."""

    tuples_per_s: dict[TaskPair, float] = field(default_factory=dict)
    bytes_per_s: dict[TaskPair, float] = field(default_factory=dict)
    declared: list[DeclaredEdge] = field(default_factory=list)
    seconds: dict[int, float] = field(default_factory=dict)
    """seconds each task was observed in the window (its records' windows)"""
    source: str = "none"
    """``exact`` (every priced edge from hook traffic), ``estimated``, ``mixed``, or ``none``"""
    execute_ms: dict[str, float] = field(default_factory=dict)
    """per component: mean execute latency over its inputs, weighted by executes"""
    estimated_sources: set[int] = field(default_factory=set)
    """source tasks whose pairs were estimated from counts (the others' are exact)"""

    problem: str | None = None
    """why nothing could be estimated at all (counts but no routes), else ``None``"""

    def warnings(self, topology_id: str) -> list[str]:
        """One line per declared edge (and one when nothing could be estimated)."""
        lines = [f"{topology_id}: {self.problem}"] if self.problem else []
        return lines + [
            f"{topology_id}: edge {edge.label} priced as declared: {edge.reason}"
            for edge in self.declared
        ]


@dataclass
class _Observed:
    """Window totals per task, and what is known of where each task runs."""

    seconds: dict[int, float] = field(default_factory=lambda: defaultdict(float))
    counted_seconds: dict[int, float] = field(default_factory=lambda: defaultdict(float))
    emitted: dict[int, dict[str, float]] = field(default_factory=lambda: defaultdict(dict))
    executed: dict[int, dict[str, float]] = field(default_factory=lambda: defaultdict(dict))
    latency: dict[str, list[float]] = field(default_factory=lambda: defaultdict(lambda: [0.0, 0.0]))
    exact_tasks: set[int] = field(default_factory=set)
    counted_tasks: set[int] = field(default_factory=set)
    exact: dict[tuple[int, int, str], float] = field(default_factory=lambda: defaultdict(float))
    problems: dict[int, str] = field(default_factory=dict)
    """task -> why its counts are unusable in this window"""
    tasks_of: dict[str, set[int]] = field(default_factory=lambda: defaultdict(set))
    where: dict[int, tuple[str, str]] = field(default_factory=dict)
    """task -> (worker, host) of its latest record"""
    sizes: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    zero_rate: bool = False
    load_aware: bool = True


def estimate_pairs(
    records: Sequence[WindowRecord],
    history: Iterable[WindowRecord] = (),
    use_exact: bool = True,
) -> PairEstimate:
    """The pair traffic of one topology from its in-window ``records`` (one per worker and
    window: duplicates removed). ``history``: older records of the topology, for the tasks a
    component has (a task that stopped reporting is then known to be missing).
    ``use_exact=False`` estimates every edge from the counts, also where exact traffic was
    counted (the accuracy benchmark compares the two)."""
    seen = _observe(records, history, use_exact)
    estimate = PairEstimate(seconds=dict(seen.seconds))
    routes = _routes(records)
    modes: set[str] = set()
    for route in routes:
        mode = _price_route(route, seen, estimate)
        if mode:
            modes.add(mode)
    if routes:
        for route in _system_routes(seen, routes):
            _price_route(route, seen, estimate, quiet=True)
    if modes:
        estimate.source = modes.pop() if len(modes) == 1 else "mixed"
    elif any(seen.exact.values()):
        estimate.source = "exact"
    if not routes and seen.counted_tasks and not seen.exact:
        estimate.problem = (
            "the records carry Storm's counts but no routes (the workers could not read the "
            "topology): no pair traffic estimated, the brain keeps the declared traffic"
        )
    if not routes and seen.exact:
        for (src, dst, _), tuples in seen.exact.items():
            rate = tuples / seen.seconds[src] if seen.seconds.get(src) else 0.0
            _add(estimate, src, dst, rate, 0.0)
    estimate.execute_ms = {
        component: total / weight
        for component, (total, weight) in seen.latency.items()
        if weight > 0
    }
    return estimate


def _observe(
    records: Sequence[WindowRecord], history: Iterable[WindowRecord], use_exact: bool
) -> _Observed:
    seen = _Observed()
    for record in sorted([*history, *records], key=lambda r: r.window_end_ms):
        for executor in record.executors:
            for task in executor.tasks:
                seen.tasks_of[executor.component].add(task)
                seen.where[task] = (record.worker, record.host)
    exact_only: dict[int, bool] = {}
    for record in records:
        seconds = record.duration_ms / 1000.0
        exact = use_exact and record.mode == "exact" and (record.version == 1 or record.traffic)
        tasks = [t for e in record.executors for t in e.tasks]
        for task in tasks:
            seen.seconds[task] += seconds
            exact_only[task] = exact_only.get(task, True) and bool(exact)
        if record.load_aware_messaging is False:
            seen.load_aware = False
        if record.mode == "counts" and record.sample_rate == 0:
            seen.zero_rate = True
        if exact:
            for sample in record.traffic:
                seen.exact[(sample.src, sample.dst, sample.stream)] += sample.tuples
        for key, size in record.tuple_bytes.items():
            seen.sizes[key].append(size)
        problem = record.counts_problem
        if record.reset_counters:
            problem = (
                f"{record.reset_counters} counter(s) of worker {record.host}:{record.port} went "
                f"backwards in the window ending at {record.window_end_ms} (a reset or restart)"
            )
        elif problem:
            problem = f"worker {record.host}:{record.port}: {problem}"
        if problem:
            for task in tasks:
                seen.problems.setdefault(task, problem)
            continue
        for counts in record.task_counts:
            task = counts.task
            seen.counted_tasks.add(task)
            seen.counted_seconds[task] += seconds
            for stream, value in counts.emitted.items():
                seen.emitted[task][stream] = seen.emitted[task].get(stream, 0.0) + value
            for key, value in counts.executed.items():
                seen.executed[task][key] = seen.executed[task].get(key, 0.0) + value
                latency = counts.execute_ms.get(key)
                if latency is not None and not split_input(key)[1].startswith("__"):
                    cell = seen.latency[counts.component]
                    cell[0] += latency * value
                    cell[1] += value
    seen.exact_tasks = {task for task, exact in exact_only.items() if exact}
    return seen


def _routes(records: Sequence[WindowRecord]) -> list[Route]:
    """Every route the records name (the newest record's grouping when they differ)."""
    latest: dict[tuple[str, str, str], Route] = {}
    for record in sorted(records, key=lambda r: r.window_end_ms):
        for route in record.routes:
            latest[(route.component, route.stream, route.target)] = route
    return [latest[key] for key in sorted(latest)]


def _system_routes(seen: _Observed, routes: Sequence[Route]) -> list[Route]:
    """Storm's system streams (``__ack_init``, ``__ack_ack``, ``__metrics``, …) have no
    routes in the records; the inputs the receiving tasks counted name them. Storm routes the
    acking streams by fields grouping on the tuple tree's id (uniform over the ackers)."""
    known = {(r.component, r.stream, r.target) for r in routes}
    component_of = {t: c for c, tasks in seen.tasks_of.items() for t in tasks}
    found = set()
    for task, inputs in seen.executed.items():
        target = component_of.get(task)
        for key in inputs:
            source, stream = split_input(key)
            if target and stream.startswith("__") and source in seen.tasks_of:
                found.add((source, stream, target))
    return [Route(*key, grouping="fields") for key in sorted(found - known)]


def _rate(totals: Mapping[int, Mapping[str, float]], seen: _Observed, task: int, key: str) -> float:
    seconds = seen.counted_seconds.get(task, 0.0)
    return totals.get(task, {}).get(key, 0.0) / seconds if seconds > 0 else 0.0


def _price_route(
    route: Route, seen: _Observed, estimate: PairEstimate, quiet: bool = False
) -> str | None:
    """Add the pairs of ``route`` to ``estimate`` (or declare it; ``quiet``: a system route
    the estimate cannot price is left out silently); the mode that priced it."""
    sources = sorted(seen.tasks_of.get(route.component, ()))
    targets = sorted(seen.tasks_of.get(route.target, ()))
    counted = [t for t in sources if t not in seen.exact_tasks]
    if not counted:  # every source counted exactly by the hook
        for src in sources:
            for dst in targets:
                tuples = seen.exact.get((src, dst, route.stream), 0.0)
                if tuples > 0 and seen.seconds.get(src):
                    _add(estimate, src, dst, tuples / seen.seconds[src], _size(route, seen))
        return "exact" if sources and targets else None
    reason = _unpriceable(route, seen, sources, targets, counted)
    if reason and quiet:
        return None
    if reason:
        estimate.declared.append(
            DeclaredEdge(
                route.component,
                route.stream,
                route.target,
                route.grouping,
                reason,
                _edge_total(route, seen, counted),
            )
        )
        return None
    rows = np.array([_rate(seen.emitted, seen, t, route.stream) for t in counted])
    key = input_key(route.component, route.stream)
    cols = np.array([_rate(seen.executed, seen, t, key) for t in targets])
    exact_sources = [t for t in sources if t in seen.exact_tasks]
    for src in exact_sources:
        for j, dst in enumerate(targets):
            tuples = seen.exact.get((src, dst, route.stream), 0.0)
            if tuples > 0 and seen.seconds.get(src):
                rate = tuples / seen.seconds[src]
                cols[j] = max(0.0, cols[j] - rate)
                _add(estimate, src, dst, rate, _size(route, seen))
    matrix = _route_matrix(route, counted, targets, rows, cols, seen)
    size = _size(route, seen)
    estimate.estimated_sources.update(counted)
    for i, src in enumerate(counted):
        for j, dst in enumerate(targets):
            if matrix[i, j] > 0:
                _add(estimate, src, dst, float(matrix[i, j]), size)
    return "mixed" if exact_sources else "estimated"


def _unpriceable(
    route: Route, seen: _Observed, sources: list[int], targets: list[int], counted: list[int]
) -> str | None:
    """Why ``route`` cannot be estimated from the counts, or ``None``."""
    if route.grouping not in KNOWN:
        return f"grouping {route.grouping!r} is not modelled (known: {', '.join(sorted(KNOWN))})"
    if seen.zero_rate:
        return "topology.stats.sample.rate is 0: Storm counted nothing"
    if not targets:
        return f"no task of {route.target} was seen in any record"
    broken = sorted({seen.problems[t] for t in [*counted, *targets] if t in seen.problems})
    if broken:
        return broken[0]
    silent = [t for t in counted if t not in seen.counted_tasks]
    if silent:
        return f"source task(s) {silent} of {route.component} reported no counts in the window"
    silent = [t for t in targets if t not in seen.counted_tasks and t not in seen.exact_tasks]
    if silent:
        return f"target task(s) {silent} of {route.target} reported no counts in the window"
    return None


def _edge_total(route: Route, seen: _Observed, counted: list[int]) -> float | None:
    if seen.zero_rate or any(t not in seen.counted_tasks or t in seen.problems for t in counted):
        return None
    return float(sum(_rate(seen.emitted, seen, t, route.stream) for t in counted))


def _size(route: Route, seen: _Observed) -> float:
    sizes = seen.sizes.get(f"{route.component}:{route.stream}")
    return float(np.mean(sizes)) if sizes else 0.0


def _add(estimate: PairEstimate, src: int, dst: int, rate: float, size: float) -> None:
    key = (src, dst)
    estimate.tuples_per_s[key] = estimate.tuples_per_s.get(key, 0.0) + rate
    if size > 0:
        estimate.bytes_per_s[key] = estimate.bytes_per_s.get(key, 0.0) + rate * size


def _route_matrix(
    route: Route,
    sources: list[int],
    targets: list[int],
    rows: np.ndarray,
    cols: np.ndarray,
    seen: _Observed,
) -> np.ndarray:
    """Tuples/s per (source, target) of one route (see the module docstring)."""
    if route.grouping == "all":
        return np.repeat(rows[:, None], len(targets), axis=1)
    if route.grouping == "global":
        matrix = np.zeros((len(sources), len(targets)))
        matrix[:, 0] = rows
        return matrix
    prior = routing_prior(route.grouping, sources, targets, seen.where, seen.load_aware)
    return fit_margins(prior, rows, cols)


def routing_prior(
    grouping: str,
    sources: Sequence[int],
    targets: Sequence[int],
    where: Mapping[int, tuple[str, str]],
    load_aware: bool,
) -> np.ndarray:
    """The share of each source's tuples each target gets under ``grouping`` (rows sum to 1):
    ``where`` maps a task to its (worker, host)."""
    prior = np.zeros((len(sources), len(targets)))
    if grouping == "fields":
        prior[:] = 1.0 / len(targets)
        return prior
    placement = _placement([*sources, *targets], where)
    index = {t: j for j, t in enumerate(targets)}
    names = [str(t) for t in targets]
    rows: dict[tuple[str, str] | None, np.ndarray] = {}
    """the row of a source's worker: every source of one worker routes alike"""
    for i, src in enumerate(sources):
        key = where.get(src)
        if key not in rows:
            rows[key] = _prior_row(
                grouping, src, targets, names, index, where, placement, load_aware
            )
        prior[i] = rows[key]
    return prior


def _prior_row(grouping, src, targets, names, index, where, placement, load_aware) -> np.ndarray:
    chosen = names
    if grouping == "local_or_shuffle" and src in where:
        local = [str(t) for t in targets if where.get(t, ("",))[0] == where[src][0]]
        chosen = local or names
    if load_aware and str(src) in placement.node_of:
        chosen = locality_scope(str(src), chosen, placement, {})
    row = np.zeros(len(targets))
    for name in chosen:
        row[index[int(name)]] = 1.0 / len(chosen)
    return row


def _placement(tasks: Iterable[int], where: Mapping[int, tuple[str, str]]) -> Placement:
    """Tasks placed on their hosts and workers, for the locality scopes of
    ``model/loadaware.py`` (no rack is known: the rack scope is everything)."""
    workers: dict[str, dict[str, int]] = defaultdict(dict)
    node_of, worker_of = {}, {}
    for task in tasks:
        if task not in where:
            continue
        worker, host = where[task]
        on_host = workers[host]
        node_of[str(task)] = host
        worker_of[str(task)] = on_host.setdefault(worker, len(on_host))
    return Placement("estimate", node_of, worker_of=worker_of)


def fit_margins(
    prior: np.ndarray, rows: np.ndarray, cols: np.ndarray, iterations: int = ITERATIONS
) -> np.ndarray:
    """Iterative proportional fitting of ``prior`` to row sums ``rows`` and column sums
    ``cols`` (rescaled to the rows' total). Where the prior's zeros make the margins
    unreachable, the fit is repeated with every pair allowed at a small weight."""
    total = float(rows.sum())
    if total <= 0:
        return np.zeros_like(prior)
    start = prior * (rows / np.maximum(prior.sum(axis=1), 1e-300))[:, None]
    if float(cols.sum()) <= 0:
        return start
    cols = cols * (total / float(cols.sum()))
    fitted, error = _ipf(start, rows, cols, iterations)
    if error > WIDEN_ABOVE:
        allowed = prior > 0
        weight = WIDENED_WEIGHT * (prior[allowed].mean() if allowed.any() else 1.0)
        widened = np.where(allowed, prior, weight)
        fitted, _ = _ipf(widened * (rows / widened.sum(axis=1))[:, None], rows, cols, iterations)
    return fitted


def _ipf(
    matrix: np.ndarray, rows: np.ndarray, cols: np.ndarray, iterations: int
) -> tuple[np.ndarray, float]:
    """Alternate row and column scaling; returns the matrix and its relative L1 column error."""
    matrix = matrix.copy()
    total = float(rows.sum())
    error = float("inf")
    for _ in range(iterations):
        sums = matrix.sum(axis=0)
        matrix *= np.divide(cols, sums, out=np.zeros_like(cols), where=sums > 0)[None, :]
        sums = matrix.sum(axis=1)
        matrix *= np.divide(rows, sums, out=np.zeros_like(rows), where=sums > 0)[:, None]
        error = float(np.abs(matrix.sum(axis=0) - cols).sum()) / total
        if error <= TOLERANCE:
            break
    return matrix, error
