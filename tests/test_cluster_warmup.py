"""The steady warm-up of ``bench cluster`` (scheduler_py/bench/cluster_warmup.py), replayed on
recorded timelines and on rates of a known shape, with a simulated clock."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from scheduler_py.bench import cluster_warmup
from scheduler_py.bench.cluster import _settings
from scheduler_py.bench.cluster_runs import cpu_target, not_comparable, summarise
from scheduler_py.bench.registry import BenchOptions

MONITORED = (
    Path(__file__).resolve().parent.parent
    / "docs/results/emulated-network/throughput-default/c2-cpu-monitored.json"
)
HEARTBEAT_S = 3.0


class SimulatedCluster:
    """Spouts acking at ``rate(t)`` tuples/s, whose counts Nimbus sees only as of the last
    heartbeat, and a clock that moves only when the benchmark sleeps."""

    def __init__(self, rate: Callable[[float], float], spouts: int = 2, step_s: float = 0.5):
        self.rate, self.spouts, self.step_s = rate, spouts, step_s
        self.now = 0.0
        self._acked, self._integrated_to = 0.0, 0.0

    def _acked_until(self, t: float) -> float:
        while self._integrated_to < t:
            step = min(self.step_s, t - self._integrated_to)
            self._acked += self.rate(self._integrated_to) * step
            self._integrated_to += step
        return self._acked

    def counts(self) -> dict[str, int]:
        heartbeat = (self.now // HEARTBEAT_S) * HEARTBEAT_S
        share = self._acked_until(heartbeat) / self.spouts
        return {f"spout-{i}": int(share) for i in range(self.spouts)}

    def sleep(self, seconds: float) -> None:
        self.now += seconds

    def warm_up(self, **options: float) -> dict:
        return cluster_warmup.wait_levelled_off(
            self.counts, 0.0, clock=lambda: self.now, sleep=self.sleep, **options
        )


def piecewise(timeline: Sequence[dict]) -> Callable[[float], float]:
    """A recorded timeline's rates (each over the 10 s before its ``t_s``), held after it ends."""
    points = [(p["t_s"], p["throughput"]) for p in timeline]

    def rate(t: float) -> float:
        for end, value in points:
            if t < end:
                return value
        return points[-1][1]

    return rate


def test_a_flat_rate_levels_off_as_soon_as_two_windows_are_in() -> None:
    record = SimulatedCluster(lambda t: 1000.0).warm_up()
    assert record["warmup_levelled_off"] is True
    assert cluster_warmup.SHORTEST_S <= record["warmup_s"] < cluster_warmup.SHORTEST_S + 5
    assert record["warmup_windows"]["later"] == pytest.approx(1000.0, rel=0.03)


def test_a_rate_still_rising_is_not_measured_until_it_stops() -> None:
    # +10 % a minute until 300 s, then flat
    record = SimulatedCluster(lambda t: 300.0 * (1 + 0.1 * min(t, 300.0) / 60)).warm_up()
    assert record["warmup_levelled_off"] is True
    assert 300.0 < record["warmup_s"] < 300.0 + 2 * cluster_warmup.WINDOW_S
    assert record["warmup_windows"]["later"] == pytest.approx(450.0, rel=0.05)


def test_a_rate_that_never_levels_off_is_measured_at_the_latest_and_says_so() -> None:
    record = SimulatedCluster(lambda t: 100.0 * 1.003**t).warm_up()
    assert record["warmup_levelled_off"] is False
    assert record["warmup_s"] >= cluster_warmup.LONGEST_S


def test_a_failed_poll_and_a_falling_rate_do_not_stop_the_warm_up_early_or_for_ever() -> None:
    cluster = SimulatedCluster(lambda t: 800.0 if t < 100 else 600.0)
    counts, polls = cluster.counts, 0

    def flaky() -> dict[str, int]:
        nonlocal polls
        polls += 1
        if polls == 10:
            raise ConnectionError("nimbus busy")
        return counts()

    record = cluster_warmup.wait_levelled_off(
        flaky, 0.0, clock=lambda: cluster.now, sleep=cluster.sleep
    )
    assert record["warmup_levelled_off"] is True  # falling: levelled off
    assert record["warmup_s"] < cluster_warmup.SHORTEST_S + 5


def test_a_move_while_warming_up_starts_the_windows_and_the_limit_again() -> None:
    # still rising (+10 % a minute) when the next stage of a re-plan moves the spouts at
    # 250 s: new keys, the old ones never listed again; the rate settles 20 s after the move
    def rate(t: float) -> float:
        return 300.0 * (1 + 0.1 * t / 60) if t < 250 else (0.0 if t < 270 else 520.0)

    cluster = SimulatedCluster(rate)
    counts = cluster.counts

    def moved() -> dict[str, int]:
        listed = counts()
        if cluster.now < 250:
            return listed
        return {f"{key}@moved": value for key, value in listed.items()}

    record = cluster_warmup.wait_levelled_off(
        moved, 0.0, clock=lambda: cluster.now, sleep=cluster.sleep
    )
    assert record["warmup_moves"] == 1
    assert record["warmup_levelled_off"] is True  # not held at the limit by the moved keys
    assert 250 + cluster_warmup.SHORTEST_S <= record["warmup_s"] < cluster_warmup.LONGEST_S
    assert record["warmup_windows"]["later"] == pytest.approx(520.0, rel=0.05)
    # a topology that never stops moving is measured at the latest all the same
    flapping = SimulatedCluster(lambda t: 400.0)
    flapping_counts = flapping.counts

    def moving() -> dict[str, int]:
        stage = int(flapping.now // 150)  # a new stage every 150 s
        return {f"{key}@{stage}": value for key, value in flapping_counts().items()}

    record = cluster_warmup.wait_levelled_off(
        moving, 0.0, clock=lambda: flapping.now, sleep=flapping.sleep
    )
    assert record["warmup_levelled_off"] is False and record["warmup_moves"] >= 7
    assert record["warmup_s"] == pytest.approx(cluster_warmup.LONGEST_WITH_MOVES_S, abs=5)
    # a run that had levelled off before the move would have been measured before it
    assert SimulatedCluster(lambda t: 400.0).warm_up()["warmup_moves"] == 0


@pytest.mark.parametrize("index", range(6))
def test_recorded_cpu_bound_timelines_end_their_warm_up_near_the_rate_measured_later(
    index: int,
) -> None:
    # the sixth set's brain:monitored runs: rising until ~150 s, measured at 280-400 s
    runs = [
        r for r in json.loads(MONITORED.read_text())["runs"] if r["scheduler"] == "brain:monitored"
    ]
    run = runs[index]
    record = SimulatedCluster(piecewise(run["timeline"])).warm_up()
    assert record["warmup_levelled_off"] is True
    assert 150.0 <= record["warmup_s"] <= 300.0
    assert record["warmup_windows"]["later"] / run["throughput"] == pytest.approx(1.0, abs=0.06)


def test_a_full_run_warms_up_until_steady_and_a_number_still_means_seconds() -> None:
    assert _settings(BenchOptions())["steady_warmup"] is True
    assert _settings(BenchOptions())["warmup"] is None
    fixed = _settings(BenchOptions(extra={"warmup": "300"}))
    assert fixed["steady_warmup"] is False and fixed["warmup"] == 300.0
    quick = _settings(BenchOptions(quick=True))
    assert quick["steady_warmup"] is False and quick["warmup"] == 20.0
    assert _settings(BenchOptions(quick=True, extra={"warmup": "steady"}))["steady_warmup"]


def _row_run(scheduler: str, throughput: float, measured_from_s: float, levelled: bool) -> dict:
    return {
        "topology": "linear-cpu",
        "kind": "cpu",
        "scheduler": scheduler,
        "loadaware": True,
        "throughput": throughput,
        "p99_ms": 10.0,
        "hosts": 3,
        "measured_from_s": measured_from_s,
        "warmup_levelled_off": levelled,
    }


def test_rows_measured_once_levelled_off_are_compared_whenever_that_was() -> None:
    rows = summarise(
        [
            _row_run("ras-default", 100.0, 190.0, True),
            _row_run("brain:default", 110.0, 320.0, True),
        ]
    )
    assert [r["levelled_off_runs"] for r in rows] == [1, 1]
    assert not_comparable(rows[0], rows[1]) is None
    assert cpu_target(rows, "linear-cpu", True)[0] is True
    # one run cut off at the longest warm-up: the times decide again
    rows = summarise(
        [
            _row_run("ras-default", 100.0, 190.0, True),
            _row_run("brain:default", 110.0, 600.0, False),
        ]
    )
    assert rows[1]["levelled_off_runs"] == 0
    assert "warmup=steady" in (not_comparable(rows[0], rows[1]) or "")
