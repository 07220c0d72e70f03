"""Pausing the automatic reconfiguration trigger, cluster-wide or per topology.

An operator pauses the trigger (``scheduler-py trigger pause [--topology NAME]``, the
dashboard's ``POST /api/v1/trigger/pause``) during maintenance or an incident: while paused,
the controller's check loop (``scheduler_py/reconfig/controller.py``) skips the topology
entirely — no trigger fires, no change reference is reset, no measured-gain follow-up is
recorded until it resumes. Operator ``replan`` calls are not affected.

Kept like the reconfiguration history (``scheduler_py/reconfig/history.py``): in the brain's
``--state-dir`` when it has one (``<state dir>/trigger-paused.json``, rewritten atomically on
every change — written, ``fsync``-ed, renamed over the old one, directory ``fsync``-ed — and
read at start, so a restarted brain stays paused), else in memory only.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from pathlib import Path
from typing import Any

from scheduler_py.reconfig.history import fsync_directory

log = logging.getLogger(__name__)

FILE_NAME = "trigger-paused.json"


class TriggerPause:
    """Which topologies (by name) the trigger leaves alone, and whether it is paused for all."""

    def __init__(self, directory: Path | None = None) -> None:
        self.path = directory / FILE_NAME if directory is not None else None
        self._lock = threading.Lock()
        self._cluster: dict[str, Any] | None = None
        self._topologies: dict[str, dict[str, Any]] = {}
        self._load()

    def paused(self, topology: str) -> bool:
        with self._lock:
            return self._cluster is not None or topology in self._topologies

    def pause(self, topology: str | None) -> dict[str, Any]:
        """Pause for ``topology`` (a name), or for every topology when ``None``."""
        mark = {"since": round(time.time(), 3)}
        with self._lock:
            if topology is None:
                self._cluster = self._cluster or mark
            else:
                self._topologies.setdefault(topology, mark)
            self._save()
            return self._state()

    def resume(self, topology: str | None) -> dict[str, Any]:
        """Resume ``topology``'s own pause, or every pause (cluster-wide and per topology)
        when ``None``."""
        with self._lock:
            if topology is None:
                self._cluster = None
                self._topologies.clear()
            else:
                self._topologies.pop(topology, None)
            self._save()
            return self._state()

    def state(self) -> dict[str, Any]:
        with self._lock:
            return self._state()

    def _state(self) -> dict[str, Any]:
        return {
            "paused": self._cluster is not None,
            "paused_since": (self._cluster or {}).get("since"),
            "paused_topologies": {name: dict(m) for name, m in sorted(self._topologies.items())},
            "kept_in": str(self.path) if self.path is not None else "memory",
        }

    def _save(self) -> None:
        if self.path is None:
            return
        document = {"cluster": self._cluster, "topologies": self._topologies}
        scratch = self.path.with_name(f".{FILE_NAME}.{os.getpid()}.tmp")
        with scratch.open("w", encoding="utf-8") as out:
            out.write(json.dumps(document, sort_keys=True) + "\n")
            out.flush()
            os.fsync(out.fileno())  # the content is on the disk before the name points at it
        os.replace(scratch, self.path)
        fsync_directory(self.path.parent)  # ... and the rename itself

    def _load(self) -> None:
        if self.path is None or not self.path.exists():
            return
        try:
            document = json.loads(self.path.read_text(encoding="utf-8"))
            cluster, topologies = document.get("cluster"), document.get("topologies") or {}
            if cluster is not None and not isinstance(cluster, dict):
                raise ValueError("cluster: expected an object or null")
            if not isinstance(topologies, dict) or not all(
                isinstance(v, dict) for v in topologies.values()
            ):
                raise ValueError("topologies: expected an object of objects")
        except (OSError, ValueError, AttributeError) as error:
            # a corrupt file must not un-pause silently: pause everything and say so
            log.error(
                "cannot read the trigger pause state %s (%s); the trigger stays paused for "
                "every topology until `scheduler-py trigger resume`",
                self.path,
                error,
            )
            self._cluster = {"since": round(time.time(), 3), "reason": f"unreadable {self.path}"}
            return
        self._cluster = cluster
        self._topologies = {str(k): v for k, v in topologies.items()}
