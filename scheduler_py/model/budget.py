"""A time budget for one planning call.

Nimbus waits ``scheduler.brain.timeout.ms`` for a scheduling round (``storm_plugin/``,
``BrainClient``); the scheduling round splits what is left of it over the topologies it
plans (``scheduler_py/scheduling/``) and hands each algorithm a :class:`Budget`. An
algorithm that iterates (local search, MILP, portfolio) checks :meth:`Budget.expired`
between steps and returns its best plan so far with ``report["budget_exhausted"] = True``;
an algorithm with nothing to return raises
:class:`~scheduler_py.model.errors.BudgetExhaustedError`. The round enforces the deadline
even for an algorithm that never looks at its budget.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass


@dataclass(frozen=True)
class Budget:
    """A deadline on :func:`time.monotonic`; ``math.inf`` means no limit."""

    deadline: float = math.inf

    @classmethod
    def of(cls, seconds: float | None) -> Budget:
        """A budget ending ``seconds`` from now (``None``: unlimited)."""
        if seconds is None or math.isinf(seconds):
            return UNLIMITED
        return cls(time.monotonic() + max(0.0, seconds))

    @property
    def limited(self) -> bool:
        return not math.isinf(self.deadline)

    def remaining(self) -> float:
        """Seconds left (``math.inf`` when unlimited, never negative)."""
        if not self.limited:
            return math.inf
        return max(0.0, self.deadline - time.monotonic())

    def expired(self) -> bool:
        return self.limited and time.monotonic() >= self.deadline

    def cap(self, seconds: float) -> float:
        """``seconds``, or less if the budget ends sooner (for solver time limits)."""
        return min(seconds, self.remaining())

    def share(self, fraction: float) -> Budget:
        """A budget ending after ``fraction`` of what is left of this one."""
        if not self.limited:
            return self
        return Budget(time.monotonic() + self.remaining() * fraction)


UNLIMITED = Budget()
