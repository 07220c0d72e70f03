"""T3's simplified graph (paper 002 §4.2) and first level (§4.4, Alg. 2, App. A-B): fill one node
with communicating groups, splitting a group or a pair of groups when it does not fit
(``docs/algorithms/002-t3.md`` §2.3-§2.7)."""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass, field

from scheduler_py.algorithms.t3.profile import Profile
from scheduler_py.model.types import EPSILON, Node

# Simplified graph (§4.2)


@dataclass
class Group:
    gid: int
    component: str
    tasks: list[str]
    rank: tuple[int, int]
    assigned: bool = False


@dataclass
class SimplifiedGraph:
    profile: Profile
    groups: dict[int, Group] = field(default_factory=dict)
    _weights: dict[tuple[int, int], float] = field(default_factory=dict)
    _ids: itertools.count = field(default_factory=itertools.count)
    component_rank: dict[str, int] = field(default_factory=dict)
    log: list[str] = field(default_factory=list)

    @classmethod
    def of(cls, profile: Profile) -> SimplifiedGraph:
        graph = cls(profile)
        components: list[str] = []
        for task in profile.tasks:
            if profile.component_of[task] not in components:
                components.append(profile.component_of[task])
        graph.component_rank = {c: i for i, c in enumerate(components)}
        for component in components:
            graph._add(
                component, [t for t in profile.tasks if profile.component_of[t] == component]
            )
        return graph

    def _add(self, component: str, tasks: list[str]) -> Group:
        order = self.profile.order
        tasks = sorted(tasks, key=order.__getitem__)
        group = Group(
            next(self._ids), component, tasks, (self.component_rank[component], order[tasks[0]])
        )
        self.groups[group.gid] = group
        return group

    def split(self, group: Group, selected: Iterable[str]) -> tuple[Group | None, Group | None]:
        """Replace ``group`` by (selected part, leftover); either may be ``None`` if empty."""
        chosen = set(selected)
        first = [t for t in group.tasks if t in chosen]
        rest = [t for t in group.tasks if t not in chosen]
        if not rest:
            return group, None
        if not first:
            return None, group
        del self.groups[group.gid]
        return self._add(group.component, first), self._add(group.component, rest)

    def unassigned(self) -> list[Group]:
        return sorted((g for g in self.groups.values() if not g.assigned), key=lambda g: g.rank)

    def connected(self, a: Group, b: Group) -> bool:
        return b.component in self.profile.connected[a.component]

    def weight(self, a: Group, b: Group) -> float:
        """Σ R over the task pairs of two groups (cached; groups never change in place)."""
        key = (a.gid, b.gid) if a.gid < b.gid else (b.gid, a.gid)
        if key not in self._weights:
            rates = self.profile.rates
            small, large = (a, b) if len(a.tasks) <= len(b.tasks) else (b, a)
            members = set(large.tasks)
            self._weights[key] = sum(
                r for t in small.tasks for s, r in rates[t].items() if s in members
            )
        return self._weights[key]

    def load(self, tasks: Iterable[str]) -> float:
        return sum(self.profile.load[t] for t in tasks)

    def memory(self, tasks: Iterable[str]) -> float:
        return sum(self.profile.memory[t] for t in tasks)


# --------------------------------------------------------------------------------------
# First level (§4.4)
# --------------------------------------------------------------------------------------


@dataclass
class Bin:
    """The node being filled: what is left of C(n), memory and the task-count limit."""

    node: Node
    cpu: float
    memory: float
    count: float
    tasks: list[str] = field(default_factory=list)

    def fits(self, load: float, memory: float, count: int) -> bool:
        return (
            load <= self.cpu + EPSILON
            and memory <= self.memory + EPSILON
            and count <= self.count + EPSILON
        )

    def take(self, graph: SimplifiedGraph, tasks: list[str]) -> None:
        self.cpu -= graph.load(tasks)
        self.memory -= graph.memory(tasks)
        self.count -= len(tasks)
        self.tasks.extend(tasks)


def pair_partition(
    graph: SimplifiedGraph, a: Group, b: Group, room: Bin, *, single_fallback: bool = True
) -> list[str]:
    """§4.4.2 / App. A: the tasks of (A₁, B₁) — highest-rate task pairs first, two new
    tasks per step (scenarios 1-3), the single new task when no partner fits."""
    profile = graph.profile
    rates, order = profile.rates, profile.order
    side = {t: a for t in a.tasks} | {t: b for t in b.tasks}
    pairs = sorted(
        ((rates[x].get(y, 0.0), x, y) for x in a.tasks for y in b.tasks),
        key=lambda p: (-p[0], order[p[1]], order[p[2]]),
    )
    selected: set[str] = set()
    load = memory = 0.0

    def fits(*tasks: str) -> bool:
        return room.fits(
            load + sum(profile.load[t] for t in tasks),
            memory + sum(profile.memory[t] for t in tasks),
            len(selected) + len(tasks),
        )

    while True:
        pick: tuple[str, ...] = ()
        for _, x, y in pairs:
            if x in selected and y in selected:  # scenario 3
                continue
            if x not in selected and y not in selected:  # scenario 1
                if fits(x, y):
                    pick = (x, y)
                    break
                continue
            new = y if x in selected else x  # scenario 2
            old_side = side[x if x in selected else y]
            partners = sorted(
                (t for t in old_side.tasks if t not in selected),
                key=lambda t: (-rates[t].get(new, 0.0), order[t]),
            )
            partner = next((t for t in partners if fits(t, new)), None)
            if partner is not None:
                pick = (partner, new)
                break
            if single_fallback and fits(new):
                pick = (new,)
                break
        if not pick:
            return [t for t in a.tasks + b.tasks if t in selected]
        selected.update(pick)
        load += sum(profile.load[t] for t in pick)
        memory += sum(profile.memory[t] for t in pick)


def single_partition(graph: SimplifiedGraph, group: Group, room: Bin) -> list[str]:
    """§4.4.3 / App. B: the tasks of A₁ — by highest single rate to the sub-graph (then
    summed rate, then task order); a task that does not fit is skipped."""
    profile = graph.profile
    rates, order = profile.rates, profile.order
    on_node = room.tasks

    def key(t: str) -> tuple[float, float, int]:
        links = [rates[t].get(s, 0.0) for s in on_node]
        return (-max(links, default=0.0), -sum(links), order[t])

    selected: list[str] = []
    load = memory = 0.0
    for t in sorted(group.tasks, key=key):
        if room.fits(load + profile.load[t], memory + profile.memory[t], len(selected) + 1):
            selected.append(t)
            load += profile.load[t]
            memory += profile.memory[t]
    return selected


def _starting_point(
    graph: SimplifiedGraph, skipped: set
) -> tuple[Group, Group] | tuple[Group] | None:
    """The heaviest pair of communicating unassigned groups (first maximum in rank order);
    without any, the single unassigned group with the largest load."""
    groups = graph.unassigned()
    best: tuple[float, Group, Group] | None = None
    for i, g in enumerate(groups):
        for h in groups[i + 1 :]:
            if not graph.connected(g, h) or (g.gid, h.gid) in skipped:
                continue
            w = graph.weight(g, h)
            if best is None or w > best[0]:
                best = (w, g, h)
    if best is not None:
        return best[1], best[2]
    singles = [g for g in groups if g.gid not in skipped]
    if not singles:
        return None
    return (max(singles, key=lambda g: (graph.load(g.tasks), -g.rank[0], -g.rank[1])),)


def _neighbour(graph: SimplifiedGraph, on_node: list[Group], skipped: set) -> Group | None:
    """The unassigned group communicating most with the node's sub-graph (Σ of weights)."""
    best: tuple[float, Group] | None = None
    for g in graph.unassigned():
        if g.gid in skipped:
            continue
        linked = [h for h in on_node if graph.connected(g, h)]
        if not linked:
            continue
        w = sum(graph.weight(g, h) for h in linked)
        if best is None or w > best[0]:
            best = (w, g)
    return None if best is None else best[1]


def _full(graph: SimplifiedGraph, room: Bin) -> bool:
    profile = graph.profile
    return not any(
        room.fits(profile.load[t], profile.memory[t], 1)
        for g in graph.unassigned()
        for t in g.tasks
    )


def first_level(graph: SimplifiedGraph, room: Bin, *, single_fallback: bool = True) -> list[Group]:
    """Fill one node (Alg. 1 FIRST_LEVEL + Alg. 2 GROUP_SELECTION); returns its groups."""
    on_node: list[Group] = []
    skipped: set = set()
    name = room.node.id

    def assign(group: Group) -> None:
        group.assigned = True
        on_node.append(group)
        room.take(graph, group.tasks)

    while graph.unassigned() and not _full(graph, room):
        neighbour = _neighbour(graph, on_node, skipped) if on_node else None
        if neighbour is not None:
            if room.fits(
                graph.load(neighbour.tasks), graph.memory(neighbour.tasks), len(neighbour.tasks)
            ):
                assign(neighbour)
                continue
            chosen = single_partition(graph, neighbour, room)
            if not chosen:
                skipped.add(neighbour.gid)
                continue
            part, _ = graph.split(neighbour, chosen)
            graph.log.append(
                f"{name}: single group partitioning of {neighbour.component} "
                f"{_span(neighbour.tasks)} -> {_span(chosen)}"
            )
            assign(part)
            continue
        start = _starting_point(graph, skipped)
        if start is None:
            break
        tasks = [t for g in start for t in g.tasks]
        if room.fits(graph.load(tasks), graph.memory(tasks), len(tasks)):
            for g in start:
                assign(g)
            continue
        if len(start) == 1:
            (group,) = start
            chosen = single_partition(graph, group, room)
            if not chosen:
                skipped.add(group.gid)
                continue
            part, _ = graph.split(group, chosen)
            graph.log.append(f"{name}: split single group {group.component} -> {_span(chosen)}")
            assign(part)
            continue
        a, b = start
        chosen = pair_partition(graph, a, b, room, single_fallback=single_fallback)
        if not chosen:
            skipped.add((a.gid, b.gid))
            continue
        graph.log.append(
            f"{name}: group pair partitioning of ({a.component}, {b.component}) -> {_span(chosen)}"
        )
        for group in (a, b):
            part, _ = graph.split(group, [t for t in chosen if t in set(group.tasks)])
            if part is not None:
                assign(part)
    return on_node


def _span(tasks: list[str]) -> str:
    return "[" + ", ".join(tasks) + "]"
