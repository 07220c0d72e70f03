"""Errors the model and algorithms raise, each carrying a reason an operator can act on."""

from __future__ import annotations


class SchedulingError(Exception):
    """Base class of every planning failure; ``str(error)`` is the operator-facing reason."""


class InfeasibleError(SchedulingError):
    """The topology cannot fit: names the component, the resource, need vs best offer.

    Storm users asked for exactly this in the topology status: what was required and
    what the best node had available.
    """

    def __init__(
        self,
        reason: str,
        *,
        resource: str | None = None,
        component: str | None = None,
        needed: float | None = None,
        best_available: float | None = None,
        best_node: str | None = None,
    ) -> None:
        super().__init__(reason)
        self.resource = resource
        self.component = component
        self.needed = needed
        self.best_available = best_available
        self.best_node = best_node


class BudgetExhaustedError(SchedulingError):
    """An algorithm ran out of its time budget (:mod:`scheduler_py.model.budget`) before it
    had any feasible plan to return."""


class UnknownAlgorithmError(SchedulingError):
    """An algorithm name that is not registered."""


class InvalidProblemError(SchedulingError):
    """A problem description that is malformed (bad JSON, unknown ids, negative costs...)."""
