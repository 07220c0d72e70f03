"""A measurement taken every few milliseconds on a background thread while a benchmark acts.

Subclasses implement :meth:`PeriodicSampler.sample`; ``with sampler:`` starts the thread
(a first sample at once, then one every ``period`` seconds) and stops and joins it on exit,
with one last sample at the stop when ``final`` is set. Used by
:class:`scheduler_py.bench.aggregate_scale.CpuSampler` (a process tree's CPU) and
:class:`scheduler_py.bench.reconfig_paths.Sampler` (the workers' live counters).
"""

from __future__ import annotations

import threading
from typing import Self


class PeriodicSampler:
    def __init__(self, period: float, *, name: str = "sampler", final: bool = False) -> None:
        self.period = period
        self.final = final
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name=name)

    def sample(self) -> None:
        """Take one sample (called on the sampling thread)."""
        raise NotImplementedError

    def _run(self) -> None:
        while True:
            self.sample()
            if self._stop.wait(self.period):
                if self.final:
                    self.sample()
                return

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._stop.set()
        self._thread.join()
