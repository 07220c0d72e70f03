"""How many nodes a ``throughput`` plan may use: its ``hosts`` parameter
(``docs/algorithms/throughput-model.md``, "Fewer hosts: the hosts parameter").

``packed`` (the default) caps the plan at the nodes a resource-aware packing needs: the
executors' declared CPU and memory, largest first, each on the first opened node with room,
nodes opened most free CPU first (first-fit decreasing, the count Storm's
ResourceAwareScheduler reaches on the emulated hosts of
``docs/results/emulated-network/throughput-default/``: 3, 5 and 4 nodes for Linear-CPU,
Diamond-CPU and Star-CPU). The plan is then the fastest the model finds within the cap, which
leaves the other hosts to other topologies, as RAS would. A number caps it at that many nodes.
``all`` lets the plan use any node with room, so a CPU-bound topology spreads over every free
host when that raises its predicted rate (a cluster given to one topology).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from scheduler_py.model.capacity import CapacityTracker
from scheduler_py.model.errors import SchedulingError
from scheduler_py.model.throughput import measured_work_seconds
from scheduler_py.model.types import Problem

ALL = "all"
PACKED = "packed"
DEFAULT_HOSTS = PACKED
"""the ``hosts`` a plan gets when nothing sets it: no more nodes than RAS packs the topology
onto (``docs/algorithms/throughput-model.md``, "Fewer hosts: the hosts parameter")"""


@dataclass(frozen=True)
class HostCap:
    """A parsed ``hosts`` parameter: ``count`` nodes at most (``None``: no cap), or as many
    as :func:`packed_plan` opens (``packed``)."""

    text: str
    count: int | None = None
    packed: bool = False

    @property
    def capped(self) -> bool:
        return self.packed or self.count is not None


def parse_hosts(value: object, algorithm: str) -> HostCap:
    """``all``, ``packed`` or a whole number ≥ 1; anything else is a :class:`SchedulingError`
    naming what was expected."""
    text = str(value).strip().lower()
    if text == ALL:
        return HostCap(ALL)
    if text == PACKED:
        return HostCap(PACKED, packed=True)
    if text.isdigit() and int(text) >= 1:
        return HostCap(text, count=int(text))
    raise SchedulingError(
        f"algorithm {algorithm!r}: parameter 'hosts' must be {ALL}, {PACKED} or a whole number "
        f"of nodes >= 1; found {value!r}"
    )


def declared_capacity(problem: Problem) -> Problem:
    """``problem`` with each executor's declared CPU (what Storm accounts, and what its
    ResourceAwareScheduler packs by) in place of the measured one, the measured CPU seconds
    per tuple kept for the throughput model. A CPU-bound topology's measured CPU is what it
    burned at the running rate on saturated hosts: as a capacity it would rule out every plan
    on as few hosts, while the model already bounds each host's CPU at the predicted rate."""
    topology = problem.topology
    if not topology.executor_cpu:
        return problem
    declared = replace(topology, executor_cpu={}, work_seconds=measured_work_seconds(topology))
    return replace(problem, topology=declared)


def packed_plan(problem: Problem) -> dict[str, str] | None:
    """The executors packed first-fit decreasing by CPU, then memory (ties: executor
    id), onto the problem's usable nodes opened most free CPU first (ties: problem order);
    ``None`` when they do not fit."""
    usable = problem.usable_nodes
    position = problem.node_index
    closed = sorted(usable, key=lambda n: (-n.cpu, position[n.id]))
    tracker = CapacityTracker(usable)
    opened: list[str] = []
    node_of: dict[str, str] = {}
    executors = sorted(problem.topology.executors, key=lambda e: (-e.cpu, -e.memory_mb, e.id))
    for executor in executors:
        target = next((n for n in opened if tracker.fits_executor(n, executor)), None)
        while target is None and closed:
            node = closed.pop(0).id
            opened.append(node)
            if tracker.fits_executor(node, executor):
                target = node
        if target is None:
            return None
        tracker.take_executor(target, executor)
        node_of[executor.id] = target
    return node_of


def node_limit(cap: HostCap, packed: dict[str, str] | None, algorithm: str) -> int | None:
    """The most nodes a plan may use under ``cap``, given the packed plan (``None``: no cap,
    or ``packed`` where the executors fit no packing: the plan is then left uncapped, and the
    round's capacity check says why). A number below the packed plan's nodes is a
    :class:`SchedulingError`: no plan fits it."""
    needed = len(set(packed.values())) if packed is not None else None
    if cap.count is not None:
        if needed is None or needed > cap.count:
            raise SchedulingError(
                f"algorithm {algorithm!r}: parameter 'hosts' allows {cap.count} node(s), but "
                f"the topology's declared CPU and memory need "
                f"{needed if needed is not None else 'more than the free'} nodes' worth; "
                f"raise 'hosts', use {PACKED}, or lower the declared resources"
            )
        return cap.count
    return needed if cap.packed else None


def hosts_text(cap: HostCap, limit: int | None) -> str:
    """What the cap was, for the plan's report and Storm's status."""
    if limit is None:
        return f"{cap.text}: the declared resources fit no packing; nodes not capped"
    if cap.packed:
        return f"{PACKED}: at most {limit} node(s), as a packing of the declared resources needs"
    return f"at most {limit} node(s) (hosts={cap.text})"
