"""The Thrift boundary: the shim's ``ClusterSnapshot`` in, ``ScheduleReply`` out.

:func:`to_state` converts a snapshot (``scheduler.thrift``) into the typed
:class:`~scheduler_py.scheduling.state.ClusterState` the round reads — conf values
JSON-decoded, groupings as names — and :func:`to_reply` converts the round's
:class:`~scheduler_py.scheduling.round.TopologyDecision` list back. Nothing else in the
brain sees a Thrift object.
"""

from __future__ import annotations

import logging
import math
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

log = logging.getLogger(__name__)

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
    """The typed state of a Thrift ``ClusterSnapshot``.

    A malformed supervisor or round header makes the whole snapshot unusable
    (:class:`InvalidProblemError` naming the field; the shim then falls back for the round).
    A malformed topology is listed in :attr:`ClusterState.rejected` with the reason, and the
    round leaves it — and only it — to Storm.
    """
    if snapshot is None:
        raise InvalidProblemError(
            "malformed schedule call: expected a ClusterSnapshot argument, found none"
        )
    try:
        supervisors = tuple(
            _supervisor(s) for s in _items(snapshot.supervisors, "supervisors", required=True)
        )
        _unique((s.id for s in supervisors), "supervisor id")
        header = (
            int(_number(snapshot.round, "round")),
            int(_number(snapshot.timestamp_ms, "timestamp_ms")),
        )
    except (AttributeError, TypeError, ValueError) as error:
        raise InvalidProblemError(f"malformed cluster snapshot: {error}") from error
    topologies = []
    rejected: dict[str, str] = {}
    for index, topo in enumerate(_items(getattr(snapshot, "topologies", None), "topologies")):
        try:
            topologies.append(_topology(topo))
        except (AttributeError, TypeError, ValueError) as error:
            topology_id = getattr(topo, "id", None)
            if not isinstance(topology_id, str) or not topology_id:
                log.warning(
                    "ignoring topology #%d of the snapshot: it has no id (%s)", index, error
                )
                continue
            rejected[topology_id] = f"malformed topology in the cluster snapshot: {error}"
    timeout = getattr(snapshot, "timeout_ms", None)
    return ClusterState(
        round=header[0],
        timestamp_ms=header[1],
        supervisors=supervisors,
        topologies=tuple(topologies),
        storm_version=snapshot.storm_version if isinstance(snapshot.storm_version, str) else "",
        timeout_ms=int(timeout) if isinstance(timeout, int) and timeout > 0 else None,
        rejected=rejected,
        blacklisted=_blacklisted(getattr(snapshot, "blacklisted_supervisors", None)),
        blacklisted_hosts=tuple(
            sorted({h for h in getattr(snapshot, "blacklisted_hosts", None) or () if _is_text(h)})
        ),
    )


def _blacklisted(entries: Any) -> dict[str, str] | None:
    """Supervisor id -> host of the blacklisted supervisors; ``None`` when the shim sent no
    list (older shims). Informational only: a malformed entry is skipped with a warning, never
    a reason to fail the round."""
    if entries is None:
        return None
    result: dict[str, str] = {}
    for entry in entries if isinstance(entries, list | tuple) else ():
        sid, host = getattr(entry, "id", None), getattr(entry, "host", None)
        if _is_text(sid):
            result[sid] = host if isinstance(host, str) else ""
        else:
            log.warning(
                "ignoring a blacklisted supervisor without an id in the snapshot: %r", entry
            )
    return result


def _unique(values: Any, what: str) -> None:
    seen: set[str] = set()
    for value in values:
        if value in seen:
            raise ValueError(f"{what} {value!r} appears more than once")
        seen.add(value)


def _is_text(value: Any) -> bool:
    return isinstance(value, str) and bool(value)


def _items(value: Any, what: str, required: bool = False) -> list[Any]:
    """``value`` as a list; an unset optional list is empty, an unset required one (a
    ``required`` field of scheduler.thrift) makes the snapshot malformed."""
    if value is None:
        if required:
            raise ValueError(f"{what} must be a list, found None")
        return []
    if not isinstance(value, list | tuple):
        raise ValueError(f"{what} must be a list, found {type(value).__name__}")
    return list(value)


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str) or not value:
        raise ValueError(f"{what} must be a non-empty string, found {value!r}")
    return value


def _number(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"{what} must be a finite number, found {value!r}")
    return float(value)


def _count(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{what} must be a whole number >= 0, found {value!r}")
    return value


def _supervisor(sup: Any) -> StormSupervisor:
    # the checks of _text, _count and _number, with the error context built only on failure
    sid = _text(sup.id, "supervisor id")
    host = sup.host
    if type(host) is not str or not host:
        host = _text(host, f"supervisor {sid}: host")
    return StormSupervisor(
        id=sid,
        host=host,
        slots=tuple(
            _slot(s, sid) for s in _items(sup.slots, f"supervisor {sid}: slots", required=True)
        ),
        total_cpu=_finite(sup.total_cpu, sid, "total_cpu"),
        total_memory_mb=_finite(sup.total_memory_mb, sid, "total_memory_mb"),
        available_cpu=_finite(sup.available_cpu, sid, "available_cpu"),
        available_memory_mb=_finite(sup.available_memory_mb, sid, "available_memory_mb"),
        rack=sup.rack if isinstance(sup.rack, str) and sup.rack else None,
        host_link_mbit=_declared_mbit(sup.host_link_mbit, sid, "host_link_mbit"),
        rack_uplink_mbit=_declared_mbit(sup.rack_uplink_mbit, sid, "rack_uplink_mbit"),
    )


def _declared_mbit(value: Any, sid: str, field: str) -> float | None:
    """A link capacity the supervisor declares (optional; the shim sends only numbers > 0)."""
    if value is None:
        return None
    if type(value) in (int, float) and math.isfinite(value) and value > 0:
        return float(value)
    raise ValueError(f"supervisor {sid}: {field} must be Mbit/s above 0, found {value!r}")


def _slot(slot: Any, sid: str) -> StormSlot:
    port, owner = slot.port, slot.topology_id
    if type(port) is not int or port < 0:
        port = _count(port, f"supervisor {sid}: slot port")
    return StormSlot(port, owner if isinstance(owner, str) and owner else None)


def _finite(value: Any, sid: str, field: str) -> float:
    if type(value) is float and math.isfinite(value):
        return value
    return _number(value, f"supervisor {sid}: {field}")


def _executor(ex: Any, where: str) -> StormExecutor:
    start, end, component = ex.task_start, ex.task_end, ex.component
    # the shape every executor of a well-formed snapshot has, checked without a call per field
    well_formed = type(start) is int and type(end) is int and type(component) is str
    if well_formed and 0 <= start <= end and component:
        return StormExecutor(start, end, component)
    start = _count(ex.task_start, f"{where}: task_start")
    end = _count(ex.task_end, f"{where}: task_end")
    if end < start:
        raise ValueError(f"{where}: task_end {end} is before task_start {start}")
    return StormExecutor(start, end, _text(ex.component, f"{where}: component"))


def _component(c: Any, where: str) -> StormComponent:
    cid = _text(c.id, f"{where}: component id")
    here = f"{where}: component {cid}"
    return StormComponent(
        id=cid,
        is_spout=bool(c.is_spout),
        is_system=bool(c.is_system),
        parallelism=_count(c.parallelism, f"{here}: parallelism"),
        cpu_per_executor=_number(c.cpu_per_executor, f"{here}: cpu_per_executor"),
        memory_mb_per_executor=_number(c.memory_mb_per_executor, f"{here}: memory_mb_per_executor"),
        inputs=tuple(
            StormInput(
                _text(i.component, f"{here}: input component"),
                i.stream if isinstance(i.stream, str) else "default",
                GROUPINGS.get(i.grouping, "unknown"),
                tuple(str(f) for f in _items(i.fields, f"{here}: grouping fields")),
            )
            for i in _items(c.inputs, f"{here}: inputs")
        ),
    )


def _topology(topo: Any) -> StormTopology:
    tid = _text(topo.id, "topology id")
    where = f"topology {tid}"
    executor_where = f"{where}: executor"
    conf = topo.conf or {}
    if not isinstance(conf, dict) or not all(isinstance(v, str) for v in conf.values()):
        raise ValueError(f"{where}: conf must map keys to JSON-encoded strings")
    return StormTopology(
        id=tid,
        name=_text(topo.name, f"{where}: name"),
        num_workers=_count(topo.num_workers, f"{where}: num_workers"),
        components=tuple(
            _component(c, where) for c in _items(topo.components, f"{where}: components")
        ),
        executors=tuple(
            _executor(e, executor_where) for e in _items(topo.executors, f"{where}: executors")
        ),
        current=tuple(
            ExecutorRun(
                _executor(p.executor, f"{where}: current executor"),
                _text(p.supervisor_id, f"{where}: current supervisor_id"),
                _count(p.port, f"{where}: current port"),
            )
            for p in _items(topo.current, f"{where}: current")
        ),
        needs_scheduling=bool(topo.needs_scheduling),
        conf=decode_conf(conf),
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
