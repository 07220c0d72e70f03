"""The one cost module: every algorithm, test and benchmark scores placements here.

Metrics (paper 000 §2.2 and ``docs/algorithms/000-topdown.md`` §1.4):

* ``imc_gain`` φ(X): traffic between executors on the same node, every directed executor
  link counted once;
* ``internode_traffic``: traffic that crosses nodes (= total − φ);
* ``interworker_traffic``: traffic that crosses worker processes (≥ internode);
* per-node CPU / memory load, the maximum load and utilisation, nodes and workers used;
* ``violations``: every way the placement breaks the problem (incomplete, unknown node,
  CPU / memory / slot capacity), as sentences an operator can act on.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping
from dataclasses import dataclass

from scheduler_py.model.types import EPSILON, Placement, Problem, Topology


@dataclass(frozen=True)
class Evaluation:
    imc_gain: float
    internode_traffic: float
    interworker_traffic: float
    total_traffic: float
    node_cpu: Mapping[str, float]
    node_memory: Mapping[str, float]
    node_workers: Mapping[str, int]
    max_node_load: float
    max_node_utilisation: float
    nodes_used: int
    workers_used: int
    violations: tuple[str, ...]

    @property
    def feasible(self) -> bool:
        return not self.violations

    def summary(self) -> dict[str, float | int | bool]:
        return {
            "imc_gain": self.imc_gain,
            "internode_traffic": self.internode_traffic,
            "interworker_traffic": self.interworker_traffic,
            "total_traffic": self.total_traffic,
            "max_node_load": self.max_node_load,
            "max_node_utilisation": self.max_node_utilisation,
            "nodes_used": self.nodes_used,
            "workers_used": self.workers_used,
            "feasible": self.feasible,
        }


def imc_gain(topology: Topology, node_of: Mapping[str, str]) -> float:
    """φ(X): the traffic of executor pairs collocated on one node."""
    return _collocated_traffic(topology, node_of)


def _collocated_traffic(topology: Topology, bin_of: Mapping[str, object]) -> float:
    """Traffic between executors that share a bin (a node, or a (node, worker) pair).

    Uses the group-count form of φ (``docs/algorithms/000-topdown.md`` §1.4) when traffic is the
    uniform split, which
    is linear in executors instead of quadratic in executor pairs.
    """
    if topology.has_measured_traffic:
        return sum(
            rate
            for src, dst, rate in topology.pair_traffics()
            if src in bin_of and bin_of[src] == bin_of.get(dst)
        )
    counts: dict[str, Counter] = defaultdict(Counter)
    for executor in topology.executors:
        where = bin_of.get(executor.id)
        if where is not None:
            counts[executor.component][where] += 1
    return _uniform_collocated(topology, counts)


_NONE: Counter = Counter()


def _uniform_collocated(topology: Topology, counts: Mapping[str, Counter]) -> float:
    """φ of the uniform split, from the executors of each component per bin."""
    total = 0.0
    for edge in topology.merged_edges:
        if edge.traffic <= 0:
            continue
        size = (
            topology.component_by_id[edge.source].parallelism
            * topology.component_by_id[edge.target].parallelism
        )
        per_pair = edge.traffic / size
        src_counts, dst_counts = counts.get(edge.source, _NONE), counts.get(edge.target, _NONE)
        total += per_pair * sum(n * dst_counts.get(b, 0) for b, n in src_counts.items())
    return total


def total_traffic(topology: Topology) -> float:
    if topology.has_measured_traffic:
        return sum(rate for _, _, rate in topology.pair_traffics())
    return sum(edge.traffic for edge in topology.merged_edges)


def node_loads(problem: Problem, node_of: Mapping[str, str]) -> tuple[dict, dict]:
    """CPU and memory placed on every node of the problem (0 for unused nodes)."""
    cpu = problem.table.zeros.copy()
    memory = problem.table.zeros.copy()
    by_id = problem.topology.executor_by_id
    for executor, node in node_of.items():
        if executor in by_id and node in cpu:
            cpu[node] += by_id[executor].cpu
            memory[node] += by_id[executor].memory_mb
    return cpu, memory


def violations(problem: Problem, placement: Placement) -> list[str]:
    """Every way ``placement`` breaks ``problem``; empty when it is a valid placement."""
    nodes = problem.node_by_id
    by_id = problem.topology.executor_by_id
    cpu: dict[str, float] = {}
    memory: dict[str, float] = {}
    for executor, node in placement.node_of.items():  # node_loads, for the used nodes only
        if executor in by_id and node in nodes:
            cpu[node] = cpu.get(node, 0.0) + by_id[executor].cpu
            memory[node] = memory.get(node, 0.0) + by_id[executor].memory_mb
    return _violations(problem, placement, cpu, memory, _workers_per_node(placement))


def _violations(
    problem: Problem,
    placement: Placement,
    cpu: Mapping[str, float],
    memory: Mapping[str, float],
    workers: Mapping[str, int],
) -> list[str]:
    """:func:`violations`, given the loads and workers per node (a node left out uses
    nothing: capacities are never negative, so only used nodes can be over them)."""
    topology = problem.topology
    found: list[str] = []
    expected = set(topology.executor_by_id)
    given = set(placement.node_of)
    if missing := sorted(expected - given):
        found.append(f"{len(missing)} executor(s) not placed: {_clip(missing)}")
    if unknown := sorted(given - expected):
        found.append(f"{len(unknown)} unknown executor(s) placed: {_clip(unknown)}")
    nodes = problem.node_by_id
    used = set(placement.node_of.values())
    if bad := sorted({n for n in used if n not in nodes}):
        found.append(f"placement names unknown node(s) {bad}; known: {sorted(nodes)}")
    for node_id in problem.in_node_order(used):
        node = nodes[node_id]
        node_cpu, node_memory = cpu.get(node.id, 0.0), memory.get(node.id, 0.0)
        if node_cpu > node.cpu + EPSILON:
            found.append(f"node {node.id}: CPU {node_cpu:.2f} exceeds capacity {node.cpu:.2f}")
        if node_memory > node.memory_mb + EPSILON:
            found.append(
                f"node {node.id}: memory {node_memory:.1f} MB exceeds capacity "
                f"{node.memory_mb:.1f} MB"
            )
        if workers.get(node.id, 0) > node.slots:
            found.append(
                f"node {node.id}: {workers[node.id]} workers need more than its "
                f"{node.slots} free slot(s)"
            )
    return found


def _workers_per_node(placement: Placement) -> dict[str, int]:
    worker_of = placement.worker_of  # Placement.worker_key, inlined: this runs per executor
    keys = {(node, worker_of.get(e, 0)) for e, node in placement.node_of.items()}
    return dict(Counter(node for node, _ in keys))


def evaluate(problem: Problem, placement: Placement) -> Evaluation:
    topology = problem.topology
    node_of = placement.node_of
    logical = placement.worker_of
    if topology.has_measured_traffic:
        phi = _collocated_traffic(topology, node_of)
        worker_of = {e: (node, logical.get(e, 0)) for e, node in node_of.items()}
        intra_worker = _collocated_traffic(topology, worker_of)
    else:  # both bins counted at once (_collocated_traffic's uniform case)
        component = topology.component_of_executor
        per_worker = Counter(
            (component[e], node, logical.get(e, 0)) for e, node in node_of.items() if e in component
        )
        on_node: dict[str, Counter] = defaultdict(Counter)
        in_worker: dict[str, Counter] = defaultdict(Counter)
        for (name, node, worker), count in per_worker.items():
            on_node[name][node] += count
            in_worker[name][(node, worker)] = count
        phi = _uniform_collocated(topology, on_node)
        intra_worker = _uniform_collocated(topology, in_worker)
    total = total_traffic(topology)
    cpu, memory = node_loads(problem, node_of)
    workers = _workers_per_node(placement)
    return Evaluation(
        imc_gain=phi,
        internode_traffic=max(total - phi, 0.0),
        interworker_traffic=max(total - intra_worker, 0.0),
        total_traffic=total,
        node_cpu=cpu,
        node_memory=memory,
        node_workers=workers,
        max_node_load=max(cpu.values(), default=0.0),
        max_node_utilisation=_max_utilisation(problem, node_of, cpu),
        nodes_used=len(set(node_of.values())),
        workers_used=sum(workers.values()),
        violations=tuple(_violations(problem, placement, cpu, memory, workers)),
    )


def _max_utilisation(
    problem: Problem, node_of: Mapping[str, str], cpu: Mapping[str, float]
) -> float:
    """The largest CPU load / capacity over the problem's nodes, looking only at the nodes
    ``node_of`` uses: every other node's is 0 (``max`` over all nodes in problem order, NaN
    included, gives the same)."""
    used = problem.in_node_order(node_of.values())
    nodes = problem.node_by_id
    values = [_utilisation(cpu[n], nodes[n].cpu) for n in used]
    if len(used) == len(problem.nodes):
        return max(values, default=0.0)
    first_used = bool(used) and used[0] == problem.nodes[0].id
    return max([*values, 0.0] if first_used else [0.0, *values])


def _utilisation(load: float, capacity: float) -> float:
    if capacity > 0:
        return load / capacity
    return 0.0 if load <= EPSILON else float("inf")


def _clip(items: list[str], limit: int = 8) -> str:
    shown = ", ".join(items[:limit])
    return shown + (f", … (+{len(items) - limit})" if len(items) > limit else "")
