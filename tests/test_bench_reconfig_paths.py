"""The pure measurements of bench reconfig_pause's path comparison (docs/reconfiguration.md)."""

from __future__ import annotations

import pytest

from scheduler_py.bench.reconfig_paths import (
    Sample,
    Totals,
    attribute_lost,
    latency_spike,
    measure_run,
    p99,
    summarise,
)
from scheduler_py.scheduling.interfaces import LiveTask, LiveWorker


def _samples(stall_from: float, stall_to: float, slow_until: float, restarted: int = 1):
    """10 emits/acks per 0.1 s, nothing during the stall, half rate until ``slow_until``."""
    samples, emitted = [], 0
    for i in range(300):
        t = i * 0.1
        if t < stall_from or t >= stall_to:
            emitted += 5 if stall_to <= t < slow_until else 10
        started = {"w1": 1_000 if t < stall_to else 12_000}
        samples.append(Sample(t, emitted, emitted, started))
    return samples


def test_pause_steady_and_restarts_from_samples():
    run = measure_run(_samples(10.0, 11.5, 14.0), action_at=9.9)
    assert run["pause_s"] == pytest.approx(1.6, abs=0.11)
    assert run["rate_before"] == pytest.approx(100.0)
    # back to ≥ 90 % over 2 s once at most 0.4 s of the window is at half rate: t ≈ 15.6
    assert run["steady_s"] == pytest.approx(15.6 - 9.9, abs=0.2)
    assert run["workers_restarted"] == 1
    assert run["p99_spike_ms"] is None


def test_no_resume_means_no_pause_number():
    samples = [Sample(i * 0.1, min(i, 50), min(i, 50), {}) for i in range(200)]
    assert measure_run(samples, action_at=5.0)["pause_s"] is None


def test_totals_survive_a_worker_restart():
    totals = Totals()

    def worker(started, emitted):
        task = LiveTask(1, "spout", True, emitted, 0, emitted, 0, 0)
        return {"w": LiveWorker("s", "h", 1, 0, started, 0, (task,))}

    assert totals.sample(0, worker(1, 100)).emitted == 100
    assert totals.sample(1, worker(2, 5)).emitted == 105  # counters restarted from 0


def test_lost_ids_go_to_the_first_run_they_were_unacked_after():
    ends = [frozenset({"a", "b"}), frozenset({"b", "c"}), frozenset({"d", "e"})]
    starts = [frozenset(), frozenset({"b"}), frozenset({"e"})]  # e went missing in a reset
    final = frozenset({"b", "c", "e"})
    assert attribute_lost(starts, ends, final) == [1, 1, 0]


def test_summary_has_the_issue_fields_and_counts_only_completed_runs():
    runs = [
        {
            "pause_s": p,
            "steady_s": 3.0,
            "workers_restarted": 1,
            "replayed": 2,
            "lost": 0,
            "outcome": "completed",
        }
        for p in (1.0, 2.0, 4.0)
    ]
    refused = {"pause_s": 0.5, "workers_restarted": 0, "outcome": "refused: no round yet"}
    summary = summarise([*runs, refused])
    assert set(summary) == {
        "runs",
        "completed",
        "pause_s_median",
        "pause_s_min",
        "pause_s_max",
        "steady_s_median",
        "p99_spike_ms_median",
        "workers_restarted_median",
        "replayed",
        "lost",
    }
    assert summary["runs"] == 4 and summary["completed"] == 3
    assert summary["pause_s_median"] == 2.0 and summary["pause_s_min"] == 1.0
    assert summary["workers_restarted_median"] == 1 and summary["replayed"] == 6


def test_p99_is_the_nearest_rank():
    assert p99([]) is None
    assert p99([5.0]) == 5.0
    assert p99([float(i) for i in range(1, 101)]) == 99.0
    assert p99([float(i) for i in range(1, 201)]) == 198.0


def test_latency_spike_is_the_worst_window_after_the_action_over_the_baseline():
    steady = [(t / 10, 0.010) for t in range(0, 100)]  # 10 s of 10 ms before the action at 10 s
    after = [(10.2, 0.015), (11.5, 0.400), (11.6, 0.020), (13.0, 0.012), (30.0, 9.0)]
    spike = latency_spike(steady + after, action_at=10.0, end=20.0)
    assert spike["p99_before_ms"] == pytest.approx(10.0)
    assert spike["p99_peak_ms"] == pytest.approx(400.0)  # window [11, 12): its p99 is 400 ms
    assert spike["p99_spike_ms"] == pytest.approx(390.0)  # the ack at 30 s is after the run
    assert latency_spike([], 10.0, 20.0) == {
        "p99_before_ms": None,
        "p99_peak_ms": None,
        "p99_spike_ms": None,
    }
