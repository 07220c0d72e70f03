"""A small Nimbus client over Storm's own Thrift API (the definitions streamparse ships).

Used by the demo, the integration tests and operator commands to see what Nimbus really
did: which executor runs on which host/port, topology status, acked counts.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

DEFAULT_NIMBUS = ("127.0.0.1", 6627)

T = TypeVar("T")


@contextmanager
def nimbus_client(
    host: str = DEFAULT_NIMBUS[0], port: int = DEFAULT_NIMBUS[1], timeout_ms: int = 10_000
) -> Iterator[Any]:
    from streamparse.util import get_nimbus_client

    client = get_nimbus_client(host=host, port=port, timeout=timeout_ms)
    try:
        yield client
    finally:
        client.close()


@dataclass(frozen=True)
class ExecutorRun:
    component: str
    task_start: int
    task_end: int
    host: str
    port: int
    uptime_secs: int
    emitted: int
    acked: int


def topology_id(client: Any, name: str) -> str | None:
    """The id of the running topology named ``name`` (None when it is not running)."""
    for summary in client.getClusterInfo().topologies:
        if summary.name == name:
            return summary.id
    return None


def topology_summary(client: Any, name: str) -> Any | None:
    for summary in client.getClusterInfo().topologies:
        if summary.name == name:
            return summary
    return None


def _all_time(counts: dict | None) -> int:
    if not counts:
        return 0
    window = counts.get(":all-time") or {}
    return int(sum(v for k, v in window.items() if not str(k).startswith("__")))


def executor_runs(client: Any, topo_id: str) -> list[ExecutorRun]:
    """Every executor of ``topo_id`` with where it runs and its all-time counts."""
    info = client.getTopologyInfo(topo_id)
    runs = []
    for summary in info.executors:
        stats = summary.stats
        emitted = acked = 0
        if stats is not None:
            emitted = _all_time(stats.emitted)
            specific = stats.specific
            if specific is not None and specific.spout is not None:
                acked = _all_time(specific.spout.acked)
            elif specific is not None and specific.bolt is not None:
                window = (specific.bolt.acked or {}).get(":all-time") or {}
                acked = int(sum(window.values()))
        runs.append(
            ExecutorRun(
                component=summary.component_id,
                task_start=summary.executor_info.task_start,
                task_end=summary.executor_info.task_end,
                host=summary.host,
                port=summary.port,
                uptime_secs=summary.uptime_secs,
                emitted=emitted,
                acked=acked,
            )
        )
    return sorted(runs, key=lambda r: (r.task_start, r.task_end))


def spout_acked(client: Any, topo_id: str) -> int:
    """Tuples fully acked at the spouts so far (all-time)."""
    return sum(r.acked for r in executor_runs(client, topo_id) if _is_spout(client, topo_id, r))


def _is_spout(client: Any, topo_id: str, run: ExecutorRun) -> bool:
    topology = client.getUserTopology(topo_id)
    return run.component in topology.spouts


def wait_for(
    condition: Callable[[], T | None], timeout: float, interval: float = 2.0, what: str = ""
) -> T:
    """Poll ``condition`` until it returns a truthy value; raise TimeoutError naming ``what``."""
    deadline = time.monotonic() + timeout
    last_error: Exception | None = None
    while time.monotonic() < deadline:
        try:
            value = condition()
            if value:
                return value
        except Exception as error:  # Nimbus not up yet, topology not yet assigned...
            last_error = error
        time.sleep(interval)
    detail = f" (last error: {last_error})" if last_error else ""
    raise TimeoutError(f"timed out after {timeout:.0f}s waiting for {what}{detail}")
