"""Carrying out one reconfiguration: block the spouts, drain, re-assign, resume.

Option B of ``docs/algorithms/000-topdown.md`` ("Reconfiguration"), made fast:

1. **block the spouts**: Nimbus ``deactivate`` (spout executors call ``ISpout.deactivate``
   and stop calling ``nextTuple``);
2. **drain, observed**: poll the workers' live counters (``docs/monitoring-format.md`` §5)
   every ``drain_poll_secs`` (default 0.05 s) until, in ``drain_quiet_polls`` consecutive
   *publications* of every worker, no spout has a pending tuple tree and nothing was
   emitted, executed, acked or failed. A poll in which some worker has not published since
   the last counted one is skipped (it proves nothing either way), so the rule costs
   ``drain_quiet_polls`` × the workers' publishing period (``scheduler.monitor.live.secs``;
   ``deploy/monitor.yaml`` sets 0.2 s), not a fixed number of seconds. Give up after
   ``drain_timeout_secs`` (resume unchanged: *rolled back*). Without live counters the
   drain is ``topology.message.timeout.secs``, Storm's own rebalance wait;
3. **re-assign now**: arm the plan and ask Nimbus to ``rebalance`` the deactivated topology
   with wait 0. Storm's state machine (storm-server ``Nimbus.java``, ``TOPO_STATE_TRANSITIONS``)
   takes INACTIVE → REBALANCING (``prev_status`` INACTIVE) and ``DO_REBALANCE`` runs the
   scheduling round for this topology at once, then returns it to INACTIVE — the spouts are
   never activated in between. The round asks the brain, which answers ``PLACE`` with the
   armed plan; the shim writes exactly it (``storm_plugin/.../PlanApplier.java``), and a
   supervisor restarts only the workers whose executor set changed. The plan is in effect
   when Nimbus's assignment shows it (or, when Nimbus cannot tell, a round's snapshot);
4. **resume**: Nimbus ``activate``, always — also after a failure or a timeout. When every
   worker of the plan (re)starts (:func:`resumes_early`), as soon as the old worker
   processes that ran a spout are gone (their live znodes, :func:`old_workers_gone`);
   Storm's new workers hold their spouts until all their connections are ready, so nothing
   is sent into a worker that is not up and the multilang spouts start while the worker
   comes up. Otherwise once the restarted workers
   publish live counters again (started after the deactivation). Either way the entry is
   completed once every worker of the plan publishes.

Every step is journaled (``scheduler_py/reconfig/history.py``, written through to the disk)
before it is taken — ``draining`` before Nimbus's ``deactivate``, ``applying`` before the
``rebalance`` — so a brain killed between a journal line and its Nimbus call leaves an
unfinished entry, and a restarted brain finishes it: it activates the topology whenever
Nimbus shows it INACTIVE or REBALANCING (``scheduler_py/reconfig/recovery.py``). The
``activate`` call itself only returns the topology to its state before the entry; a brain
killed after it finds the topology ACTIVE and just records the outcome. Once the
``draining`` line is written, the topology is activated again whatever happens next (a
``deactivate`` that timed out may still have been applied by Nimbus).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from scheduler_py.config import keys
from scheduler_py.reconfig.drain import check_drain
from scheduler_py.reconfig.trigger import TriggerConfig
from scheduler_py.scheduling.interfaces import ArmedPlan, LiveWorker, TopologyControl
from scheduler_py.scheduling.proposal import Proposal, running_placement
from scheduler_py.scheduling.routing import routing_summary
from scheduler_py.scheduling.state import ClusterState
from scheduler_py.scheduling.verified import storm_rows

log = logging.getLogger(__name__)

MESSAGE_TIMEOUT_KEY = keys.MESSAGE_TIMEOUT.name
REBALANCING = "REBALANCING"
NIMBUS_POLL_SECS = 0.1
"""between two looks at Nimbus's status and assignment (4 Thrift calls each)"""

LiveSource = Callable[[str], Mapping[str, LiveWorker]]
"""topology id -> its workers' live counters (``{}`` when none are published)"""
Record = Callable[..., None]
"""journal one event of this reconfiguration (``History.record`` bound to name and id)"""


@dataclass
class Steps:
    """What one reconfiguration needs from the controller that runs it."""

    nimbus: TopologyControl
    live: LiveSource | None
    arm: Callable[[ArmedPlan], None]
    disarm: Callable[[str], None]
    wait_snapshot: Callable[[Callable[[ClusterState], bool], float], bool]
    """block until the predicate holds for a round's snapshot, or the timeout (seconds)"""
    clock: Callable[[], float] = time.time
    sleep: Callable[[float], None] = time.sleep
    supervisor_hosts: Callable[[], Mapping[str, str]] = dict
    """supervisor id -> host, from the latest round's snapshot"""


def carry_out(
    steps: Steps, name: str, proposal: Proposal, config: TriggerConfig, record: Record
) -> dict[str, Any]:
    """Run steps 1–4 of the module docstring; return the terminal fields for the history
    (``state`` completed / rolled_back / failed, ``pause_secs``, ...). Never raises."""
    topology_id = proposal.topology_id
    deactivated_at: float | None = None
    outcome: dict[str, Any] = {}
    try:
        status = steps.nimbus.status(topology_id)
        if status != "ACTIVE":
            return {
                "state": "failed",
                "reason": f"the topology is {status or 'not running'}, not ACTIVE; the "
                "brain only reconfigures active topologies (activate it first)",
            }
        blocking_at = steps.clock()
        # journaled before Nimbus is asked: a brain killed right after the call leaves an
        # entry that recovery finishes by activating the topology (recovery.py)
        record(state="draining", deactivated_at=blocking_at)
        deactivated_at = blocking_at  # from here on the finally clause activates it
        steps.nimbus.deactivate(name)
        drained, detail = drain(steps, topology_id, proposal, config)
        drain_secs = steps.clock() - deactivated_at
        if not drained:
            outcome = {
                "state": "rolled_back",
                "reason": f"drain did not finish in {config.drain_timeout_secs:g}s "
                f"({detail}); resumed with the placement unchanged",
                "drain_secs": drain_secs,
            }
            return outcome
        record(state="applying", drain_secs=drain_secs, drain=detail)
        steps.arm(armed_plan(proposal))
        steps.nimbus.rebalance(name, 0)
        in_effect, how = wait_in_effect(steps, name, proposal, config.apply_timeout_secs)
        steps.disarm(topology_id)
        if not in_effect:
            outcome = {
                "state": "rolled_back",
                "reason": f"Nimbus did not put the plan in effect within "
                f"{config.apply_timeout_secs:g}s ({how}; see the topology's scheduler "
                f"status); resumed {placement_now(steps, proposal)}",
            }
            return outcome
        blocked_at = deactivated_at
        applied_at = steps.clock()
        outcome["supervisors_synced"] = sync_vacated(steps, proposal)
        gone = old_workers_gone(steps, proposal, blocked_at, config)
        old_gone_secs = steps.clock() - applied_at
        early = resumes_early(proposal) and gone
        if early:  # every worker of the plan is new: Storm holds its spouts until connected
            record(
                state="resuming",
                applied_secs=applied_at - blocked_at,
                old_spout_workers_gone_secs=old_gone_secs,
                early_resume=True,
            )
            outcome |= resume(steps, name, blocked_at)
            deactivated_at = None  # resumed: the finally clause must not activate again
        note, restarted = wait_workers(steps, proposal, blocked_at, config)
        if not early:
            record(
                state="resuming",
                applied_secs=applied_at - blocked_at,
                old_spout_workers_gone_secs=old_gone_secs,
                workers_up_secs=steps.clock() - applied_at,
            )
        outcome |= {"state": "completed", "workers": note, "workers_restarted_measured": restarted}
    except Exception as error:  # whatever happens, the topology is resumed below
        log.exception("reconfiguration of %s failed", name)
        outcome = {"state": "failed", "reason": f"{type(error).__name__}: {error}"}
    finally:
        steps.disarm(topology_id)
        if deactivated_at is not None:
            outcome |= resume(steps, name, deactivated_at)
    return outcome


def armed_plan(proposal: Proposal) -> ArmedPlan:
    return ArmedPlan(
        proposal.topology_id,
        proposal.algorithm,
        f"re-planned by {proposal.algorithm} (reconfiguration): inter-worker traffic "
        f"{proposal.running.interworker_traffic:.3g} -> "
        f"{proposal.candidate.interworker_traffic:.3g}; costs: {proposal.view.costs}",
        tuple(proposal.storm_placement),
        proposal.candidate.summary()
        | routing_summary(proposal.view.problem, proposal.placement)
        | {"costs": proposal.view.costs, "routing": proposal.routing},
    )


def resume(steps: Steps, name: str, deactivated_at: float) -> dict[str, Any]:
    """Activate ``name``, retrying while Nimbus is away or the topology still rebalances."""
    last_error: Exception | None = None
    for attempt in range(10):
        try:
            steps.nimbus.activate(name)
            resumed_at = steps.clock()
            return {"resumed_at": resumed_at, "pause_secs": resumed_at - deactivated_at}
        except Exception as error:  # Nimbus briefly away: keep trying, then say so loudly
            last_error = error
            steps.sleep(min(0.5 * 2**attempt, 10.0))
    log.error(
        "could not activate %s after a reconfiguration (%s); it stays deactivated: run "
        "`storm activate %s`",
        name,
        last_error,
        name,
    )
    return {"resume_error": str(last_error)}


def drain(
    steps: Steps, topology_id: str, proposal: Proposal, config: TriggerConfig
) -> tuple[bool, str]:
    """Step 2: ``(drained, detail)``."""
    started = steps.clock()
    expected = {f"{s.node}:{s.port}" for s in proposal.view.current_slots.values()}
    previous: Mapping[str, LiveWorker] | None = None
    quiet = polls = 0
    detail = "no observation yet"
    while True:
        current = steps.live(topology_id) if steps.live is not None else {}
        polls += 1
        if not current and previous is None:
            return timed_drain(steps, proposal.view.conf, started)
        check = check_drain(previous, current, expected)
        detail = check.detail
        only_stale = check.stale and not (check.missing or check.pending or check.moved)
        if not only_stale:  # a fresh publication of every worker: count it
            quiet = quiet + 1 if check.drained else 0
            previous = current
        elapsed = steps.clock() - started
        if quiet >= config.drain_quiet_polls and elapsed >= config.drain_min_secs:
            return True, f"drained after {elapsed:.2f}s ({polls} polls): {detail}"
        if elapsed >= config.drain_timeout_secs:
            return False, detail
        steps.sleep(config.drain_poll_secs)


def timed_drain(steps: Steps, conf: Mapping, started: float) -> tuple[bool, str]:
    try:
        wait = float(conf.get(MESSAGE_TIMEOUT_KEY) or keys.MESSAGE_TIMEOUT.default)
    except (TypeError, ValueError):
        wait = 30.0
    steps.sleep(max(0.0, wait - (steps.clock() - started)))
    return True, (
        f"no live counters from the workers (is the worker monitor enabled? see "
        f"deploy/monitor.yaml): waited {MESSAGE_TIMEOUT_KEY} = {wait:g}s instead"
    )


def wait_in_effect(steps: Steps, name: str, proposal: Proposal, timeout: float) -> tuple[bool, str]:
    """Step 3: ``(in effect, how it was seen)``. Asks Nimbus's assignment first; when Nimbus
    cannot tell, waits for a round's snapshot showing the plan."""
    wanted = {(s, e, sup, port) for s, e, _, sup, port in proposal.storm_placement}
    deadline = steps.clock() + timeout
    status: str | None = REBALANCING
    while steps.clock() < deadline:
        status = steps.nimbus.status(proposal.topology_id)
        if status is None:
            return False, "the topology no longer runs"
        assigned = steps.nimbus.assignment(proposal.topology_id)
        if assigned is None:
            break
        if status != REBALANCING and wanted <= assigned:
            return True, "Nimbus's assignment"
        steps.sleep(NIMBUS_POLL_SECS)
    else:
        return False, f"Nimbus status {status}, assignment differs from the plan"

    def shows_plan(snapshot: ClusterState) -> bool:
        topo = next((t for t in snapshot.topologies if t.id == proposal.topology_id), None)
        running = {(s, e, sup, port) for s, e, _, sup, port in topo.running()} if topo else set()
        return running == wanted

    left = max(0.0, deadline - steps.clock())
    if not steps.wait_snapshot(shows_plan, left):
        return False, "no round's snapshot showed the plan"
    while steps.nimbus.status(proposal.topology_id) == REBALANCING:
        if steps.clock() >= deadline:
            return False, "the topology stayed REBALANCING"
        steps.sleep(NIMBUS_POLL_SECS)
    return True, "a round's snapshot"


def placement_now(steps: Steps, proposal: Proposal) -> str:
    """How the topology is placed after a plan that did not take effect: the rebalance still
    ran a round, where the shim may have rejected the plan and left the topology to Storm's
    fallback, so "unchanged" is said only when Nimbus's assignment shows the running one."""
    try:
        assigned = steps.nimbus.assignment(proposal.topology_id)
    except Exception as error:  # Nimbus away: say so rather than guess
        return f"with a placement Nimbus could not show ({type(error).__name__}: {error})"
    if assigned is None:
        return "with the placement that round left (Nimbus cannot show it on this cluster)"
    running = storm_rows(proposal.view, running_placement(proposal.view))
    if set(assigned) == {(s, e, sup, port) for s, e, _, sup, port in running}:
        return "with the placement unchanged"
    return "with a placement Storm chose, neither the plan nor the one before"


def resumes_early(proposal: Proposal) -> bool:
    """Whether the topology may be activated before its new workers are up: when every
    worker of the plan (re)starts. A new Storm worker holds its executors until all its
    outbound connections are ready (storm-client ``WorkerState.
    activateWorkerWhenAllConnectionsReady``), so no tuple is sent to a worker that is not up;
    a worker that keeps running has no such gate and could send into a restarting one (the
    transfer drops it, a replay follows), so then the controller waits for the restarted
    workers first."""
    return proposal.restarting() == proposal.workers()


def vacated_supervisors(proposal: Proposal) -> set[str]:
    """Supervisors that ran some of the topology's workers and run none under the plan."""
    before = {slot.node for slot in proposal.view.current_slots.values()}
    after = {supervisor for _, _, _, supervisor, _ in proposal.storm_placement}
    return before - after


def sync_vacated(steps: Steps, proposal: Proposal) -> list[str]:
    """Hand every vacated supervisor its new assignments at once (``TopologyControl.
    sync_supervisor``), so it stops the topology's old workers now rather than at its 10 s
    sync timer: on a ``rebalance`` Nimbus pushes only to the supervisors of the *new*
    assignment (see :func:`old_workers_gone`). The supervisor's Thrift port comes from its old
    workers' live counters (``supervisor_thrift_port``, ``docs/monitoring-format.md`` §5), its
    host from the round's snapshot. Best effort: a supervisor that cannot be reached (no port
    published, an authenticated cluster, the network) syncs at its timer as before, which only
    makes the pause longer. Returns the supervisors synced."""
    vacated = vacated_supervisors(proposal)
    if not vacated or steps.live is None:
        return []
    hosts = steps.supervisor_hosts()
    ports: dict[str, tuple[str, int]] = {}
    for worker in steps.live(proposal.topology_id).values():
        if worker.supervisor_id in vacated and worker.supervisor_thrift_port is not None:
            host = hosts.get(worker.supervisor_id) or worker.host
            ports[worker.supervisor_id] = (host, worker.supervisor_thrift_port)
    synced = []
    for supervisor in sorted(vacated):
        address = ports.get(supervisor)
        if address is None:
            log.info(
                "no live counters of %s on supervisor %s name its Thrift port; it stops the old "
                "workers at its own sync timer (up to 10 s)",
                proposal.topology_id,
                supervisor,
            )
            continue
        try:
            steps.nimbus.sync_supervisor(supervisor, *address)
            synced.append(supervisor)
        except Exception as error:  # best effort: the supervisor's timer does it later
            log.warning(
                "could not hand supervisor %s (%s:%d) its new assignments: %s; it stops "
                "%s's old workers at its own sync timer instead (up to 10 s)",
                supervisor,
                address[0],
                address[1],
                error,
                proposal.topology_id,
            )
    return synced


def old_workers_gone(steps: Steps, proposal: Proposal, since: float, config: TriggerConfig) -> bool:
    """Wait until no worker process of the old placement that ran a spout and that the plan
    stops or restarts still runs (its live znode is gone or belongs to a worker started after
    ``since``): activating earlier would let an old spout emit tuples that die with its
    process.

    Only spout workers matter: once Nimbus's assignment changed, no current worker sends to an
    old one, so an old worker without a spout has nothing to process and nothing to emit.
    Waiting for the others would cost up to Storm's supervisor sync period: on a
    ``rebalance`` Nimbus notifies only the supervisors of the *new* assignment (storm-server
    ``Nimbus.mkAssignments`` leaves the rebalanced topology out of the existing assignments),
    so a supervisor that loses all of the topology's workers kills them when its own 10 s
    ``SynchronizeAssignments`` timer fires (``Supervisor.launch``) — unless
    :func:`sync_vacated` handed it its assignments first."""
    if steps.live is None:
        return False
    kept = proposal.workers() - proposal.restarting()
    watched = spout_workers(proposal) - kept
    since_ms = int(since * 1000)
    deadline = steps.clock() + config.apply_timeout_secs
    while steps.clock() < deadline:
        current = steps.live(proposal.topology_id)
        if all(k not in current or current[k].started_ms > since_ms for k in watched):
            return True
        steps.sleep(config.drain_poll_secs)
    return False


def spout_workers(proposal: Proposal) -> set[str]:
    """``supervisor:port`` of the old placement's workers that run a spout executor."""
    topology = proposal.view.problem.topology
    executors = topology.executor_by_id
    components = topology.component_by_id
    return {
        f"{slot.node}:{slot.port}"
        for eid, slot in proposal.view.current_slots.items()
        if eid in executors and components[executors[eid].component].is_spout
    }


def wait_workers(
    steps: Steps, proposal: Proposal, since: float, config: TriggerConfig
) -> tuple[str, int | None]:
    """``(note, workers that restarted)`` once every planned worker publishes live counters
    (restarted ones: started after ``since``), or at ``apply_timeout_secs``."""
    if steps.live is None:
        return "not confirmed (no live counters)", None
    restarting = proposal.restarting()
    workers = proposal.workers()
    deadline = steps.clock() + config.apply_timeout_secs
    since_ms = int(since * 1000)
    while True:
        current = steps.live(proposal.topology_id)
        fresh = {key for key in workers if key in current and current[key].started_ms > since_ms}
        up = {key for key in workers if key in current and (key not in restarting or key in fresh)}
        if up == workers:
            return f"all {len(workers)} worker(s) up ({len(fresh)} restarted)", len(fresh)
        if steps.clock() >= deadline:
            missing = len(workers - up)
            return f"{missing} of {len(workers)} worker(s) not up when resumed", len(fresh)
        steps.sleep(config.drain_poll_secs)
