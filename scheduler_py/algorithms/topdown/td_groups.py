"""TD's grouping (paper 000 §4, Alg. 4 lines 1-6): one group per component, or skew subgroups
(§5), and the group pairs they form (``docs/algorithms/000-topdown.md`` §2.4, §2.7)."""

from __future__ import annotations

import math
from collections.abc import Mapping

from scheduler_py.algorithms.topdown.groups import (
    BIG,
    component_edges,
)
from scheduler_py.model.types import Problem


class Groups:
    """The job as TD sees it: groups (components or skew subgroups) and group pairs.

    Group ``g`` is an ordered list of executors; ``cpu_t[g]`` is the per-task CPU when the
    group is uniform (Eq. 1), otherwise ``None`` and ``cpu_pre[g]`` holds prefix sums, so a
    slice's exact cost is still O(1) and a fit count O(log n). Memory per task is always
    uniform (the model splits a component's memory evenly). ``edges`` are
    ``(group i, group j, total IMC)`` in edge-id order (the tie-break of the priority).
    """

    __slots__ = (
        "comp",
        "cpu_pre",
        "cpu_t",
        "edges",
        "ids",
        "mem_t",
        "offset",
        "orig",
        "pc",
        "size",
        "subgrouped",
        "topology",
    )

    def __init__(self) -> None:
        self.comp: list[str] = []
        self.size: list[int] = []
        self.cpu_t: list[float | None] = []
        self.cpu_pre: list[list[float] | None] = []
        self.mem_t: list[float] = []
        self.pc: list[float] = []
        self.orig: list[list[int] | None] = []  # executor index per position (None: range)
        self.ids: list[list[str] | None] = []  # executor ids per position (None: lazily)
        self.offset: list[int] = []  # position of a component's first executor in topology
        self.edges: list[tuple[int, int, float]] = []
        self.subgrouped = False

    def add(
        self,
        comp: str,
        costs: list[float] | None,
        size: int,
        cpu_t: float,
        mem_t: float,
        orig: list[int] | None = None,
        ids: list[str] | None = None,
        offset: int = 0,
    ) -> None:
        """Append a group; ``costs`` (per task) only when they may differ."""
        if costs is not None and any(c != costs[0] for c in costs):
            pre = [0.0]
            for c in costs:
                pre.append(pre[-1] + c)
            self.cpu_t.append(None)
            self.cpu_pre.append(pre)
            self.pc.append(pre[-1])
        else:
            unit = costs[0] if costs else cpu_t
            self.cpu_t.append(unit)
            self.cpu_pre.append(None)
            self.pc.append(unit * size)
        self.comp.append(comp)
        self.size.append(size)
        self.mem_t.append(mem_t)
        self.orig.append(orig)
        self.ids.append(ids)
        self.offset.append(offset)

    def executor_ids(self, g: int) -> list[str]:
        ids = self.ids[g]
        if ids is None:
            cached = self.topology.__dict__.get("executors")  # the cached_property, if built
            if cached is not None:
                start = self.offset[g]
                ids = [e.id for e in cached[start : start + self.size[g]]]
            else:  # the model's id convention (executor_id), without building Executor objects
                comp = self.comp[g]
                ids = [f"{comp}#{i}" for i in range(self.size[g])]
            self.ids[g] = ids
        return ids

    def task_cpu(self, g: int, pos: int) -> float:
        unit = self.cpu_t[g]
        if unit is not None:
            return unit
        pre = self.cpu_pre[g]
        return pre[pos + 1] - pre[pos]

    def index_of(self, g: int, pos: int) -> int:
        orig = self.orig[g]
        return pos if orig is None else orig[pos]


def build_groups(
    problem: Problem, margin: float, cpu_of: Mapping[str, float] | None = None
) -> Groups:
    """Groups of ``problem``: one per component, or skew subgroups (§5,
    ``docs/algorithms/000-topdown.md`` §2.7c).

    Subgrouping happens when the topology carries measured per-executor CPU or
    executor-pair traffic and ``margin > 0``: each component's executors are bucketed by
    ``⌊log_{1+m}(x)⌋`` of their CPU and, with measured traffic, of their in- and out-rates
    (zero is a bucket of its own); every bucket becomes a group whose pairs carry the
    measured traffic between them (or Eq. 1's share of the component edge when only CPU is
    measured).
    """
    topology = problem.topology
    groups = Groups()
    groups.topology = topology
    measured = bool(topology.executor_cpu) or topology.has_measured_traffic
    if cpu_of is None and not measured:  # the common case: Eq. 1 everywhere
        offset = 0
        for comp in topology.components:
            p = comp.parallelism
            groups.add(comp.id, None, p, comp.cpu / p, comp.memory_mb / p, offset=offset)
            offset += p
        groups.edges = component_edges(topology)
        return groups

    executors = topology.executors
    cost = (lambda e: cpu_of.get(e.id, e.cpu)) if cpu_of else (lambda e: e.cpu)
    if margin <= 0 or not measured:
        offset = 0
        for comp in topology.components:
            p = comp.parallelism
            exs = executors[offset : offset + p]
            groups.add(comp.id, [cost(e) for e in exs], p, 0.0, comp.memory_mb / p, offset=offset)
            offset += p
        groups.edges = component_edges(topology)
        return groups

    groups.subgrouped = True
    rates_in: dict[str, float] = {}
    rates_out: dict[str, float] = {}
    known = topology.executor_by_id
    traffic = [  # measured pairs; stale ids (executors no longer in the topology) are ignored
        (src, dst, rate)
        for src, dst, rate in (topology.pair_traffics() if topology.has_measured_traffic else ())
        if src in known and dst in known
    ]
    for src, dst, rate in traffic:
        rates_out[src] = rates_out.get(src, 0.0) + rate
        rates_in[dst] = rates_in.get(dst, 0.0) + rate
    log_base = math.log1p(margin)

    def bucket(x: float) -> int:
        return math.floor(math.log(x) / log_base) if x > 0 else -BIG

    group_of: dict[str, int] = {}
    members_of_comp: list[list[int]] = []
    offset = 0
    for comp in topology.components:
        p = comp.parallelism
        buckets: dict[tuple, list] = {}
        for e in executors[offset : offset + p]:
            c = cost(e)
            if traffic:
                k = (bucket(c), bucket(rates_in.get(e.id, 0.0)), bucket(rates_out.get(e.id, 0.0)))
            else:
                k = (bucket(c),)
            buckets.setdefault(k, []).append((e, c))
        mine = []
        for items in buckets.values():  # in order of the first executor of each bucket
            g = len(groups.size)
            for e, _ in items:
                group_of[e.id] = g
            groups.add(
                comp.id,
                [c for _, c in items],
                len(items),
                0.0,
                comp.memory_mb / p,
                orig=[e.index for e, _ in items],
                ids=[e.id for e, _ in items],
            )
            mine.append(g)
        members_of_comp.append(mine)
        offset += p

    if traffic:
        totals: dict[tuple[int, int], float] = {}
        for src, dst, rate in traffic:
            a, b = group_of[src], group_of[dst]
            if a != b:
                k = (a, b) if a < b else (b, a)
                totals[k] = totals.get(k, 0.0) + rate
        groups.edges = [(a, b, t) for (a, b), t in sorted(totals.items())]
    else:
        size = groups.size
        for ci, cj, t in component_edges(topology):
            whole = topology.components[ci].parallelism * topology.components[cj].parallelism
            for a in members_of_comp[ci]:
                for b in members_of_comp[cj]:
                    groups.edges.append((a, b, t * size[a] * size[b] / whole))
    return groups
