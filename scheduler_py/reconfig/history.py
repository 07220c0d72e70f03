"""The reconfiguration history: every decision, taken or declined, with its numbers.

Stored as an append-only JSON-lines journal per topology name
(``<state dir>/history/<name>.jsonl``), one *event* per line; the history of a topology is
its events folded by reconfiguration id, in order. Appending (not rewriting) keeps the
journal consistent when the brain is killed mid-write (a torn last line is skipped), and
lets a restarted brain find reconfigurations it left unfinished (:meth:`History.unfinished`).
Every event is written through to the disk before :meth:`History.record` returns (``fsync``
of the journal, and of its directory when the journal is new), because the controller
journals each step *before* the Nimbus call it announces (``scheduler_py/reconfig/
execution.py``): a line lost in the page cache would be a step taken with no record of it.
A failed write (a full disk) raises ``OSError`` to the caller, which then does not take the
step.

Where: ``scheduler-py serve --nimbus`` always keeps it on disk, in ``--state-dir`` or else in
:func:`default_state_dir` — ``/var/lib/scheduler-py`` when the brain runs as root, else
``$XDG_STATE_HOME/scheduler-py`` (``~/.local/state/scheduler-py`` when ``XDG_STATE_HOME`` is
unset), per the XDG base directory specification. ``History(None)`` (memory only) is for
tools and tests that never reach Nimbus.

Entry states::

    declined                              the trigger fired, the new plan was not better
    draining → applying → resuming → completed
    draining | applying → rolled_back     drain timed out, plan not applied, brain restarted…
    * → failed                            the topology went away, Nimbus refused, …
"""

from __future__ import annotations

import json
import logging
import os
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

TERMINAL = frozenset({"declined", "completed", "rolled_back", "failed"})
_SAFE = re.compile(r"[^A-Za-z0-9._-]")
SYSTEM_STATE_DIR = Path("/var/lib/scheduler-py")


def default_state_dir() -> Path:
    """The brain's state directory when ``serve`` gets no ``--state-dir`` (module docstring)."""
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        return SYSTEM_STATE_DIR
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "scheduler-py"


def fsync_directory(directory: Path) -> None:
    """Make a new or renamed entry of ``directory`` durable (POSIX: the name lives in the
    directory, which has its own ``fsync``)."""
    descriptor = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def append_durably(path: Path, data: bytes) -> None:
    """Append ``data`` to ``path`` and ``fsync`` it (and the directory when ``path`` is new);
    raises ``OSError`` (``ENOSPC`` on a full disk) when it is not on the disk."""
    created = not path.exists()
    descriptor = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        size = os.fstat(descriptor).st_size
        if size and os.pread(descriptor, 1, size - 1) != b"\n":
            data = b"\n" + data  # a write cut short before (a full disk): keep lines apart
        view = memoryview(data)
        while view:
            view = view[os.write(descriptor, view) :]
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
    if created:
        fsync_directory(path.parent)


class History:
    """Journal of reconfiguration decisions; ``directory=None`` keeps it in memory only."""

    def __init__(self, directory: Path | None = None) -> None:
        self.directory = directory
        self._lock = threading.Lock()
        self._memory: dict[str, list[dict[str, Any]]] = {}
        if directory is not None:
            journal = directory / "history"
            if not journal.is_dir():
                journal.mkdir(parents=True, exist_ok=True)
                fsync_directory(directory)

    def _path(self, name: str) -> Path:
        assert self.directory is not None
        return self.directory / "history" / f"{_SAFE.sub('_', name)}.jsonl"

    def record(self, topology: str, entry_id: str, **fields: Any) -> dict[str, Any]:
        """Append one event (``fields`` merged into entry ``entry_id``) and return it once it
        is on the disk; ``OSError`` when it could not be written."""
        event = {"id": entry_id, "topology": topology, "at": round(time.time(), 3)} | fields
        line = json.dumps(event, sort_keys=True, default=str)
        with self._lock:
            if self.directory is None:
                self._memory.setdefault(topology, []).append(json.loads(line))
            else:
                append_durably(self._path(topology), (line + "\n").encode("utf-8"))
        return event

    def _events(self, topology: str) -> Iterator[dict[str, Any]]:
        if self.directory is None:
            yield from self._memory.get(topology, [])
            return
        path = self._path(topology)
        if not path.exists():
            return
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                event = json.loads(line)
            except ValueError:
                log.warning("%s:%d: skipping a torn or corrupt history line", path, number)
                continue
            if isinstance(event, dict) and "id" in event:
                yield event

    def entries(self, topology: str) -> list[dict[str, Any]]:
        """The topology's reconfigurations, oldest first; each is its events merged, with
        ``started``/``updated`` times and the list of ``states`` it went through."""
        with self._lock:
            events = list(self._events(topology))
        merged: dict[str, dict[str, Any]] = {}
        for event in events:
            entry = merged.get(event["id"])
            if entry is None:
                entry = merged[event["id"]] = {"started": event["at"], "states": []}
            entry.update({k: v for k, v in event.items() if k != "at"})
            entry["updated"] = event["at"]
            state = event.get("state")
            if state and (not entry["states"] or entry["states"][-1] != state):
                entry["states"].append(state)
        return list(merged.values())

    def topologies(self) -> list[str]:
        if self.directory is None:
            with self._lock:
                return sorted(self._memory)
        names = []
        for path in sorted((self.directory / "history").glob("*.jsonl")):
            with path.open(encoding="utf-8") as lines:
                for line in lines:
                    try:
                        names.append(json.loads(line)["topology"])
                        break
                    except (ValueError, KeyError, TypeError):
                        continue
        return names

    def unfinished(self) -> list[dict[str, Any]]:
        """Entries of every topology whose last state is not terminal."""
        return [
            entry
            for name in self.topologies()
            for entry in self.entries(name)
            if entry.get("state") not in TERMINAL
        ]
