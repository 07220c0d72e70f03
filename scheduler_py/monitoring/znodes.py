"""Every monitoring znode path (``docs/monitoring-format.md`` §3), in one place.

Under the root (``scheduler.monitor.zk.root``, default ``/scheduler-py``)::

    <root>/monitor/<topology-id>/<supervisor-id>:<port>/w-<window_end_ms>   worker monitors
    <root>/live/<topology-id>/<supervisor-id>:<port>                        live counters
    <root>/aggregate/<topology-id>                                          scheduler-py aggregate
    <root>/reference/<topology-id>                                          the change reference

The worker monitor (Java, ``storm_plugin/.../monitor/ZkPublisher.java`` and
``LivePublisher.java``) writes the same layout.
"""

from __future__ import annotations

from scheduler_py.config import keys

DEFAULT_ROOT: str = keys.MONITOR_ZK_ROOT.default
KINDS = ("monitor", "live", "aggregate", "reference")
WINDOW_PREFIX = "w-"


def normalise_root(root: str = DEFAULT_ROOT) -> str:
    """``scheduler-py/`` or ``/scheduler-py`` → ``/scheduler-py``."""
    return "/" + root.strip("/")


def kind_path(root: str, kind: str, topology_id: str | None = None) -> str:
    """``<root>/<kind>[/<topology-id>]`` for one of :data:`KINDS`."""
    if kind not in KINDS:
        raise ValueError(f"znode kind must be one of {KINDS}, found {kind!r}")
    path = f"{normalise_root(root)}/{kind}"
    return path if topology_id is None else f"{path}/{topology_id}"


def monitor_path(root: str, topology_id: str | None = None, worker: str | None = None) -> str:
    path = kind_path(root, "monitor", topology_id)
    return path if topology_id is None or worker is None else f"{path}/{worker}"


def live_path(root: str, topology_id: str | None = None) -> str:
    return kind_path(root, "live", topology_id)


def aggregate_path(root: str, topology_id: str) -> str:
    return kind_path(root, "aggregate", topology_id)


def reference_path(root: str, topology_id: str) -> str:
    return kind_path(root, "reference", topology_id)
