"""``auto``: every applicable algorithm within one time budget, the best plan under the cost
model kept (ours).

The candidates of :data:`CANDIDATES` run one after another, fast ones first, each with an even
share of what is left of the budget (:meth:`~scheduler_py.model.budget.Budget.share`), so a
fast algorithm leaves its unused time to the next. Every plan is verified by
:func:`~scheduler_py.algorithms.registry.run` (a candidate that fails or does not apply is
recorded with its reason and skipped) and evaluated with the shared cost model
(``scheduler_py/model/cost.py``). The best plan keeps the most traffic on-node (φ, paper 000
§3); ties — within :data:`TIE` of each other — go to the plan that moves fewer executors off
their current node (when the topology runs), then to fewer nodes, then to the lower maximum
node load. The report names the winner, the runner-up and every candidate's numbers.

Because ``td`` is a candidate and runs first, ``auto`` keeps at least as much traffic as
``td`` whenever ``td`` finishes within its share.
"""

from __future__ import annotations

from typing import Any

from scheduler_py.algorithms import registry
from scheduler_py.model.budget import UNLIMITED, Budget
from scheduler_py.model.cost import Evaluation, evaluate
from scheduler_py.model.errors import BudgetExhaustedError, SchedulingError
from scheduler_py.model.types import Placement, Problem

CANDIDATES = ("td", "tdls", "rstorm", "t3", "online", "metis", "pipeline", "albic", "even")
"""in running order: fast single passes first, then the searches (tdls, albic)"""
TIE = 1e-9
"""relative difference in kept traffic under which two plans count as equal"""
MIN_SHARE_SECS = 0.005
"""a candidate is not started with less than this left"""


def _rank(problem: Problem, placement: Placement, evaluation: Evaluation) -> tuple:
    moved = 0
    if problem.current is not None:
        before = problem.current.node_of
        moved = sum(1 for e, n in placement.node_of.items() if before.get(e) != n)
    return (-evaluation.imc_gain, moved, evaluation.nodes_used, evaluation.max_node_load)


def _better(a: tuple, b: tuple) -> bool:
    """Whether rank ``a`` beats rank ``b`` (φ compared with a relative tolerance)."""
    scale = max(abs(a[0]), abs(b[0]), 1.0)
    if abs(a[0] - b[0]) > TIE * scale:
        return a[0] < b[0]
    return a[1:] < b[1:]


@registry.register(
    "auto",
    paper="ours: a portfolio of the registered algorithms under the cost model of 000 §3",
    summary="Runs td, tdls, rstorm, t3, online, metis, pipeline, albic and even within the "
    "time budget and keeps the plan with the most on-node traffic (ties: fewer moves, "
    "fewer nodes).",
    params={
        "seconds": (5.0, "time budget when the caller gives none (the round always does)"),
        "candidates": (",".join(CANDIDATES), "comma-separated algorithms to try, in order"),
    },
)
def plan(
    problem: Problem,
    *,
    seconds: float = 5.0,
    candidates: str = ",".join(CANDIDATES),
    budget: Budget = UNLIMITED,
) -> Placement:
    names = [name.strip() for name in candidates.split(",") if name.strip()]
    unknown = [name for name in names if name == "auto" or name not in registry.algorithms()]
    if unknown or not names:
        raise SchedulingError(
            f"auto: candidates must be registered algorithms other than auto, found "
            f"{unknown or 'none'}; expected names from: {', '.join(CANDIDATES)}"
        )
    own = budget if budget.limited else Budget.of(seconds)
    tried: dict[str, dict[str, Any]] = {}
    ranked: list[tuple[tuple, str, Placement, Evaluation]] = []
    for index, name in enumerate(names):
        if own.remaining() < MIN_SHARE_SECS:
            tried[name] = {"skipped": "no time left in the budget"}
            continue
        share = own.share(1.0 / (len(names) - index))
        try:
            placement = registry.run(name, problem, budget=share)
        except BudgetExhaustedError as error:
            tried[name] = {"skipped": f"out of time: {error}"}
            continue
        except SchedulingError as error:
            tried[name] = {"skipped": str(error)}
            continue
        evaluation = evaluate(problem, placement)
        tried[name] = {
            "imc_gain": evaluation.imc_gain,
            "nodes_used": evaluation.nodes_used,
            "max_node_load": evaluation.max_node_load,
            "seconds": placement.report.get("seconds"),
        }
        ranked.append((_rank(problem, placement, evaluation), name, placement, evaluation))
    if not ranked:
        reasons = "; ".join(f"{n}: {t.get('skipped')}" for n, t in tried.items())
        raise BudgetExhaustedError(f"auto: no candidate produced a plan ({reasons})")
    best = _best(ranked)
    report: dict[str, Any] = {"chosen": best[1], "candidates": tried}
    rest = [entry for entry in ranked if entry is not best]
    if rest:
        runner = _best(rest)
        report["runner_up"] = {"algorithm": runner[1]} | tried[runner[1]]
    if own.expired():
        report["budget_exhausted"] = True
        report["budget_note"] = f"{best[1]} was the best of what finished in time"
    return Placement(
        problem.topology.id,
        best[2].node_of,
        worker_of=best[2].worker_of,
        report=report,
    )


def _best(ranked: list) -> tuple:
    best = ranked[0]
    for entry in ranked[1:]:
        if _better(entry[0], best[0]):
            best = entry
    return best
