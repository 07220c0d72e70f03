"""The reconfiguration history: every decision, taken or declined, with its numbers.

Stored as an append-only JSON-lines journal per topology name
(``<state dir>/history/<name>.jsonl``), one *event* per line; the history of a topology is
its events folded by reconfiguration id, in order. Appending (not rewriting) keeps the
journal consistent when the brain is killed mid-write (a torn last line is skipped), and
lets a restarted brain find reconfigurations it left unfinished (:meth:`History.unfinished`).

Entry states::

    declined                              the trigger fired, the new plan was not better
    draining → applying → resuming → completed
    draining | applying → rolled_back     drain timed out, plan not applied, brain restarted…
    * → failed                            the topology went away, Nimbus refused, …
"""

from __future__ import annotations

import json
import logging
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

TERMINAL = frozenset({"declined", "completed", "rolled_back", "failed"})
_SAFE = re.compile(r"[^A-Za-z0-9._-]")


class History:
    """Journal of reconfiguration decisions; ``directory=None`` keeps it in memory only."""

    def __init__(self, directory: Path | None = None) -> None:
        self.directory = directory
        self._lock = threading.Lock()
        self._memory: dict[str, list[dict[str, Any]]] = {}
        if directory is not None:
            (directory / "history").mkdir(parents=True, exist_ok=True)

    def _path(self, name: str) -> Path:
        assert self.directory is not None
        return self.directory / "history" / f"{_SAFE.sub('_', name)}.jsonl"

    def record(self, topology: str, entry_id: str, **fields: Any) -> dict[str, Any]:
        """Append one event (``fields`` merged into entry ``entry_id``) and return it."""
        event = {"id": entry_id, "topology": topology, "at": round(time.time(), 3)} | fields
        line = json.dumps(event, sort_keys=True, default=str)
        with self._lock:
            if self.directory is None:
                self._memory.setdefault(topology, []).append(json.loads(line))
            else:
                with self._path(topology).open("a", encoding="utf-8") as out:
                    out.write(line + "\n")
                    out.flush()
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
