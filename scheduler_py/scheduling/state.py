"""The cluster as one scheduling round sees it: typed, immutable, free of Thrift.

``scheduler_py/service/snapshot.py`` converts the shim's Thrift ``ClusterSnapshot``
(``scheduler_py/service/scheduler.thrift``) into a :class:`ClusterState`; the round
(:mod:`scheduler_py.scheduling.round`) and the reconfiguration controller read only these
types. Field names follow the IDL so that a reader can hold the two side by side; topology
configuration values arrive already decoded from JSON and groupings as names.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

ExecutorKey = tuple[int, int]
"""A Storm executor: (task_start, task_end)."""

StormPlacement = tuple[int, int, str, str, int]
"""(task_start, task_end, component, supervisor id, port): one executor in one worker."""


@dataclass(frozen=True)
class StormSlot:
    port: int
    topology_id: str | None = None
    """the topology holding the slot; ``None`` when it is free"""


@dataclass(frozen=True)
class StormSupervisor:
    id: str
    host: str
    slots: tuple[StormSlot, ...]
    total_cpu: float
    total_memory_mb: float
    available_cpu: float
    available_memory_mb: float
    rack: str | None = None
    host_link_mbit: float | None = None
    """what the supervisor declares of its host link (``scheduler.host.link.mbit``)"""
    rack_uplink_mbit: float | None = None
    """what it declares of its rack's uplink (``scheduler.rack.uplink.mbit``)"""


@dataclass(frozen=True)
class StormInput:
    """One input of a component: the upstream component, its stream and the grouping."""

    component: str
    stream: str
    grouping: str
    """``shuffle``, ``fields``, ``local_or_shuffle``, … (``unknown`` when Storm's is custom)"""
    fields: tuple[str, ...] = ()


@dataclass(frozen=True)
class StormComponent:
    id: str
    is_spout: bool
    is_system: bool
    parallelism: int
    cpu_per_executor: float
    memory_mb_per_executor: float
    inputs: tuple[StormInput, ...] = ()


@dataclass(frozen=True)
class StormExecutor:
    task_start: int
    task_end: int
    component: str

    @property
    def key(self) -> ExecutorKey:
        return (self.task_start, self.task_end)


@dataclass(frozen=True)
class ExecutorRun:
    """An executor and the worker (supervisor, port) it runs in or is planned for."""

    executor: StormExecutor
    supervisor_id: str
    port: int

    @property
    def row(self) -> StormPlacement:
        e = self.executor
        return (e.task_start, e.task_end, e.component, self.supervisor_id, self.port)


@dataclass(frozen=True)
class StormTopology:
    id: str
    name: str
    num_workers: int
    components: tuple[StormComponent, ...]
    executors: tuple[StormExecutor, ...]
    current: tuple[ExecutorRun, ...] = ()
    """where the executors run now (empty for a new topology)"""
    needs_scheduling: bool = True
    conf: Mapping[str, Any] = field(default_factory=dict)
    """the ``scheduler.*`` and a few ``topology.*`` entries, JSON-decoded"""

    def running(self) -> set[StormPlacement]:
        """Where the executors run now, as rows."""
        return {run.row for run in self.current}


@dataclass(frozen=True)
class ClusterState:
    round: int
    timestamp_ms: int
    supervisors: tuple[StormSupervisor, ...]
    topologies: tuple[StormTopology, ...]
    storm_version: str = ""
    timeout_ms: int | None = None
    """how long the shim waits for this round's answer (``scheduler.brain.timeout.ms``);
    ``None`` when the shim did not say"""
    rejected: Mapping[str, str] = field(default_factory=dict)
    """topology id -> why its part of the snapshot could not be read (left to Storm)"""
    blacklisted: Mapping[str, str] | None = None
    """supervisor id -> host of the supervisors Nimbus blacklisted this round (not in
    ``supervisors``; running placements may name them); ``None`` when the shim did not say
    (an older shim)"""
    blacklisted_hosts: tuple[str, ...] = ()
    """every host blacklisted this round, with or without a live supervisor"""

    def topology(self, name_or_id: str) -> StormTopology | None:
        return next((t for t in self.topologies if name_or_id in (t.id, t.name)), None)

    @property
    def hosts(self) -> dict[str, str]:
        """supervisor id -> host"""
        return {s.id: s.host for s in self.supervisors}


def decode_conf(raw: Mapping[str, str]) -> dict[str, Any]:
    """Topology conf entries arrive JSON-encoded; a value that is not JSON stays a string."""
    conf: dict[str, Any] = {}
    for key, value in raw.items():
        try:
            conf[key] = json.loads(value)
        except (TypeError, ValueError):
            conf[key] = value
    return conf
