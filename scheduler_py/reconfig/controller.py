"""The reconfiguration controller: watches running topologies, decides, drains, re-assigns.

Runs inside ``scheduler-py serve`` next to the Thrift handler. The handler feeds it every
scheduling round's snapshot (:meth:`Controller.observe_round`) and asks it for *armed* plans
(:meth:`Controller.armed`), which the round returns as ``PLACE`` for a topology that is
already fully placed (:func:`scheduler_py.scheduling.round.plan_round`). It implements
:class:`~scheduler_py.scheduling.interfaces.ReconfigurationPort`; Nimbus, the live counters
and the measured costs reach it through the other interfaces of that module.

One reconfiguration (``docs/algorithms/000-topdown.md``, "Reconfiguration"; option B —
deactivate, drain, re-assign, activate):

1. **block the spouts**: Nimbus ``deactivate`` (spout executors call ``ISpout.deactivate``
   and stop calling ``nextTuple``);
2. **drain**: poll the workers' live counters (``<root>/live/<topology>/<worker>``, see
   ``docs/monitoring-format.md`` §5) until, in ``drain_quiet_polls`` consecutive polls, no
   spout has a pending tuple tree and no tuple was emitted, executed, acked or failed
   anywhere; give up after ``drain_timeout_secs`` (the topology is resumed unchanged and
   the history says *rolled back*). Without live counters (monitor off) the drain is
   ``topology.message.timeout.secs``, Storm's own rebalance wait;
3. **re-assign**: arm the plan; Nimbus's next scheduling round (≤ ``nimbus.monitor.freq.
   secs``) asks the brain, which answers ``PLACE`` with it, and the shim applies it; the
   controller waits until the round's snapshot shows it in effect and the restarted
   workers publish live counters again;
4. **resume**: Nimbus ``activate``, always — also after a failure or a timeout.

Why not ``rebalance`` with a wait time (option A)? Its drain is a fixed sleep; deactivate +
observed drain ends as soon as the tuples are out and says when they are not.

Every step is journaled (:class:`~scheduler_py.reconfig.history.History`) before it is taken,
so a brain restarted mid-way finds the unfinished entry (:meth:`Controller.recover`),
activates the topology it deactivated, and records whether the plan was in effect
(*completed*) or not (*rolled back*).
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from scheduler_py.config import keys
from scheduler_py.model.cost import node_loads
from scheduler_py.model.errors import SchedulingError
from scheduler_py.model.types import EPSILON
from scheduler_py.reconfig.drain import check_drain
from scheduler_py.reconfig.history import History
from scheduler_py.reconfig.trigger import (
    Observation,
    Trigger,
    TriggerConfig,
    Watch,
    after_decision,
    judge,
    new_watch,
    observe,
)
from scheduler_py.scheduling.interfaces import (
    ArmedPlan,
    LiveWorker,
    OperatorError,
    TopologyControl,
)
from scheduler_py.scheduling.proposal import Proposal, propose, running_placement
from scheduler_py.scheduling.round import LEAVE, RoundConfig, TopologyDecision, choose_algorithm
from scheduler_py.scheduling.state import ClusterState, StormTopology
from scheduler_py.scheduling.view import TopologyView, storm_view

log = logging.getLogger(__name__)

MESSAGE_TIMEOUT_KEY = keys.MESSAGE_TIMEOUT.name

LiveSource = Callable[[str], Mapping[str, LiveWorker]]
"""topology id -> its workers' live counters (``{}`` when none are published)"""
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

    # -- fed by the Thrift handler ---------------------------------------------------
    def describe(self) -> str:
        mode = "automatic trigger" if self.trigger.enabled else "operator replans only"
        return f"{mode}; history in {self.history.directory or 'memory'}"

    def observe_round(self, snapshot: ClusterState, records: Sequence[TopologyDecision]) -> None:
        with self._lock:
            self._snapshot = snapshot
            for record in records:
                self._records[record.topology_id] = record
            alive = {t.id for t in snapshot.topologies}
            for gone in set(self._records) - alive:
                self._records.pop(gone, None)
                self._watches.pop(gone, None)
            self._lock.notify_all()

    def armed(self) -> dict[str, ArmedPlan]:
        with self._lock:
            return dict(self._armed)

    # -- operator controls -----------------------------------------------------------
    def history_of(self, topology: str) -> list[dict[str, Any]]:
        name, _ = self._resolve(topology, must_run=False)
        return self.history.entries(name)

    def replan(self, topology: str, algorithm: str = "", dry_run: bool = False) -> dict:
        """Plan ``topology`` (name or id) again now; apply it unless ``dry_run``."""
        name, topo = self._resolve(topology, must_run=True)
        snapshot = self._latest()
        config = self._config_for(topo)
        try:
            proposal = self._propose(snapshot, topo, config, algorithm or None)
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
    ) -> Proposal:
        view = storm_view(snapshot, topo, None, self.planner.costs)
        chosen, params = choose_algorithm(view.conf, self.planner)
        if algorithm is None and config.algorithm:
            algorithm = config.algorithm
        if algorithm and algorithm != chosen:
            chosen, params = algorithm, dict(self.planner.default_params.get(algorithm, {}))
        return propose(view, chosen, params, snapshot.hosts)

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
        view = storm_view(snapshot, topo, None, self.planner.costs)
        measured = view.costs.startswith("measured")
        if watch.rebase_after_ms is None and watch.last_aggregate_ms is None and aggregate:
            # first sight: the aggregate after the warm-up becomes the change reference
            watch = replace(watch, rebase_after_ms=int((now + config.warmup_secs) * 1000))
        if aggregate and watch.rebase_after_ms is not None:
            if int(aggregate.get("window_start_ms") or 0) >= watch.rebase_after_ms:
                self._rebase(topo, aggregate)
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
        seen = Observation(now, aggregate_ms, change, supervisors, overloaded)
        watch, fired = observe(watch, seen, config)
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
        verdict = judge(
            proposal.running,
            proposal.candidate,
            config,
            proposal.unchanged,
            proposal.workers_restarted,
        )
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
        entry_id = entry_id or _new_id()
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
        )
        thread = threading.Thread(
            target=self._run,
            args=(entry_id, name, proposal, config),
            name=f"reconfig-{name}",
            daemon=True,
        )
        thread.start()
        self._threads.append(thread)
        return entry_id

    def _run(self, entry_id: str, name: str, proposal: Proposal, config: TriggerConfig) -> None:
        topology_id = proposal.topology_id
        record = self._recorder(name, entry_id)
        assert self.nimbus is not None
        deactivated_at: float | None = None
        outcome: dict[str, Any] = {}
        try:
            status = self.nimbus.status(topology_id)
            if status != "ACTIVE":
                outcome = {
                    "state": "failed",
                    "reason": f"the topology is {status or 'not running'}, not ACTIVE; the "
                    "brain only reconfigures active topologies (activate it first)",
                }
                return
            self.nimbus.deactivate(name)
            deactivated_at = self.clock()
            record(state="draining", deactivated_at=deactivated_at)
            drained, detail = self._drain(topology_id, proposal, config, proposal.view.conf)
            drain_secs = self.clock() - deactivated_at
            if not drained:
                outcome = {
                    "state": "rolled_back",
                    "reason": f"drain did not finish in {config.drain_timeout_secs:g}s "
                    f"({detail}); resumed with the placement unchanged",
                    "drain_secs": drain_secs,
                }
                return
            record(state="applying", drain_secs=drain_secs, drain=detail)
            self._arm(proposal)
            in_effect = self._wait_in_effect(proposal, config.apply_timeout_secs)
            self._disarm(topology_id)
            if not in_effect:
                outcome = {
                    "state": "rolled_back",
                    "reason": f"Nimbus did not put the plan in effect within "
                    f"{config.apply_timeout_secs:g}s (see the topology's scheduler status); "
                    "resumed with the placement unchanged",
                }
                return
            applied_at = self.clock()
            workers_note = self._wait_workers(proposal, deactivated_at, config)
            record(state="resuming", applied_secs=applied_at - deactivated_at)
            outcome = {"state": "completed", "workers": workers_note}
        except Exception as error:  # whatever happens, the topology is resumed below
            log.exception("reconfiguration %s of %s failed", entry_id, name)
            outcome = {"state": "failed", "reason": f"{type(error).__name__}: {error}"}
        finally:
            self._disarm(topology_id)
            if deactivated_at is not None:
                outcome |= self._resume(name, deactivated_at)
            record(**outcome)
            with self._lock:
                self._busy.discard(topology_id)
                watch = self._watches.get(topology_id)
                now = self.clock()
                if watch is not None and outcome.get("state") == "completed":
                    self._watches[topology_id] = replace(
                        after_decision(watch, now, True, config),
                        rebase_after_ms=int((now + config.warmup_secs) * 1000),
                    )
            log.info(
                "reconfiguration %s of %s: %s %s",
                entry_id,
                name,
                outcome.get("state"),
                outcome.get("reason", ""),
            )

    def _recorder(self, name: str, entry_id: str) -> Callable[..., None]:
        def record(**fields: Any) -> None:
            self.history.record(name, entry_id, **fields)

        return record

    def _resume(self, name: str, deactivated_at: float) -> dict[str, Any]:
        assert self.nimbus is not None
        last_error = None
        for attempt in range(10):
            try:
                self.nimbus.activate(name)
                resumed_at = self.clock()
                return {"resumed_at": resumed_at, "pause_secs": resumed_at - deactivated_at}
            except Exception as error:  # Nimbus briefly away: keep trying, then say so loudly
                last_error = error
                self.sleep(min(2.0 * (attempt + 1), 10.0))
        log.error(
            "could not activate %s after a reconfiguration (%s); it stays deactivated: run "
            "`storm activate %s`",
            name,
            last_error,
            name,
        )
        return {"resume_error": str(last_error)}

    def _drain(
        self, topology_id: str, proposal: Proposal, config: TriggerConfig, conf: Mapping
    ) -> tuple[bool, str]:
        started = self.clock()
        expected = {f"{s.node}:{s.port}" for s in proposal.view.current_slots.values()}
        previous = None
        quiet = 0
        detail = "no observation yet"
        while True:
            current = self.live(topology_id) if self.live is not None else {}
            if not current and previous is None:
                return self._timed_drain(conf, started)
            check = check_drain(previous, current, expected)
            detail = check.detail
            quiet = quiet + 1 if check.drained else 0
            elapsed = self.clock() - started
            if quiet >= config.drain_quiet_polls and elapsed >= config.drain_min_secs:
                return True, f"drained after {elapsed:.1f}s: {detail}"
            if elapsed >= config.drain_timeout_secs:
                return False, detail
            previous = current
            self.sleep(config.drain_poll_secs)

    def _timed_drain(self, conf: Mapping, started: float) -> tuple[bool, str]:
        try:
            wait = float(conf.get(MESSAGE_TIMEOUT_KEY) or keys.MESSAGE_TIMEOUT.default)
        except (TypeError, ValueError):
            wait = 30.0
        self.sleep(max(0.0, wait - (self.clock() - started)))
        return True, (
            f"no live counters from the workers (is the worker monitor enabled? see "
            f"deploy/monitor.yaml): waited {MESSAGE_TIMEOUT_KEY} = {wait:g}s instead"
        )

    def _arm(self, proposal: Proposal) -> None:
        plan = ArmedPlan(
            proposal.topology_id,
            proposal.algorithm,
            f"re-planned by {proposal.algorithm} (reconfiguration): inter-worker traffic "
            f"{proposal.running.interworker_traffic:.3g} -> "
            f"{proposal.candidate.interworker_traffic:.3g}; costs: {proposal.view.costs}",
            tuple(proposal.storm_placement),
        )
        with self._lock:
            self._armed[proposal.topology_id] = plan

    def _disarm(self, topology_id: str) -> None:
        with self._lock:
            self._armed.pop(topology_id, None)

    def _wait_in_effect(self, proposal: Proposal, timeout: float) -> bool:
        wanted = {(s, e, sup, port) for s, e, _, sup, port in proposal.storm_placement}
        deadline = time.monotonic() + timeout
        with self._lock:
            while True:
                snapshot = self._snapshot
                topo = next((t for t in snapshot.topologies if t.id == proposal.topology_id), None)
                if topo is None:
                    return False
                if {(s, e, sup, port) for s, e, _, sup, port in topo.running()} == wanted:
                    return True
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._lock.wait(min(remaining, 1.0))

    def _wait_workers(self, proposal: Proposal, since: float, config: TriggerConfig) -> str:
        if self.live is None:
            return "not confirmed (no live counters)"
        restarting = proposal.restarting()
        workers = proposal.workers()
        deadline = self.clock() + config.apply_timeout_secs
        since_ms = int(since * 1000)
        while True:
            current = self.live(proposal.topology_id)
            up = {
                key
                for key in workers
                if key in current and (key not in restarting or current[key].started_ms > since_ms)
            }
            if up == workers:
                return f"all {len(workers)} worker(s) up ({len(restarting)} restarted)"
            if self.clock() >= deadline:
                return f"{len(workers - up)} of {len(workers)} worker(s) not up when resumed"
            self.sleep(config.drain_poll_secs)

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
        unfinished = self.history.unfinished()
        if not unfinished or self.nimbus is None:
            return
        for entry in unfinished:
            name = entry["topology"]
            state = entry.get("state")
            status = self.nimbus.status(entry.get("topology_id") or name)
            if status is None:
                self.history.record(
                    name,
                    entry["id"],
                    state="failed",
                    reason=f"brain restarted during '{state}'; the topology no longer runs",
                )
                continue
            in_effect = state in ("applying", "resuming") and self._plan_in_effect(entry)
            resumed = {}
            if entry.get("deactivated_at") is not None and status == "INACTIVE":
                resumed = self._resume(name, float(entry["deactivated_at"]))
            outcome = "completed" if in_effect else "rolled_back"
            reason = (
                f"brain restarted during '{state}'; the plan was in effect, topology resumed"
                if in_effect
                else f"brain restarted during '{state}'; the plan was not applied, topology "
                "resumed with its previous placement"
            )
            self.history.record(name, entry["id"], state=outcome, reason=reason, **resumed)
            log.warning("reconfiguration %s of %s: %s", entry["id"], name, reason)

    def _plan_in_effect(self, entry: Mapping[str, Any]) -> bool:
        planned = {tuple(p) for p in entry.get("storm_placement") or ()}
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            snapshot = self._latest(required=False)
            topo = None
            if snapshot is not None:
                topo = next((t for t in snapshot.topologies if t.id == entry["topology_id"]), None)
            if topo is not None:
                return bool(planned) and topo.running() == planned
            self.sleep(1.0)
        return False


def _overloaded(view: TopologyView) -> tuple[str, ...]:
    """Nodes whose load under the running placement exceeds their capacity."""
    cpu, _ = node_loads(view.problem, running_placement(view).node_of)
    return tuple(
        sorted(n.id for n in view.problem.nodes if cpu[n.id] > n.cpu + EPSILON and cpu[n.id] > 0)
    )


def _new_id() -> str:
    return time.strftime("%Y%m%d-%H%M%S") + "-" + uuid.uuid4().hex[:6]
