"""The small typed interfaces through which the edges meet.

The edges (``service`` for Thrift, ``monitoring`` for ZooKeeper and Spark, ``reconfig``,
``nimbus``, ``dashboard``) never import each other; each depends on these types, and
``scheduler_py/cli/`` wires the concrete implementations together (ARCHITECTURE.md):

* :class:`CostSource` — measured costs for the round (implemented by
  ``monitoring/measured.py``);
* :class:`TopologyControl` — deactivate/activate a topology (``nimbus/``);
* :class:`LiveWorker` / :class:`LiveTask` — a worker's live counters, produced by
  ``monitoring/live.py`` and read by the reconfiguration drain (``reconfig/``);
* :class:`ArmedPlan` and :class:`ReconfigurationPort` — what the Thrift service asks of the
  reconfiguration controller every round, and the operator calls it forwards
  (``reconfig/controller.py`` implements it).

The dashboard's ports (the brain, the plan log, the aggregates) are in
``scheduler_py/scheduling/dashboard_ports.py``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from scheduler_py.model.types import Topology
from scheduler_py.scheduling.state import ClusterState, ExecutorKey, StormPlacement


class OperatorError(Exception):
    """An operator request that cannot be carried out; the message says why and what to do."""


class CostSource(Protocol):
    """Measured costs for the topologies of a round (``scheduler-py serve --zookeeper``)."""

    def costs_for(
        self,
        topology: Topology,
        storm_executor: Mapping[str, ExecutorKey],
        conf: Mapping[str, Any],
    ) -> tuple[Topology, str]:
        """``(topology with measured costs, note)`` or ``(topology, "declared (why)")``.
        Never raises: monitoring must not cost a scheduling round."""
        ...

    def aggregate(self, topology_id: str) -> Mapping[str, Any] | None:
        """The topology's latest aggregate document (``docs/monitoring-format.md`` §4)."""
        ...

    def stale(self, aggregate: Mapping[str, Any], conf: Mapping[str, Any]) -> str | None:
        """Why ``aggregate`` is too old to plan on for a topology with ``conf`` (with its
        age), or ``None`` while it is fresh; ``costs_for`` prices by the same rule."""
        ...

    def connect(self) -> None:
        """Start opening connections, without waiting (the service calls it at start, so
        that the first round after a cluster starts finds them open)."""
        ...

    def close(self) -> None: ...


class TopologyControl(Protocol):
    """The Nimbus calls a reconfiguration makes."""

    def status(self, name: str) -> str | None: ...
    def deactivate(self, name: str) -> None: ...
    def activate(self, name: str) -> None: ...
    def rebalance(self, name: str, wait_secs: int = 0) -> None:
        """Storm's ``rebalance``: after ``wait_secs`` Nimbus schedules the topology at once
        (from INACTIVE it goes REBALANCING and back to INACTIVE)."""
        ...

    def assignment(self, name: str) -> frozenset[tuple[int, int, str, int]] | None:
        """``{(task_start, task_end, supervisor_id, port)}`` of the topology's executors as
        Nimbus assigned them; ``None`` when it cannot tell (not running, hosts ambiguous)."""
        ...

    def sync_supervisor(self, supervisor_id: str, host: str, port: int) -> None:
        """Hand the supervisor at ``host:port`` (its ``supervisor.thrift.port``) Nimbus's
        current assignments for it now, as its own 10 s sync timer would; raises when it
        could not (``scheduler_py/nimbus/supervisor_sync.py``)."""
        ...


@dataclass(frozen=True)
class LiveTask:
    """One task's live counters, cumulative since its worker's monitor started
    (``docs/monitoring-format.md`` §5)."""

    task: int
    component: str
    is_spout: bool
    emitted: int
    """emit calls on user streams (stream id not starting with ``__``), not per destination"""
    executed: int
    """``execute`` calls for tuples from user streams (bolts)"""
    acked: int
    failed: int
    pending: int
    """spouts: ``ack_init - acked - failed`` (≥ 0), tuple trees still in flight; bolts: 0"""
    ack_init: int = 0
    """spouts: tuple trees handed to the ackers (``__ack_init`` emits)"""

    @property
    def activity(self) -> int:
        """emitted + executed + acked + failed: grows whenever the task does anything."""
        return self.emitted + self.executed + self.acked + self.failed


@dataclass(frozen=True)
class LiveWorker:
    """One worker's live counters document."""

    supervisor_id: str
    host: str
    port: int
    ts_ms: int
    """when the worker took the snapshot (the worker's clock)"""
    started_ms: int
    """when the worker's monitor started; a new value means the counters restarted from 0"""
    seq: int
    tasks: tuple[LiveTask, ...]
    topology_id: str = ""
    supervisor_thrift_port: int | None = None
    """the Thrift port of the supervisor running the worker (``None``: not published)"""

    @property
    def key(self) -> str:
        """``<supervisor_id>:<port>``, the znode name."""
        return f"{self.supervisor_id}:{self.port}"

    @property
    def pending(self) -> int:
        """Tuple trees of this worker's spouts still in flight."""
        return sum(t.pending for t in self.tasks)

    @property
    def activity(self) -> int:
        """Sum of every task's :attr:`LiveTask.activity`."""
        return sum(t.activity for t in self.tasks)


class LiveCounters(Protocol):
    """The workers' live counters and the change reference, in ZooKeeper."""

    def live(self, topology_id: str) -> Mapping[str, LiveWorker]:
        """``{"<supervisor>:<port>": LiveWorker}``; ``{}`` when none are published."""
        ...

    def write_reference(self, topology_id: str, aggregate: Mapping[str, Any]) -> None:
        """Make ``aggregate`` the topology's change-signal reference."""
        ...


@dataclass(frozen=True)
class ArmedPlan:
    """A drained topology's new placement, to be answered as PLACE at the next round."""

    topology_id: str
    algorithm: str
    reason: str
    placements: tuple[StormPlacement, ...]
    summary: Mapping[str, Any] = field(default_factory=dict)
    """the plan's numbers for the plan log, as a planned PLACE carries them"""


class ReconfigurationPort(Protocol):
    """What the Thrift service needs of the reconfiguration controller."""

    def armed(self) -> Mapping[str, ArmedPlan]: ...
    def observe_round(self, state: ClusterState, decisions: Sequence[Any]) -> None: ...
    def replan(
        self,
        topology: str,
        algorithm: str = "",
        dry_run: bool = False,
        params: Mapping[str, Any] | None = None,
    ) -> dict:
        """Plan ``topology`` again with ``algorithm`` (empty: its own) and ``params`` (over
        the algorithm's configured ones); apply it unless ``dry_run``."""
        ...

    def history_of(self, topology: str) -> list[dict[str, Any]]: ...
    def set_trigger_paused(self, paused: bool, topology: str | None = None) -> dict[str, Any]:
        """Pause or resume the automatic trigger for ``topology`` (name or id), or for every
        topology when ``None``; returns :meth:`trigger_state`."""
        ...

    def trigger_state(self) -> dict[str, Any]:
        """Whether the automatic trigger runs: ``enabled`` (configured), ``paused`` (for
        every topology), ``paused_topologies`` (name -> since), ``kept_in``,
        ``stale_aggregates`` (name -> why the trigger ignores its aggregate)."""
        ...

    def start(self) -> None: ...
    def stop(self) -> None: ...
    def describe(self) -> str:
        """One line for the service's start-up log."""
        ...
