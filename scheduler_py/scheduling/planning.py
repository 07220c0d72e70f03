"""Plan one topology under a time budget, with a fast fallback.

The algorithm runs through :func:`scheduler_py.algorithms.registry.run` (parameters checked,
result verified against capacity) with its :class:`~scheduler_py.model.budget.Budget`. A
cooperative algorithm stops at its deadline and returns its best plan so far
(``report["budget_exhausted"]``). One that does not return in time is abandoned — it runs on
in a daemon thread until it finishes or notices its budget, its result unused — and the
fallback algorithm places the topology instead, within the reserve kept for it. Either way
:attr:`PlanOutcome.note` says what happened, and the round puts it into the topology's Storm
status.

The algorithm runs in a :class:`PlanningWorker`'s thread while the caller waits at most until
the deadline. A round plans all its topologies through one worker: one thread handed one plan
after another (15–200 µs a hand-over on 2-core machines, the most on a virtual machine whose
threads wake slowly, against about 200 µs and more to start a thread per topology). A worker
whose plan overran is abandoned with it and the next plan gets a fresh one, so an overrun
never delays the topologies after it.

Before any hand-over, the algorithm is asked for a plan it remembered for an equal problem
(:func:`~scheduler_py.algorithms.registry.recall`; ``throughput`` remembers its plans): a
lookup that plans nothing needs neither a deadline nor a thread, and a round placing many
copies of one topology is answered that way for all but the first.
"""

from __future__ import annotations

import logging
import math
import queue
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import TracebackType
from typing import Any

from scheduler_py.algorithms import registry
from scheduler_py.model.budget import UNLIMITED, Budget
from scheduler_py.model.errors import BudgetExhaustedError, SchedulingError
from scheduler_py.model.types import Placement, Problem

log = logging.getLogger(__name__)

FALLBACK_RESERVE_SECS = 0.1
"""Kept back from a topology's budget for the fallback algorithm (``td`` plans 10,000
executors on 500 nodes in about 12 ms, docs/evaluation.md, "Benchmarks")."""


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
    worker: PlanningWorker | None = None,
) -> PlanOutcome:
    """Plan ``problem`` with ``algorithm`` inside ``budget`` (see the module docstring), in
    ``worker``'s thread (a worker of its own when not given).

    Raises :class:`SchedulingError` (unknown algorithm, bad parameters, infeasible, an
    invalid plan) as :func:`registry.run` does; a budget overrun is not an error as long as
    the fallback can place the topology.
    """
    remembered = registry.recall(algorithm, problem, params)  # unknown names fail at once
    if remembered is not None:
        return PlanOutcome(remembered, algorithm)
    if not budget.limited:
        return PlanOutcome(registry.run(algorithm, problem, params), algorithm)
    if worker is None:
        with PlanningWorker() as one_off:
            return plan_within(problem, algorithm, params, budget, fallback, one_off)
    reserve = min(FALLBACK_RESERVE_SECS, budget.remaining() / 4) if fallback else 0.0
    own = Budget(budget.deadline - reserve)
    own_ms = f"{own.remaining() * 1000:.0f} ms"
    # a cooperative algorithm returns just after its deadline: half the reserve is its grace
    result = _run_with_deadline(algorithm, problem, params, own, reserve / 2, worker)
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
    worker: PlanningWorker,
) -> Placement | Exception | None:
    """The plan, the exception it raised, or ``None`` when it did not return in time."""
    result = worker.run(
        lambda: registry.run(algorithm, problem, params, budget=budget),
        budget.remaining() + grace,
        f"plan-{problem.topology.id}-{algorithm}",
    )
    if isinstance(result, Exception) and not isinstance(result, SchedulingError):
        raise result
    return result


class _Job:
    """One plan handed to a worker thread: the work, and where its result goes."""

    __slots__ = ("done", "name", "result", "work")

    def __init__(self, work: Callable[[], Placement], name: str) -> None:
        self.work = work
        self.name = name
        self.result: Placement | Exception | None = None
        self.done = threading.Lock()
        self.done.acquire()


class PlanningWorker:
    """A daemon thread that runs plans one after another, each waited for at most its
    timeout (the module docstring). Use it as a context manager, or :meth:`close` it: the
    thread ends once it has nothing left to do."""

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[_Job | None] | None = None
        self.threads_started = 0
        """how many threads this worker has started (one, plus one per abandoned plan)"""

    def run(
        self, work: Callable[[], Placement], timeout: float, name: str = "plan"
    ) -> Placement | Exception | None:
        """``work()``'s result, the exception it raised, or ``None`` when it did not return
        within ``timeout`` seconds (it then runs on, its result unused, and the next call
        gets a new thread)."""
        if self._jobs is None:
            self._jobs = queue.SimpleQueue()
            thread = threading.Thread(target=_serve, args=(self._jobs,), name=name, daemon=True)
            thread.start()
            self.threads_started += 1
        job = _Job(work, name)
        self._jobs.put(job)
        wait = max(0.0, timeout) if math.isfinite(timeout) else -1  # -1: as long as it takes
        if job.done.acquire(timeout=wait):
            return job.result
        self.close()  # abandoned: the thread ends once the overrunning plan returns
        return None

    def close(self) -> None:
        """Let the thread end after the plan it runs, if any."""
        if self._jobs is not None:
            self._jobs.put(None)
            self._jobs = None

    def __enter__(self) -> PlanningWorker:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()


def _serve(jobs: queue.SimpleQueue[_Job | None]) -> None:
    """A worker thread: run jobs until told to stop (``None``)."""
    current = threading.current_thread()
    while (job := jobs.get()) is not None:
        current.name = job.name
        try:
            job.result = job.work()
        except Exception as error:  # handed to the caller's thread
            job.result = error
        job.done.release()
