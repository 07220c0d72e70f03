"""The time budget every algorithm receives (``scheduler_py.model.budget``).

Iterating algorithms (``tdls``, ``optimal``, ``albic``) given an already expired budget still
return a complete placement within capacity (``registry.run`` verifies it) flagged
``budget_exhausted`` (they always hold a feasible start, so none raises
``BudgetExhaustedError`` on these instances); a generous budget changes nothing.
Fast one-shot algorithms accept the keyword and ignore it.
"""

from __future__ import annotations

import numpy as np
import pytest

from scheduler_py.algorithms import registry
from scheduler_py.model.budget import UNLIMITED, Budget
from scheduler_py.model.cost import violations
from scheduler_py.model.types import Node, Placement, Problem
from tests.test_albic import make_problem
from tests.test_optimal import FIGURE2, VECTORS
from tests.test_tdls import section73

GENEROUS = 3600.0


def _expired() -> Budget:
    return Budget(0.0)


def _albic_problem() -> Problem:
    rng = np.random.default_rng(1)
    loads = list(rng.uniform(1, 20, 10))
    homes = list(rng.integers(0, 3, 10))
    return make_problem(loads, homes, 3, one_to_one=True)


CASES: list[tuple[str, Problem, dict]] = [
    ("tdls", section73(7), {}),
    ("tdls", FIGURE2, {"start": "ffd"}),
    ("optimal", VECTORS["TC7"][0], {"method": "dp"}),
    ("optimal", VECTORS["TC7"][0], {"method": "milp"}),
    ("optimal", FIGURE2, {}),
    ("albic", _albic_problem(), {"time_limit": 1.0}),
    ("albic", _albic_problem(), {"time_limit": 1.0, "collocation": False}),
]


@pytest.mark.parametrize(("name", "problem", "params"), CASES)
def test_expired_budget_gives_a_valid_flagged_placement(
    name: str, problem: Problem, params: dict
) -> None:
    # each of these always has a feasible start (td / ffd, tdls, cola or the current
    # placement), so none needs BudgetExhaustedError here
    placement = registry.run(name, problem, params, budget=_expired())
    assert isinstance(placement, Placement)
    assert violations(problem, placement) == []
    assert placement.report["budget_exhausted"] is True
    assert placement.report["budget_note"]


@pytest.mark.parametrize(("name", "problem", "params"), CASES)
def test_generous_budget_gives_the_unlimited_result(
    name: str, problem: Problem, params: dict
) -> None:
    if "time_limit" in params:
        # the solver's own 1 s limit would make both results depend on the machine's load
        params = {**params, "time_limit": GENEROUS}
    unlimited = registry.run(name, problem, params, budget=UNLIMITED)
    generous = registry.run(name, problem, params, budget=Budget.of(GENEROUS))
    assert generous.node_of == unlimited.node_of
    assert "budget_exhausted" not in generous.report
    assert "budget_exhausted" not in unlimited.report


def test_expired_tdls_still_returns_at_least_the_td_start() -> None:
    problem = section73(3)
    placement = registry.run("tdls", problem, budget=_expired())
    assert placement.report["phi"] >= placement.report["start_phi"] - 1e-9
    assert placement.report["start"].startswith("td")


def test_expired_optimal_is_not_claimed_optimal() -> None:
    placement = registry.run("optimal", VECTORS["TC7"][0], budget=_expired())
    assert placement.report["proven_optimal"] is False
    assert placement.report["status"] == "time_limit_heuristic"


@pytest.mark.parametrize(
    "name", ["td", "tl", "naive", "even", "online", "rstorm", "metis", "t3", "pipeline"]
)
def test_one_shot_algorithms_accept_and_ignore_the_budget(name: str) -> None:
    roomy = Problem(tuple(Node(f"n{k}", 400.0) for k in range(4)), FIGURE2.topology)
    expired = registry.run(name, roomy, budget=_expired())
    unlimited = registry.run(name, roomy)
    assert expired.node_of == unlimited.node_of
    assert "budget_exhausted" not in expired.report


def test_every_registered_plan_takes_a_budget_keyword() -> None:
    import inspect

    for name, info in registry.algorithms().items():
        parameter = inspect.signature(info.plan).parameters.get("budget")
        assert parameter is not None, f"{name}: plan has no budget parameter"
        assert parameter.kind is inspect.Parameter.KEYWORD_ONLY, name
        assert parameter.default is UNLIMITED, name
