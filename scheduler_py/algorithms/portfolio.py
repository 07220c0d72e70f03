"""``auto``: every applicable algorithm within one time budget, the best plan under the cost
model kept, then improved by local search (ours).

**Candidates** (:data:`CANDIDATES`) run one after another within
:data:`CANDIDATES_SHARE` of the budget, td and metis first, each with an even share of what
is left of that part (:meth:`~scheduler_py.model.budget.Budget.share`), so a fast algorithm
leaves its unused time to the next. Candidates that cannot stop at a budget are started only
where they were measured to fit (``bench scale``, ``docs/evaluation.md`` "Planning at scale"):
``online`` and ``t3`` not above :data:`SLOW_ABOVE` executors (``online`` took 372 s at 1,000
executors, ``t3`` 45 s on a 1,000-executor word count), ``metis``, ``albic``, ``rstorm`` and
``pipeline`` only when :data:`ESTIMATED_SECONDS` (per communicating pair and per
executor × node) fits what they may use (metis: :data:`WHOLE_BUDGET_SHARE` of the whole
budget's rest). Every plan is verified by
:func:`~scheduler_py.algorithms.registry.run` (a candidate that fails or does not apply is
recorded with its reason and skipped) and evaluated with the shared cost model
(``scheduler_py/model/cost.py``).

**Refinement.** The rest of the budget goes to ``tdls``'s local search
(:func:`scheduler_py.algorithms.topdown.tdls.improve`: moves, swaps, merges, perturbations
and the two-node polish in the group-count form), started from the best plan and, once that
search stalls (:data:`REFINE_STALL_ROUNDS`), from td's; it never lowers φ and stops early
enough for the closing checks (:data:`CLOSING_EVALUATIONS`, :data:`REFINE_MARGIN`). This is
why ``tdls`` (td plus the same search) is not a default candidate. Measured on
``layered-1000x50`` (``bench scale``): ``metis`` 701 → 724, ``td`` 453 → 715 in 1 s.

The best plan keeps the most traffic on-node (φ, paper 000 §3); ties — within :data:`TIE` of
each other — go to the plan that moves fewer executors off their current node (when the
topology runs), then to fewer nodes, then to the lower maximum node load. The report names
the winner (``refined <name>`` when the refinement improved it), the runner-up and every
candidate's numbers.

Once a plan keeps all of the topology's traffic on-node, nothing can beat it: the remaining
candidates and the refinement are skipped (a word count that fits one node costs ``auto``
what it costs ``td``).

Because ``td`` is a candidate and runs first, ``auto`` keeps at least as much traffic as
``td`` whenever ``td`` finishes within its share.
"""

from __future__ import annotations

import time
from typing import Any

from scheduler_py.algorithms import registry
from scheduler_py.algorithms.topdown.tdls import improve
from scheduler_py.model.bound import estimated_pairs
from scheduler_py.model.budget import UNLIMITED, Budget
from scheduler_py.model.cost import Evaluation, evaluate, violations
from scheduler_py.model.errors import BudgetExhaustedError, SchedulingError
from scheduler_py.model.types import Placement, Problem

CANDIDATES = ("td", "metis", "rstorm", "pipeline", "even", "t3", "online", "albic")
"""in running order: those that won on ``bench scale``'s instances first (td, metis), then
the single passes that win only on small topologies, then the slower ones (checking and
evaluating a plan of 1,000 executors takes tens of milliseconds, so the order decides what a
short budget reaches). ``tdls`` is td followed by the refinement's search, which ``auto``
runs itself from its best plans, so it is not a candidate by default."""
TIE = 1e-9
"""relative difference in kept traffic under which two plans count as equal"""
MIN_SHARE_SECS = 0.005
"""a candidate is not started with less than this left"""
CANDIDATES_SHARE = 0.3
"""of the budget for the candidates; the refinement has the rest (and what they leave)"""
SEARCH_SHARE = {"tdls": 0.5}
"""candidates given this share of what is left instead of an even one (tdls, when a caller
lists it)"""
SLOW_ABOVE = {"online": 100, "t3": 100}
"""executors above which a candidate that ignores its budget is not tried (``bench scale``,
topologies of ``shared-1000x50``: t3 0.39 s at 218 executors, online 0.40 s at 312)"""
ESTIMATED_SECONDS = {
    "metis": (5e-6, 0.0),
    "albic": (1.2e-5, 0.0),
    "rstorm": (0.0, 7e-7),
    "pipeline": (0.0, 2.5e-7),
}
"""what a candidate that ignores its budget takes, about: seconds per communicating executor
pair and per executor × node (measured on the 2-core machine of ``docs/evaluation.md``: metis 0.26 s
for the 48,037 pairs of ``layered-1000x50`` and 1.1 s for the 240,000 of
``wordcount-1000x50``, albic 0.58 s and 2.2 s; on word counts of 1,000 and 10,000 executors
over 500 nodes, rstorm 0.33 s and 2.6 s, pipeline 0.99 s at 10,000); it is started only when
the estimate fits what it may use"""
WHOLE_BUDGET_SHARE = {"metis": 0.75}
"""candidates that may use this share of what is left of the whole budget, not only of the
candidates' part: metis often ends highest after the refinement (``bench scale``,
star-1000x50: 455 from metis in 0.68 s against 345 from td refined for 1 s)"""
CLOSING_EVALUATIONS = 2
"""how many evaluations' time the refinement leaves at the end of the budget (its own
evaluation, and the registry's check of auto's plan, which is cheaper): a plan handed back
after the round's deadline is thrown away for the fallback's"""
REFINE_MARGIN = 0.1
"""of the time left that the refinement leaves unused too: its search looks at the clock
between steps, and a step on hundreds of nodes can take tens of milliseconds"""
REFINE_MIN_SECS = 0.02
"""the refinement is not started with less than this left"""
REFINE_ROUNDS = 1_000
"""perturbation rounds of the refinement at most"""
REFINE_STALL_ROUNDS = 50
"""the refinement stops after this many perturbation rounds in a row that did not improve
the plan by more than :data:`REFINE_STALL_GAIN` since the last such step"""
REFINE_STALL_GAIN = 0.001
"""relative improvement that counts as progress for :data:`REFINE_STALL_ROUNDS`"""
REFINE_EVALUATIONS = 10_000_000
"""neighbour evaluations of the refinement at most (``tdls``'s default, 200,000, stopped its
search on ``layered-1000x50`` at 614 where 1 s of search reaches 715)"""


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
    summary="Runs td, metis, rstorm, pipeline, even, t3, online and albic within part of "
    "the time budget, then improves the best plan (and td's) by tdls's local search for "
    "the rest; keeps the plan with the most on-node traffic (ties: fewer moves, fewer "
    "nodes).",
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
            f"{unknown or 'none'}; expected names from `scheduler-py algorithms` (the default "
            f"list: {', '.join(CANDIDATES)})"
        )
    own = budget if budget.limited else Budget.of(seconds)
    tried: dict[str, dict[str, Any]] = {}
    ranked: list[tuple[tuple, str, Placement, Evaluation]] = []
    executors = len(problem.topology.executors)
    pairs = estimated_pairs(problem)
    evaluating = 0.0  # the longest evaluation of a candidate's plan
    phase = own.share(CANDIDATES_SHARE)
    for index, name in enumerate(names):
        if ranked and _keeps_everything(_best(ranked)):
            tried[name] = {"skipped": f"{_best(ranked)[1]} keeps all the traffic on-node"}
            continue
        if phase.remaining() < MIN_SHARE_SECS:
            tried[name] = {"skipped": "no time left in the budget"}
            continue
        if executors > SLOW_ABOVE.get(name, executors):
            tried[name] = {
                "skipped": f"ignores its time budget and takes minutes above "
                f"{SLOW_ABOVE[name]} executors"
            }
            continue
        per_pair, per_executor_node = ESTIMATED_SECONDS.get(name, (0.0, 0.0))
        estimate = per_pair * pairs + per_executor_node * executors * len(problem.nodes)
        allowed = (
            own.remaining() * WHOLE_BUDGET_SHARE[name]
            if name in WHOLE_BUDGET_SHARE
            else phase.remaining()
        )
        if estimate > allowed:
            tried[name] = {
                "skipped": f"ignores its time budget and would take about {estimate:.2f} s "
                f"({executors} executors, {len(problem.nodes)} nodes, {pairs} communicating "
                f"pairs), more than the {allowed:.2f} s it may use"
            }
            continue
        share = phase.share(SEARCH_SHARE.get(name, 1.0 / (len(names) - index)))
        try:
            placement = registry.run(name, problem, budget=share)
        except BudgetExhaustedError as error:
            tried[name] = {"skipped": f"out of time: {error}"}
            continue
        except SchedulingError as error:
            tried[name] = {"skipped": str(error)}
            continue
        started = time.perf_counter()
        _record(problem, name, placement, tried, ranked)
        evaluating = max(evaluating, time.perf_counter() - started)
    # the refinement stops early enough for its own evaluation and for the registry's check
    # of auto's plan
    refine = own
    if own.limited:
        closing = CLOSING_EVALUATIONS * evaluating + REFINE_MARGIN * own.remaining()
        refine = Budget(own.deadline - closing)
    for start in _refine_starts(ranked):
        if refine.remaining() < REFINE_MIN_SECS or _keeps_everything(_best(ranked)):
            break
        _refine(problem, start, refine, tried, ranked)
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


def _keeps_everything(entry: tuple[tuple, str, Placement, Evaluation]) -> bool:
    """Whether a plan keeps all of the topology's traffic on-node: no plan keeps more, so
    the portfolio stops there (a topology that fits one node, e.g., is done after td)."""
    evaluation = entry[3]
    return evaluation.imc_gain >= evaluation.total_traffic * (1 - TIE)


def _record(
    problem: Problem,
    name: str,
    placement: Placement,
    tried: dict[str, dict[str, Any]],
    ranked: list[tuple[tuple, str, Placement, Evaluation]],
    evaluation: Evaluation | None = None,
) -> None:
    """Rank ``placement`` and report its numbers (``evaluation``: when the caller has it)."""
    if evaluation is None:
        evaluation = evaluate(problem, placement)
    tried[name] = {
        "imc_gain": evaluation.imc_gain,
        "nodes_used": evaluation.nodes_used,
        "max_node_load": evaluation.max_node_load,
        "seconds": placement.report.get("seconds"),
    }
    ranked.append((_rank(problem, placement, evaluation), name, placement, evaluation))


def _refine_starts(ranked: list) -> list:
    """The plans the refinement starts from, in turn: the best candidate, then td's when it
    is another (a search from a plain greedy start often ends higher than one from a
    partitioner's; ``bench scale``, chain-1000x50: 181 from td, 169 from metis). The second
    runs only when the first stalled before the budget ended."""
    starts = [_best(ranked)]
    td = next((entry for entry in ranked if entry[1] == "td"), None)
    if td is not None and td is not starts[0]:
        starts.append(td)
    return starts


def _refine(
    problem: Problem,
    best: tuple[tuple, str, Placement, Evaluation],
    budget: Budget,
    tried: dict[str, dict[str, Any]],
    ranked: list[tuple[tuple, str, Placement, Evaluation]],
) -> None:
    """``tdls``'s local search from the best plan, for the rest of the budget; kept as the
    candidate ``refined <name>`` when it keeps more traffic than that plan."""
    name = f"refined {best[1]}"
    started = time.perf_counter()
    try:
        placement = improve(
            problem,
            best[2],
            origin=best[1],
            max_rounds=REFINE_ROUNDS,
            max_evaluations=REFINE_EVALUATIONS,
            stall_rounds=REFINE_STALL_ROUNDS,
            stall_gain=REFINE_STALL_GAIN,
            budget=budget,
        )
    except SchedulingError as error:
        tried[name] = {"skipped": str(error)}
        return
    problems = violations(problem, placement)
    if problems:  # a bug worth reporting, not a reason to lose the plan we have
        tried[name] = {"skipped": f"invalid placement: {'; '.join(problems)}"}
        return
    evaluation = evaluate(problem, placement)
    if evaluation.imc_gain <= best[3].imc_gain * (1 + TIE):
        tried[name] = {
            "skipped": f"found nothing better than {best[1]} in "
            f"{time.perf_counter() - started:.2f} s"
        }
        return
    _record(problem, name, placement, tried, ranked, evaluation)


def _best(ranked: list) -> tuple:
    best = ranked[0]
    for entry in ranked[1:]:
        if _better(entry[0], best[0]):
            best = entry
    return best
