"""The brain's plan log read from its file (``scheduler-py serve --plan-log``; one JSON object
per line, written by ``scheduler_py/service/server.py``).

A line carries the topology's whole placement, so a log of a 1,000-executor topology grows by
~60 kB per plan: the file is read backwards from its end for only the lines asked for, and the
parsed lines are reused while the file's size and modification time stay the same (the brain
appends only when a plan changes). ``scheduler-py bench dashboard_api`` measures it.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from scheduler_py.scheduling.dashboard_ports import SourceUnavailable

CHUNK = 1 << 20

Cached = tuple[tuple[int, int, int], int, list[Mapping[str, Any] | None]]
"""(the file's inode, size and mtime; how many last lines were asked for; those lines parsed,
``None`` for one that is skipped)"""


class PlanLogFile:
    """Implements :class:`~scheduler_py.scheduling.dashboard_ports.PlanLogPort`; lines that are
    not JSON objects (a line being written, a torn write) are skipped."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._cached: Cached | None = None

    def entries(self, limit: int) -> list[Mapping[str, Any]]:
        try:
            with self.path.open("rb") as lines:
                info = os.fstat(lines.fileno())
                key = (info.st_ino, info.st_size, info.st_mtime_ns)
                with self._lock:
                    cached = self._cached
                if cached is not None and cached[0] == key and cached[1] >= limit:
                    parsed = cached[2][-limit:] if limit > 0 else []
                else:
                    parsed = [_parse(line) for line in _last_lines(lines, info.st_size, limit)]
                    with self._lock:
                        self._cached = (key, limit, parsed)
        except FileNotFoundError:
            return []
        except OSError as error:
            raise SourceUnavailable(f"cannot read the plan log {self.path}: {error}") from error
        return [entry for entry in parsed if entry is not None]


def _parse(line: bytes) -> Mapping[str, Any] | None:
    try:
        entry = json.loads(line.decode("utf-8", errors="replace"))
    except ValueError:
        return None
    return entry if isinstance(entry, dict) else None


def _last_lines(handle: Any, size: int, count: int) -> list[bytes]:
    """The last ``count`` lines of the binary file ``handle`` of ``size`` bytes (an unfinished
    last line counts as a line), read backwards in chunks."""
    if count <= 0:
        return []
    data = b""
    position = size
    while position > 0 and data.count(b"\n", 0, len(data) - 1) < count:
        step = min(CHUNK, position)
        position -= step
        handle.seek(position)
        data = handle.read(step) + data
    lines = data.splitlines()
    if position > 0:
        lines = lines[1:]  # the first line may have been cut by the chunk boundary
    return lines[-count:]
