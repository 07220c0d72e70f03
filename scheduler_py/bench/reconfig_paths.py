"""Our reconfiguration path against Storm's own ``rebalance -w 0``, on the same
topology and the same placement change, observed from the outside.

Both paths take word count from ``even`` over 3 workers to the ``tdls`` plan (one worker:
one restart, two stopped) and are reset to ``even`` between runs (by our path, not
measured). They alternate,
ours first in odd repetitions and Storm's first in even ones:

* **ours**: ``replan --algorithm tdls`` through the brain (deactivate, observed drain,
  ``rebalance`` with wait 0 on the deactivated topology, activate once the restarted worker
  publishes again; ``scheduler_py/reconfig/execution.py``);
* **storm_rebalance**: Nimbus ``rebalance`` with wait 0 on the active topology and
  ``scheduler.brain.algorithm=tdls`` merged into its conf: Storm deactivates, schedules at
  once (the brain plans the topology from scratch) and reactivates.

What is measured, from the workers' live counters (ZooKeeper, every
``scheduler.monitor.live.secs`` = 0.2 s, sampled every :data:`SAMPLE_S`) and the spout's
message-id ledger (``scheduler_py/devtools/ledger.py``):

* **pause**: the longest stretch, from the action on, in which the spouts emitted nothing
  (last emit before it → first emit after it): spouts blocked → resumed;
* **steady**: from the start of that pause until the acked rate over
  :data:`STEADY_WINDOW_S` is back to :data:`STEADY_SHARE` of its rate before the action;
* **workers restarted**: workers of the topology whose live counters restarted after the
  action (a new ``started_ms``);
* **replayed**: ledger replay lines (``R``) written during the run;
* **lost**: ids unacked at the end of a run that are still unacked after the final drain at
  the end of the benchmark (deactivate, wait for the acks), attributed to the first run at
  whose end they were unacked and not at whose start (resets go by our lossless path; an
  id failed just before the final deactivation is never replayed and counts too);
* **p99 latency spike**: from the ledger's times (each tuple tree's complete latency, its
  last emit → its ack, :func:`~scheduler_py.devtools.ledger.ack_latencies`): the highest p99
  over :data:`SPIKE_WINDOW_S` windows of ack time from the action to the end of the run,
  minus the p99 of the :data:`BASELINE_S` before the action (``p99_before_ms`` and
  ``p99_peak_ms`` are kept beside it). Tuples that are never acked (lost) have no latency:
  the ``lost`` count says how many. Storm's own ``complete_ms_avg`` is an average over
  minutes and would hide the spike.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scheduler_py.bench.sampling import PeriodicSampler
from scheduler_py.devtools.ledger import ack_latencies
from scheduler_py.scheduling.interfaces import LiveWorker

SAMPLE_S = 0.1
STEADY_WINDOW_S = 2.0
STEADY_SHARE = 0.9
BEFORE_S = 5.0
"""the acked rate before the action is measured over this long"""
RUN_TIMEOUT_S = 120.0
SPIKE_WINDOW_S = 1.0
BASELINE_S = 10.0
"""the p99 latency before the action is measured over this long"""
PATHS = ("ours", "storm_rebalance")


@dataclass(frozen=True)
class Sample:
    t: float
    emitted: int
    """spout emits, summed over every worker incarnation seen so far (monotone)"""
    acked: int
    """spout acks, the same way"""
    started: Mapping[str, int]
    """worker key -> ``started_ms`` in this sample"""


@dataclass
class Totals:
    """Turns live-counter snapshots into monotone totals across worker restarts."""

    last: dict[tuple[str, int], tuple[int, int]] = field(default_factory=dict)

    def sample(self, t: float, workers: Mapping[str, LiveWorker]) -> Sample:
        for key, worker in workers.items():
            spouts = [task for task in worker.tasks if task.is_spout]
            self.last[(key, worker.started_ms)] = (
                sum(task.emitted for task in spouts),
                sum(task.acked for task in spouts),
            )
        emitted = sum(e for e, _ in self.last.values())
        acked = sum(a for _, a in self.last.values())
        return Sample(t, emitted, acked, {k: w.started_ms for k, w in workers.items()})


class Sampler(PeriodicSampler):
    """Samples ``read()`` every :data:`SAMPLE_S` in a thread until stopped."""

    def __init__(self, read: Callable[[], Mapping[str, LiveWorker]]) -> None:
        super().__init__(SAMPLE_S, name="live-sampler")
        self.read = read
        self.samples: list[Sample] = []
        self.errors = 0
        self._totals = Totals()

    def sample(self) -> None:
        try:
            self.samples.append(self._totals.sample(time.time(), self.read()))
        except Exception:  # ZooKeeper briefly slow: a gap in the samples, not a crash
            self.errors += 1


def rate(samples: Sequence[Sample], start: float, end: float) -> float | None:
    """Spout acks per second between the samples nearest ``start`` and ``end``."""
    inside = [s for s in samples if start <= s.t <= end]
    if len(inside) < 2 or inside[-1].t <= inside[0].t:
        return None
    return (inside[-1].acked - inside[0].acked) / (inside[-1].t - inside[0].t)


def pause(samples: Sequence[Sample], action_at: float) -> tuple[float, float] | None:
    """(start, end) of the longest stretch without spout emits that overlaps the time after
    ``action_at``: from the last sample with a new emit before it to the first after it;
    ``None`` if the spouts never emitted again."""
    best: tuple[float, float] | None = None
    last_growth: Sample | None = None
    previous: Sample | None = None
    for sample in samples:
        if previous is not None and sample.emitted > previous.emitted:
            if last_growth is not None and sample.t > action_at:
                stretch = (last_growth.t, sample.t)
                if best is None or stretch[1] - stretch[0] > best[1] - best[0]:
                    best = stretch
            last_growth = sample
        previous = sample
    if best is None or best[1] < action_at:
        return None
    return best


def steady_at(samples: Sequence[Sample], after: float, target: float) -> float | None:
    """The first time after ``after`` at which the acked rate over the preceding
    :data:`STEADY_WINDOW_S` reaches ``target``."""
    for sample in samples:
        if sample.t < after + STEADY_WINDOW_S:
            continue
        current = rate(samples, sample.t - STEADY_WINDOW_S, sample.t)
        if current is not None and current >= target:
            return sample.t
    return None


def restarted(samples: Sequence[Sample], action_at: float) -> int:
    """Workers whose counters restarted after ``action_at`` (by the last sample)."""
    if not samples:
        return 0
    since_ms = int(action_at * 1000)
    return sum(1 for started in samples[-1].started.values() if started > since_ms)


def measure_run(samples: Sequence[Sample], action_at: float) -> dict[str, Any]:
    """The numbers of one run from its samples (see the module docstring)."""
    before = rate(samples, action_at - BEFORE_S, action_at)
    stall = pause(samples, action_at)
    result: dict[str, Any] = {
        "rate_before": before,
        "pause_s": None,
        "steady_s": None,
        "workers_restarted": restarted(samples, action_at),
        "p99_spike_ms": None,
        "samples": len(samples),
    }
    if stall is not None:
        result["pause_s"] = stall[1] - stall[0]
        if before:
            steady = steady_at(samples, stall[1], STEADY_SHARE * before)
            result["steady_s"] = steady - stall[0] if steady is not None else None
    return result


def p99(values: Sequence[float]) -> float | None:
    """The 99th percentile (nearest rank) of ``values``; ``None`` when there are none."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, math.ceil(0.99 * len(ordered)) - 1)]


def latency_spike(
    latencies: Sequence[tuple[float, float]], action_at: float, end: float
) -> dict[str, float | None]:
    """``p99_before_ms``, ``p99_peak_ms`` and ``p99_spike_ms`` of one run from ``(acked at,
    latency)`` pairs in seconds (see the module docstring)."""
    before = [lat for at, lat in latencies if action_at - BASELINE_S <= at < action_at]
    windows: dict[int, list[float]] = {}
    for at, lat in latencies:
        if action_at <= at <= end:
            windows.setdefault(int((at - action_at) // SPIKE_WINDOW_S), []).append(lat)
    base = p99(before)
    peaks = [p for p in (p99(w) for w in windows.values()) if p is not None]
    peak = max(peaks) if peaks else None
    return {
        "p99_before_ms": None if base is None else base * 1000,
        "p99_peak_ms": None if peak is None else peak * 1000,
        "p99_spike_ms": None if base is None or peak is None else (peak - base) * 1000,
    }


def _median(values: Sequence[float | int | None]) -> float | None:
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None


def summarise(runs: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The ``summary`` object of one path, with the fields docs/reconfiguration.md promises for
    ``bench-results/reconfig_pause.json`` plus ``completed``. Times and restarts are taken
    from completed runs only: a refused or rolled-back run moved nothing, and its short stall
    must not count as a fast reconfiguration."""
    done = [r for r in runs if r.get("outcome") == "completed"]
    pauses = [r["pause_s"] for r in done if r.get("pause_s") is not None]
    return {
        "runs": len(runs),
        "completed": len(done),
        "pause_s_median": _median(pauses),
        "pause_s_min": min(pauses) if pauses else None,
        "pause_s_max": max(pauses) if pauses else None,
        "steady_s_median": _median([r.get("steady_s") for r in done]),
        "p99_spike_ms_median": _median([r.get("p99_spike_ms") for r in done]),
        "workers_restarted_median": _median([r.get("workers_restarted") for r in done]),
        "replayed": sum(int(r.get("replayed") or 0) for r in runs),
        "lost": sum(int(r.get("lost") or 0) for r in runs),
    }


def attribute_lost(
    unacked_at_start: Sequence[frozenset[str]],
    unacked_at_end: Sequence[frozenset[str]],
    final: frozenset[str],
) -> list[int]:
    """Per run: ids still unacked after the final drain that were first seen unacked at the
    end of that run (not at its start: those went missing before it, e.g. in a reset)."""
    seen: set[str] = set()
    lost = []
    for start, end in zip(unacked_at_start, unacked_at_end, strict=True):
        seen |= start
        lost.append(len((end & final) - seen))
        seen |= end
    return lost


def ledger_state(directory: Path) -> tuple[int, frozenset[str]]:
    """(replay lines so far, ids unacked now) of the spout ledgers in ``directory``."""
    from scheduler_py.devtools.ledger import read_ledgers

    summary = read_ledgers(directory)
    return summary.replays, summary.unacked


# --------------------------------------------------------------------------- the runs
ALGORITHM_KEY = "scheduler.brain.algorithm"
SETTLE_TIMEOUT_S = 180.0


@dataclass
class Comparison:
    """What the driver needs of the benchmark's cluster (``local_cluster.BrainCluster``)
    and of its replan follower (``reconfig_workloads.reconfigure``)."""

    cluster: Any
    name: str
    topology_id: str
    ledger_dir: Path
    live: Callable[[], Mapping[str, LiveWorker]]
    replan: Callable[[str], tuple[str, dict[str, Any] | None]]
    """algorithm -> (outcome, history entry) of our path, followed to its end"""
    say: Callable[[str], None]
    start: str = "even"
    target: str = "tdls"
    settle_s: float = 15.0


def _wait(condition: Callable[[], Any], timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.2)
    raise TimeoutError(f"waited {timeout:g}s for {what}")


def storm_rebalance(comparison: Comparison, algorithm: str) -> None:
    """Storm's own path: ``rebalance -w 0`` with the brain's algorithm set in the topology's
    conf; returns once Nimbus says ACTIVE again."""
    cluster = comparison.cluster
    cluster._nimbus("rebalance", comparison.name, 0, {ALGORITHM_KEY: algorithm})
    _wait(
        lambda: cluster.status(comparison.name) == "ACTIVE",
        SETTLE_TIMEOUT_S,
        "the rebalanced topology to be ACTIVE again",
    )


def reset(comparison: Comparison, workers: int = 3) -> None:
    """Back to the starting placement (not measured) by our lossless path — Storm's
    rebalance would lose in-flight ids and blur the attribution — falling back to Storm's
    rebalance if ours does not complete; then let the throughput settle."""
    cluster = comparison.cluster
    if cluster.workers(comparison.name) != workers:
        outcome, _ = comparison.replan(comparison.start)
        if outcome != "completed":
            comparison.say(f"  reset by our path: {outcome}; resetting by storm rebalance")
            storm_rebalance(comparison, comparison.start)
        _wait(
            lambda: cluster.workers(comparison.name) == workers,
            SETTLE_TIMEOUT_S,
            f"{workers} workers after the reset",
        )
    time.sleep(comparison.settle_s)


def one_run(comparison: Comparison, path: str) -> dict[str, Any]:
    """One measured placement change by ``path`` (``ours`` or ``storm_rebalance``)."""
    replays_before, unacked_before = ledger_state(comparison.ledger_dir)
    outcome, entry = "completed", None
    with Sampler(comparison.live) as sampler:
        time.sleep(BEFORE_S + 1.0)
        action_at = time.time()
        if path == "ours":
            outcome, entry = comparison.replan(comparison.target)
        else:
            storm_rebalance(comparison, comparison.target)
        deadline = action_at + RUN_TIMEOUT_S
        while time.time() < deadline:
            if measure_run(sampler.samples, action_at)["steady_s"] is not None:
                break
            time.sleep(0.5)
        time.sleep(1.0)
    result = measure_run(sampler.samples, action_at)
    result.update(latency_spike(ack_latencies(comparison.ledger_dir), action_at, time.time()))
    replays_after, unacked = ledger_state(comparison.ledger_dir)
    result.update(
        path=path,
        outcome=outcome,
        replayed=replays_after - replays_before,
        unacked_at_start=unacked_before,
        unacked_at_end=unacked,
        sample_errors=sampler.errors,
        history_pause_s=(entry or {}).get("pause_secs"),
        history_drain_s=(entry or {}).get("drain_secs"),
        history_workers_restarted=(entry or {}).get("workers_restarted_measured"),
    )
    return result


def compare(comparison: Comparison, repetitions: int) -> dict[str, Any]:
    """``repetitions`` runs of each path, interleaved (ours first in odd repetitions), each
    from the starting placement; then the final drain and the lost-id attribution."""
    runs: list[dict[str, Any]] = []
    for repetition in range(repetitions):
        order = PATHS if repetition % 2 == 0 else tuple(reversed(PATHS))
        for path in order:
            reset(comparison)
            try:
                run = one_run(comparison, path)
            except Exception as error:  # one failed run is a row, not a crash
                run = {"path": path, "outcome": f"error: {type(error).__name__}: {error}"}
                run["unacked_at_start"] = run["unacked_at_end"] = frozenset()
            run["repetition"] = repetition + 1
            comparison.say(
                f"  {path} #{repetition + 1}: pause {_fmt(run.get('pause_s'))} s, steady "
                f"{_fmt(run.get('steady_s'))} s, restarted {run.get('workers_restarted')}, "
                f"replayed {run.get('replayed')} ({run.get('outcome')})"
            )
            runs.append(run)
    cluster = comparison.cluster
    cluster._nimbus("deactivate", comparison.name)
    try:
        _wait(
            lambda: not ledger_state(comparison.ledger_dir)[1],
            SETTLE_TIMEOUT_S,
            "every emitted id to be acked",
        )
    except TimeoutError as error:
        comparison.say(f"  final drain: {error}")
    final = ledger_state(comparison.ledger_dir)[1]
    starts = [r.pop("unacked_at_start") for r in runs]
    ends = [r.pop("unacked_at_end") for r in runs]
    for run, lost in zip(runs, attribute_lost(starts, ends, final), strict=True):
        run["lost"] = lost
    return {
        "runs": runs,
        "summary": {path: summarise([r for r in runs if r["path"] == path]) for path in PATHS},
        "unacked_after_final_drain": len(final),
    }


def _fmt(value: Any) -> str:
    return f"{value:.2f}" if isinstance(value, int | float) else "-"
