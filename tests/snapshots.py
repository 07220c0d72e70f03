"""Builders of Thrift ``ClusterSnapshot`` values for tests (the shape the shim sends)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from scheduler_py.service.wire import wire


def supervisor(
    sid: str,
    ports: Iterable[int] = (6700, 6701, 6702, 6703),
    cpu: float = 400.0,
    memory: float = 4096.0,
    owners: Mapping[int, str] | None = None,
    used_cpu: float = 0.0,
    used_memory: float = 0.0,
    rack: str | None = None,
    host_link_mbit: float | None = None,
    rack_uplink_mbit: float | None = None,
) -> Any:
    w = wire()
    owners = owners or {}
    return w.Supervisor(
        id=sid,
        host=sid,
        rack=rack,
        host_link_mbit=host_link_mbit,
        rack_uplink_mbit=rack_uplink_mbit,
        slots=[w.Slot(port=p, topology_id=owners.get(p)) for p in ports],
        total_cpu=cpu,
        total_memory_mb=memory,
        available_cpu=cpu - used_cpu,
        available_memory_mb=memory - used_memory,
    )


def wordcount(
    topology_id: str = "wc-1",
    conf: Mapping[str, Any] | None = None,
    current: Iterable[tuple[int, int, str, int]] = (),
    needs_scheduling: bool = True,
    workers: int = 3,
) -> Any:
    """spout(2) -shuffle-> split(3) -fields-> count(3), plus 3 ackers; tasks numbered as Storm
    does (sorted component ids from 1)."""
    w = wire()
    g = w.GroupingType
    components = [
        w.Component(
            "__acker",
            False,
            True,
            3,
            10.0,
            128.0,
            [
                w.InputStream("spout", "__ack_init", g.FIELDS, ["id"]),
                w.InputStream("split", "__ack_ack", g.FIELDS, ["id"]),
                w.InputStream("count", "__ack_ack", g.FIELDS, ["id"]),
            ],
        ),
        w.Component(
            "count",
            False,
            False,
            3,
            10.0,
            128.0,
            [w.InputStream("split", "default", g.FIELDS, ["word"])],
        ),
        w.Component(
            "split",
            False,
            False,
            3,
            10.0,
            128.0,
            [w.InputStream("spout", "default", g.SHUFFLE, None)],
        ),
        w.Component("spout", True, False, 2, 10.0, 128.0, []),
    ]
    executors = numbered_executors(components)  # already in sorted id order
    component_of = {ex.task_start: ex.component for ex in executors}
    placed = [
        w.ExecutorPlacement(w.Executor(s, e, component_of[s]), sup, port)
        for s, e, sup, port in current
    ]
    return w.Topology(
        id=topology_id,
        name=topology_id.split("-")[0],
        num_workers=workers,
        components=components,
        executors=executors,
        current=placed,
        needs_scheduling=needs_scheduling,
        conf={k: json.dumps(v) for k, v in (conf or {}).items()},
    )


def numbered_executors(components: Iterable[Any]) -> list[Any]:
    """One executor of one task per unit of each component's parallelism, tasks numbered
    from 1 in the components' order (Storm numbers them in sorted component-id order)."""
    w = wire()
    executors = []
    for component in components:
        for _ in range(component.parallelism):
            task = len(executors) + 1
            executors.append(w.Executor(task, task, component.id))
    return executors


def snapshot(supervisors: list[Any], topologies: list[Any], round_: int = 1) -> Any:
    return wire().ClusterSnapshot(
        round=round_, timestamp_ms=0, supervisors=supervisors, topologies=topologies
    )


def answer(snapshot_value: Any, config: Any, armed: Any = None) -> tuple[Any, list[Any]]:
    """One round as the service runs it: Thrift snapshot → typed state → the round →
    Thrift reply; returns ``(reply, decisions)``."""
    from scheduler_py.scheduling.round import plan_round
    from scheduler_py.service.snapshot import to_reply, to_state

    decisions = plan_round(to_state(snapshot_value), config, armed)
    return to_reply(decisions), decisions


def view_of(snapshot_value: Any, index: int = 0, costs: Any = None) -> Any:
    """The round's view of the ``index``-th topology of a Thrift snapshot."""
    from scheduler_py.scheduling.view import storm_view
    from scheduler_py.service.snapshot import to_state

    state = to_state(snapshot_value)
    return storm_view(state, state.topologies[index], None, costs)


def aggregate_doc(topology_id: str, computed_ms: int, change: float = 0.0) -> dict[str, Any]:
    """A measured aggregate with no executors, its window after ``computed_ms`` (so it is taken
    as steady once any warm-up of 0 s is over) and the change signal ``change``."""
    return {
        "topology_id": topology_id,
        "computed_at_ms": computed_ms,
        "window_start_ms": computed_ms + 60_000,
        "window_end_ms": computed_ms + 70_000,
        "windows": 1,
        "executors": [],
        "pairs": [],
        "change": {"l1_relative": change},
    }
