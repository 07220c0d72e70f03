"""The brain's last status, kept so that the dashboard keeps serving it while the brain is
unreachable (the answer then says so)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from scheduler_py.scheduling.dashboard_ports import BrainPort, SourceUnavailable
from scheduler_py.scheduling.interfaces import OperatorError


@dataclass(frozen=True)
class BrainReading:
    status: Mapping[str, Any] | None
    """the last status the brain gave (``None``: never reached)"""
    fetched_at: float | None
    """when ``status`` was read (``time.time()``)"""
    error: str | None
    """why the latest read failed; ``None`` when it succeeded"""

    @property
    def health(self) -> str:
        if self.error is None:
            return "ok"
        return "stale" if self.status is not None else "unreachable"


class StatusCache:
    """Reads ``brain.status()`` at most every ``max_age`` seconds."""

    def __init__(
        self, brain: BrainPort, max_age: float = 1.0, clock: Callable[[], float] = time.time
    ) -> None:
        self.brain = brain
        self.max_age = max_age
        self.clock = clock
        self._lock = threading.Lock()
        self._reading = BrainReading(None, None, "not read yet")
        self._read_at: float | None = None

    def invalidate(self) -> None:
        """Read the brain again on the next :meth:`read` (its state just changed)."""
        with self._lock:
            self._read_at = None

    def read(self) -> BrainReading:
        with self._lock:
            now = self.clock()
            if self._read_at is not None and now - self._read_at < self.max_age:
                return self._reading
            self._read_at = now
            try:
                status = self.brain.status()
                self._reading = BrainReading(status, now, None)
            except (SourceUnavailable, OperatorError) as error:
                last = self._reading
                self._reading = BrainReading(last.status, last.fetched_at, str(error))
            return self._reading
