"""How often a topology is aggregated (scheduler_py/monitoring/cadence.py): steady counts
stretch the period, moving counts bring it back at once."""

from __future__ import annotations

from scheduler_py.monitoring.cadence import Cadence, distance, signature
from scheduler_py.monitoring.synthetic_counts import SHAPES, Layout, simulate

START = 1_800_000_000_000
PERIOD = 30_000


def windows(end, rate=1000.0, count=6, seed=1):
    return simulate(
        SHAPES["linear"], Layout(2, 1), end, windows=count, rate=rate, mode="counts", seed=seed
    ).records


def test_signature_and_distance():
    a = signature(windows(START))
    assert a and all(v >= 0 for v in a.values())
    assert distance(a, a) == 0.0
    doubled = {k: 2 * v for k, v in a.items()}
    assert abs(distance(doubled, a) - 1.0) < 1e-9
    # only the keys that arrived are compared (one worker may publish before the other)
    part = dict(list(a.items())[:3])
    assert distance(part, a) == 0.0
    assert distance({}, a) == 0.0 and distance({"x": 1.0}, {}) == 1.0


def test_steady_counts_stretch_the_period_and_a_move_shrinks_it():
    cadence = Cadence(PERIOD, 120_000)
    now = START
    records = windows(now)
    assert cadence.due("t", records, now) == "first aggregation"
    cadence.aggregated("t", records, now)
    schedule = []
    for step in range(1, 16):  # a new window (same rates, other noise) every 30 s
        now = START + step * PERIOD
        records = windows(now, seed=step + 1)
        if cadence.due("t", records, now):
            cadence.aggregated("t", records, now)
            schedule.append(step)
    gaps = [b - a for a, b in zip([0, *schedule], schedule, strict=False)]
    assert gaps[:3] == [1, 2, 4], schedule  # 30 s, 60 s, 120 s
    assert max(gaps) == 4  # never longer than max_ms
    # the spouts triple their rate: due at once, and the period is back to every run
    now += PERIOD
    moved = windows(now, rate=3000.0, seed=99)
    reason = cadence.due("t", moved, now)
    assert reason and reason.startswith("counts moved")
    cadence.aggregated("t", moved, now)
    now += PERIOD
    assert cadence.due("t", windows(now, rate=3000.0, seed=100), now)


def test_no_stretch_when_max_is_not_above_the_period():
    cadence = Cadence(PERIOD, 0)
    records = windows(START)
    cadence.aggregated("t", records, START)
    assert cadence.due("t", windows(START + PERIOD, seed=2), START + PERIOD) == "every run"


def test_the_cli_keeps_a_steady_topology_within_the_brains_freshness():
    import argparse

    from scheduler_py.cli.aggregate import MAX_STRETCH_MS, add_arguments, max_period_ms

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    assert max_period_ms(parser.parse_args(["--once"])) == 0
    assert max_period_ms(parser.parse_args(["--every", "5s"])) == 20_000
    assert max_period_ms(parser.parse_args(["--every", "30s"])) == MAX_STRETCH_MS == 120_000
    assert max_period_ms(parser.parse_args(["--every", "30s", "--no-stretch"])) == 0
    assert max_period_ms(parser.parse_args(["--every", "30s", "--max-period", "90s"])) == 90_000


def test_a_worker_leaving_the_window_makes_the_topology_due():
    cadence = Cadence(PERIOD, 120_000)
    records = windows(START)
    cadence.aggregated("t", records, START)
    now = START + PERIOD // 3  # a new window within the period
    steady = windows(now, seed=5)
    assert cadence.due("t", steady, now) is None  # steady: waits
    one_worker = [r for r in steady if r.port == 6700]
    reason = cadence.due("t", one_worker, now)
    assert reason and reason.startswith("workers changed") and "6701" in reason


def test_the_cli_bounds_a_runs_spark_part_only_when_it_repeats():
    import argparse

    from scheduler_py.cli.aggregate import add_arguments, spark_timeout_ms

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    assert spark_timeout_ms(parser.parse_args(["--once"])) == 0
    assert spark_timeout_ms(parser.parse_args(["--every", "10s"])) == 60_000
    assert spark_timeout_ms(parser.parse_args(["--every", "90s"])) == 180_000
    assert spark_timeout_ms(parser.parse_args(["--every", "10m"])) == 300_000
    assert spark_timeout_ms(parser.parse_args(["--every", "30s", "--spark-timeout", "5s"])) == 5_000
