"""Plan one topology under a time budget, with a fast fallback.

The algorithm runs through :func:`scheduler_py.algorithms.registry.run` (parameters checked,
result verified against capacity) with its :class:`~scheduler_py.model.budget.Budget`. A
cooperative algorithm stops at its deadline and returns its best plan so far
(``report["budget_exhausted"]``). One that does not return in time is abandoned — it runs on
in a daemon thread until it finishes or notices its budget, its result unused — and the
fallback algorithm places the topology instead, within the reserve kept for it. Either way
:attr:`PlanOutcome.note` says what happened, and the round puts it into the topology's Storm
status.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from scheduler_py.algorithms import registry
from scheduler_py.model.budget import UNLIMITED, Budget
from scheduler_py.model.errors import BudgetExhaustedError, SchedulingError
from scheduler_py.model.types import Placement, Problem

log = logging.getLogger(__name__)

FALLBACK_RESERVE_SECS = 0.1
"""Kept back from a topology's budget for the fallback algorithm (``td`` plans 10,000
executors on 500 nodes in about 12 ms, README "Benchmarks")."""


@dataclass(frozen=True)
class PlanOutcome:
    placement: Placement
    algorithm: str
    """the algorithm whose plan this is (the fallback's name after a fallback)"""
    note: str = ""
    """empty, or why the plan is not the chosen algorithm's complete result"""


def plan_within(
    problem: Problem,
    algorithm: str,
    params: Mapping[str, Any] | None,
    budget: Budget = UNLIMITED,
    fallback: str | None = "td",
) -> PlanOutcome:
    """Plan ``problem`` with ``algorithm`` inside ``budget`` (see the module docstring).

    Raises :class:`SchedulingError` (unknown algorithm, bad parameters, infeasible, an
    invalid plan) as :func:`registry.run` does; a budget overrun is not an error as long as
    the fallback can place the topology.
    """
    if not budget.limited:
        return PlanOutcome(registry.run(algorithm, problem, params), algorithm)
    registry.get(algorithm)  # unknown names fail at once, not after a timeout
    reserve = min(FALLBACK_RESERVE_SECS, budget.remaining() / 4) if fallback else 0.0
    own = Budget(budget.deadline - reserve)
    own_ms = f"{own.remaining() * 1000:.0f} ms"
    # a cooperative algorithm returns just after its deadline: half the reserve is its grace
    result = _run_with_deadline(algorithm, problem, params, own, grace=reserve / 2)
    if isinstance(result, Placement):
        note = ""
        if result.report.get("budget_exhausted"):
            note = f"{algorithm} stopped at its time budget ({own_ms}); best plan so far" + (
                f": {result.report['budget_note']}" if result.report.get("budget_note") else ""
            )
        return PlanOutcome(result, algorithm, note)
    if isinstance(result, SchedulingError) and not isinstance(result, BudgetExhaustedError):
        raise result
    why = (
        str(result)
        if isinstance(result, BudgetExhaustedError)
        else f"{algorithm} did not finish within its time budget of {own_ms}"
    )
    if not fallback or fallback == algorithm:
        raise BudgetExhaustedError(why)
    log.warning("topology %s: %s; planning it with %s", problem.topology.id, why, fallback)
    placement = registry.run(fallback, problem, {}, budget=Budget(budget.deadline))
    return PlanOutcome(placement, fallback, f"{why}; placed by the fallback {fallback}")


def _run_with_deadline(
    algorithm: str,
    problem: Problem,
    params: Mapping[str, Any] | None,
    budget: Budget,
    grace: float,
) -> Placement | Exception | None:
    """The plan, the exception it raised, or ``None`` when it did not return in time."""
    box: list[Placement | Exception] = []

    def work() -> None:
        try:
            box.append(registry.run(algorithm, problem, params, budget=budget))
        except Exception as error:  # handed to the caller's thread
            box.append(error)

    thread = threading.Thread(
        target=work, name=f"plan-{problem.topology.id}-{algorithm}", daemon=True
    )
    thread.start()
    thread.join(budget.remaining() + grace)
    if thread.is_alive():
        return None
    result = box[0]
    if isinstance(result, Exception) and not isinstance(result, SchedulingError):
        raise result
    return result
