"""``brain:adaptive`` in ``scheduler-py bench cluster``: a topology placed
by ``even`` (``--set adaptive_placed_by=`` names another algorithm), then re-placed while
it runs by the worker monitor, the aggregation and the brain's reconfiguration controller —
the whole adaptive path, nothing called by hand.

The run: the aggregation (``scheduler-py aggregate --every 10 --window 20s``) starts before
the submission and stops after the kill; the topology carries the monitor's hooks in its own
conf (the other schedulers' runs stay unmonitored, the same data path as before) and
``scheduler.reconfig.*`` settings for a prompt first re-plan (warm-up 0: the first aggregate
wholly after the first sighting is the change reference, and the ``measured`` trigger fires
on it because ``even`` placed the topology on declared costs; docs/reconfiguration.md).
:func:`follow` samples the spouts' acked rate every :data:`POLL_S` seconds
and the brain's history until the reconfiguration is over and the restarted workers have
warmed up, or until :data:`DEADLINE_S` after the topology first acked; the benchmark then
measures its usual interval. The target (≥ 90 % of the best static placement's throughput
within 5 minutes) is judged by :func:`adaptive_target` from the timeline and that interval.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from scheduler_py.bench.cluster_runs import best_brain

ADAPTIVE = "brain:adaptive"
PLACED_BY = "even"
"""what places the adaptive run's topology first; ``--set adaptive_placed_by=`` changes it
(``td``, say: a plan the throughput model rates low on Linear, so that a ``throughput``
re-plan has something to gain)"""
REPLAN_ALGORITHM = "locality"
"""Re-plans of the adaptive run: the best static brain placement with Storm's default
load-aware messaging in this benchmark (docs/evaluation.md, "Evaluation on an emulated network");
``--set adaptive_algorithm=`` changes it."""
MONITOR_CONF: dict[str, object] = {
    "topology.auto.task.hooks": ["io.schedulerpy.storm.monitor.TrafficHook"],
    "scheduler.monitor.window.secs": 5,
    "scheduler.monitor.live.secs": 0.2,
}
"""``deploy/monitor.yaml``'s keys, per topology: the hooks count traffic and CPU, the live
counters let the controller see the drain."""
RECONFIG_CONF: dict[str, object] = {
    "scheduler.reconfig.warmup.secs": 0,
    "scheduler.reconfig.replan.on.measured": True,
}
AGGREGATE_EVERY, AGGREGATE_WINDOW = "10", "20s"
POLL_S = 10.0
DEADLINE_S = 300.0
"""The target's 5 minutes, counted from the first acked tuple of every spout."""

COUNTS_REPORTER = "io.schedulerpy.storm.monitor.CountsReporter"
MONITORED_CONF: dict[str, object] = {"topology.metrics.reporters": [{"class": COUNTS_REPORTER}]}
"""What ``docs/install.md`` step 5 adds to the supervisors' ``storm.yaml``, given here in the
monitored topology's own conf so that the other schedulers' runs carry nothing of ours."""
MONITORED_AGGREGATE_EVERY, MONITORED_AGGREGATE_WINDOW = "30s", "60s"
"""``docs/install.md`` step 2's aggregation: ``--every 30s`` and the default window."""
MONITORED_DEADLINE_S = 600.0
"""The shipped warm-up (120 s), two aggregates to be steady, a drain (≤ 60 s) and the workers'
restart (≤ 120 s), with a margin; a run that has not ended its re-plan by then is measured as
it is (its ``reconfigurations`` say what happened)."""

TARGET_SHARE = 0.9
TERMINAL = ("completed", "rolled_back", "failed", "declined")

Counts = Callable[[], Mapping[str, int]]
"""-> acked count per spout executor (``task-range@host:port``)"""
History = Callable[[], Sequence[Mapping[str, Any]]]
"""-> the brain's history entries of the topology"""
Clock = Callable[[], float]


def topology_conf(algorithm: str, placed_by: str = PLACED_BY) -> dict[str, object]:
    """The adaptive run's own conf on top of the benchmark's: placed by ``placed_by``,
    re-planned by ``algorithm``."""
    return {
        "scheduler.brain.algorithm": placed_by,
        "scheduler.reconfig.algorithm": algorithm,
        **MONITOR_CONF,
        **RECONFIG_CONF,
    }


def rate_between(
    before: Mapping[str, tuple[float, int]], after: Mapping[str, tuple[float, int]]
) -> float | None:
    """Acked tuples/s between two samples of ``(time, acked)`` per spout executor
    (``task-range@host:port``); ``None`` when no executor is in both unchanged (it moved, or
    its worker restarted in the same slot and its count started again)."""
    common = [
        k
        for k in before
        if k in after and after[k][0] > before[k][0] and after[k][1] >= before[k][1]
    ]
    if not common or len(common) < len(before):
        return None
    return sum((after[k][1] - before[k][1]) / (after[k][0] - before[k][0]) for k in common)


def follow(
    counts: Counts,
    history: History,
    ready_at: float,
    settle_s: float,
    deadline_s: float = DEADLINE_S,
    poll_s: float = POLL_S,
    clock: Clock = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> dict[str, Any]:
    """Sample until the reconfiguration is over and ``settle_s`` more have passed, or until
    ``deadline_s`` after ``ready_at``. ``counts()`` returns ``{executor: acked}``,
    ``history()`` the brain's entries for the topology. Returns the timeline (seconds since
    ready, acked/s), when the reconfiguration ended and the history entries."""
    timeline: list[dict[str, Any]] = []
    previous = _sample(counts, clock)
    ended_at: float | None = None
    entries: list[Mapping[str, Any]] = []
    while True:
        sleep(poll_s)
        current = _sample(counts, clock)
        now = clock()
        timeline.append({"t_s": now - ready_at, "throughput": rate_between(previous, current)})
        previous = current
        entries = _read(history)
        if ended_at is None and _over(entries):
            ended_at = now
        if ended_at is not None and now - ended_at >= settle_s:
            break
        if now - ready_at >= deadline_s:
            break
    return {
        "timeline": timeline,
        "reconfigured_s": None if ended_at is None else ended_at - ready_at,
        "reconfigurations": [_entry_summary(e) for e in entries],
    }


def reconfigurations(history: History) -> list[dict[str, Any]]:
    """The brain's history entries of the topology as a run records them; ``bench cluster``
    reads them again after the measured interval, so a run's record also shows the stages
    and re-plans that came after the first reconfiguration ended."""
    return [_entry_summary(e) for e in _read(history)]


def _sample(counts: Counts, clock: Clock) -> dict[str, tuple[float, int]]:
    now = clock()
    return {key: (now, value) for key, value in counts().items()}


def _read(history: History) -> list[Mapping[str, Any]]:
    try:
        return list(history())
    except Exception:  # the brain busy for a poll: the next poll reads it again
        return []


def _over(entries: Sequence[Mapping[str, Any]]) -> bool:
    """The brain's reconfiguration of the topology is over: its latest entry reached an end
    state and announces no further stage. A completed stage of a plan staged in more than
    one (its ``stages``, ``scheduler_py/reconfig/staging.py``) is followed by the next once
    its gain is measured, unless that gain was negative (``scheduler_py/reconfig/follow_up.py``);
    the next stage, judged again, may be declined, which ends it too."""
    if not entries:
        return False
    latest = entries[-1]
    if latest.get("state") not in TERMINAL:
        return False
    if latest.get("state") != "completed" or int(latest.get("stages") or 1) <= 1:
        return True
    measured = latest.get("measured")
    return isinstance(measured, Mapping) and bool(measured.get("negative"))


def _entry_summary(entry: Mapping[str, Any]) -> dict[str, Any]:
    keys = (
        "id",
        "state",
        "trigger",
        "algorithm",
        "reason",
        "pause_secs",
        "drain_secs",
        "applied_secs",
        "workers_restarted_measured",
        "stages",
    )
    return {k: entry.get(k) for k in keys if k in entry}


def time_to_share(
    timeline: Sequence[Mapping[str, Any]], reference: float, share: float = TARGET_SHARE
) -> float | None:
    """First ``t_s`` of the timeline from which every later sample is ≥ ``share`` ×
    ``reference`` (a single lucky sample does not count), or ``None``."""
    reached: float | None = None
    for point in timeline:
        rate = point.get("throughput")
        if rate is None:
            continue
        if rate >= share * reference:
            reached = point["t_s"] if reached is None else reached
        else:
            reached = None
    return reached


def adaptive_target(
    rows: Sequence[Mapping[str, Any]],
    runs: Sequence[Mapping[str, Any]],
    topology: str,
    loadaware: bool,
) -> tuple[bool | None, str]:
    """≥ 90 % of the best static brain placement's median throughput within 5 minutes of the
    first acked tuple: the median over adaptive runs of the time after which the acked rate
    stays at ≥ 90 % (the measured interval counts as the timeline's last sample)."""
    best = best_brain(rows, topology, loadaware)
    mine = [
        r
        for r in runs
        if r["scheduler"] == ADAPTIVE
        and r["topology"] == topology
        and r["loadaware"] == loadaware
        and not r.get("error")
    ]
    if best is None or not mine:
        return None, "needs brain:adaptive and a static brain algorithm with measurements"
    reference = best["throughput_median"]
    times = []
    for run in mine:
        timeline = list(run.get("timeline", []))
        timeline.append({"t_s": run.get("measured_end_s"), "throughput": run.get("throughput")})
        times.append(time_to_share([p for p in timeline if p["t_s"] is not None], reference))
    reached = sorted(t for t in times if t is not None)
    median_time = reached[len(reached) // 2] if len(reached) * 2 > len(times) else None
    passed = median_time is not None and median_time <= DEADLINE_S
    final = statistics.median(r["throughput"] for r in mine)
    detail = (
        f"{best['scheduler']} {reference:,.0f}/s; adaptive after {final:,.0f}/s (median)"
        f", ≥ 90 % from {'never' if median_time is None else f'{median_time:.0f} s'} "
        f"(runs: {', '.join('never' if t is None else f'{t:.0f} s' for t in times)})"
    )
    return passed, detail
