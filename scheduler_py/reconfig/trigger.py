"""When to re-plan a running topology, and when to accept the new plan (pure functions).

Implements our trigger (``docs/algorithms/000-topdown.md`` §6.4) on top of the paper's "large
difference between successive measurements" (paper 000 §6), with the defaults of notes
000 §6.6 and a hysteresis (``docs/algorithms/002-t3.md``):

1. *Fire* when one of these holds:

   * **change**: the aggregate's change signal ``‖x − x_ref‖₁ / ‖x_ref‖₁`` exceeds θ
     (``change_threshold``, default 0.25) in ``windows`` (m, default 2) consecutive
     aggregates — consecutive *distinct* aggregates, an aggregate read twice counts once;
   * **overload**: under the measured costs some node's load exceeds its capacity, in
     ``windows`` consecutive aggregates too (one noisy aggregate must not move a topology);
   * **membership**: the set of live supervisors differs from the one the running
     placement was made for;
   * **measured**: the running placement was planned on *declared* costs (the topology's
     first placement, before any measurement) and its first steady aggregate — the one
     after the warm-up, which also becomes the change reference — is in. Once per
     placement: the plan the paper's adaptive loop makes from measurements (paper 000 §6)
     without waiting for the load to change (``replan_on_measured``, default true).

2. *Accept* the candidate plan only if, evaluated under the *current* costs, it cuts the
   inter-worker traffic of the running placement by more than ``margin`` (δ, default 0.02)
   × the total traffic — or the running placement overloads a node and the candidate does
   not. A re-plan by ``throughput`` is judged on that algorithm's objective instead: the
   throughput model's rate must rise by more than ``min_rate_gain`` (relative, default 0.10)
   at every tuple size the algorithm planned for (``scheduler_py/scheduling/proposal.py``,
   ``PredictedRates``): a margin above what the model tells apart on measured costs, not δ
   (:attr:`TriggerConfig.min_rate_gain` says why). A
   candidate identical to the running placement is always declined.

   None of them but *membership* fires on a **stale** aggregate (older than the topology's
   ``scheduler.brain.metrics.max.age.secs``, e.g. because the aggregation was killed; the
   rule of ``scheduler_py/monitoring/measured.py``, ``stale_reason``): the round plans on
   declared costs then, and a re-plan would too. A stale aggregate also breaks the
   consecutive counts, and the watch keeps the reason (``Watch.stale``).

3. *Wait* ``cooldown_secs`` (default 300) after a reconfiguration, and
   ``decline_backoff_secs`` (default 120) after a declined one, before firing again;
   ``regret_backoff_secs`` (default 3600) after one whose *measured* gain was negative.

4. *Stage*: the next stage of a staged plan fires (kind ``staged``) once the previous
   stage's measured gain is in and was not negative (``scheduler_py/reconfig/staging.py``).

Deviation from the paper: the gain is measured at the **worker** (Storm's collocation
unit, ``docs/algorithms/000-topdown.md`` §6.2), i.e. inter-worker traffic, not φ at the node; for
the brain's own plans
(one worker per node and topology) the two are the same.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import TYPE_CHECKING, Any

from scheduler_py.algorithms import fastest
from scheduler_py.config import keys
from scheduler_py.model.cost import Evaluation
from scheduler_py.model.throughput import rate_text

if TYPE_CHECKING:
    from scheduler_py.scheduling.proposal import PredictedRates, Proposal

CONF_PREFIX = keys.RECONFIG_PREFIX


TRAFFIC_REPLAN = "tdls"
"""the re-plan algorithm of a topology placed by an algorithm other than ``throughput``"""


def replan_algorithm(placed_by: str) -> str:
    """The default re-plan algorithm of a topology the round places with ``placed_by``
    (:attr:`TriggerConfig.algorithm`)."""
    return fastest.NAME if placed_by == fastest.NAME else TRAFFIC_REPLAN


@dataclass(frozen=True)
class TriggerConfig:
    """Every parameter of the trigger and of the drain-out, with its default.

    Set cluster-wide with ``scheduler-py serve --reconfig key=value`` and per topology with
    the topology conf ``scheduler.reconfig.<key with dots>`` (``scheduler.reconfig.change.
    threshold=0.4``)."""

    enabled: bool = True
    """re-plan running topologies automatically (``replan`` works either way)"""
    algorithm: str = ""
    """algorithm of re-plans; empty (the default): :func:`replan_algorithm` — ``throughput``
    for a topology the round places with ``throughput`` (the service default), so that a
    re-plan keeps the objective the topology was placed for, and ``tdls`` for a topology
    placed by another algorithm (paper 000 §6: place with any, re-plan with the best we have
    under the traffic cost model; ``td`` is not monotone)"""
    change_threshold: float = 0.25
    """θ: relative L1 change of the measured costs that counts as a change"""
    change_windows: int = 2
    """m: consecutive aggregates above θ needed to fire"""
    min_gain: float = 0.02
    """δ: accepted plans cut inter-worker traffic by more than δ × total traffic"""
    min_rate_gain: float = 0.10
    """a ``throughput`` re-plan must raise the predicted rate by more than this, relative.
    On the emulated cluster (``docs/results/emulated-network/throughput-default/README.md``,
    thirteenth set) the re-plans on measured costs predicted ×1.03–1.09 ran at ×0.87–1.02 of
    the placement they left (the running placement's rate under-predicted by 7–17 % on its
    first measured costs) and raised the p99, those predicted ×1.15 and more gained
    ×1.06–2.00; each re-plan also pauses the topology and restarts workers that must compile
    again"""
    cooldown_secs: float = 300.0
    """no automatic reconfiguration sooner than this after the last one"""
    decline_backoff_secs: float = 120.0
    """no new automatic evaluation sooner than this after a declined one"""
    warmup_secs: float = 120.0
    """a topology the brain sees for the first time is watched, not re-planned, this long;
    the aggregate after it becomes the change reference"""
    drain_timeout_secs: float = 60.0
    """give up draining (and resume, unchanged) after this long"""
    drain_min_secs: float = 0.0
    """drain at least this long even when the counters say drained earlier"""
    drain_quiet_polls: int = 2
    """consecutive drained observations needed"""
    drain_poll_secs: float = 0.05
    """time between two polls of the live counters (a poll where some worker has not
    published again is skipped, see ``scheduler_py/reconfig/execution.py``)"""
    apply_timeout_secs: float = 120.0
    """wait this long for Nimbus to put the plan in effect and its workers to come up"""
    max_restart_share: float = 0.5
    """a plan restarting more than this share of the topology's workers is staged
    (``scheduler_py/reconfig/staging.py``)"""
    replan_on_measured: bool = True
    """re-plan once a topology placed on declared costs has its first steady aggregate"""
    regret_backoff_secs: float = 3600.0
    """no automatic reconfiguration this long after one whose measured gain was negative
    (``scheduler_py/reconfig/measured_gain.py``)"""

    @classmethod
    def keys(cls) -> list[str]:
        return [f.name for f in fields(cls)]

    def with_overrides(self, overrides: Mapping[str, Any], source: str) -> TriggerConfig:
        """Return a copy with ``overrides`` (key → value, keys as in :meth:`keys` or with
        dots) applied; a wrong key or value raises ``ValueError`` naming ``source``."""
        changes: dict[str, Any] = {}
        known = {f.name: f for f in fields(self)}
        for raw_key, raw_value in overrides.items():
            key = raw_key.removeprefix(CONF_PREFIX).replace(".", "_").replace("-", "_")
            if key not in known:
                raise ValueError(
                    f"{source}: unknown reconfiguration setting {raw_key!r}; expected one of "
                    f"{', '.join(k.replace('_', '.') for k in known)}"
                )
            changes[key] = _coerce(key, raw_value, getattr(self, key), source)
        return replace(self, **changes)

    def for_topology(self, conf: Mapping[str, Any]) -> TriggerConfig:
        """This config with the topology's ``scheduler.reconfig.*`` conf entries applied."""
        own = {k: v for k, v in conf.items() if k.startswith(CONF_PREFIX)}
        return self.with_overrides(own, "topology conf") if own else self


def _coerce(key: str, value: Any, default: Any, source: str) -> Any:
    if isinstance(default, str):
        return str(value).strip()
    try:
        if isinstance(default, bool):
            if isinstance(value, str):
                lowered = value.strip().lower()
                if lowered not in ("true", "false", "yes", "no", "1", "0"):
                    raise ValueError(value)
                return lowered in ("true", "yes", "1")
            return bool(value)
        if isinstance(default, int):
            number = int(str(value))
            if number < 1:
                raise ValueError(value)
            return number
        number = float(str(value))
        if not math.isfinite(number) or number < 0:
            raise ValueError(value)
        return number
    except (TypeError, ValueError):
        kind = type(default).__name__
        raise ValueError(
            f"{source}: {CONF_PREFIX}{key.replace('_', '.')} must be a non-negative {kind}, "
            f"found {value!r}"
        ) from None


@dataclass(frozen=True)
class Observation:
    """What the controller saw of one topology at one check."""

    now: float
    """seconds (wall clock)"""
    aggregate_ms: int | None
    """``computed_at_ms`` of the topology's latest aggregate (``None``: no measurements)"""
    change: float | None
    """the aggregate's ``change.l1_relative``"""
    supervisors: frozenset[str]
    overloaded: tuple[str, ...] = ()
    """nodes whose measured load exceeds their capacity under the running placement"""
    first_measured: bool = False
    """the running placement was planned on declared costs and the first steady aggregate
    after it just became the change reference"""
    stale: str = ""
    """why the latest aggregate is too old to act on (with its age); empty while it is
    fresh or there is none. Then ``aggregate_ms`` and ``change`` are ``None``."""


@dataclass(frozen=True)
class Watch:
    """Per-topology trigger state, replaced (never mutated) at every check."""

    first_seen: float
    supervisors: frozenset[str] | None = None
    last_aggregate_ms: int | None = None
    above: int = 0
    """consecutive distinct aggregates above θ"""
    overloaded: int = 0
    """consecutive distinct aggregates under which a node is overloaded"""
    quiet_until: float = 0.0
    """no firing before this time (cooldown, decline back-off, warm-up)"""
    rebase_after_ms: int | None = None
    """the first aggregate whose window starts after this becomes the change reference"""
    stale: str = ""
    """why the trigger ignores the latest aggregate (:attr:`Observation.stale`), if it does"""


@dataclass(frozen=True)
class Trigger:
    kind: str
    """``change``, ``overload``, ``membership``, ``measured``, ``staged`` or ``operator``"""
    detail: str
    numbers: dict[str, Any] = field(default_factory=dict)


def new_watch(now: float, config: TriggerConfig, supervisors: frozenset[str]) -> Watch:
    return Watch(first_seen=now, supervisors=supervisors, quiet_until=now + config.warmup_secs)


def observe(watch: Watch, seen: Observation, config: TriggerConfig) -> tuple[Watch, Trigger | None]:
    """Advance ``watch`` with ``seen``; return the new watch and the trigger that fired, if
    any. Firing resets the consecutive count (the caller then judges and records)."""
    above, overloaded = watch.above, watch.overloaded
    fresh = seen.aggregate_ms is not None and seen.aggregate_ms != watch.last_aggregate_ms
    if seen.stale:  # measurements stopped: the next fresh aggregates count from zero
        above = overloaded = 0
    elif fresh:
        changed = seen.change is not None and seen.change > config.change_threshold
        above = above + 1 if changed else 0
        overloaded = overloaded + 1 if seen.overloaded else 0
    watch = replace(
        watch,
        above=above,
        overloaded=overloaded,
        last_aggregate_ms=seen.aggregate_ms if fresh else watch.last_aggregate_ms,
        stale=seen.stale,
    )
    if not config.enabled or seen.now < watch.quiet_until:
        return watch, None
    trigger = None
    if watch.supervisors is not None and seen.supervisors != watch.supervisors:
        joined = sorted(seen.supervisors - watch.supervisors)
        left = sorted(watch.supervisors - seen.supervisors)
        trigger = Trigger(
            "membership",
            f"supervisors joined {joined or 'none'}, left {left or 'none'}",
            {"joined": joined, "left": left},
        )
    elif seen.stale:
        pass  # nothing below may act on a stale aggregate
    elif seen.overloaded and overloaded >= config.change_windows:
        trigger = Trigger(
            "overload",
            f"measured load exceeds the capacity of {', '.join(seen.overloaded)} in "
            f"{overloaded} consecutive aggregates",
            {"nodes": list(seen.overloaded), "windows": overloaded},
        )
    elif above >= config.change_windows:
        trigger = Trigger(
            "change",
            f"measured costs changed by {seen.change:.0%} of the reference (θ "
            f"{config.change_threshold:.0%}) in {above} consecutive aggregates",
            {"change": seen.change, "threshold": config.change_threshold, "windows": above},
        )
    elif seen.first_measured and config.replan_on_measured:
        trigger = Trigger(
            "measured",
            "the placement was planned on declared costs; its first steady aggregate is in",
            {"aggregate_ms": watch.last_aggregate_ms},
        )
    if trigger is None:
        return watch, None
    return replace(watch, above=0, overloaded=0, supervisors=seen.supervisors), trigger


def after_decision(watch: Watch, now: float, accepted: bool, config: TriggerConfig) -> Watch:
    """The watch after a judged trigger: cooldown after a reconfiguration, back-off after a
    declined one."""
    pause = config.cooldown_secs if accepted else config.decline_backoff_secs
    return replace(watch, above=0, overloaded=0, quiet_until=max(watch.quiet_until, now + pause))


@dataclass(frozen=True)
class Verdict:
    accept: bool
    reason: str
    numbers: dict[str, float | int | bool | str]


def judge(
    running: Evaluation,
    candidate: Evaluation,
    config: TriggerConfig,
    same_placement: bool,
    restarts: int,
    rates: PredictedRates | None = None,
) -> Verdict:
    """Accept ``candidate`` over ``running`` (both evaluated under the current costs)? With
    ``rates`` (a re-plan by ``throughput``) the gain is the predicted rate's, else the
    inter-worker traffic's (the module docstring, rule 2)."""
    total = running.total_traffic
    saved = running.interworker_traffic - candidate.interworker_traffic
    required = config.min_gain * total
    numbers: dict[str, float | int | bool | str] = {
        "total_traffic": total,
        "interworker_before": running.interworker_traffic,
        "interworker_after": candidate.interworker_traffic,
        "saved_traffic": saved,
        "required_gain": required,
        "max_node_utilisation_before": running.max_node_utilisation,
        "max_node_utilisation_after": candidate.max_node_utilisation,
        "running_feasible": running.feasible,
        "candidate_feasible": candidate.feasible,
        "workers_restarted": restarts,
        "objective": "throughput" if rates is not None else "traffic",
    }
    if rates is not None:
        numbers |= {k: v for k, v in rates.summary().items() if isinstance(v, int | float)}
        numbers["required_ratio"] = 1.0 + config.min_rate_gain
    if same_placement:
        return Verdict(False, "the new plan is the running placement", numbers)
    if not candidate.feasible:
        return Verdict(
            False, f"the new plan breaks capacity ({'; '.join(candidate.violations)})", numbers
        )
    if not running.feasible:
        return Verdict(
            True,
            f"the running placement breaks capacity ({'; '.join(running.violations)}); "
            "the new plan does not",
            numbers,
        )
    if rates is not None:
        return _judge_rates(rates, config, numbers)
    if saved > required:
        return Verdict(
            True,
            f"inter-worker traffic {running.interworker_traffic:.4g} → "
            f"{candidate.interworker_traffic:.4g} (saves {saved:.4g} > δ·total {required:.4g})",
            numbers,
        )
    return Verdict(
        False,
        f"gain too small: saves {saved:.4g} of inter-worker traffic, needs > {required:.4g} "
        f"(δ {config.min_gain:g} × total {total:.4g})",
        numbers,
    )


def judge_proposal(proposal: Proposal, config: TriggerConfig) -> Verdict:
    """:func:`judge` on a re-plan: its running and candidate scores, whether it is the
    running placement, the workers it restarts and its predicted rates."""
    return judge(
        proposal.running,
        proposal.candidate,
        config,
        proposal.unchanged,
        proposal.workers_restarted,
        proposal.rates,
    )


def _judge_rates(
    rates: PredictedRates, config: TriggerConfig, numbers: dict[str, float | int | bool | str]
) -> Verdict:
    """Rule 2 for a re-plan by ``throughput``: the predicted rate must rise by more than
    :attr:`TriggerConfig.min_rate_gain` at the tuple size where it rises least."""
    before, after = rates.shown()
    ratio = rates.ratio
    shown = (
        f"predicted throughput {rate_text(before.rate)} → {rate_text(after.rate)} spout tuples/s "
        f"(bottleneck {before.bottleneck or 'none'} → {after.bottleneck or 'none'})"
    )
    required = 1.0 + config.min_rate_gain
    if ratio > required:
        return Verdict(
            True, f"{shown}; ×{ratio:.3g} at least > ×{required:g} (1 + min.rate.gain)", numbers
        )
    return Verdict(
        False,
        f"gain too small: {shown}; ×{ratio:.3g} at the tuple size it gains least, needs > "
        f"×{required:g} (1 + min.rate.gain)",
        numbers,
    )
