"""The ZooKeeper side of monitoring (contract ``docs/monitoring-format.md`` §3), with kazoo.

Layout under the root (``scheduler.monitor.zk.root``, default ``/scheduler-py``)::

    <root>/monitor/<topology-id>/<supervisor-id>:<port>/w-<window_end_ms>   worker monitors
    <root>/aggregate/<topology-id>                                          scheduler-py aggregate
    <root>/reference/<topology-id>                                          scheduler-py aggregate

Every data is gzip of UTF-8 JSON. :class:`MonitorStore` reads the windows of a topology,
writes the aggregate and the change-signal reference, and cleans up: whole topologies that
no longer run, and window znodes older than the aggregator's retention (a killed worker
cannot delete its own).

Every client made here authenticates with the digest credential when one is configured
(``$SCHEDULER_PY_ZK_DIGEST_FILE``) and creates znodes — parents included — with its ACL:
writable only with the credential (``scheduler_py/monitoring/zk_acl.py``).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError, NotEmptyError, OperationTimeoutError
from kazoo.handlers.threading import KazooTimeoutError
from kazoo.retry import KazooRetry

from scheduler_py.monitoring import zk_acl, znodes
from scheduler_py.monitoring.records import (
    CorruptRecord,
    WindowRecord,
    decode,
    encode,
    record_document,
)

log = logging.getLogger(__name__)

DEFAULT_ROOT = znodes.DEFAULT_ROOT
WINDOW_PREFIX = znodes.WINDOW_PREFIX

DEFAULT_HOSTS = "127.0.0.1:2181"
ZNODE_LIMIT = 1_000_000
OPERATION_TIMEOUT_SECS = 30.0
"""the longest a MonitorStore call waits for ZooKeeper"""
RECONNECT_MAX_DELAY_S = 5.0
"""the longest a client waits between two attempts to reach ZooKeeper again"""
"""ZooKeeper's default ``jute.maxbuffer`` (a znode's data must stay below it)."""


@dataclass(frozen=True)
class RawWindow:
    """One window znode as read: its path pieces, data and modification time."""

    topology_id: str
    worker: str
    """``<supervisor-id>:<port>`` (the znode name)"""
    name: str
    data: bytes
    mtime_ms: int

    @property
    def path_end_ms(self) -> int | None:
        """The ``window_end_ms`` in the znode name, or ``None`` when it is malformed."""
        if not self.name.startswith(WINDOW_PREFIX):
            return None
        digits = self.name[len(WINDOW_PREFIX) :]
        return int(digits) if digits.isdigit() else None


def close_quietly(client: Any) -> None:
    """Stop and close a kazoo client; closing is best effort (logged at debug)."""
    if client is None:
        return
    try:
        client.stop()
        client.close()
    except Exception:
        log.debug("closing the ZooKeeper client failed", exc_info=True)


def _client(hosts: str, timeout: float, credential: zk_acl.Credential | None = None) -> KazooClient:
    """A kazoo client that, once ZooKeeper is gone, tries to reach it again at least every
    :data:`RECONNECT_MAX_DELAY_S` (kazoo's own back-off doubles up to an hour: after a 25 s
    outage it tried again only ~20 s after ZooKeeper was back; tests/test_monitoring_faults.py).
    With ``credential`` (default: :func:`zk_acl.from_environment`) it authenticates on every
    (re)connection and creates znodes with the credential's ACL."""
    credential = credential or zk_acl.from_environment()
    if credential is None:
        return _open_client(hosts, timeout)
    return KazooClient(
        hosts=hosts,
        timeout=timeout,
        connection_retry=_retry(),
        auth_data=[credential.auth],
        default_acl=credential.acl(),
    )


def _open_client(hosts: str, timeout: float) -> KazooClient:
    return KazooClient(hosts=hosts, timeout=timeout, connection_retry=_retry())


def _retry() -> KazooRetry:
    return KazooRetry(max_tries=-1, delay=0.1, backoff=2, max_delay=RECONNECT_MAX_DELAY_S)


def connect(
    hosts: str = DEFAULT_HOSTS, timeout: float = 10.0, credential: zk_acl.Credential | None = None
) -> KazooClient:
    """A started kazoo client (raises ``kazoo.handlers.threading.KazooTimeoutError``, and
    :class:`~scheduler_py.monitoring.zk_acl.CredentialError` for an unusable credential)."""
    client = _client(hosts, timeout, credential)
    client.start(timeout=timeout)
    return client


def connect_in_background(
    hosts: str = DEFAULT_HOSTS, timeout: float = 10.0, credential: zk_acl.Credential | None = None
) -> KazooClient:
    """A kazoo client that connects (and reconnects) in the background; check
    ``client.connected`` before use. For the brain, which must never wait on ZooKeeper nor
    stop for an unusable credential file (then it reads unauthenticated, with one ERROR)."""
    if credential is None:
        try:
            credential = zk_acl.from_environment()
        except zk_acl.CredentialError as error:  # the brain must keep running: read without it
            log.error("%s; reading ZooKeeper unauthenticated (no writes)", error)
    client = _client(hosts, timeout, credential) if credential else _open_client(hosts, timeout)
    client.start_async()
    return client


def answer(result: Any, timeout: float = OPERATION_TIMEOUT_SECS) -> Any:
    """The value of a kazoo async result, or kazoo's ``OperationTimeoutError`` (a
    ``KazooException``) after ``timeout`` seconds: kazoo's synchronous calls wait without
    limit for a connection that may never come back."""
    try:
        return result.get(timeout=timeout)
    except KazooTimeoutError as error:
        raise OperationTimeoutError(f"ZooKeeper did not answer within {timeout:g} s") from error


class MonitorStore:
    """Reads and writes the monitoring znodes under ``root`` with a started kazoo client.

    Every call waits at most ``operation_timeout`` seconds (:func:`answer`); without that a
    ZooKeeper restart on a busy machine once hung ``scheduler-py aggregate --every``.
    """

    def __init__(
        self,
        client: KazooClient,
        root: str = DEFAULT_ROOT,
        operation_timeout: float = OPERATION_TIMEOUT_SECS,
    ) -> None:
        self.client = client
        self.root = znodes.normalise_root(root)
        self.operation_timeout = operation_timeout

    def _wait(self, result: Any) -> Any:
        return answer(result, self.operation_timeout)

    # -- paths (scheduler_py/monitoring/znodes.py) ----------------------------------------
    def monitor_path(self, topology_id: str | None = None, worker: str | None = None) -> str:
        return znodes.monitor_path(self.root, topology_id, worker)

    def aggregate_path(self, topology_id: str) -> str:
        return znodes.aggregate_path(self.root, topology_id)

    def reference_path(self, topology_id: str) -> str:
        return znodes.reference_path(self.root, topology_id)

    # -- reading --------------------------------------------------------------------------
    def _children(self, path: str) -> list[str]:
        try:
            return sorted(self._wait(self.client.get_children_async(path)))
        except NoNodeError:
            return []

    def topologies(self) -> list[str]:
        """Topologies with a monitor znode (whether or not they still run)."""
        return self._children(self.monitor_path())

    def known_topologies(self) -> set[str]:
        """Topologies with any monitoring znode: monitor, aggregate or reference."""
        names: set[str] = set()
        for kind in znodes.KINDS:
            names.update(self._children(znodes.kind_path(self.root, kind)))
        return names

    def window_path(self, window: RawWindow) -> str:
        return f"{self.monitor_path(window.topology_id, window.worker)}/{window.name}"

    def load_windows(
        self, topology_id: str, known: Mapping[str, RawWindow] | None = None
    ) -> list[RawWindow]:
        """Every window znode of ``topology_id`` (reads are issued asynchronously).

        ``known``: windows read before, by path; their data is not read again. A worker
        monitor writes each window znode once (``ZkPublisher`` creates it; a retried create
        rewrites the same bytes), so a window's path identifies its content."""
        known = known or {}
        pending = []
        windows = []
        for worker in self._children(self.monitor_path(topology_id)):
            base = self.monitor_path(topology_id, worker)
            for name in self._children(base):
                path = f"{base}/{name}"
                if path in known:
                    windows.append(known[path])
                else:
                    pending.append((worker, name, self.client.get_async(path)))
        for worker, name, result in pending:
            try:
                data, stat = self._wait(result)
            except NoNodeError:  # deleted meanwhile (the worker's own retention)
                continue
            window = RawWindow(topology_id, worker, name, data or b"", int(stat.mtime))
            windows.append(window)
        return windows

    def _read_json(self, path: str) -> Any | None:
        try:
            data, _ = self._wait(self.client.get_async(path))
        except NoNodeError:
            return None
        try:
            return decode(data)
        except CorruptRecord as error:
            log.warning("ignoring %s: %s", path, error)
            return None

    def read_aggregate(self, topology_id: str) -> dict[str, Any] | None:
        document = self._read_json(self.aggregate_path(topology_id))
        return document if isinstance(document, dict) else None

    def read_reference(self, topology_id: str) -> dict[str, Any] | None:
        document = self._read_json(self.reference_path(topology_id))
        return document if isinstance(document, dict) else None

    # -- writing ----------------------------------------------------------------------------
    def _put(self, path: str, data: bytes) -> None:
        if len(data) >= ZNODE_LIMIT:
            raise ValueError(f"{path}: {len(data)} bytes exceed ZooKeeper's znode limit")
        try:
            self._wait(self.client.set_async(path, data))
        except NoNodeError:
            self._wait(self.client.create_async(path, data, makepath=True))

    def write_aggregate(self, topology_id: str, document: Mapping[str, Any] | bytes) -> int:
        """Write the aggregate (a document, or its already encoded bytes); returns its size."""
        data = document if isinstance(document, bytes) else encode(document)
        self._put(self.aggregate_path(topology_id), data)
        return len(data)

    def write_reference(self, topology_id: str, document: Mapping[str, Any]) -> None:
        self._put(self.reference_path(topology_id), encode(document))

    def publish_window(self, record: WindowRecord, data: bytes | None = None) -> str:
        """Publish ``record`` as a worker monitor does (tests, benchmarks, replays);
        ``data`` overrides the bytes written (e.g. corrupt ones)."""
        base = self.monitor_path(record.topology_id, record.worker)
        path = f"{base}/{WINDOW_PREFIX}{record.window_end_ms}"
        self._put(path, encode(record_document(record)) if data is None else data)
        return path

    # -- cleanup ---------------------------------------------------------------------------
    def delete_topology(self, topology_id: str) -> None:
        """Remove every monitoring znode of a topology that no longer runs."""
        for path in (
            self.monitor_path(topology_id),
            self.aggregate_path(topology_id),
            self.reference_path(topology_id),
            znodes.live_path(self.root, topology_id),
        ):
            self._delete_tree(path)

    def _delete_tree(self, path: str) -> None:
        """Delete ``path`` and everything below it (gone already is fine)."""
        with contextlib.suppress(NoNodeError):
            for child in self._wait(self.client.get_children_async(path)):
                self._delete_tree(f"{path}/{child}")
        with contextlib.suppress(NoNodeError, NotEmptyError):  # NotEmpty: a write raced in
            self._wait(self.client.delete_async(path))

    def delete_old_windows(
        self, windows: Iterable[RawWindow], cutoff_ms: int, topologies: Iterable[str] = ()
    ) -> int:
        """Delete windows that ended before ``cutoff_ms`` (by the znode name; an unreadable
        name falls back to the znode's mtime), then the worker znodes of these windows'
        topologies (and of ``topologies``) that are empty and were created before the
        cutoff. Returns the number of windows deleted."""
        involved = set(topologies)
        pending = []
        for window in windows:
            involved.add(window.topology_id)
            end = window.path_end_ms
            if end is None:
                end = window.mtime_ms
            if end < cutoff_ms:
                pending.append(self.client.delete_async(self.window_path(window)))
        deleted = 0
        for result in pending:  # issued together: one round trip's wait, not one per window
            try:
                self._wait(result)
                deleted += 1
            except NoNodeError:
                pass
        listings = [
            (path, self.client.get_children_async(path, include_data=True))
            for topology_id in sorted(involved)
            for path in (
                self.monitor_path(topology_id, worker)
                for worker in self._children(self.monitor_path(topology_id))
            )
        ]
        for path, listing in listings:
            try:
                children, stat = self._wait(listing)
                if not children and stat.ctime < cutoff_ms:
                    self._wait(self.client.delete_async(path))  # refused if a window arrived
            except (NoNodeError, NotEmptyError):
                pass
        return deleted
