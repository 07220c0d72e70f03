"""The reconfiguration controller: watches running topologies, decides, and follows up.

Runs inside ``scheduler-py serve`` next to the Thrift handler. The handler feeds it every
scheduling round's snapshot (:meth:`Controller.observe_round`) and asks it for *armed* plans
(:meth:`Controller.armed`), which the round returns as ``PLACE``
(:func:`scheduler_py.scheduling.round.run_round`). It implements
:class:`~scheduler_py.scheduling.interfaces.ReconfigurationPort`; Nimbus, the live counters
and the measured costs reach it through the other interfaces of that module.

This module has the trigger loop (``scheduler_py/reconfig/trigger.py`` decides), the operator
controls, staging (``staging.py``) and the measured-gain follow-up (``measured_gain.py``);
one reconfiguration is carried out by ``execution.py`` (deactivate, observed drain,
``rebalance`` with wait 0, activate) and a restarted brain finishes unfinished ones with
``recovery.py``.

At ~500 lines it is one class on purpose: the trigger loop, the operator calls and the
follow-up share one lock and one per-topology state (reference, cooldown, back-off, open
entry); splitting them would spread that state over several modules that each lock it.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, replace
from typing import Any

from scheduler_py.model.budget import UNLIMITED, Budget
from scheduler_py.model.cost import node_loads
from scheduler_py.model.errors import SchedulingError
from scheduler_py.model.types import EPSILON
from scheduler_py.reconfig import measured_gain
from scheduler_py.reconfig.execution import LiveSource, Steps, carry_out
from scheduler_py.reconfig.follow_up import FollowUp, follow_up, measure_from_ms
from scheduler_py.reconfig.history import History
from scheduler_py.reconfig.pause import TriggerPause
from scheduler_py.reconfig.recovery import recover
from scheduler_py.reconfig.staging import stage
from scheduler_py.reconfig.trigger import (
    Observation,
    Trigger,
    TriggerConfig,
    Watch,
    after_decision,
    judge_proposal,
    new_watch,
    observe,
    replan_algorithm,
)
from scheduler_py.scheduling.interfaces import ArmedPlan, OperatorError, TopologyControl
from scheduler_py.scheduling.proposal import Proposal, propose, running_placement
from scheduler_py.scheduling.round import (
    LEAVE,
    PLACE,
    RoundConfig,
    TopologyDecision,
    choose_algorithm,
)
from scheduler_py.scheduling.state import ClusterState, StormTopology
from scheduler_py.scheduling.view import TopologyView, storm_view

log = logging.getLogger(__name__)

REPLAN_BUDGET_SECS = 10.0
"""the most time an operator's re-plan (``replan``, also ``--dry-run`` and the dashboard's
what-if) may plan; the brain's Thrift port also caps how many run at once
(``scheduler_py/service/server.py``)"""

ReferenceSink = Callable[[str, Mapping[str, Any]], None]
"""(topology id, aggregate) -> store the aggregate as the topology's change reference"""


class ReconfigError(OperatorError):
    """An operator request the controller cannot carry out (the message says why)."""


class Controller:
    def __init__(
        self,
        planner: RoundConfig,
        trigger: TriggerConfig,
        history: History,
        nimbus: TopologyControl | None,
        live: LiveSource | None = None,
        references: ReferenceSink | None = None,
        check_secs: float = 10.0,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.planner = planner
        self.trigger = trigger
        self.history = history
        self.nimbus = nimbus
        self.live = live
        self.references = references
        self.check_secs = check_secs
        self.clock = clock
        self.sleep = sleep
        self._lock = threading.Condition()
        self._snapshot: ClusterState | None = None
        self._records: dict[str, TopologyDecision] = {}
        self._armed: dict[str, ArmedPlan] = {}
        self._busy: set[str] = set()
        self._watches: dict[str, Watch] = {}
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._warned: set[str] = set()
        self._follow: dict[str, FollowUp] = {}
        self._stages: dict[str, tuple[int, int]] = {}
        """topology id -> (stages, workers the whole plan restarts) of its last proposal"""
        self._planned_on: dict[str, str] = {}
        """topology id -> the cost basis its running placement was planned on ("declared
        (…)" or "measured …"), from the round that placed it or the last reconfiguration"""
        self.pause = TriggerPause(history.directory)
        """the operator's pauses of the automatic trigger (kept beside the history)"""

    # -- fed by the Thrift handler ---------------------------------------------------
    def describe(self) -> str:
        mode = "automatic trigger" if self.trigger.enabled else "operator replans only"
        if self.trigger.enabled and self.pause.state()["paused"]:
            mode += " (paused for every topology: `scheduler-py trigger resume`)"
        return f"{mode}; history in {self.history.directory or 'memory'}"

    def observe_round(self, snapshot: ClusterState, records: Sequence[TopologyDecision]) -> None:
        with self._lock:
            self._snapshot = snapshot
            for record in records:
                self._records[record.topology_id] = record
                if record.decision == PLACE and "costs" in record.summary:
                    self._planned_on[record.topology_id] = str(record.summary["costs"])
            alive = {t.id for t in snapshot.topologies}
            for gone in set(self._records) - alive:
                self._records.pop(gone, None)
                self._watches.pop(gone, None)
                self._planned_on.pop(gone, None)
            self._lock.notify_all()

    def armed(self) -> dict[str, ArmedPlan]:
        with self._lock:
            return dict(self._armed)

    # -- operator controls -----------------------------------------------------------
    def history_of(self, topology: str) -> list[dict[str, Any]]:
        name, _ = self._resolve(topology, must_run=False)
        return self.history.entries(name)

    def replan(
        self,
        topology: str,
        algorithm: str = "",
        dry_run: bool = False,
        params: Mapping[str, Any] | None = None,
    ) -> dict:
        """Plan ``topology`` (name or id) again now, ``params`` over the algorithm's
        configured ones; apply it unless ``dry_run``."""
        name, topo = self._resolve(topology, must_run=True)
        snapshot = self._latest()
        config = self._config_for(topo)
        budget = Budget.of(REPLAN_BUDGET_SECS)
        try:
            proposal = self._propose(snapshot, topo, config, algorithm or None, params, budget)
        except SchedulingError as error:
            raise ReconfigError(f"cannot re-plan {name}: {error}") from error
        report = proposal.report() | {"dry_run": dry_run}
        if dry_run:
            return report
        if proposal.unchanged:
            report["reconfiguration"] = "none: the new plan is the running placement"
            return report
        entry_id = self._start(name, proposal, Trigger("operator", "scheduler-py replan"), config)
        report["reconfiguration_id"] = entry_id
        return report

    def set_trigger_paused(self, paused: bool, topology: str | None = None) -> dict[str, Any]:
        """Pause or resume the automatic trigger for ``topology`` (a running topology's name
        or id; resuming also accepts a paused name that no longer runs), or for all
        (``None``); returns :meth:`trigger_state`."""
        name = None
        if topology:
            if paused or topology not in self.pause.state()["paused_topologies"]:
                name, _ = self._resolve(topology, must_run=True)
            else:
                name = topology
        if paused:
            self.pause.pause(name)
        else:
            self.pause.resume(name)
        log.info(
            "automatic trigger %s for %s by the operator",
            "paused" if paused else "resumed",
            name or "every topology",
        )
        return self.trigger_state()

    def trigger_state(self) -> dict[str, Any]:
        """Whether the automatic trigger runs, for the brain's status, and the topologies
        whose aggregate it ignores as stale (name → why, with the age)."""
        snapshot = self._latest(required=False)
        stale = {}
        for topo in snapshot.topologies if snapshot is not None else ():
            watch = self._watches.get(topo.id)
            if watch is not None and watch.stale:
                stale[topo.name] = watch.stale
        state = {"controller": True, "enabled": self.trigger.enabled} | self.pause.state()
        return state | {"stale_aggregates": stale}

    def _resolve(self, topology: str, must_run: bool) -> tuple[str, Any]:
        """(name, topology) of a running topology named or identified ``topology``."""
        snapshot = self._latest(required=must_run)
        for topo in snapshot.topologies if snapshot is not None else ():
            if topology in (topo.name, topo.id):
                return topo.name, topo
        if must_run:
            known = sorted(t.name for t in snapshot.topologies)
            raise ReconfigError(
                f"no running topology named {topology!r} is scheduled by this brain; "
                f"running: {', '.join(known) or 'none'}"
            )
        return topology, None

    def _latest(self, required: bool = True) -> Any:
        with self._lock:
            snapshot = self._snapshot
        if snapshot is None and required:
            raise ReconfigError(
                "the brain has not seen a scheduling round from Nimbus yet; check that "
                "storm.scheduler is io.schedulerpy.storm.BrainScheduler and wait for a round"
            )
        return snapshot

    def _config_for(self, topo: Any) -> TriggerConfig:
        try:
            return self.trigger.for_topology(topo.conf)
        except ValueError as error:
            raise ReconfigError(f"topology {topo.name}: {error}") from error

    def _propose(
        self,
        snapshot: ClusterState,
        topo: StormTopology,
        config: TriggerConfig,
        algorithm: str | None,
        overrides: Mapping[str, Any] | None = None,
        budget: Budget = UNLIMITED,
    ) -> Proposal:
        view = storm_view(snapshot, topo, None, self.planner.costs)
        requested = algorithm or config.algorithm
        if not requested:
            placed_by, _ = choose_algorithm(view.conf, self.planner)
            requested = replan_algorithm(placed_by)
        chosen, params = choose_algorithm(view.conf, self.planner, requested)
        params |= dict(overrides or {})
        whole = propose(view, chosen, params, snapshot.hosts, budget)
        accepts = lambda p: judge_proposal(p, config).accept  # noqa: E731
        first, stages = stage(whole, config.max_restart_share, accepts)
        self._stages[topo.id] = (stages, whole.workers_restarted)
        return first

    # -- the trigger loop ------------------------------------------------------------
    def start(self) -> None:
        """Recover unfinished reconfigurations, then check every ``check_secs``."""
        thread = threading.Thread(target=self._loop, name="reconfig-trigger", daemon=True)
        thread.start()
        self._threads.append(thread)

    def stop(self) -> None:
        self._stop.set()

    def _loop(self) -> None:
        self._recover_with_retries()
        while not self._stop.wait(self.check_secs):
            try:
                self.check_once()
            except Exception:  # the loop must survive anything one check does
                log.exception("reconfiguration check failed; trying again in %ss", self.check_secs)

    def check_once(self) -> None:
        snapshot = self._latest(required=False)
        if snapshot is None:
            return
        now = self.clock()
        supervisors = frozenset(s.id for s in snapshot.supervisors)
        for topo in snapshot.topologies:
            with self._lock:
                record = self._records.get(topo.id)
                busy = topo.id in self._busy
            if busy or record is None or record.decision == LEAVE:
                continue
            if self.pause.paused(topo.name):
                continue  # the operator paused the trigger: not even watched (reconfig/pause.py)
            try:
                config = self._config_for(topo)
            except ReconfigError as error:
                self._warn_once(topo.id, str(error))
                continue
            self._check_topology(snapshot, topo, config, supervisors, now)

    def _check_topology(
        self,
        snapshot: ClusterState,
        topo: StormTopology,
        config: TriggerConfig,
        supervisors: frozenset,
        now: float,
    ) -> None:
        watch = self._watches.get(topo.id) or new_watch(now, config, supervisors)
        aggregate = self._aggregate(topo.id)
        stale = self._stale(topo, aggregate)
        if bool(stale) != bool(watch.stale):  # log when it starts and stops, not each check
            if stale:
                log.warning(
                    "%s: the trigger ignores its aggregate (%s) until a fresh one comes; the "
                    "rounds plan on declared costs meanwhile",
                    topo.name,
                    stale,
                )
            else:
                log.info("%s: fresh aggregates again; the trigger watches them", topo.name)
        if stale:  # no change signal, reference or measured gain from it
            aggregate = None
        view = storm_view(snapshot, topo, None, self.planner.costs)
        measured = view.costs.startswith("measured")
        if watch.rebase_after_ms is None and watch.last_aggregate_ms is None and aggregate:
            # first sight: the aggregate after the warm-up becomes the change reference
            watch = replace(watch, rebase_after_ms=int((now + config.warmup_secs) * 1000))
        first_measured = False
        if aggregate and watch.rebase_after_ms is not None:
            if int(aggregate.get("window_start_ms") or 0) >= watch.rebase_after_ms:
                self._rebase(topo, aggregate)
                first_measured = self._planned_on.get(topo.id, "").startswith("declared")
                watch = replace(
                    watch,
                    rebase_after_ms=None,
                    last_aggregate_ms=aggregate.get("computed_at_ms"),
                    above=0,
                )
            aggregate_ms, change = None, None  # no change signal until rebased
        else:
            aggregate_ms = aggregate.get("computed_at_ms") if aggregate else None
            change = (aggregate.get("change") or {}).get("l1_relative") if aggregate else None
        overloaded: tuple[str, ...] = ()
        if measured and view.complete and watch.rebase_after_ms is None:
            # only steady measurements: not while warming up after a start or a move
            overloaded = _overloaded(view)
        watch, staged = self._follow_up(topo, aggregate, watch, config, now)
        seen = Observation(
            now, aggregate_ms, change, supervisors, overloaded, first_measured, stale
        )
        watch, fired = observe(watch, seen, config)
        fired = staged or fired
        self._watches[topo.id] = watch
        if fired is None:
            return
        accepted = self._consider(snapshot, topo, config, fired)
        self._watches[topo.id] = after_decision(watch, now, accepted, config)

    def _consider(
        self, snapshot: ClusterState, topo: StormTopology, config: TriggerConfig, fired: Trigger
    ) -> bool:
        entry_id = _new_id()
        base = {"topology_id": topo.id, "trigger": fired.kind, "trigger_detail": fired.detail}
        base |= {"trigger_numbers": fired.numbers}
        try:
            proposal = self._propose(snapshot, topo, config, None)
        except SchedulingError as error:
            self.history.record(topo.name, entry_id, state="declined", reason=str(error), **base)
            log.info("reconfiguration of %s declined: %s (%s)", topo.name, error, fired.detail)
            return False
        verdict = judge_proposal(proposal, config)
        if not verdict.accept:
            self.history.record(
                topo.name,
                entry_id,
                state="declined",
                reason=verdict.reason,
                numbers=verdict.numbers,
                algorithm=proposal.algorithm,
                **base,
            )
            log.info(
                "reconfiguration of %s declined: %s (trigger: %s)",
                topo.name,
                verdict.reason,
                fired.detail,
            )
            return False
        log.info("reconfiguring %s: %s (trigger: %s)", topo.name, verdict.reason, fired.detail)
        self._start(topo.name, proposal, fired, config, verdict.reason, verdict.numbers, entry_id)
        return True

    def _aggregate(self, topology_id: str) -> Mapping[str, Any] | None:
        source = self.planner.costs
        if source is None:
            return None
        try:
            return source.aggregate(topology_id)
        except Exception as error:  # measurements are optional; the loop goes on
            self._warn_once(f"agg:{topology_id}", f"reading the aggregate failed: {error}")
            return None

    def _stale(self, topo: StormTopology, aggregate: Mapping[str, Any] | None) -> str:
        """Why ``aggregate`` is too old to act on (``CostSource.stale``), or ``""``."""
        source = self.planner.costs
        if source is None or not aggregate:
            return ""
        try:
            return source.stale(aggregate, topo.conf) or ""
        except Exception as error:  # measurements are optional; the loop goes on
            self._warn_once(f"stale:{topo.id}", f"checking the aggregate's age failed: {error}")
            return ""

    def _rebase(self, topo: Any, aggregate: Mapping[str, Any]) -> None:
        if self.references is None:
            return
        try:
            self.references(topo.id, aggregate)
            log.info(
                "%s: change reference reset to the aggregate of %s",
                topo.name,
                aggregate.get("computed_at_ms"),
            )
        except Exception as error:
            self._warn_once(f"ref:{topo.id}", f"storing the change reference failed: {error}")

    def _decision_context(self, topology_id: str) -> dict[str, Any]:
        """The stages of the plan and the aggregate it was made on, for the history: the
        measured gain is compared with it, and an operator sees how old it was."""
        stages, whole = self._stages.get(topology_id, (1, 0))
        aggregate = self._aggregate(topology_id)
        before = measured_gain.measure(aggregate)
        context: dict[str, Any] = {"stages": stages, "plan_workers_restarted": whole}
        context["measured_before"] = asdict(before) if before else None
        if aggregate:
            context["costs_aggregate"] = {
                key: aggregate.get(key)
                for key in ("computed_at_ms", "window_start_ms", "window_end_ms")
            }
        return context

    def _warn_once(self, key: str, message: str) -> None:
        if key not in self._warned:
            self._warned.add(key)
            log.warning("%s", message)

    # -- carrying out a reconfiguration ------------------------------------------------
    def _start(
        self,
        name: str,
        proposal: Proposal,
        fired: Trigger,
        config: TriggerConfig,
        reason: str = "requested by the operator",
        numbers: Mapping[str, Any] | None = None,
        entry_id: str | None = None,
    ) -> str:
        if self.nimbus is None:
            raise ReconfigError(
                "this brain cannot reconfigure: start `scheduler-py serve` with --nimbus HOST:PORT"
            )
        topology_id = proposal.topology_id
        with self._lock:
            if topology_id in self._busy:
                raise ReconfigError(f"{name} is already being reconfigured; see its history")
            self._busy.add(topology_id)
            self._planned_on[topology_id] = proposal.view.costs
        entry_id = entry_id or _new_id()
        try:
            self.history.record(
                name,
                entry_id,
                state="accepted",
                topology_id=topology_id,
                trigger=fired.kind,
                trigger_detail=fired.detail,
                trigger_numbers=fired.numbers,
                reason=reason,
                numbers=dict(numbers or {}),
                algorithm=proposal.algorithm,
                report=proposal.report(),
                storm_placement=[list(p) for p in proposal.storm_placement],
                **self._decision_context(topology_id),
            )
            thread = threading.Thread(
                target=self._run,
                args=(entry_id, name, proposal, config),
                name=f"reconfig-{name}",
                daemon=True,
            )
            thread.start()
        except BaseException as error:  # nothing started: the topology is free again
            with self._lock:
                self._busy.discard(topology_id)
            if isinstance(error, OSError):
                raise ReconfigError(
                    f"{name} not reconfigured: cannot write its history in "
                    f"{self.history.directory} ({error}); nothing was changed"
                ) from error
            raise
        self._threads.append(thread)
        return entry_id

    def _run(self, entry_id: str, name: str, proposal: Proposal, config: TriggerConfig) -> None:
        topology_id = proposal.topology_id
        outcome: dict[str, Any] = {}
        try:
            outcome = carry_out(
                self._steps(), name, proposal, config, self._recorder(name, entry_id)
            )
            self.history.record(name, entry_id, **outcome)
        except OSError as error:  # e.g. a full disk: the topology was resumed by carry_out
            log.error(
                "reconfiguration %s of %s ended %s but its history could not be written (%s); "
                "a restarted brain finishes the entry from Nimbus's state",
                entry_id,
                name,
                outcome.get("state", "?"),
                error,
            )
        finally:  # whatever happened, the trigger and `replan` may take the topology again
            with self._lock:
                self._busy.discard(topology_id)
        with self._lock:
            watch = self._watches.get(topology_id)
            now = self.clock()
            if outcome.get("state") == "completed":
                self._follow[topology_id] = FollowUp(
                    entry_id, name, measure_from_ms(outcome.get("resumed_at", now), config)
                )
                if watch is not None:
                    self._watches[topology_id] = replace(
                        after_decision(watch, now, True, config),
                        rebase_after_ms=int((now + config.warmup_secs) * 1000),
                    )
        log.info(
            "reconfiguration %s of %s: %s %s (pause %s s)",
            entry_id,
            name,
            outcome.get("state"),
            outcome.get("reason", ""),
            f"{outcome['pause_secs']:.2f}" if "pause_secs" in outcome else "?",
        )

    def _steps(self) -> Steps:
        assert self.nimbus is not None
        return Steps(
            self.nimbus,
            self.live,
            self._arm,
            self._disarm,
            self._wait_snapshot,
            self.clock,
            self.sleep,
            self._supervisor_hosts,
        )

    def _supervisor_hosts(self) -> dict[str, str]:
        snapshot = self._latest(required=False)
        return snapshot.hosts if snapshot is not None else {}

    def _recorder(self, name: str, entry_id: str) -> Callable[..., None]:
        def record(**fields: Any) -> None:
            self.history.record(name, entry_id, **fields)

        return record

    def _arm(self, plan: ArmedPlan) -> None:
        with self._lock:
            self._armed[plan.topology_id] = plan

    def _disarm(self, topology_id: str) -> None:
        with self._lock:
            self._armed.pop(topology_id, None)

    def _wait_snapshot(self, holds: Callable[[ClusterState], bool], timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        with self._lock:
            while True:
                if self._snapshot is not None and holds(self._snapshot):
                    return True
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._lock.wait(min(remaining, 1.0))

    # -- measured gain ------------------------------------------------------------------
    def _follow_up(
        self,
        topo: StormTopology,
        aggregate: Mapping[str, Any] | None,
        watch: Watch,
        config: TriggerConfig,
        now: float,
    ) -> tuple[Watch, Trigger | None]:
        """Record the measured gain of the topology's last reconfiguration once an aggregate
        measured only time after it resumed and warmed up; back off after a negative one; the
        next stage of a staged plan fires after a non-negative one."""
        follow = self._follow.get(topo.id)
        if follow is None or not measured_gain.is_after(aggregate, follow.measure_from_ms):
            return watch, None
        del self._follow[topo.id]
        return follow_up(self.history, topo.name, follow.entry_id, aggregate, watch, config, now)

    # -- recovery after a brain restart ------------------------------------------------
    def _recover_with_retries(self) -> None:
        for attempt in range(30):
            try:
                self.recover()
                return
            except Exception as error:  # Nimbus not reachable yet
                if attempt == 0:
                    log.warning("recovering unfinished reconfigurations failed (%s)", error)
                if self._stop.wait(5.0):
                    return
        log.error("gave up recovering unfinished reconfigurations; see `scheduler-py history`")

    def recover(self) -> None:
        """Finish the journal entries a previous brain process left open."""
        if self.nimbus is not None:
            recover(self.history, self._steps(), lambda: self._latest(required=False))


def _overloaded(view: TopologyView) -> tuple[str, ...]:
    """Nodes whose load under the running placement exceeds their capacity."""
    cpu, _ = node_loads(view.problem, running_placement(view).node_of)
    return tuple(
        sorted(n.id for n in view.problem.nodes if cpu[n.id] > n.cpu + EPSILON and cpu[n.id] > 0)
    )


def _new_id() -> str:
    return time.strftime("%Y%m%d-%H%M%S") + "-" + uuid.uuid4().hex[:6]
