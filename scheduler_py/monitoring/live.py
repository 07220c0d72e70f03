"""Live counters (``docs/monitoring-format.md`` §5): read them from ZooKeeper.

The types (:class:`~scheduler_py.scheduling.interfaces.LiveWorker`, ``LiveTask``) live in the
scheduling layer's interfaces, where the reconfiguration drain (``scheduler_py/reconfig/
drain.py``, ``check_drain``) reads them.

Every worker monitor keeps an EPHEMERAL znode ``<root>/live/<topology-id>/<supervisor-id>:<port>``
whose data (plain UTF-8 JSON, rewritten about once per second) holds per-task counters that
only grow while the worker lives: tuples emitted on user streams, executed, acked, failed, and
for spouts the tuple trees handed to the ackers and still ``pending``.

To watch a drain (deactivate → wait until in-flight tuples are gone → re-assign → activate),
poll :func:`read_live` once per period and compare consecutive polls with ``check_drain``::

    previous = None
    while True:
        current = read_live(client, topology_id)
        check = check_drain(previous, current, expected=assigned_workers)
        if check.drained:
            break
        log.info("draining %s: %s", topology_id, check.detail)
        previous = current
        time.sleep(1.0)

``pending`` only sees anchored tuple trees (a spout emit with a message id, with ackers on);
unanchored tuples still moving through the topology are visible only as activity (counters
that changed between two polls), which is why a drain also needs one quiet poll interval.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any

from kazoo.exceptions import NoNodeError

from scheduler_py.monitoring import znodes
from scheduler_py.monitoring.zk import answer
from scheduler_py.scheduling.interfaces import LiveTask, LiveWorker

log = logging.getLogger(__name__)

VERSION = 1
DEFAULT_ROOT = znodes.DEFAULT_ROOT
_TASK_COUNTERS = ("emitted", "executed", "acked", "failed", "ack_init", "pending")
_WARNED_LIMIT = 1024
_warned: set[tuple[str, str]] = set()


def live_path(topology_id: str | None = None, root: str = DEFAULT_ROOT) -> str:
    """``<root>/live[/<topology-id>]`` (:mod:`scheduler_py.monitoring.znodes`)."""
    return znodes.live_path(root, topology_id)


def _field(document: Mapping[str, Any], name: str, where: str) -> Any:
    if name not in document:
        raise ValueError(f"{where}: missing field {name!r}")
    return document[name]


def _string(document: Mapping[str, Any], name: str, where: str) -> str:
    value = _field(document, name, where)
    if not isinstance(value, str):
        raise ValueError(f"{where}: {name!r} must be a string, got {value!r}")
    return value


def _integer(document: Mapping[str, Any], name: str, where: str, minimum: int | None = 0) -> int:
    value = _field(document, name, where)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{where}: {name!r} must be an integer, got {value!r}")
    if minimum is not None and value < minimum:
        raise ValueError(f"{where}: {name!r} must be >= {minimum}, got {value}")
    return value


def _task(item: Any, index: int) -> LiveTask:
    where = f"tasks[{index}]"
    if not isinstance(item, dict):
        raise ValueError(f"{where}: must be an object, got {type(item).__name__}")
    spout = _field(item, "spout", where)
    if not isinstance(spout, bool):
        raise ValueError(f"{where}: 'spout' must be true or false, got {spout!r}")
    counters = {name: _integer(item, name, where) for name in _TASK_COUNTERS}
    return LiveTask(
        task=_integer(item, "task", where, minimum=None),
        component=_string(item, "component", where),
        is_spout=spout,
        **counters,
    )


def parse_live(data: bytes) -> LiveWorker:
    """Parse a live znode's data (contract §5, version 1).

    Raises :class:`ValueError` saying what is wrong: empty or gzipped data, bad UTF-8 or
    JSON, an unknown ``"v"``, a missing field, a wrong type, a negative counter, a duplicate
    task. Fields the contract does not name are ignored.
    """
    if not data:
        raise ValueError("empty live znode")
    if bytes(data[:2]) == b"\x1f\x8b":
        raise ValueError("gzip data: a live znode holds plain UTF-8 JSON")
    try:
        document = json.loads(bytes(data).decode("utf-8"))
    except UnicodeDecodeError as error:
        raise ValueError(f"not UTF-8: {error}") from None
    except json.JSONDecodeError as error:
        raise ValueError(f"not JSON: {error}") from None
    if not isinstance(document, dict):
        raise ValueError(f"not a JSON object but {type(document).__name__}")
    version = _field(document, "v", "live counters")
    if version != VERSION or isinstance(version, bool):
        raise ValueError(
            f"unsupported live counters version {version!r} (this reader knows {VERSION})"
        )
    where = "live counters"
    supervisor_id = _string(document, "supervisor_id", where)
    if not supervisor_id:
        raise ValueError(f"{where}: empty 'supervisor_id'")
    tasks_field = _field(document, "tasks", where)
    if not isinstance(tasks_field, list):
        raise ValueError(f"{where}: 'tasks' must be a list, got {type(tasks_field).__name__}")
    tasks = tuple(_task(item, i) for i, item in enumerate(tasks_field))
    ids = [t.task for t in tasks]
    if len(set(ids)) != len(ids):
        duplicates = sorted({i for i in ids if ids.count(i) > 1})
        raise ValueError(f"{where}: duplicate task ids {duplicates}")
    return LiveWorker(
        supervisor_id=supervisor_id,
        host=_string(document, "host", where),
        port=_integer(document, "port", where),
        ts_ms=_integer(document, "ts_ms", where),
        started_ms=_integer(document, "started_ms", where),
        seq=_integer(document, "seq", where),
        tasks=tuple(sorted(tasks, key=lambda t: t.task)),
        topology_id=_string(document, "topology_id", where),
        supervisor_thrift_port=_optional_port(document, "supervisor_thrift_port", where),
    )


def _optional_port(document: Mapping[str, Any], name: str, where: str) -> int | None:
    if name not in document:
        return None
    value = _integer(document, name, where, minimum=1)
    if value > 65535:
        raise ValueError(f"{where}: {name!r} must be a TCP port (1-65535), got {value}")
    return value


def _warn_once(path: str, reason: str) -> None:
    key = (path, reason)
    if key in _warned:
        log.debug("ignoring live counters %s: %s", path, reason)
        return
    if len(_warned) >= _WARNED_LIMIT:
        _warned.clear()
    _warned.add(key)
    log.warning("ignoring live counters %s: %s", path, reason)


def read_live(client: Any, topology_id: str, root: str = DEFAULT_ROOT) -> dict[str, LiveWorker]:
    """The live counters of every worker of ``topology_id``, by ``<supervisor-id>:<port>``.

    ``client`` is a started kazoo client. A topology without live znodes gives ``{}``; a
    znode that vanishes while being read (its worker stopped) is left out; a corrupt one is
    left out with a warning (logged once per znode and reason, then at DEBUG). Connection
    errors are raised, and so is ``OperationTimeoutError`` when ZooKeeper does not answer in
    time (:func:`scheduler_py.monitoring.zk.answer`): the drain polling this must reach its
    own timeout and resume the topology, never block on a lost connection.
    """
    base = live_path(topology_id, root)
    try:
        names = sorted(answer(client.get_children_async(base)))
    except NoNodeError:
        return {}
    requests = [(name, client.get_async(f"{base}/{name}")) for name in names]
    workers: dict[str, LiveWorker] = {}
    for name, request in requests:
        path = f"{base}/{name}"
        try:
            data, _stat = answer(request)
        except NoNodeError:
            continue
        try:
            worker = parse_live(data)
        except ValueError as error:
            _warn_once(path, str(error))
            continue
        if worker.key != name:
            _warn_once(path, f"the document is for worker {worker.key!r}, not {name!r}")
            continue
        workers[name] = worker
    return workers
