"""Realistic large instances for ``bench scale`` (``scheduler_py/bench/scale.py``):
topologies shaped like the papers' and production ones on heterogeneous hosts in racks,
100 – 10,000 executors on 10 – 500 hosts.

Shapes (:data:`SHAPES`):

* ``chain`` — a linear pipeline of stages (paper 000 §7.2, paper 004's pipelines);
* ``diamond`` — a spout fanning out to two branches that join again;
* ``star`` — spouts feeding one hub bolt that feeds as many sinks (paper 003's PageLoad
  pattern around one heavy bolt);
* ``wordcount`` — spout → split → count, the count fed by a fields grouping (Storm's
  ``WordCountTopology``, ``topologies/`` in this repository);
* ``layered`` — a layered DAG of many components of at most :data:`COMPONENT_MAX`
  executors, each fed by one or two components of the layer before (the §7.3 DAG, paper 000,
  made wide);
* ``shared`` — several topologies of the shapes above sharing one cluster (sizes skewed),
  as on a production Storm cluster.

Fields-grouped edges carry skewed pair traffic: the target executors' shares follow a Zipf
law (exponent :data:`ZIPF_EXPONENT`, ranks shuffled), as keyed streams with popular keys
do; shuffle-grouped edges split their traffic evenly (Eq. 1 of paper 000). A topology with a
fields edge therefore lists all its pairs in ``Topology.pair_traffic``. CPU follows
:func:`scheduler_py.bench.generators.section73_instance`: per-component PC correlated with
the executor count (±50 %), all components together :data:`LOAD` of the cluster's CPU.

Hosts are heterogeneous (2, 4 or 8 cores: :data:`HOST_CPUS`), :data:`HOSTS_PER_RACK` to a
rack (``Node.rack``). Everything is drawn from ``random.Random`` seeded with the instance's
name and the seed, so one (shape, executors, hosts, seed) is always the same instance.

Single-topology shapes other than ``layered`` are limited to :data:`SINGLE_JOB_MAX`
executors: their all-pairs traffic between two large components grows with the product of
their sizes (24 million pairs for a 10,000-executor word count), which no production job
has; at 10,000 executors use ``layered`` or ``shared``.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

from scheduler_py.bench.generators import _composition, _correlated_pcs, _ids
from scheduler_py.model.types import Component, Edge, Node, Problem, Topology, executor_id

SHAPES = ("chain", "diamond", "star", "wordcount", "layered", "shared")
SINGLE_JOB_SHAPES = ("chain", "diamond", "star", "wordcount", "layered")
HOST_CPUS = ((200.0, 0.3), (400.0, 0.5), (800.0, 0.2))
"""(CPU in % of one core, probability): 2-, 4- and 8-core supervisors"""
HOSTS_PER_RACK = 20
SLOTS_PER_HOST = 16
"""generous, so that 50 topologies sharing 500 hosts are limited by CPU, not slots"""
LOAD = 0.6
"""total CPU of the instance as a fraction of the cluster's (paper 000 §7.3 uses 0.625)"""
EDGE_TRAFFIC = (5.0, 20.0)
"""MB/s per edge and per 10 source executors, uniform (the §7.3 range, scaled with size)"""
ZIPF_EXPONENT = 1.0
COMPONENT_MAX = 50
"""largest component of a ``layered`` DAG"""
SINGLE_JOB_MAX = 2000
SHARED_TOPOLOGY_SIZE = 200
"""mean executors per topology of a ``shared`` instance"""
MIN_EXECUTORS = 8


@dataclass(frozen=True)
class Instance:
    """Hosts and the topologies sharing them, planned one after another in the given order
    (:func:`scheduler_py.scheduling.documents.plan_cluster`)."""

    name: str
    shape: str
    seed: int
    nodes: tuple[Node, ...]
    topologies: tuple[Topology, ...]

    @property
    def executors(self) -> int:
        return sum(c.parallelism for t in self.topologies for c in t.components)

    @property
    def hosts(self) -> int:
        return len(self.nodes)

    @cached_property
    def combined(self) -> Problem:
        """One problem holding every topology (component ids prefixed ``<topology>/``): any
        placement of the shared cluster is a placement of it, so its traffic bound bounds
        the traffic all topologies together can keep on-node."""
        if len(self.topologies) == 1:
            return Problem(self.nodes, self.topologies[0])
        return Problem(self.nodes, merge(self.name, self.topologies))


def merge(name: str, topologies: Sequence[Topology]) -> Topology:
    """The topologies as one, ids prefixed with ``<topology id>/`` (no edges between them)."""
    components = tuple(
        Component(f"{t.id}/{c.id}", c.parallelism, c.cpu, c.memory_mb, c.is_spout, c.is_system)
        for t in topologies
        for c in t.components
    )
    edges = tuple(
        Edge(f"{t.id}/{e.source}", f"{t.id}/{e.target}", e.traffic, e.grouping)
        for t in topologies
        for e in t.edges
    )
    pairs: dict[tuple[str, str], float] = {}
    if any(t.pair_traffic for t in topologies):
        for t in topologies:
            for source, target, rate in t.pair_traffics():
                pairs[(f"{t.id}/{source}", f"{t.id}/{target}")] = rate
    return Topology(
        name,
        components,
        edges,
        workers=sum(t.workers for t in topologies),
        name=name,
        pair_traffic=pairs,
    )


def hosts(count: int, rng: random.Random) -> tuple[Node, ...]:
    """``count`` heterogeneous hosts, :data:`HOSTS_PER_RACK` to a rack."""
    cpus, weights = zip(*HOST_CPUS, strict=True)
    racks = math.ceil(count / HOSTS_PER_RACK)
    rack_ids = _ids("rack", racks)
    return tuple(
        Node(
            node_id,
            rng.choices(cpus, weights)[0],
            SLOTS_PER_HOST,
            rack=rack_ids[i // HOSTS_PER_RACK],
        )
        for i, node_id in enumerate(_ids("n", count))
    )


@dataclass(frozen=True)
class _Shape:
    """A topology's structure before costs: component sizes, spouts, edges (i, j, fields)."""

    sizes: list[int]
    spouts: int
    edges: list[tuple[int, int, bool]]


def _split(total: int, fractions: Sequence[float]) -> list[int]:
    """``total`` executors in parts proportional to ``fractions`` (each ≥ 1, exact sum)."""
    sizes = [max(1, int(total * f / sum(fractions))) for f in fractions]
    sizes[max(range(len(sizes)), key=sizes.__getitem__)] += total - sum(sizes)
    return sizes


def _chain(executors: int, rng: random.Random) -> _Shape:
    stages = max(3, min(8, round(math.sqrt(executors) / 4)))
    sizes = _split(executors, [rng.uniform(0.7, 1.3) for _ in range(stages)])
    return _Shape(sizes, 1, [(i, i + 1, False) for i in range(stages - 1)])


def _diamond(executors: int, rng: random.Random) -> _Shape:
    sizes = _split(executors, [0.1, rng.uniform(0.2, 0.4), rng.uniform(0.2, 0.4), 0.3])
    return _Shape(sizes, 1, [(0, 1, False), (0, 2, False), (1, 3, True), (2, 3, True)])


def _star(executors: int, rng: random.Random) -> _Shape:
    leaves = 4 if executors < 200 else 8
    spokes = [rng.uniform(0.5, 1.5) for _ in range(2 * leaves)]
    sizes = _split(executors, [0.2 * sum(spokes), *spokes])
    hub = 0
    edges = [(spout, hub, False) for spout in range(1, leaves + 1)]
    edges += [(hub, sink, True) for sink in range(leaves + 1, 2 * leaves + 1)]
    # the hub is listed first for its id, but the spouts are the leaves feeding it
    order = [*range(1, leaves + 1), hub, *range(leaves + 1, 2 * leaves + 1)]
    position = {old: new for new, old in enumerate(order)}
    return _Shape(
        [sizes[i] for i in order],
        leaves,
        [(position[i], position[j], fields) for i, j, fields in edges],
    )


def _wordcount(executors: int, _rng: random.Random) -> _Shape:
    return _Shape(_split(executors, [0.1, 0.4, 0.5]), 1, [(0, 1, False), (1, 2, True)])


def _layered(executors: int, rng: random.Random) -> _Shape:
    components = max(3, math.ceil(executors / (0.8 * COMPONENT_MAX)))
    sizes = _composition(rng, executors, components)
    while max(sizes) > COMPONENT_MAX:  # spread oversized draws over the smallest parts
        big = max(range(components), key=sizes.__getitem__)
        small = min(range(components), key=sizes.__getitem__)
        moved = (sizes[big] - sizes[small]) // 2
        sizes[big] -= moved
        sizes[small] += moved
    layers = max(3, round(math.sqrt(components)))
    bounds = [round(k * components / layers) for k in range(layers + 1)]
    edges = []
    for layer in range(1, layers):
        previous = range(bounds[layer - 1], bounds[layer])
        for target in range(bounds[layer], bounds[layer + 1]):
            fanin = min(len(previous), rng.choices((1, 2), (0.7, 0.3))[0])
            for source in sorted(rng.sample(previous, fanin)):
                edges.append((source, target, rng.random() < 0.5))
    return _Shape(sizes, bounds[1], edges)


_BUILDERS = {
    "chain": _chain,
    "diamond": _diamond,
    "star": _star,
    "wordcount": _wordcount,
    "layered": _layered,
}


def zipf_shares(count: int, rng: random.Random, exponent: float = ZIPF_EXPONENT) -> list[float]:
    """Shares summing to 1, the ``k``-th largest ∝ ``1 / k^exponent``, in shuffled order."""
    weights = [1.0 / (rank**exponent) for rank in range(1, count + 1)]
    rng.shuffle(weights)
    total = sum(weights)
    return [w / total for w in weights]


def topology(
    topology_id: str,
    shape: str,
    executors: int,
    total_cpu: float,
    rng: random.Random,
    workers: int,
) -> Topology:
    """One topology of ``shape`` with ``executors`` executors, ``total_cpu`` CPU and
    ``workers`` as ``topology.workers``."""
    if shape not in _BUILDERS:
        raise ValueError(f"unknown shape {shape!r}; expected one of {', '.join(_BUILDERS)}")
    built = _BUILDERS[shape](executors, rng)
    ids = _ids("c", len(built.sizes))
    pcs, _ = _correlated_pcs(rng, built.sizes, total_cpu)
    components = tuple(
        Component(ids[i], size, cpu=pc, is_spout=i < built.spouts)
        for i, (size, pc) in enumerate(zip(built.sizes, pcs, strict=True))
    )
    edges = []
    pairs: dict[tuple[str, str], float] = {}
    for i, j, fields in built.edges:
        traffic = rng.uniform(*EDGE_TRAFFIC) * max(1.0, built.sizes[i] / 10)
        edges.append(Edge(ids[i], ids[j], traffic, "fields" if fields else "shuffle"))
        shares = (
            zipf_shares(built.sizes[j], rng) if fields else [1 / built.sizes[j]] * built.sizes[j]
        )
        per_source = traffic / built.sizes[i]
        for s in range(built.sizes[i]):
            for t, share in enumerate(shares):
                pairs[(executor_id(ids[i], s), executor_id(ids[j], t))] = per_source * share
    has_fields = any(fields for _, _, fields in built.edges)
    return Topology(
        topology_id,
        components,
        tuple(edges),
        workers=workers,
        name=f"{shape}-{topology_id}",
        pair_traffic=pairs if has_fields else {},
    )


def generate(shape: str, executors: int, host_count: int, seed: int = 0) -> Instance:
    """The instance ``<shape>-<executors>x<host_count>`` of ``seed`` (see the module docstring)."""
    if shape not in SHAPES:
        raise ValueError(f"unknown shape {shape!r}; expected one of {', '.join(SHAPES)}")
    if executors < MIN_EXECUTORS or host_count < 1:
        raise ValueError(
            f"need at least {MIN_EXECUTORS} executors and 1 host, got {executors} and {host_count}"
        )
    if shape in ("chain", "diamond", "star", "wordcount") and executors > SINGLE_JOB_MAX:
        raise ValueError(
            f"{shape} is limited to {SINGLE_JOB_MAX} executors (all-pairs traffic between two "
            f"components grows with the product of their sizes); got {executors}: use "
            "'layered' or 'shared' at that size"
        )
    name = f"{shape}-{executors}x{host_count}"
    rng = random.Random(f"{name}-{seed}")
    nodes = hosts(host_count, rng)
    total_cpu = LOAD * sum(n.cpu for n in nodes)
    if shape != "shared":
        return Instance(
            name,
            shape,
            seed,
            nodes,
            (topology("t0", shape, executors, total_cpu, rng, host_count),),
        )
    count = max(2, round(executors / SHARED_TOPOLOGY_SIZE))
    sizes = _split(executors, zipf_shares(count, rng, exponent=0.5))
    sizes = [max(MIN_EXECUTORS, s) for s in sizes]
    sizes[max(range(count), key=sizes.__getitem__)] -= sum(sizes) - executors
    ids = _ids("t", count)
    topologies = tuple(
        topology(
            ids[k],
            rng.choice(SINGLE_JOB_SHAPES),
            size,
            total_cpu * size / executors,
            rng,
            host_count,
        )
        for k, size in enumerate(sizes)
    )
    return Instance(name, shape, seed, nodes, topologies)
