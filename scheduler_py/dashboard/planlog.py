"""The brain's plan log read from its file (``scheduler-py serve --plan-log``; one JSON object
per line, written by ``scheduler_py/service/server.py``)."""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from scheduler_py.scheduling.dashboard_ports import SourceUnavailable


class PlanLogFile:
    """Implements :class:`~scheduler_py.scheduling.dashboard_ports.PlanLogPort`; lines that are
    not JSON objects (a line being written, a torn write) are skipped."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def entries(self, limit: int) -> list[Mapping[str, Any]]:
        try:
            with self.path.open(encoding="utf-8", errors="replace") as lines:
                tail = deque(lines, maxlen=limit)
        except FileNotFoundError:
            return []
        except OSError as error:
            raise SourceUnavailable(f"cannot read the plan log {self.path}: {error}") from error
        result = []
        for line in tail:
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if isinstance(entry, dict):
                result.append(entry)
        return result
