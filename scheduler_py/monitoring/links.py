"""The reconfiguration controller's ZooKeeper needs — the workers' live counters and the change
reference — behind :class:`~scheduler_py.scheduling.interfaces.LiveCounters`."""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from typing import Any

from scheduler_py.monitoring import znodes
from scheduler_py.monitoring.change import reference_document
from scheduler_py.monitoring.live import read_live
from scheduler_py.monitoring.zk import MonitorStore, close_quietly, connect
from scheduler_py.scheduling.interfaces import LiveWorker

log = logging.getLogger(__name__)


class ZooKeeperLink:
    """One kazoo connection, opened on first use; kazoo reconnects by itself."""

    def __init__(self, hosts: str, root: str = znodes.DEFAULT_ROOT, timeout: float = 10.0) -> None:
        self.hosts = hosts
        self.root = znodes.normalise_root(root)
        self.timeout = timeout
        self._client: Any = None
        self._lock = threading.Lock()

    def _connected(self) -> Any:
        with self._lock:
            if self._client is None:
                self._client = connect(self.hosts, self.timeout)
            return self._client

    def live(self, topology_id: str) -> Mapping[str, LiveWorker]:
        """The workers' live counters; ``{}`` when none are published."""
        return read_live(self._connected(), topology_id, self.root)

    def write_reference(self, topology_id: str, aggregate: Mapping[str, Any]) -> None:
        """Make ``aggregate`` the change-signal reference of the topology."""
        MonitorStore(self._connected(), self.root).write_reference(
            topology_id, reference_document(aggregate)
        )

    def close(self) -> None:
        with self._lock:
            client, self._client = self._client, None
        close_quietly(client)
