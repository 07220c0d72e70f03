"""The brain's status document: what the last scheduling round saw and decided, as JSON.

The Thrift service returns it from ``status()`` (``scheduler_py/service/scheduler.thrift``)
and the dashboard (``scheduler_py/dashboard/``) reads it: supervisors with their racks and
slots, the supervisors and hosts Nimbus blacklisted this round (``null`` from a shim that does
not report them), every topology with its components, executors and current placement, and the
round's decision per topology. Pure: built from a
:class:`~scheduler_py.scheduling.state.ClusterState` and the round's
:class:`~scheduler_py.scheduling.round.TopologyDecision` objects. The service adds
``trigger``, whether the automatic reconfiguration trigger runs or an operator paused it
(``scheduler_py/service/server.py``, ``scheduler_py/reconfig/pause.py``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from scheduler_py.scheduling.round import LEAVE, TopologyDecision
from scheduler_py.scheduling.state import ClusterState, StormSupervisor, StormTopology

STATUS_VERSION = 1


def status_document(
    state: ClusterState | None,
    decisions: Mapping[str, TopologyDecision],
    round_seconds: float | None,
    brain_version: str,
    rounds_seen: int,
    fallbacks_total: int,
) -> dict[str, Any]:
    """The status JSON object; ``state`` is ``None`` before the first round."""
    document: dict[str, Any] = {
        "v": STATUS_VERSION,
        "brain_version": brain_version,
        "rounds_seen": rounds_seen,
        "fallbacks_total": fallbacks_total,
        "round": None,
        "timestamp_ms": None,
        "round_seconds": round_seconds,
        "storm_version": "",
        "supervisors": [],
        "topologies": [],
        "rejected": {},
        "blacklisted_supervisors": None,
        "blacklisted_hosts": [],
    }
    if state is None:
        return document
    document |= {
        "round": state.round,
        "timestamp_ms": state.timestamp_ms,
        "storm_version": state.storm_version,
        "supervisors": [_supervisor(s) for s in state.supervisors],
        "topologies": [_topology(t, decisions.get(t.id)) for t in state.topologies],
        "rejected": dict(state.rejected),
        "fallbacks_last_round": count_fallbacks(list(decisions.values())),
        "blacklisted_supervisors": None
        if state.blacklisted is None
        else [{"id": sid, "host": host} for sid, host in sorted(state.blacklisted.items())],
        "blacklisted_hosts": list(state.blacklisted_hosts),
    }
    return document


def _supervisor(supervisor: StormSupervisor) -> dict[str, Any]:
    return {
        "id": supervisor.id,
        "host": supervisor.host,
        "rack": supervisor.rack,
        "slots": [{"port": s.port, "topology_id": s.topology_id} for s in supervisor.slots],
        "total_cpu": supervisor.total_cpu,
        "available_cpu": supervisor.available_cpu,
        "total_memory_mb": supervisor.total_memory_mb,
        "available_memory_mb": supervisor.available_memory_mb,
    }


def _topology(topology: StormTopology, decision: TopologyDecision | None) -> dict[str, Any]:
    return {
        "id": topology.id,
        "name": topology.name,
        "num_workers": topology.num_workers,
        "components": [
            {
                "id": c.id,
                "is_spout": c.is_spout,
                "is_system": c.is_system,
                "parallelism": c.parallelism,
                "cpu_per_executor": c.cpu_per_executor,
                "memory_mb_per_executor": c.memory_mb_per_executor,
                "inputs": [{"component": i.component, "stream": i.stream} for i in c.inputs],
            }
            for c in topology.components
        ],
        "current": [list(run.row) for run in topology.current],
        "decision": _decision(decision),
    }


def _decision(decision: TopologyDecision | None) -> dict[str, Any] | None:
    if decision is None:
        return None
    entry = decision.log_entry()
    return {key: entry[key] for key in ("decision", "algorithm", "reason", "summary")}


def count_fallbacks(decisions: Sequence[TopologyDecision]) -> int:
    """How many of a round's decisions left the topology to Storm."""
    return sum(1 for d in decisions if d.decision == LEAVE)
