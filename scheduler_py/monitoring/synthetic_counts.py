"""Synthetic version-2 window records (``docs/monitoring-format.md`` §1.1) with a known truth:
what the worker monitor would publish for a simulated topology, in counts mode or in exact
mode with the counts beside (the accuracy benchmark's setting).

The repository's topologies (``topologies/README.md``: word count, Linear, Diamond, Star) or
a chain of any size (``bench aggregate_scale``) are placed round robin over workers and
hosts. Every window, each spout task emits about ``rate`` tuples per second; each route
sends them as Storm would: shuffle-like groupings split a source's tuples over the narrowest
locality scope with load-aware messaging on (``model/loadaware.py``), or over all targets
with it off, each target's share jittered by a few percent (the load weights move); fields
grouping hashes a Zipf-distributed vocabulary onto the targets (a multinomial draw per
source); ``all`` copies to every target. Storm's counters are emulated as its even sampler
counts: ``1/sample_rate`` per sampled event, one sampled event per block. The exact traffic
(what the hook counts) is the simulated matrix itself.
"""

from __future__ import annotations

import zlib
from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np

from scheduler_py.monitoring.pair_estimate import routing_prior
from scheduler_py.monitoring.records import (
    ExecutorSample,
    Route,
    TaskCounts,
    TrafficSample,
    WindowRecord,
    input_key,
)

WINDOW_MS = 10_000
VOCABULARY = 2_000
ZIPF = 1.1
JITTER = 0.03
"""Relative spread of a shuffle target's share from window to window (load weights)."""


@dataclass(frozen=True)
class Shape:
    """A topology: components in topological order with their task counts, the routes, and
    tuples a bolt emits per tuple it executes (``fan``, default 1)."""

    name: str
    components: tuple[tuple[str, int], ...]
    routes: tuple[Route, ...]
    fan: dict[str, float] = field(default_factory=dict)

    @property
    def spouts(self) -> set[str]:
        targets = {r.target for r in self.routes}
        return {c for c, _ in self.components if c not in targets}


def _shuffle(source: str, target: str, grouping: str = "shuffle") -> Route:
    return Route(source, "default", target, grouping)


SHAPES: dict[str, Shape] = {
    "wordcount": Shape(
        "wordcount",
        (("sentences", 1), ("split", 2), ("count", 2)),
        (_shuffle("sentences", "split"), Route("split", "default", "count", "fields", ("word",))),
        {"split": 5.0},
    ),
    "linear": Shape(
        "linear",
        (("word", 2), ("exclaim1", 2), ("exclaim2", 2), ("exclaim_output_3", 2)),
        (
            _shuffle("word", "exclaim1"),
            _shuffle("exclaim1", "exclaim2"),
            _shuffle("exclaim2", "exclaim_output_3"),
        ),
    ),
    "diamond": Shape(
        "diamond",
        (("spout_head", 2), *((f"bolt_{i}", 2) for i in range(1, 5)), ("bolt_output_3", 2)),
        (
            *(_shuffle("spout_head", f"bolt_{i}") for i in range(1, 5)),
            *(_shuffle(f"bolt_{i}", "bolt_output_3") for i in range(1, 5)),
        ),
    ),
    "star": Shape(
        "star",
        (("spout_0", 2), ("spout_1", 2), ("center", 2), ("bolt_output_0", 2), ("bolt_output_1", 2)),
        (
            _shuffle("spout_0", "center"),
            _shuffle("spout_1", "center"),
            _shuffle("center", "bolt_output_0"),
            _shuffle("center", "bolt_output_1"),
        ),
    ),
}
"""The repository's topologies (``topologies/README.md``)."""


def chain(executors: int) -> Shape:
    """A four-component chain of ``executors`` tasks: shuffle, fields, shuffle."""
    per = max(1, executors // 4)
    names = ("spout", "bolt1", "bolt2", "bolt3")
    return Shape(
        f"chain-{executors}",
        tuple((n, per) for n in names),
        (
            _shuffle("spout", "bolt1"),
            Route("bolt1", "default", "bolt2", "fields", ("key",)),
            _shuffle("bolt2", "bolt3"),
        ),
    )


@dataclass(frozen=True)
class Layout:
    """Where the tasks run: ``workers`` workers (ports 6700…) spread over ``hosts`` hosts."""

    workers: int = 3
    hosts: int = 1


@dataclass
class Simulation:
    """The records of a run and the exact tuples/s per (source task, target task)."""

    records: list[WindowRecord]
    truth: dict[tuple[int, int], float]
    component_of: dict[int, str]
    worker_of: dict[int, tuple[str, str, int]]
    """task -> (supervisor id, host, port)"""


def simulate(
    shape: Shape,
    layout: Layout,
    end_ms: int,
    windows: int = 6,
    load_aware: bool = True,
    rate: float = 1000.0,
    sample_rate: float = 0.05,
    mode: str = "exact",
    topology_id: str | None = None,
    seed: int = 1,
) -> Simulation:
    """``windows`` windows of every worker, the newest ending at ``end_ms``. ``mode``:
    ``exact`` (records carry the traffic and the counts) or ``counts`` (counts only)."""
    rng = np.random.default_rng(seed)
    topology_id = topology_id or f"{shape.name}-1"
    tasks: dict[str, list[int]] = {}
    next_task = 1
    for component, count in shape.components:
        tasks[component] = list(range(next_task, next_task + count))
        next_task += count
    order = [t for component, _ in shape.components for t in tasks[component]]
    component_of = {t: c for c, ts in tasks.items() for t in ts}
    worker_of = {}
    for index, task in enumerate(order):
        w = index % layout.workers
        worker_of[task] = (f"sup-{w % layout.hosts}", f"host-{w % layout.hosts}", 6700 + w)
    where = {t: (f"{s}:{p}", h) for t, (s, h, p) in worker_of.items()}
    keys = _key_shares(rng)
    priors = {
        (r.component, r.target): _prior(
            r.grouping, tasks[r.component], tasks[r.target], where, keys, load_aware
        )
        for r in shape.routes
    }
    totals: dict[tuple[int, int], float] = defaultdict(float)
    records = []
    seconds = WINDOW_MS / 1000.0
    for w in range(windows):
        window_end = end_ms - (windows - 1 - w) * WINDOW_MS
        emitted, executed, traffic = _window(shape, tasks, priors, rng, rate * seconds)
        for (src, dst, _), n in traffic.items():
            totals[(src, dst)] += n
        records.extend(
            _records(
                topology_id,
                shape,
                worker_of,
                component_of,
                (emitted, executed, traffic),
                (window_end, w),
                (load_aware, sample_rate, mode),
                rng,
            )
        )
    span = windows * seconds
    truth = {pair: n / span for pair, n in totals.items() if n > 0}
    return Simulation(records, truth, component_of, worker_of)


def _key_shares(rng: np.random.Generator) -> np.ndarray:
    ranks = np.arange(1, VOCABULARY + 1)
    shares = 1.0 / ranks**ZIPF
    rng.shuffle(shares)
    return shares / shares.sum()


def _fields_shares(keys: np.ndarray, targets: int) -> np.ndarray:
    buckets = np.array([zlib.crc32(str(k).encode()) % targets for k in range(len(keys))])
    return np.bincount(buckets, weights=keys, minlength=targets)


def _window(shape, tasks, priors, rng, spout_tuples):
    emitted: dict[int, float] = defaultdict(float)
    executed: dict[tuple[int, str], float] = defaultdict(float)
    traffic: dict[tuple[int, int, str], float] = defaultdict(float)
    received: dict[int, float] = defaultdict(float)
    for component, _ in shape.components:
        for task in tasks[component]:
            if component in shape.spouts:
                out = max(0.0, round(rng.normal(spout_tuples, 0.05 * spout_tuples)))
            else:
                out = round(received[task] * shape.fan.get(component, 1.0))
            emitted[task] = out
        for route in (r for r in shape.routes if r.component == component):
            sources, targets = tasks[component], tasks[route.target]
            shares = _jittered(route.grouping, priors[(component, route.target)], rng)
            for i, src in enumerate(sources):
                if route.grouping == "all":
                    counts = np.full(len(targets), emitted[src])
                else:
                    counts = rng.multinomial(int(emitted[src]), shares[i])
                for j, dst in enumerate(targets):
                    if counts[j]:
                        traffic[(src, dst, route.stream)] += float(counts[j])
                        received[dst] += float(counts[j])
                        executed[(dst, input_key(component, route.stream))] += float(counts[j])
    return emitted, executed, traffic


def _prior(grouping, sources, targets, where, keys, load_aware) -> np.ndarray:
    if grouping == "fields":
        return np.tile(_fields_shares(keys, len(targets)), (len(sources), 1))
    if grouping == "all":
        return np.ones((len(sources), len(targets)))
    return routing_prior(grouping, sources, targets, where, load_aware)


def _jittered(grouping: str, prior: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A shuffle's shares as the load weights move them this window."""
    if grouping in ("fields", "all"):
        return prior
    jittered = prior * rng.normal(1.0, JITTER, prior.shape).clip(0.5, 1.5)
    return jittered / jittered.sum(axis=1, keepdims=True)


def sampled(count: float, sample_rate: float, rng: np.random.Generator) -> float:
    """What Storm's counter shows for ``count`` events: ``1/sample_rate`` per block of that
    many events, the last, partial block counted with its probability."""
    if sample_rate <= 0:
        return 0.0
    block = round(1.0 / sample_rate)
    full, rest = divmod(int(count), block)
    return float(block * (full + (rng.random() < rest / block)))


def _records(topology_id, shape, worker_of, component_of, window, when, settings, rng):
    emitted, executed, traffic = window
    window_end, seq = when
    load_aware, sample_rate, mode = settings
    senders = {r.component for r in shape.routes}
    by_worker: dict[tuple[str, str, int], list[int]] = defaultdict(list)
    for task, worker in worker_of.items():
        by_worker[worker].append(task)
    inputs: dict[int, dict[str, float]] = defaultdict(dict)
    for (task, key), n in executed.items():
        inputs[task][key] = n
    sent: dict[int, dict[tuple[int, str], float]] = defaultdict(dict)
    if mode == "exact":
        for (src, dst, stream), n in traffic.items():
            sent[src][(dst, stream)] = n
    out = []
    for (supervisor, host, port), worker_tasks in sorted(by_worker.items()):
        worker_tasks.sort()
        components = {component_of[t] for t in worker_tasks}
        counts = []
        executors = []
        for task in worker_tasks:
            component = component_of[task]
            streams = (
                {"default": sampled(emitted[task], sample_rate, rng)}
                if component in senders
                else {}
            )
            done = {k: sampled(n, sample_rate, rng) for k, n in inputs[task].items()}
            latency = {k: 0.05 for k in done}
            counts.append(TaskCounts(task, component, streams, streams, done, latency, {}, {}))
            cpu = 2.0 + 0.01 * sum(inputs[task].values()) + 0.005 * emitted[task]
            executors.append(ExecutorSample(task, task, component, cpu, 0.0))
        samples = tuple(
            TrafficSample(src, dst, stream, n, n * 64.0)
            for src in worker_tasks
            for (dst, stream), n in sorted(sent.get(src, {}).items())
        )
        out.append(
            WindowRecord(
                topology_id=topology_id,
                supervisor_id=supervisor,
                host=host,
                port=port,
                seq=seq,
                window_start_ms=window_end - WINDOW_MS,
                window_end_ms=window_end,
                worker_cpu_ms=sum(e.thread_cpu_ms for e in executors) * 1.1,
                overhead_cpu_ms=10.0,
                executors=tuple(executors),
                traffic=samples if mode == "exact" else (),
                version=2,
                mode=mode,
                sample_rate=sample_rate,
                load_aware_messaging=load_aware,
                task_counts=tuple(counts),
                routes=tuple(r for r in shape.routes if r.component in components),
                tuple_bytes={f"{c}:default": 64.0 for c in components} if mode == "exact" else {},
            )
        )
    return out
