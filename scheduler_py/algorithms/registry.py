"""The algorithm registry: every placement algorithm is a pure function registered by name.

An algorithm module exposes ``plan(problem, *, budget=UNLIMITED, **params) -> Placement``
and registers it::

    @register("td", paper="000 §4, Alg. 4-5", summary="...", params={"key": ("rs", "...")})
    def plan(problem: Problem, *, key: str = "rs", budget: Budget = UNLIMITED) -> Placement: ...

:func:`run` is the single entry point callers use: it checks the parameters (converted by
:func:`scheduler_py.config.coerce`), passes the time budget, times the call, and verifies
the result with the shared cost module so that no algorithm can hand an incomplete or
over-capacity placement to Storm.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from scheduler_py.config import ConfigValueError, coerce
from scheduler_py.model.budget import UNLIMITED, Budget
from scheduler_py.model.capacity import check_feasible
from scheduler_py.model.cost import violations
from scheduler_py.model.errors import SchedulingError, UnknownAlgorithmError
from scheduler_py.model.types import Placement, Problem

PlanFunction = Callable[..., Placement]


@dataclass(frozen=True)
class AlgorithmInfo:
    name: str
    plan: PlanFunction
    paper: str
    summary: str
    params: Mapping[str, tuple[Any, str]] = field(default_factory=dict)
    """Parameter name -> (default, description)."""
    recall: Callable[..., Placement | None] | None = None
    """``recall(problem, **params)``: the plan ``plan`` remembered for an equal problem, or
    ``None`` — a bounded lookup that plans nothing (:func:`recall`); ``None`` for an
    algorithm that remembers no plans"""
    planned_on: Callable[[Problem, Mapping[str, Any]], Problem] | None = None
    """``planned_on(problem, params)``: the problem the algorithm plans with these parameters,
    and its plan is checked on (``throughput`` with a ``hosts`` cap: the declared CPU as the
    capacity, :func:`~scheduler_py.algorithms.host_cap.declared_capacity`); ``None``: the
    problem as given"""


_REGISTRY: dict[str, AlgorithmInfo] = {}


def register(
    name: str,
    *,
    paper: str,
    summary: str,
    params: Mapping[str, tuple[Any, str]] | None = None,
    recall: Callable[..., Placement | None] | None = None,
    planned_on: Callable[[Problem, Mapping[str, Any]], Problem] | None = None,
) -> Callable[[PlanFunction], PlanFunction]:
    """Decorator registering ``plan`` under ``name`` (and its :attr:`AlgorithmInfo.recall`
    and :attr:`AlgorithmInfo.planned_on`); names are unique."""

    def decorate(plan: PlanFunction) -> PlanFunction:
        if name in _REGISTRY and _REGISTRY[name].plan is not plan:
            raise ValueError(f"algorithm {name!r} registered twice")
        _REGISTRY[name] = AlgorithmInfo(
            name, plan, paper, summary, dict(params or {}), recall, planned_on
        )
        return plan

    return decorate


def algorithms() -> dict[str, AlgorithmInfo]:
    """Every registered algorithm, by name (imports all algorithm modules once)."""
    _load_all()
    return dict(sorted(_REGISTRY.items()))


def _load_all() -> None:
    from scheduler_py import algorithms as package

    package.load_all()


def get(name: str) -> AlgorithmInfo:
    """The algorithm registered as ``name`` (a round asks twice per topology: looked up
    without listing and sorting them all)."""
    _load_all()
    info = _REGISTRY.get(name)
    if info is None:
        raise UnknownAlgorithmError(
            f"unknown algorithm {name!r}; expected one of: {', '.join(algorithms())}"
        )
    return info


def coerce_params(info: AlgorithmInfo, params: Mapping[str, Any] | None) -> dict[str, Any]:
    """Validate parameter names and convert values to the type of their default."""
    result: dict[str, Any] = {}
    for key, value in (params or {}).items():
        if key not in info.params:
            raise SchedulingError(
                f"algorithm {info.name!r} has no parameter {key!r}; "
                f"expected one of: {', '.join(info.params) or '(none)'}"
            )
        default = info.params[key][0]
        try:
            result[key] = coerce(f"algorithm {info.name!r}: parameter {key!r}", value, default)
        except ConfigValueError as error:
            raise SchedulingError(str(error)) from error
    return result


def check_choice(algorithm: str, name: str, value: str, allowed: Sequence[str]) -> None:
    """Raise :class:`SchedulingError` unless ``value`` of the string parameter ``name`` is
    one of ``allowed`` (the error names the algorithm, the parameter, what is allowed and
    what was found)."""
    if value not in allowed:
        raise SchedulingError(
            f"algorithm {algorithm!r}: parameter {name!r} must be one of "
            f"{', '.join(allowed)}; found {value!r}"
        )


def run(
    name: str,
    problem: Problem,
    params: Mapping[str, Any] | None = None,
    *,
    budget: Budget = UNLIMITED,
) -> Placement:
    """Plan ``problem`` with algorithm ``name`` and verify the result.

    Raises :class:`UnknownAlgorithmError`, :class:`~scheduler_py.model.errors.InfeasibleError`
    (the topology cannot fit) or :class:`SchedulingError` (the algorithm produced an invalid
    placement, which is a bug worth reporting).
    """
    info = get(name)
    kwargs = coerce_params(info, params)
    if info.planned_on is not None:
        problem = info.planned_on(problem, kwargs)
    check_feasible(problem)
    started = time.perf_counter()
    placement = info.plan(problem, budget=budget, **kwargs)
    return _checked(name, problem, placement, time.perf_counter() - started)


def planned_problem(
    name: str, problem: Problem, params: Mapping[str, Any] | None = None
) -> Problem:
    """The problem algorithm ``name`` plans ``problem`` as with ``params``
    (:attr:`AlgorithmInfo.planned_on`), the one its plan is checked on; ``problem`` itself for
    an algorithm that plans the problem as given. Raises as :func:`run` does for an unknown
    algorithm or bad parameters."""
    info = get(name)
    if info.planned_on is None:
        return problem
    return info.planned_on(problem, coerce_params(info, params))


def recall(
    name: str, problem: Problem, params: Mapping[str, Any] | None = None
) -> Placement | None:
    """The plan algorithm ``name`` remembered for a problem equal to ``problem`` (its
    :attr:`AlgorithmInfo.recall`), or ``None`` when it remembers none. A lookup, not a plan:
    the caller needs no time budget nor a thread it can abandon (``scheduling/planning.py``).
    It is not checked again here: :func:`run` checked it when it was made, for a problem
    equal in every field a check reads, and a round verifies every plan it hands to Storm
    (``scheduling/verified.py``). Raises as :func:`run` does for an unknown algorithm or bad
    parameters."""
    info = get(name)
    kwargs = coerce_params(info, params)
    if info.recall is None:
        return None
    if info.planned_on is not None:
        problem = info.planned_on(problem, kwargs)
    started = time.perf_counter()
    placement = info.recall(problem, **kwargs)
    if placement is None:
        return None
    return _named(name, placement, time.perf_counter() - started)


def _checked(name: str, problem: Problem, placement: Placement, seconds: float) -> Placement:
    """:func:`_named` ``placement``, once the shared cost module found nothing wrong with
    it."""
    problems = violations(problem, placement)
    if problems:
        raise SchedulingError(
            f"algorithm {name!r} produced an invalid placement for topology "
            f"{problem.topology.id}: {'; '.join(problems)}"
        )
    return _named(name, placement, seconds)


def _named(name: str, placement: Placement, seconds: float) -> Placement:
    """``placement`` named after its algorithm, with the seconds it took in its report."""
    report = dict(placement.report)
    report.setdefault("seconds", seconds)
    return replace(placement, algorithm=name, report=report)
