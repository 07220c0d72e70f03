"""The ``monitor_overhead`` benchmark is registered, and its pure helpers (heartbeat-aligned
acked rates, overhead) compute the right numbers. No cluster is started here."""

from __future__ import annotations

import os

import pytest

from scheduler_py.bench.local_cluster import (
    C2_CHILDOPTS,
    first_steps,
    mean,
    step_rate,
    worker_childopts,
)
from scheduler_py.bench.monitor_overhead import (
    ORDER,
    VARIANTS,
    deadline,
    histogram_delta,
    overhead,
    percentile,
    read_histograms,
    summary,
    variant_conf,
    variant_order,
)
from scheduler_py.bench.registry import benchmarks


def test_registered():
    info = benchmarks()["monitor_overhead"]
    assert info.paper.startswith("docs/monitoring.md: monitoring cost")
    assert callable(info.run)


def test_off_variant_opts_out_of_the_monitor_and_on_keeps_the_defaults():
    label, conf = VARIANTS["A"]
    assert label == "off"
    assert conf == {"topology.metrics.reporters": [], "topology.auto.task.hooks": []}
    assert VARIANTS["B"] == ("on", {})
    assert VARIANTS["X"] == ("exact", {"scheduler.monitor.mode": "exact"})
    assert VARIANTS["R"][0] == "RAS"


def test_the_default_order_interleaves_eight_runs_of_each_main_variant():
    order = variant_order(ORDER)
    assert {key: order.count(key) for key in set(order)} == {"A": 8, "B": 8, "X": 8, "R": 8}


def test_the_peer_gets_nothing_of_ours_and_workers_run_c2_by_default(tmp_path):
    settings = {"algorithm": "tdls", "worker_childopts": ""}
    ras = variant_conf("R", settings, tmp_path)
    assert not any(key.startswith("scheduler.") for key in ras)
    assert "DefaultResourceAwareStrategy" in ras["topology.scheduler.strategy"]
    ours = variant_conf("B", settings, tmp_path)
    assert ours["scheduler.brain.algorithm"] == "tdls"
    assert ours["bench.latency.dir"] == str(tmp_path)
    assert worker_childopts("c2") == C2_CHILDOPTS
    assert "TieredStopAtLevel" not in C2_CHILDOPTS
    assert worker_childopts("c1") is None
    with pytest.raises(ValueError, match="c2 or c1"):
        worker_childopts("graal")


def test_by_default_the_brain_runs_its_shipped_algorithm_named_by_nobody(tmp_path):
    from scheduler_py.bench.monitor_overhead import TIMING
    from scheduler_py.bench.registry import BenchOptions
    from scheduler_py.config import keys

    settings = TIMING.settings(BenchOptions())
    assert settings["algorithm"] == keys.DEFAULT_ALGORITHM
    settings["worker_childopts"] = ""
    assert "scheduler.brain.algorithm" not in variant_conf("B", settings, tmp_path)


def test_summary_medians_overheads_and_the_ras_ratio():
    runs = [
        {"variant": "off", "rate": 100.0, "p99_ms": 10.0},
        {"variant": "off", "rate": 104.0, "p99_ms": 12.0},
        {"variant": "on", "rate": 98.0, "p99_ms": 11.0, "aggregation_cpu_s_per_min": 6.0},
        {"variant": "on", "rate": 100.0, "p99_ms": 12.0, "aggregation_cpu_s_per_min": 8.0},
        {"variant": "exact", "rate": 60.0, "p99_ms": 22.0},
        {"variant": "RAS", "rate": 80.0, "p99_ms": 5.0},
    ]
    s = summary(runs)
    assert s["median_rate_off"] == pytest.approx(102.0)
    assert s["median_rate_on"] == pytest.approx(99.0)
    assert s["throughput_overhead_pct"] == pytest.approx(100 * (1 - 99 / 102))
    assert s["p99_overhead_pct"] == pytest.approx(100 * (11.5 / 11.0 - 1))
    assert s["exact_overhead_pct"] == pytest.approx(100 * (1 - 60 / 102))
    assert s["on_vs_ras"] == pytest.approx(99 / 80)
    assert s["aggregation_cpu_s_per_min"] == pytest.approx(7.0)
    assert s["hooks_only_overhead_pct"] is None
    assert s["runs_per_variant"] == {"off": 2, "on": 2, "exact": 1, "RAS": 1}


def test_percentiles_of_the_interval_between_two_histogram_snapshots(tmp_path):
    import json
    import math

    def bucket(ms):
        return math.floor(math.log(ms * 1000) * 20)

    size = 370
    before = {3: {"task": 3, "counts": [0] * size}}
    after_counts = [0] * size
    after_counts[bucket(2.0)] = 98  # 98 tuples at ~2 ms
    after_counts[bucket(40.0)] = 2  # 2 at ~40 ms
    (tmp_path / "t-3.json").write_text(json.dumps({"task": 3, "counts": after_counts}))
    (tmp_path / "t-4.json").write_text("{half a file")  # unreadable: skipped
    after = read_histograms(tmp_path)
    assert list(after) == [3]
    counts = histogram_delta(before, after)
    assert sum(counts) == 100
    assert percentile(counts, 0.50) == pytest.approx(2.0, rel=0.05)
    assert percentile(counts, 0.99) == pytest.approx(40.0, rel=0.05)
    assert percentile([0] * size, 0.99) is None
    # a task that appeared after the first snapshot counts from zero
    assert sum(histogram_delta({}, after)) == 100


def test_first_steps_takes_each_executors_first_change():
    samples = [
        (0.0, {"a": 100, "b": 50}),
        (0.5, {"a": 100, "b": 50}),
        (1.0, {"a": 160, "b": 50}),  # a's heartbeat arrives
        (1.5, {"a": 160, "b": 50}),
        (2.0, {"a": 160, "b": 90}),  # b's heartbeat arrives
        (2.5, {"a": 220, "b": 90}),
    ]
    assert first_steps(samples) == {"a": (1.0, 160), "b": (2.0, 90)}


def test_first_steps_falls_back_to_last_sample_when_stuck():
    samples = [(0.0, {"a": 5}), (1.0, {"a": 5}), (2.0, {"a": 5})]
    assert first_steps(samples) == {"a": (2.0, 5)}
    assert first_steps([]) == {}


def test_step_rate_sums_per_executor_rates():
    start = {"a": (1.0, 160), "b": (2.0, 90)}
    end = {"a": (61.0, 760), "b": (62.0, 390)}  # a: 600 in 60 s, b: 300 in 60 s
    assert step_rate(start, end) == pytest.approx(10.0 + 5.0)
    # an executor missing at the end, or with no time between its steps, is skipped
    assert step_rate(start, {"a": (61.0, 760)}) == pytest.approx(10.0)
    assert step_rate({"a": (5.0, 1)}, {"a": (5.0, 9)}) == 0.0


def test_overhead_and_mean():
    assert overhead(95.0, 100.0) == pytest.approx(0.05)
    assert overhead(110.0, 100.0) == pytest.approx(-0.10)
    assert overhead(None, 100.0) is None
    assert overhead(50.0, 0.0) is None
    assert mean([100.0, 104.0]) == pytest.approx(102.0)
    assert mean([]) is None


def test_variant_order():
    assert variant_order("ABBA") == ["A", "B", "B", "A"]
    assert variant_order("ab") == ["A", "B"]
    assert variant_order("ACDE") == ["A", "C", "D", "E"]
    assert variant_order("abxr") == ["A", "B", "X", "R"]
    with pytest.raises(ValueError, match=r"E \(no-op hook\)"):
        variant_order("ABF")
    with pytest.raises(ValueError):
        variant_order("")


def test_deadline_is_the_next_such_time_of_day_in_utc():
    noon = 1_795_867_200.0  # 2026-11-28 12:00 UTC
    assert deadline("13:20", now=noon) == noon + 80 * 60
    assert deadline("11:00", now=noon) == noon + 23 * 3600  # tomorrow
    assert deadline("", now=noon) is None
    with pytest.raises(ValueError, match="HH:MM"):
        deadline("25:00", now=noon)


def test_emulated_hosts_put_both_clusters_on_six_hosts_and_the_word_count_on_six_workers(
    tmp_path,
):
    from scheduler_py.bench.monitor_overhead import _clusters, hosts_setting

    settings = {"algorithm": "tdls", "worker_childopts": "", "hosts": hosts_setting("Emulated")}
    assert variant_conf("B", settings, tmp_path)["topology.workers"] == 6
    assert variant_conf("R", settings, tmp_path)["topology.workers"] == 6
    clusters = _clusters(tmp_path, variant_order("ABXR"), "c2", "emulated")
    assert set(clusters) == {"ours", "peer"}
    for cluster in clusters.values():
        assert cluster.env["EMU_HOSTS"] == "6" and cluster.env["EMU_HOST_CPU"] == "0.5"
        assert cluster.env["STORM_WORKER_CHILDOPTS"] == C2_CHILDOPTS
    # distinct port offsets give each cluster its own /21 of 198.18.0.0/15 (cluster-common.sh)
    assert (
        clusters["ours"].env["CLUSTER_PORT_OFFSET"] != clusters["peer"].env["CLUSTER_PORT_OFFSET"]
    )
    local = {"algorithm": "tdls", "worker_childopts": "", "hosts": hosts_setting("local")}
    assert variant_conf("B", local, tmp_path)["topology.workers"] == 3
    plain = _clusters(tmp_path, ["A"], "c1", "local")["ours"].env
    assert plain.get("EMU_HOSTS", "0") == os.environ.get("EMU_HOSTS", "0")


def test_an_unknown_hosts_setting_names_what_is_expected():
    from scheduler_py.bench.monitor_overhead import hosts_setting

    with pytest.raises(ValueError, match="expects one of local, emulated, found 'cloud'"):
        hosts_setting("cloud")
