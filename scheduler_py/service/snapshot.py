"""The Thrift boundary: the shim's ``ClusterSnapshot`` in, ``ScheduleReply`` out.

:func:`to_state` converts a snapshot (``scheduler.thrift``) into the typed
:class:`~scheduler_py.scheduling.state.ClusterState` the round reads — conf values
JSON-decoded, groupings as names — and :func:`to_reply` converts the round's
:class:`~scheduler_py.scheduling.round.TopologyDecision` list back. Nothing else in the
brain sees a Thrift object.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from scheduler_py import __version__
from scheduler_py.model.errors import InvalidProblemError
from scheduler_py.scheduling.round import TopologyDecision
from scheduler_py.scheduling.state import (
    ClusterState,
    ExecutorRun,
    StormComponent,
    StormExecutor,
    StormInput,
    StormSlot,
    StormSupervisor,
    StormTopology,
    decode_conf,
)
from scheduler_py.service.wire import wire

GROUPINGS = {
    0: "unknown",
    1: "shuffle",
    2: "local_or_shuffle",
    3: "fields",
    4: "all",
    5: "global",
    6: "none",
    7: "direct",
    8: "custom",
}


def to_state(snapshot: Any) -> ClusterState:
    """The typed state of a Thrift ``ClusterSnapshot``; a structurally broken snapshot
    raises :class:`InvalidProblemError` naming what is missing."""
    try:
        return ClusterState(
            round=int(snapshot.round),
            timestamp_ms=int(snapshot.timestamp_ms),
            supervisors=tuple(_supervisor(s) for s in snapshot.supervisors or ()),
            topologies=tuple(_topology(t) for t in snapshot.topologies or ()),
            storm_version=snapshot.storm_version or "",
            timeout_ms=getattr(snapshot, "timeout_ms", None) or None,
        )
    except (AttributeError, TypeError, ValueError) as error:
        raise InvalidProblemError(f"malformed cluster snapshot: {error}") from error


def _supervisor(sup: Any) -> StormSupervisor:
    return StormSupervisor(
        id=sup.id,
        host=sup.host,
        slots=tuple(StormSlot(int(s.port), s.topology_id or None) for s in sup.slots or ()),
        total_cpu=float(sup.total_cpu),
        total_memory_mb=float(sup.total_memory_mb),
        available_cpu=float(sup.available_cpu),
        available_memory_mb=float(sup.available_memory_mb),
        rack=sup.rack or None,
    )


def _executor(ex: Any) -> StormExecutor:
    return StormExecutor(int(ex.task_start), int(ex.task_end), ex.component)


def _topology(topo: Any) -> StormTopology:
    return StormTopology(
        id=topo.id,
        name=topo.name,
        num_workers=int(topo.num_workers),
        components=tuple(
            StormComponent(
                id=c.id,
                is_spout=bool(c.is_spout),
                is_system=bool(c.is_system),
                parallelism=int(c.parallelism),
                cpu_per_executor=float(c.cpu_per_executor),
                memory_mb_per_executor=float(c.memory_mb_per_executor),
                inputs=tuple(
                    StormInput(
                        i.component,
                        i.stream,
                        GROUPINGS.get(i.grouping, "unknown"),
                        tuple(i.fields or ()),
                    )
                    for i in c.inputs or ()
                ),
            )
            for c in topo.components or ()
        ),
        executors=tuple(_executor(e) for e in topo.executors or ()),
        current=tuple(
            ExecutorRun(_executor(p.executor), p.supervisor_id, int(p.port))
            for p in topo.current or ()
        ),
        needs_scheduling=bool(topo.needs_scheduling),
        conf=decode_conf(topo.conf or {}),
    )


def to_reply(decisions: Sequence[TopologyDecision]) -> Any:
    """The Thrift ``ScheduleReply`` for the round's decisions."""
    w = wire()
    plans = []
    for decision in decisions:
        placements = [
            w.ExecutorPlacement(
                w.Executor(run.executor.task_start, run.executor.task_end, run.executor.component),
                run.supervisor_id,
                run.port,
            )
            for run in decision.runs
        ]
        plans.append(
            w.TopologyPlan(
                decision.topology_id,
                getattr(w.Decision, decision.decision),
                placements,
                decision.reason,
                decision.algorithm,
            )
        )
    return w.ScheduleReply(plans, __version__)
